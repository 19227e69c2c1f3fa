"""Stream the ``traceEvents`` array of a Chrome-trace JSON in decoded chunks, with bounded memory.

Real Kineto traces reach 1 GB per rank, so the document is never loaded whole.
The stream is read in blocks; each block is cut after the last complete event and
the events before the cut are decoded by msgspec into typed ``TraceEvent``s (only
the fields the breakdown reads; everything else is skipped by the decoder). The
cut is found cheaply (the last ``}, {`` between events); if that guess is wrong -
it fell inside a string or a nested object - msgspec rejects the chunk, and the
exact path finds event boundaries with a vectorised scan of the block's
structural characters outside strings. The document around the array
(``distributedInfo``, ``deviceProperties``, ``baseTimeNanoseconds``, ...) is kept
and decoded at the end, whichever side of ``traceEvents`` it sits on.

Peak memory is a few blocks plus what the caller keeps, whatever the file size.
A Chrome-trace bare array (``[{...}, ...]``) is read too.
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import msgspec
import numpy as np

from ingest.errors import MalformedInput
from ingest.model import ParsedSource

BLOCK_BYTES = 8 << 20
METADATA_LIMIT = 256 << 20  # bytes of document outside traceEvents we are willing to hold
MAX_EVENT_WARNINGS = 20
MALFORMED_EVENT = "malformed event"
# What decoding a broken chunk raises: bad JSON, a value of the wrong type (ValidationError is a
# DecodeError), and msgspec's own limit on nesting depth.
DECODE_ERRORS = (msgspec.DecodeError, RecursionError)
TRACE_HINT = "expected a PyTorch profiler (Kineto) Chrome-trace JSON with a traceEvents array, .json or .json.gz"


# Ids are kept in int64 columns; JSON allows any integer, so a larger one makes its event malformed.
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class EventArgs(msgspec.Struct):
    correlation: Int64 | None = None
    stream: Int64 | None = None
    device: Int64 | None = None


class TraceEvent(msgspec.Struct):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Int64 | str | None = None
    tid: Int64 | str | None = None
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
RAW_CHUNK_DECODER = msgspec.json.Decoder(list[msgspec.Raw])  # elements undecoded: to count them
EVENT_DECODER = msgspec.json.Decoder(TraceEvent)
META_DECODER = msgspec.json.Decoder(TraceMeta)

_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[list(b"{}[]")] = True
_DEPTH_STEP = np.zeros(256, dtype=np.int64)
_DEPTH_STEP[list(b"{[")] = 1
_DEPTH_STEP[list(b"}]")] = -1
QUOTE, BACKSLASH, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET = 34, 92, 123, 125, 91
BETWEEN_EVENTS = re.compile(rb"\s*,\s*\{")
TRACE_EVENTS_BEFORE = re.compile(rb'"traceEvents"\s*:\s*$')


def structure(buffer: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of ``{}[]`` outside strings, their byte, and the nesting depth after each.

    The buffer must start outside a string at depth 0 (the caller adds its depth).
    Quotes preceded by an odd run of backslashes are escaped and do not toggle strings.
    """
    data = np.frombuffer(buffer, dtype=np.uint8)
    quotes = np.flatnonzero(data == QUOTE)
    if buffer.find(b"\\") >= 0:
        backslashes = np.flatnonzero(data == BACKSLASH)
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


def last_event_end(buffer: bytes) -> int:
    """Offset just past the ``}`` of the last ``}, {`` in the buffer (a guess: verified by decoding), or 0."""
    end = len(buffer)
    while (brace := buffer.rfind(b"}", 0, end)) >= 0:
        if BETWEEN_EVENTS.match(buffer, brace + 1):
            return brace + 1
        end = brace
    return 0


@dataclass
class ScanState:
    """Where the scan is: before the array (header), inside it, or after it (footer)."""

    mode: str = "header"
    events_depth: int = 0  # depth inside the array: 2 in {"traceEvents": [...]}, 1 in a bare array
    header: bytes = b""
    footer: list[bytes] = field(default_factory=list)
    footer_bytes: int = 0
    bytes_read: int = 0
    offset: int = 0  # byte offset of the carried buffer's start in the decompressed document


class TraceEventStream:
    """Decoded chunks of trace events from a (decompressed) byte stream."""

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
            carry = yield from self.consume(carry + block if carry else block)
        if carry and self.state.mode == "events":
            carry = yield from self.consume_exactly(carry)
        self.finish()

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

    def consume(self, buffer: bytes) -> Generator[list[TraceEvent], None, bytes]:
        """Yield the complete events in ``buffer``; return what must be carried into the next block."""
        state = self.state
        if state.mode == "header":
            start = self.find_events_start(buffer)
            if start is None:
                if len(buffer) > METADATA_LIMIT:
                    raise MalformedInput(self.path, f"no traceEvents array in the first {METADATA_LIMIT >> 20} MB", hint=TRACE_HINT)
                return buffer
            state.header, buffer = buffer[:start], buffer[start:]
            state.offset = start
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
            if TRACE_EVENTS_BEFORE.search(buffer, max(0, at - 64), at):
                self.state.events_depth = 2
                return at + 1
        return None

    def consume_events(self, buffer: bytes) -> Generator[list[TraceEvent], None, bytes]:
        cut = last_event_end(buffer)
        if cut:
            try:
                events = CHUNK_DECODER.decode(bracketed(buffer, cut))
            except DECODE_ERRORS:
                pass  # a wrong guess, a broken event or the array's end: take the exact path
            else:
                self.events_read += len(events)
                yield events
                self.state.offset += cut
                return buffer[cut:]
        return (yield from self.consume_exactly(buffer))

    def consume_exactly(self, buffer: bytes) -> Generator[list[TraceEvent], None, bytes]:
        """Find event boundaries from the structure itself; also notices where the array closes."""
        state = self.state
        positions, chars, depths = structure(buffer)
        depths += state.events_depth
        closing = np.flatnonzero(depths < state.events_depth)
        limit = int(closing[0]) if closing.size else positions.size
        array_end = int(positions[limit]) if closing.size else None
        positions, chars, depths = positions[:limit], chars[:limit], depths[:limit]
        ends = np.flatnonzero((chars == CLOSE_BRACE) & (depths == state.events_depth))
        cut = int(positions[ends[-1]]) + 1 if ends.size else 0
        if cut:
            yield self.decode_exactly(buffer, cut, positions, chars, depths)
        if array_end is not None:
            state.mode = "footer"
            self.keep_footer(buffer[array_end:])
            return b""
        state.offset += cut
        return buffer[cut:]

    def decode_exactly(
        self, buffer: bytes, cut: int, positions: np.ndarray, chars: np.ndarray, depths: np.ndarray
    ) -> list[TraceEvent]:
        chunk = bracketed(buffer, cut)
        try:
            events = CHUNK_DECODER.decode(chunk)
        except msgspec.ValidationError:  # some element is not an event: skip those, objects or not
            events, objects = self.decode_one_by_one(buffer, cut, positions, chars, depths)
            self.skip_non_objects(chunk, objects)
        except DECODE_ERRORS:
            events, _ = self.decode_one_by_one(buffer, cut, positions, chars, depths)
        self.events_read += len(events)
        return events

    def skip_non_objects(self, chunk: bytes, objects: int) -> None:
        """Count the elements of the chunk that are not objects (numbers, text, null) as malformed events."""
        try:
            elements = len(RAW_CHUNK_DECODER.decode(chunk))
        except DECODE_ERRORS:
            return  # broken JSON as well: the objects were read one by one, the rest cannot be counted
        if elements > objects:
            self.skip_bad_event(self.state.offset, f"{elements - objects} elements of traceEvents are not objects")
            self.parsed.skipped[MALFORMED_EVENT] += elements - objects - 1

    def decode_one_by_one(
        self, buffer: bytes, cut: int, positions: np.ndarray, chars: np.ndarray, depths: np.ndarray
    ) -> tuple[list[TraceEvent], int]:
        """A chunk failed: decode its events (the objects) separately and skip the bad ones with a warning."""
        depth = self.state.events_depth
        starts = positions[(chars == OPEN_BRACE) & (depths == depth + 1)]
        ends = positions[(chars == CLOSE_BRACE) & (depths == depth)]
        events = []
        objects = 0
        for begin, end in zip(starts.tolist(), ends.tolist(), strict=False):
            if end >= cut:
                break
            objects += 1
            try:
                events.append(EVENT_DECODER.decode(buffer[begin : end + 1]))
            except DECODE_ERRORS as error:
                self.skip_bad_event(self.state.offset + begin, str(error))
        return events, objects

    def skip_bad_event(self, offset: int, message: str) -> None:
        self.bad_events += 1
        self.parsed.skipped[MALFORMED_EVENT] += 1
        if self.bad_events <= MAX_EVENT_WARNINGS:
            self.parsed.warnings.append(f"{self.path} (byte {offset:,}): malformed trace event skipped ({message})")

    def keep_footer(self, data: bytes) -> None:
        self.state.footer.append(data)
        self.state.footer_bytes += len(data)
        if self.state.footer_bytes > METADATA_LIMIT:
            raise MalformedInput(self.path, f"more than {METADATA_LIMIT >> 20} MB after traceEvents", hint=TRACE_HINT)

    def finish(self) -> None:
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
        except DECODE_ERRORS as error:
            raise MalformedInput(
                self.path, f"the JSON around traceEvents is broken or truncated ({error})", hint="re-copy the trace"
            ) from error


def bracketed(buffer: bytes, cut: int) -> bytes:
    """``[`` + the events in buffer[:cut] + ``]``, copying once (the region may start with the separating comma)."""
    start = 0
    while start < cut and buffer[start] in b", \t\r\n":
        start += 1
    return b"".join((b"[", memoryview(buffer)[start:cut], b"]"))
