"""PyTorch profiler (Kineto) traces: Chrome-trace JSON, ``.json`` or ``.json.gz``, one file per call.

Where they come from: SGLang writes one per rank when profiling is started
(``POST /start_profile``, ``SGLANG_TORCH_PROFILER_DIR`` + ``python -m
sglang.profiler``), named ``<profile_id>-TP-<r>[-DP-<d>][-PP-<p>][-EP-<e>][-<stage>].trace.json.gz``;
``merged-<profile_id>.trace.json.gz`` holds all ranks with pids rewritten to
``[TP01-DP00] <pid>``. Any ``torch.profiler`` export reads the same way.

What is read: the ``traceEvents`` array, streamed with bounded memory by
``ingest/parsers/traces/trace_stream.py`` (real traces reach 1 GB per rank), keeping only
what the breakdown needs, in compact columns: GPU kernels, ``gpu_memcpy`` /
``gpu_memset``, launches (``cuda_runtime``/``cuda_driver`` with a correlation id),
and range events that are phase markers (``user_annotation``, ``python_function``,
``gpu_user_annotation`` matching ``ingest/derive/trace_rules.py``). From the rest of the
document: ``distributedInfo`` (rank, world size), ``deviceProperties`` (GPU name),
``baseTimeNanoseconds`` and ``displayTimeUnit``, wherever they sit relative to
``traceEvents``. Rank, DP/PP/EP rank and stage also come from SGLang's file names.

Deliberately ignored (counted in ``skipped``): ``cpu_op`` and other CPU events,
flow events (``ac2g``, ``fwdbwd``), instant and metadata events, and range events
that are not phase markers. The analysis lives in ``ingest/derive/breakdown.py``;
``docs/breakdown.md`` explains the rules and the tables.
"""
from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ingest.derive.breakdown import (
    KERNEL_CATEGORIES,
    PHASE_CODES,
    Kernels,
    Launches,
    Markers,
    RankBreakdown,
    RankEvents,
    analyze_rank,
)
from ingest.derive.trace_rules import (
    CPU_RANGE_CATEGORIES,
    GPU_RANGE_CATEGORIES,
    TraceRules,
    rules_for,
)
from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.traces.trace_stream import TraceEvent, TraceEventStream, TraceMeta
from ingest.reader import open_binary
from ingest.tables import SCHEMAS, table_from_rows

KIND = "kineto_trace"
NO_GPU_EVENTS = "no GPU kernel events: was the profiler run with activities=['CPU','GPU']?"

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
RANK_LIMIT = 2**31  # ranks are int32 columns; a larger number in a label or file name is not a rank
STAGES = {"extend": "prefill", "prefill": "prefill", "forwardmode.extend": "prefill", "decode": "decode", "forwardmode.decode": "decode"}

MAX_NAME_CHARS = 64 * 1024  # real kernel names (C++ templates) stay far below; the rules read no further
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


# --- collecting what the breakdown needs ---------------------------------------------------------

class RankCollector:
    """Compact columns for one rank's events (array.array: 8 bytes a value, not a Python object)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.kernel_start, self.kernel_dur = array("d"), array("d")
        self.kernel_stream, self.kernel_corr, self.kernel_name = array("q"), array("q"), array("q")
        self.kernel_cat, self.kernel_device = array("q"), array("q")
        self.launch_corr, self.launch_thread, self.launch_ts = array("q"), array("q"), array("d")
        self.cpu = MarkerColumns()
        self.gpu = MarkerColumns()

    def device(self) -> int | None:
        """The device most of this rank's kernels ran on (-1 = not stated)."""
        devices = np.frombuffer(self.kernel_device, dtype=np.int64)
        devices = devices[devices >= 0]
        return int(np.bincount(devices).argmax()) if devices.size else None

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
        self.roles: dict[str, str | None] = {}
        self.ignored: dict[str, int] = {}
        self.marker_sources: Counter[str] = Counter()

    def rank_of(self, pid: Any) -> tuple[RankCollector, str]:
        found = self.pid_cache.get(pid)
        if found is None:
            match = RANK_LABEL.match(pid) if isinstance(pid, str) else None
            label, rest = (match["label"], match["rest"]) if match else ("", str(pid))
            collector = self.ranks.get(label) or self.ranks.setdefault(label, RankCollector(label))
            found = self.pid_cache[pid] = (collector, rest)
        return found

    def role(self, category: str) -> str | None:
        if category not in self.roles:
            self.roles[category] = ROLE_BY_CATEGORY.get(category.lower())
        return self.roles[category]

    def add_all(self, events: list[TraceEvent]) -> None:
        roles, ignored, pid_cache, names = self.roles, self.ignored, self.pid_cache, self.names
        for event in events:
            category = event.cat
            role = roles[category] if category in roles else self.role(category)
            if role is None or event.ph != "X" or event.ts is None:
                reason = category or f"ph {event.ph}"
                ignored[reason] = ignored.get(reason, 0) + 1
                continue
            collector, pid = pid_cache.get(event.pid) or self.rank_of(event.pid)
            if role is LAUNCH:
                self.add_launch(collector, pid, event)
            elif role is CPU_RANGE or role is GPU_RANGE:
                self.add_marker(collector, pid, event, role)
            else:  # GPU activity: the hot path, kept inline
                args = event.args
                correlation, stream, device = -1, event.tid if type(event.tid) is int else -1, -1
                if args is not None:
                    if args.correlation is not None:
                        correlation = args.correlation
                    if args.stream is not None:
                        stream = args.stream
                    if args.device is not None:
                        device = args.device
                name_id = names.get(event.name)
                if name_id is None:
                    name_id = names[event.name] = len(names)
                collector.kernel_start.append(event.ts)
                collector.kernel_dur.append(event.dur or 0.0)
                collector.kernel_stream.append(stream)
                collector.kernel_corr.append(correlation)
                collector.kernel_name.append(name_id)
                collector.kernel_cat.append(CATEGORY_CODE[role])
                collector.kernel_device.append(device)

    def skipped(self) -> Counter[str]:
        return Counter({f"not used: {reason}": count for reason, count in self.ignored.items()})

    def add_launch(self, collector: RankCollector, pid: str, event: TraceEvent) -> None:
        if event.args is None or event.args.correlation is None:
            self.ignored["launch without correlation"] = self.ignored.get("launch without correlation", 0) + 1
            return
        collector.launch_corr.append(event.args.correlation)
        collector.launch_thread.append(self.thread_id(collector.label, pid, event.tid))
        collector.launch_ts.append(event.ts or 0.0)  # add_all passes only events with a time

    def add_marker(self, collector: RankCollector, pid: str, event: TraceEvent, role: str) -> None:
        rule = self.rules.phase_marker(event.name[:MAX_NAME_CHARS], event.cat.lower())
        if rule is None:
            reason = f"{event.cat} (not a phase marker)"
            self.ignored[reason] = self.ignored.get(reason, 0) + 1
            return
        self.marker_sources[rule.source] += 1
        phase = PHASE_CODES.index(rule.phase)
        if role is CPU_RANGE:
            lane = self.thread_id(collector.label, pid, event.tid)
            collector.cpu.add(lane, event.ts or 0.0, event.dur or 0.0, phase, rule.priority, rule.source)
        else:
            stream = event.args.stream if event.args is not None and event.args.stream is not None else event.tid
            collector.gpu.add(stream if isinstance(stream, int) else -1, event.ts or 0.0, event.dur or 0.0, phase, rule.priority, rule.source)

    def thread_id(self, label: str, pid: str, tid: Any) -> int:
        key = (label, pid, tid)
        found = self.threads.get(key)
        if found is None:
            found = self.threads[key] = len(self.threads)
        return found


def shortened(name: str) -> str:
    """A kernel name as classified and stored: at most ``MAX_NAME_CHARS`` (regexes over megabytes cost seconds)."""
    return name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "…"


def int_or_none(value: Any) -> int | None:
    """A rank number from a file name, a pid label or distributedInfo; None when it is none."""
    if isinstance(value, bool):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if 0 <= number < RANK_LIMIT else None


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
            tp_rank=int_or_none(match["tp"]),
            dp_rank=int_or_none(match["dp"]),
            pp_rank=int_or_none(match["pp"]),
            ep_rank=int_or_none(match["ep"]),
            stage=STAGES.get(stage.lower(), stage) if stage else None,
        )
    return FileFacts(profile_id=re.sub(r"(\.pt)?\.trace\.json(\.gz)?$|\.json(\.gz)?$", "", name))


def facts_from_label(label: str, base: FileFacts) -> FileFacts:
    parts = {kind: int_or_none(number) for kind, number in LABEL_PART.findall(label)}
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


def gpu_name(meta: TraceMeta, device: int | None) -> str | None:
    if not meta.deviceProperties:
        return None
    for entry in meta.deviceProperties:
        if entry.get("id") == device:
            return entry.get("name")
    return meta.deviceProperties[0].get("name")


# --- parse ------------------------------------------------------------------------------------------

def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="pytorch")
    rules = rules_for(options.extra)
    collector, meta = read_events(path, rules, parsed)
    ranks = ranks_with_kernels(path, collector, parsed)
    basis = time_basis(path, meta, ranks, parsed)
    names = [shortened(name) for name in sorted(collector.names, key=collector.names.__getitem__)]
    assigned = assign_ranks(path, meta, facts_from_name(path.name), ranks, parsed)
    labels = {key: options.extra.get(key) for key in ("phase", "variant")}
    cycle_tables, kernel_rows, rank_rows = [], [], []
    for rank_collector, (rank, rank_facts) in zip(ranks, assigned, strict=False):
        result = analyze_rank(rank_collector.to_events(rank, names, basis.scale), rules)
        cycle_tables.append(table_from_columns("cycle_phase_times", {**result.cycle_columns, **labels}))
        kernel_rows += [{**row, **labels} for row in result.kernel_rows]
        facts = rank_row(path, meta, basis, rank_facts, rank_collector, result, collector.marker_sources, parsed.lines_read)
        if facts["trace_start_at"] is None and basis.origin_us is not None:
            parsed.warnings.append(
                f"{path}: rank {rank}: the trace's clock ({basis.base}) puts its start outside the calendar; "
                "trace_start_at left empty"
            )
        rank_rows.append({**facts, **labels})
    parsed.tables = {
        "cycle_phase_times": pa.concat_tables(cycle_tables),
        "trace_kernels": table_from_rows("trace_kernels", kernel_rows),
        "trace_ranks": table_from_rows("trace_ranks", rank_rows),
    }
    return parsed


def read_events(path: Path, rules: TraceRules, parsed: ParsedSource) -> tuple[EventCollector, TraceMeta]:
    """Stream the file once, keeping what the breakdown needs; the document's metadata at the end."""
    collector = EventCollector(rules)
    with open_binary(path) as stream:
        reader = TraceEventStream(path, stream, parsed)
        for chunk in reader.chunks():
            collector.add_all(chunk)
        meta = reader.metadata()
    parsed.lines_read = reader.events_read
    parsed.skipped.update(collector.skipped())
    if not collector.marker_sources:
        parsed.warnings.append(
            f"{path}: no phase markers (step[...] spans or EAGLE worker stack events): all GPU time is 'unattributed'"
        )
    return collector, meta


def ranks_with_kernels(path: Path, collector: EventCollector, parsed: ParsedSource) -> list[RankCollector]:
    ranks = [c for c in collector.ranks.values() if len(c.kernel_start)]
    if not ranks:
        raise MalformedInput(path, NO_GPU_EVENTS, hint="profile with GPU activities (SGLang's default is CPU and GPU)")
    for empty in (c for c in collector.ranks.values() if not len(c.kernel_start) and c.label):
        parsed.warnings.append(f"{path}: rank [{empty.label}] has no GPU kernel events; left out")
    return ranks


def table_from_columns(name: str, columns: dict[str, Any]) -> pa.Table:
    """Like ``table_from_rows`` for columnar data; a scalar fills the column, NaN in a float column is null."""
    schema = SCHEMAS[name]
    length = next(len(v) for v in columns.values() if isinstance(v, (np.ndarray, list)))
    arrays = []
    for column in schema:
        values = columns.get(column.name)
        if values is None:
            arrays.append(pa.nulls(length, column.type))
        elif isinstance(values, (np.ndarray, list)):
            arrays.append(pa.array(values, type=column.type, from_pandas=True))
        else:
            arrays.append(pa.array([values] * length, type=column.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def assign_ranks(
    path: Path, meta: TraceMeta, facts: FileFacts, ranks: list[RankCollector], parsed: ParsedSource
) -> list[tuple[int, FileFacts]]:
    """(rank, facts) per collected rank: distributedInfo, else the file name, else the merged pid labels."""
    info = meta.distributedInfo or {}
    if len(ranks) == 1 and not ranks[0].label:
        rank = int_or_none(info.get("rank")) if isinstance(info.get("rank"), int) else facts.tp_rank
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
    events_read: int,
) -> dict[str, Any]:
    info = meta.distributedInfo or {}
    attribution = result.attribution
    kernel_count = int(np.sum(result.times.kernel_count))
    attributed = float(np.mean(attribution.phase != PHASE_CODES.index("unattributed"))) if kernel_count else None
    start_at = None
    if basis.origin_us is not None:
        try:
            start_at = datetime(1970, 1, 1) + timedelta(microseconds=basis.origin_us + result.trace_start_us)
        except (OverflowError, ValueError):  # a clock origin or timestamp beyond the calendar (or NaN)
            start_at = None
    summary = result.summary
    categories = np.frombuffer(collector.kernel_cat, dtype=np.int64)
    return {
        "rank": result.rank,
        "world_size": int_or_none(info.get("world_size")) if isinstance(info.get("world_size"), int) else None,
        "tp_rank": facts.tp_rank,
        "dp_rank": facts.dp_rank,
        "pp_rank": facts.pp_rank,
        "ep_rank": facts.ep_rank,
        "stage": facts.stage,
        "profile_id": facts.profile_id,
        "merged": facts.merged,
        "file_name": path.name,
        "gpu_name": gpu_name(meta, collector.device()),
        "time_base": basis.base,
        "time_unit_note": basis.unit_note,
        "trace_start_at": start_at,
        "span_ms": result.span_ms,
        "events_read": events_read,
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
    signs=(
        Sign('"traceEvents"\\s*:', "a 'traceEvents' list"),
        Sign('"ph"\\s*:\\s*"X"', 'complete events (\'"ph": "X"\')'),
        Sign('"cat"\\s*:\\s*"(kernel|gpu_op|cuda_runtime)"', 'GPU kernel events (\'"cat": "kernel"\')'),
    ),
    parse=parse,
    example='"traceEvents": [… {"ph": "X", "cat": "kernel", "name": "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", … "dur": 400, …}',
    precedence=10,
)

FORMATS = (FORMAT,)
