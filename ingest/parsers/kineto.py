"""PyTorch profiler (Kineto) traces: Chrome-trace JSON, ``.json`` or ``.json.gz``, one file per call.

Where they come from: SGLang writes one per rank when profiling is started
(``POST /start_profile``, ``SGLANG_TORCH_PROFILER_DIR`` + ``python -m
sglang.profiler``), named ``<profile_id>-TP-<r>[-DP-<d>][-PP-<p>][-EP-<e>][-<stage>].trace.json.gz``;
``merged-<profile_id>.trace.json.gz`` holds all ranks with pids rewritten to
``[TP01-DP00] <pid>``. Any ``torch.profiler`` export reads the same way.

What is read: the ``traceEvents`` array, streamed in chunks with bounded memory
(real traces reach 1 GB per rank): a vectorised scan finds event boundaries
outside strings, msgspec decodes each chunk into typed events, and only what the
breakdown needs is kept, in compact columns: GPU kernels, ``gpu_memcpy`` /
``gpu_memset``, launches (``cuda_runtime``/``cuda_driver`` with a correlation id),
and range events that are phase markers (``user_annotation``, ``python_function``,
``gpu_user_annotation`` matching ``ingest/trace_rules.py``). From the rest of the
document: ``distributedInfo`` (rank, world size), ``deviceProperties`` (GPU name),
``baseTimeNanoseconds`` and ``displayTimeUnit``, wherever they sit relative to
``traceEvents``. Rank, DP/PP/EP rank and stage also come from SGLang's file names.

Deliberately ignored (counted in ``skipped``): ``cpu_op`` and other CPU events,
flow events (``ac2g``, ``fwdbwd``), instant and metadata events, and range events
that are not phase markers. The analysis lives in ``ingest/breakdown.py``;
``docs/breakdown.md`` explains the rules and the tables.
"""
from __future__ import annotations

import json
import math
import re
import zlib
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import numpy as np

from ingest.breakdown import (
    KERNEL_CATEGORIES,
    PHASE_CODES,
    Kernels,
    Launches,
    Markers,
    RankBreakdown,
    RankEvents,
    analyze_rank,
)
from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions
from ingest.model import ParsedSource
from ingest.reader import open_binary
from ingest.tables import table_from_rows
from ingest.trace_rules import CPU_RANGE_CATEGORIES, GPU_RANGE_CATEGORIES, TraceRules, rules_for

KIND = "kineto_trace"
BLOCK_BYTES = 8 << 20
METADATA_LIMIT = 256 << 20  # bytes of document outside traceEvents we are willing to hold
MAX_EVENT_WARNINGS = 20
NO_GPU_EVENTS = "no GPU kernel events: was the profiler run with activities=['CPU','GPU']?"
TRACE_HINT = "expected a PyTorch profiler (Kineto) Chrome-trace JSON with a traceEvents array, .json or .json.gz"

# event category -> what it is to us (categories are matched lower-cased; old exports capitalise them)
KERNEL, MEMCPY, MEMSET, LAUNCH, CPU_RANGE, GPU_RANGE = "kernel", "gpu_memcpy", "gpu_memset", "launch", "cpu_range", "gpu_range"
ROLE_BY_CATEGORY: dict[str, str] = {
    "kernel": KERNEL,
    "gpu_memcpy": MEMCPY,
    "memcpy": MEMCPY,
    "gpu_memset": MEMSET,
    "memset": MEMSET,
    "cuda_runtime": LAUNCH,
    "runtime": LAUNCH,
    "cuda_driver": LAUNCH,
    **{category: CPU_RANGE for category in CPU_RANGE_CATEGORIES},
    **{category: GPU_RANGE for category in GPU_RANGE_CATEGORIES},
}
CATEGORY_CODE = {KERNEL: KERNEL_CATEGORIES.index("kernel"), MEMCPY: KERNEL_CATEGORIES.index("gpu_memcpy"), MEMSET: KERNEL_CATEGORIES.index("gpu_memset")}

SGLANG_FILE = re.compile(
    r"^(?P<profile_id>.+?)-TP-(?P<tp>\d+)(?:-DP-(?P<dp>\d+))?(?:-PP-(?P<pp>\d+))?(?:-EP-(?P<ep>\d+))?"
    r"(?:-(?P<stage>(?:ForwardMode\.)?[A-Za-z_]+|\d+))?\.trace\.json(?:\.gz)?$"
)
MERGED_FILE = re.compile(r"^merged-(?P<profile_id>.+?)\.trace\.json(?:\.gz)?$")
RANK_LABEL = re.compile(r"^\[(?P<label>[^\]]*)\]\s*(?P<rest>.*)$")
LABEL_PART = re.compile(r"(TP|DP|PP|EP)(\d+)")
STAGES = {"extend": "prefill", "prefill": "prefill", "forwardmode.extend": "prefill", "decode": "decode", "forwardmode.decode": "decode"}

EPOCH_US_FLOOR = 1e14  # µs since 1970 beyond this is an absolute clock (1973+)
EPOCH_NS_FLOOR = 1e17  # a timestamp this large can only be ns since 1970
PLAUSIBLE_MEDIAN_KERNEL_US = 1000.0  # a median GPU kernel longer than 1 ms means the unit is not µs


# --- detection ------------------------------------------------------------------------------------

TRACE_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
BARE_ARRAY_EVENT = re.compile(rb'^\s*\[\s*\{[^{}]*"ph"\s*:')


def sniff(head: bytes) -> bool:
    """A JSON object with a ``traceEvents`` array, or a Chrome-trace bare array of events."""
    text = head.lstrip()
    if text[:1] == b"{":
        if TRACE_EVENTS_KEY.search(head):
            return True
        return b'"schemaVersion"' in head and (b'"deviceProperties"' in head or b'"distributedInfo"' in head)
    return bool(BARE_ARRAY_EVENT.match(head))


# --- streaming the traceEvents array ------------------------------------------------------------

class EventArgs(msgspec.Struct):
    correlation: int | None = None
    stream: int | None = None
    device: int | None = None


class TraceEvent(msgspec.Struct):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str | None = None
    tid: int | str | None = None
    ts: float | None = None
    dur: float | None = None
    args: EventArgs | None = None


class TraceMeta(msgspec.Struct):
    distributedInfo: dict[str, Any] | None = None
    deviceProperties: list[dict[str, Any]] | None = None
    baseTimeNanoseconds: int | None = None
    displayTimeUnit: str | None = None
    traceName: str | None = None
    schemaVersion: int | None = None


CHUNK_DECODER = msgspec.json.Decoder(list[TraceEvent])
EVENT_DECODER = msgspec.json.Decoder(TraceEvent)
META_DECODER = msgspec.json.Decoder(TraceMeta)

_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[list(b"{}[]")] = True
_DEPTH_STEP = np.zeros(256, dtype=np.int64)
_DEPTH_STEP[list(b"{[")] = 1
_DEPTH_STEP[list(b"}]")] = -1
QUOTE, BACKSLASH, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET = 34, 92, 123, 125, 91


def structure(buffer: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of ``{}[]`` outside strings, their byte, and the nesting depth after each.

    The buffer must start outside a string at depth 0 (the caller adds its depth).
    Quotes preceded by an odd run of backslashes are escaped and do not toggle strings.
    """
    data = np.frombuffer(buffer, dtype=np.uint8)
    quotes = np.flatnonzero(data == QUOTE)
    backslashes = np.flatnonzero(data == BACKSLASH)
    if backslashes.size:
        breaks = np.flatnonzero(np.diff(backslashes) != 1)
        run_start = backslashes[np.r_[0, breaks + 1]]
        run_end = backslashes[np.r_[breaks, backslashes.size - 1]]
        after = run_end + 1
        odd = ((run_end - run_start) % 2 == 0) & (after < data.size)
        escaped = after[odd][data[after[odd]] == QUOTE]
        if escaped.size:
            quotes = np.setdiff1d(quotes, escaped, assume_unique=True)
    positions = np.flatnonzero(_STRUCTURAL[data])
    positions = positions[(np.searchsorted(quotes, positions) & 1) == 0]
    chars = data[positions]
    return positions, chars, np.cumsum(_DEPTH_STEP[chars])


@dataclass
class ScanState:
    """Where the scan is: before the array (header), inside it, or after it (footer)."""

    mode: str = "header"
    events_depth: int = 0  # depth inside the traceEvents array (2 in {"traceEvents": [...]}, 1 in a bare array)
    header: bytes = b""
    footer: list[bytes] = field(default_factory=list)
    footer_bytes: int = 0
    bytes_read: int = 0
    lines_before: int = 1  # line number at the start of the carried buffer


class TraceEventStream:
    """Yield decoded chunks of trace events from a (decompressed) byte stream, memory bounded by the block size."""

    def __init__(self, path: Path, stream: BinaryIO, parsed: ParsedSource, block_bytes: int = BLOCK_BYTES) -> None:
        self.path = path
        self.stream = stream
        self.parsed = parsed
        self.block_bytes = block_bytes
        self.state = ScanState()
        self.events_read = 0
        self.bad_events = 0

    def chunks(self) -> Iterator[list[TraceEvent]]:
        carry = b""
        while block := self.read_block():
            buffer = carry + block if carry else block
            carry = yield from self.consume(buffer)
        self.finish(carry)

    def read_block(self) -> bytes:
        try:
            block = self.stream.read(self.block_bytes)
        except (EOFError, OSError, zlib.error) as error:
            raise MalformedInput(
                self.path,
                f"corrupt or truncated gzip after {self.state.bytes_read:,} bytes ({error})",
                hint="re-copy the trace; `gzip -t FILE` checks it",
            ) from error
        self.state.bytes_read += len(block)
        return block

    def consume(self, buffer: bytes) -> Iterator[list[TraceEvent]]:
        """Yield the complete events in ``buffer``; return what must be carried into the next block."""
        state = self.state
        if state.mode == "header":
            start = self.find_events_start(buffer)
            if start is None:
                if len(buffer) > METADATA_LIMIT:
                    raise MalformedInput(self.path, f"no traceEvents array in the first {METADATA_LIMIT >> 20} MB", hint=TRACE_HINT)
                return buffer
            state.header, buffer = buffer[:start], buffer[start:]
            state.lines_before += state.header.count(b"\n")
            state.mode = "events"
        if state.mode == "events":
            return (yield from self.consume_events(buffer))
        self.keep_footer(buffer)
        return b""

    def find_events_start(self, buffer: bytes) -> int | None:
        """Offset just after the ``[`` that opens the event array, once the header holds it."""
        positions, chars, depths = structure(buffer)
        if chars.size and chars[0] == OPEN_BRACKET:
            self.state.events_depth = 1
            return int(positions[0]) + 1
        for index in np.flatnonzero((chars == OPEN_BRACKET) & (depths == 2)):
            at = int(positions[index])
            if re.search(rb'"traceEvents"\s*:\s*$', buffer[max(0, at - 64) : at]):
                self.state.events_depth = 2
                return at + 1
        return None

    def consume_events(self, buffer: bytes) -> Iterator[list[TraceEvent]]:
        state = self.state
        positions, chars, depths = structure(buffer)
        depths += state.events_depth
        closing = np.flatnonzero(depths < state.events_depth)
        limit = int(closing[0]) if closing.size else positions.size
        ends = np.flatnonzero((chars[:limit] == CLOSE_BRACE) & (depths[:limit] == state.events_depth))
        cut = int(positions[ends[-1]]) + 1 if ends.size else 0
        if cut:
            yield self.decode_chunk(buffer, cut, positions[:limit], chars[:limit], depths[:limit])
        if closing.size:
            state.mode = "footer"
            self.keep_footer(buffer[int(positions[limit]) :])
            return b""
        state.lines_before += buffer.count(b"\n", 0, cut)
        return buffer[cut:]

    def decode_chunk(
        self, buffer: bytes, cut: int, positions: np.ndarray, chars: np.ndarray, depths: np.ndarray
    ) -> list[TraceEvent]:
        region = buffer[:cut].lstrip(b", \t\r\n")
        try:
            events = CHUNK_DECODER.decode(b"[" + region + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError):
            events = self.decode_one_by_one(buffer, cut, positions, chars, depths)
        self.events_read += len(events)
        return events

    def decode_one_by_one(
        self, buffer: bytes, cut: int, positions: np.ndarray, chars: np.ndarray, depths: np.ndarray
    ) -> list[TraceEvent]:
        """A chunk failed: decode its events separately and skip the bad ones with a warning."""
        depth = self.state.events_depth
        starts = positions[(chars == OPEN_BRACE) & (depths == depth + 1)]
        ends = positions[(chars == CLOSE_BRACE) & (depths == depth)]
        events = []
        for begin, end in zip(starts.tolist(), ends.tolist()):
            if end >= cut:
                break
            try:
                events.append(EVENT_DECODER.decode(buffer[begin : end + 1]))
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                self.skip_bad_event(buffer, begin, str(error))
        return events

    def skip_bad_event(self, buffer: bytes, offset: int, message: str) -> None:
        self.bad_events += 1
        self.parsed.skipped["malformed event"] += 1
        if self.bad_events <= MAX_EVENT_WARNINGS:
            line = self.state.lines_before + buffer.count(b"\n", 0, offset)
            self.parsed.warnings.append(f"{self.path}:{line}: malformed trace event skipped ({message})")

    def keep_footer(self, data: bytes) -> None:
        self.state.footer.append(data)
        self.state.footer_bytes += len(data)
        if self.state.footer_bytes > METADATA_LIMIT:
            raise MalformedInput(self.path, f"more than {METADATA_LIMIT >> 20} MB after traceEvents", hint=TRACE_HINT)

    def finish(self, carry: bytes) -> None:
        if self.state.mode == "header":
            raise MalformedInput(self.path, "no traceEvents array found: not a Chrome/Kineto trace", hint=TRACE_HINT)
        if self.state.mode == "events":
            raise MalformedInput(
                self.path,
                f"truncated: the traceEvents array never closes ({self.events_read:,} events read)",
                hint="the profiler may still have been writing; re-export or re-copy the trace",
            )

    def metadata(self) -> TraceMeta:
        if self.state.events_depth == 1:
            return TraceMeta()
        document = self.state.header + b"]" + b"".join(self.state.footer)[1:]
        try:
            return META_DECODER.decode(document)
        except msgspec.ValidationError as error:
            raise MalformedInput(self.path, f"unexpected trace metadata ({error})", hint=TRACE_HINT) from error
        except msgspec.DecodeError as error:
            raise MalformedInput(
                self.path, f"the JSON around traceEvents is broken or truncated ({error})", hint="re-copy the trace"
            ) from error


# --- collecting what the breakdown needs ---------------------------------------------------------

class RankCollector:
    """Compact columns for one rank's events (array.array: 8 bytes a value, not a Python object)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.events = 0
        self.kernel_start, self.kernel_dur = array("d"), array("d")
        self.kernel_stream, self.kernel_corr, self.kernel_name, self.kernel_cat = array("q"), array("q"), array("q"), array("q")
        self.launch_corr, self.launch_thread, self.launch_ts = array("q"), array("q"), array("d")
        self.cpu = MarkerColumns()
        self.gpu = MarkerColumns()
        self.devices: Counter[int] = Counter()

    def to_events(self, rank: int, names: list[str], scale: float) -> RankEvents:
        start = np.frombuffer(self.kernel_start, dtype=np.float64) * scale
        return RankEvents(
            rank=rank,
            kernels=Kernels(
                start=start,
                end=start + np.frombuffer(self.kernel_dur, dtype=np.float64) * scale,
                stream=np.frombuffer(self.kernel_stream, dtype=np.int64),
                correlation=np.frombuffer(self.kernel_corr, dtype=np.int64),
                name=np.frombuffer(self.kernel_name, dtype=np.int64),
                category=np.frombuffer(self.kernel_cat, dtype=np.int64),
            ),
            launches=Launches(
                correlation=np.frombuffer(self.launch_corr, dtype=np.int64),
                thread=np.frombuffer(self.launch_thread, dtype=np.int64),
                ts=np.frombuffer(self.launch_ts, dtype=np.float64) * scale,
            ),
            cpu_markers=self.cpu.to_markers(scale),
            gpu_markers=self.gpu.to_markers(scale),
            names=names,
        )


class MarkerColumns:
    def __init__(self) -> None:
        self.lane, self.start, self.dur, self.phase, self.priority = array("q"), array("d"), array("d"), array("q"), array("q")
        self.source: list[str] = []

    def add(self, lane: int, start: float, dur: float, phase: int, priority: int, source: str) -> None:
        self.lane.append(lane)
        self.start.append(start)
        self.dur.append(dur)
        self.phase.append(phase)
        self.priority.append(priority)
        self.source.append(source)

    def to_markers(self, scale: float) -> Markers:
        start = np.frombuffer(self.start, dtype=np.float64) * scale
        return Markers(
            lane=np.frombuffer(self.lane, dtype=np.int64),
            start=start,
            end=start + np.frombuffer(self.dur, dtype=np.float64) * scale,
            phase=np.frombuffer(self.phase, dtype=np.int64),
            priority=np.frombuffer(self.priority, dtype=np.int64),
            source=self.source,
        )


class EventCollector:
    """Route each kept event to its rank's columns; count the rest by category."""

    def __init__(self, rules: TraceRules) -> None:
        self.rules = rules
        self.ranks: dict[str, RankCollector] = {}
        self.pid_cache: dict[Any, tuple[RankCollector, str]] = {}
        self.threads: dict[tuple[str, str, Any], int] = {}
        self.names: dict[str, int] = {}
        self.ignored: Counter[str] = Counter()
        self.marker_sources: Counter[str] = Counter()

    def rank_of(self, pid: Any) -> tuple[RankCollector, str]:
        found = self.pid_cache.get(pid)
        if found is None:
            match = RANK_LABEL.match(pid) if isinstance(pid, str) else None
            label, rest = (match["label"], match["rest"]) if match else ("", str(pid))
            collector = self.ranks.get(label) or self.ranks.setdefault(label, RankCollector(label))
            found = self.pid_cache[pid] = (collector, rest)
        return found

    def add_all(self, events: list[TraceEvent]) -> None:
        role_of, ignored = ROLE_BY_CATEGORY.get, self.ignored
        for event in events:
            role = role_of(event.cat) or role_of(event.cat.lower())
            collector, pid = self.rank_of(event.pid)
            collector.events += 1
            if role is None or event.ph != "X" or event.ts is None:
                ignored[f"not used: {event.cat or 'ph ' + event.ph}"] += 1
                continue
            if role is LAUNCH:
                self.add_launch(collector, pid, event)
            elif role is CPU_RANGE or role is GPU_RANGE:
                self.add_marker(collector, pid, event, role)
            else:
                self.add_gpu_activity(collector, pid, event, role)

    def add_gpu_activity(self, collector: RankCollector, pid: str, event: TraceEvent, role: str) -> None:
        args = event.args or EventArgs()
        collector.kernel_start.append(event.ts)
        collector.kernel_dur.append(event.dur or 0.0)
        collector.kernel_stream.append(stream_of(event))
        collector.kernel_corr.append(args.correlation if args.correlation is not None else -1)
        collector.kernel_name.append(self.name_id(event.name))
        collector.kernel_cat.append(CATEGORY_CODE[role])
        device = args.device if args.device is not None else int_or_none(pid)
        if device is not None:
            collector.devices[device] += 1

    def add_launch(self, collector: RankCollector, pid: str, event: TraceEvent) -> None:
        if event.args is None or event.args.correlation is None:
            self.ignored["not used: launch without correlation"] += 1
            return
        collector.launch_corr.append(event.args.correlation)
        collector.launch_thread.append(self.thread_id(collector.label, pid, event.tid))
        collector.launch_ts.append(event.ts)

    def add_marker(self, collector: RankCollector, pid: str, event: TraceEvent, role: str) -> None:
        rule = self.rules.phase_marker(event.name, event.cat.lower())
        if rule is None:
            self.ignored[f"not used: {event.cat} (not a phase marker)"] += 1
            return
        self.marker_sources[rule.source] += 1
        phase = PHASE_CODES.index(rule.phase)
        if role is CPU_RANGE:
            lane = self.thread_id(collector.label, pid, event.tid)
            collector.cpu.add(lane, event.ts, event.dur or 0.0, phase, rule.priority, rule.source)
        else:
            collector.gpu.add(stream_of(event), event.ts, event.dur or 0.0, phase, rule.priority, rule.source)

    def thread_id(self, label: str, pid: str, tid: Any) -> int:
        key = (label, pid, tid)
        found = self.threads.get(key)
        if found is None:
            found = self.threads[key] = len(self.threads)
        return found

    def name_id(self, name: str) -> int:
        found = self.names.get(name)
        if found is None:
            found = self.names[name] = len(self.names)
        return found


def stream_of(event: TraceEvent) -> int:
    if event.args is not None and event.args.stream is not None:
        return event.args.stream
    return event.tid if isinstance(event.tid, int) else -1


def int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# --- what the file name and metadata say ---------------------------------------------------------

@dataclass
class FileFacts:
    profile_id: str | None = None
    merged: bool = False
    tp_rank: int | None = None
    dp_rank: int | None = None
    pp_rank: int | None = None
    ep_rank: int | None = None
    stage: str | None = None


def facts_from_name(name: str) -> FileFacts:
    if match := MERGED_FILE.match(name):
        return FileFacts(profile_id=match["profile_id"], merged=True)
    if match := SGLANG_FILE.match(name):
        stage = match["stage"]
        return FileFacts(
            profile_id=match["profile_id"],
            tp_rank=int(match["tp"]),
            dp_rank=int_or_none(match["dp"]),
            pp_rank=int_or_none(match["pp"]),
            ep_rank=int_or_none(match["ep"]),
            stage=STAGES.get(stage.lower(), stage) if stage else None,
        )
    return FileFacts(profile_id=re.sub(r"(\.pt)?\.trace\.json(\.gz)?$|\.json(\.gz)?$", "", name))


def facts_from_label(label: str, base: FileFacts) -> FileFacts:
    parts = {kind: int(number) for kind, number in LABEL_PART.findall(label)}
    return FileFacts(
        profile_id=base.profile_id,
        merged=True,
        tp_rank=parts.get("TP"),
        dp_rank=parts.get("DP"),
        pp_rank=parts.get("PP"),
        ep_rank=parts.get("EP"),
        stage=base.stage,
    )


@dataclass(frozen=True)
class TimeBasis:
    scale: float  # multiply raw ts/dur by this to get µs
    unit_note: str
    base: str  # how timestamps relate to wall-clock time
    origin_us: float | None  # epoch µs of raw ts 0 (after scaling), None when unknown


def time_basis(path: Path, meta: TraceMeta, collectors: list[RankCollector], parsed: ParsedSource) -> TimeBasis:
    """µs per the Chrome trace format, unless magnitude or durations show ns (documented in docs/breakdown.md)."""
    durations = np.concatenate([np.frombuffer(c.kernel_dur, dtype=np.float64) for c in collectors])
    starts = np.concatenate([np.frombuffer(c.kernel_start, dtype=np.float64) for c in collectors])
    median_dur = float(np.median(durations)) if durations.size else 0.0
    largest_ts = float(np.max(np.abs(starts))) if starts.size else 0.0
    unit = (meta.displayTimeUnit or "").lower()
    implausible = median_dur > PLAUSIBLE_MEDIAN_KERNEL_US
    if largest_ts > EPOCH_NS_FLOOR or (unit == "ns" and implausible):
        scale = 1e-3
        why = "timestamps beyond 1e17" if largest_ts > EPOCH_NS_FLOOR else f"displayTimeUnit 'ns' and a median kernel of {median_dur:,.0f} units"
        note = f"read as ns ({why}), converted to µs"
        parsed.warnings.append(f"{path}: timestamps are in ns, not µs ({why}); converted to µs")
    elif implausible:
        scale = 1.0
        note = f"µs, but the median kernel lasts {median_dur / 1000:,.1f} ms: check the exporter's time unit"
        parsed.warnings.append(
            f"{path}: the median GPU kernel lasts {median_dur / 1000:,.1f} ms if timestamps are µs (Chrome trace "
            "format) — implausible; if the exporter wrote ns, durations here are 1000× too long"
        )
    else:
        scale = 1.0
        note = "µs (displayTimeUnit 'ns' is display-only; durations are plausible µs)" if unit == "ns" else "µs"
    return TimeBasis(scale, note, *clock_origin(meta, largest_ts * scale))


def clock_origin(meta: TraceMeta, largest_us: float) -> tuple[str, float | None]:
    if meta.baseTimeNanoseconds is not None:
        return "relative to baseTimeNanoseconds", meta.baseTimeNanoseconds / 1000
    if largest_us > EPOCH_US_FLOOR:
        return "absolute epoch µs", 0.0
    return "relative, origin unknown", None


def gpu_name(meta: TraceMeta, devices: Counter[int]) -> str | None:
    if not meta.deviceProperties or not devices:
        return None
    device = devices.most_common(1)[0][0]
    for entry in meta.deviceProperties:
        if entry.get("id") == device:
            return entry.get("name")
    return meta.deviceProperties[0].get("name")


# --- parse ------------------------------------------------------------------------------------------

def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="pytorch")
    rules = rules_for(options.extra)
    collector = EventCollector(rules)
    with open_binary(path) as stream:
        reader = TraceEventStream(path, stream, parsed)
        for chunk in reader.chunks():
            collector.add_all(chunk)
        meta = reader.metadata()
    parsed.lines_read = reader.events_read
    parsed.skipped.update(collector.ignored)
    ranks = [c for c in collector.ranks.values() if len(c.kernel_start)]
    if not ranks:
        raise MalformedInput(path, NO_GPU_EVENTS, hint="profile with GPU activities (SGLang's default is CPU and GPU)")
    for empty in (c for c in collector.ranks.values() if not len(c.kernel_start) and c.label):
        parsed.warnings.append(f"{path}: rank [{empty.label}] has no GPU kernel events; left out")
    basis = time_basis(path, meta, ranks, parsed)
    names = sorted(collector.names, key=collector.names.__getitem__)
    facts = facts_from_name(path.name)
    assigned = assign_ranks(path, meta, facts, ranks, parsed)
    if not collector.marker_sources:
        parsed.warnings.append(
            f"{path}: no phase markers (step[...] spans or EAGLE worker stack events): all GPU time is 'unattributed'"
        )
    tables: dict[str, list[dict[str, Any]]] = {"cycle_phase_times": [], "trace_kernels": [], "trace_ranks": []}
    labels = {key: options.extra.get(key) for key in ("phase", "variant")}
    for rank_collector, (rank, rank_facts) in zip(ranks, assigned):
        result = analyze_rank(rank_collector.to_events(rank, names, basis.scale), rules)
        tables["cycle_phase_times"] += [{**row, **labels} for row in result.cycle_rows]
        tables["trace_kernels"] += [{**row, **labels} for row in result.kernel_rows]
        tables["trace_ranks"].append(
            {**rank_row(path, meta, basis, rank_facts, rank_collector, result, collector.marker_sources), **labels}
        )
    parsed.tables = {name: table_from_rows(name, rows) for name, rows in tables.items()}
    return parsed


def assign_ranks(
    path: Path, meta: TraceMeta, facts: FileFacts, ranks: list[RankCollector], parsed: ParsedSource
) -> list[tuple[int, FileFacts]]:
    """(rank, facts) per collected rank: distributedInfo, else the file name, else the merged pid labels."""
    info = meta.distributedInfo or {}
    if len(ranks) == 1 and not ranks[0].label:
        rank = info.get("rank") if isinstance(info.get("rank"), int) else facts.tp_rank
        if rank is None:
            parsed.warnings.append(f"{path}: no rank in distributedInfo nor in the file name (-TP-N): assumed rank 0")
            rank = 0
        return [(rank, facts)]
    labelled = [facts_from_label(c.label, facts) for c in ranks]
    only_tp = all(f.dp_rank is None and f.pp_rank is None and f.ep_rank is None and f.tp_rank is not None for f in labelled)
    if only_tp and len({f.tp_rank for f in labelled}) == len(labelled):
        return [(f.tp_rank or 0, f) for f in labelled]
    order = sorted(range(len(labelled)), key=lambda i: (labelled[i].dp_rank or 0, labelled[i].pp_rank or 0, labelled[i].ep_rank or 0, labelled[i].tp_rank or 0))
    position = {index: rank for rank, index in enumerate(order)}
    return [(position[i], f) for i, f in enumerate(labelled)]


def rank_row(
    path: Path,
    meta: TraceMeta,
    basis: TimeBasis,
    facts: FileFacts,
    collector: RankCollector,
    result: RankBreakdown,
    marker_sources: Counter[str],
) -> dict[str, Any]:
    info = meta.distributedInfo or {}
    attribution = result.attribution
    kernel_count = int(np.sum(result.times.kernel_count))
    attributed = float(np.mean(attribution.phase != PHASE_CODES.index("unattributed"))) if kernel_count else None
    start_at = None
    if basis.origin_us is not None:
        start_at = datetime(1970, 1, 1) + timedelta(microseconds=basis.origin_us + result.trace_start_us)
    summary = result.summary
    categories = np.frombuffer(collector.kernel_cat, dtype=np.int64)
    return {
        "rank": result.rank,
        "world_size": info.get("world_size") if isinstance(info.get("world_size"), int) else None,
        "tp_rank": facts.tp_rank,
        "dp_rank": facts.dp_rank,
        "pp_rank": facts.pp_rank,
        "ep_rank": facts.ep_rank,
        "stage": facts.stage,
        "profile_id": facts.profile_id,
        "merged": facts.merged,
        "file_name": path.name,
        "gpu_name": gpu_name(meta, collector.devices),
        "time_base": basis.base,
        "time_unit_note": basis.unit_note,
        "trace_start_at": start_at,
        "span_ms": result.span_ms,
        "events_read": collector.events,
        "kernels": int(np.sum(categories == CATEGORY_CODE[KERNEL])),
        "memory_ops": int(np.sum(categories != CATEGORY_CODE[KERNEL])),
        "launches_matched": attribution.launches_found,
        "attributed_share": attributed,
        "phase_source": "+".join(sorted(marker_sources)) or "none",
        "busy_ms": result.busy_ms,
        "idle_ms": result.span_ms - result.busy_ms,
        "communication_ms": result.class_union_ms["communication"],
        "attention_ms": result.class_union_ms["attention"],
        "gemm_ms": result.class_union_ms["gemm"],
        "moe_ms": result.class_union_ms["moe"],
        "memcpy_ms": result.class_union_ms["memcpy"],
        "other_kernel_ms": result.class_union_ms["elementwise/other"],
        "cycles": summary["cycles"],
        "complete_cycles": summary["complete_cycles"],
        "median_cycle_ms": summary["median_cycle_ms"],
        "max_cycle_ms": summary["max_cycle_ms"],
        "median_verify_ms": summary["median_verify_ms"],
        "median_verify_comm_ms": summary["median_verify_comm_ms"],
        "verify_comm_share": summary["verify_comm_share"],
        "extra": json.dumps({"distributedInfo": info, "traceName": meta.traceName}, sort_keys=True, default=str),
    }


FORMAT = Format(
    kind=KIND,
    description="PyTorch profiler (Kineto) trace JSON, as SGLang writes per rank (.trace.json.gz)",
    sniff=sniff,
    parse=parse,
)
