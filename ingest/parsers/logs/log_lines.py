"""Line shapes shared by the server-log parsers: wrappers, prefixes, noise, and block reading.

A server log line is ``[wrapper][prefix]message``:

* wrapper — added by whatever captured the output: a tqdm bar left before the line
  (by a carriage return, or glued on), docker compose
  (``llm0-1  | ``), Ray (``(SGLangEngine pid=123, ip=10.0.0.1) ``), vLLM's own
  process tags (``(APIServer pid=1) ``), ``kubectl logs --timestamps``
  (``2025-10-20T03:02:22.123456789Z ``), ANSI colour codes;
* prefix — the engine's logging format: SGLang ``[YYYY-MM-DD HH:MM:SS{.mmm}{ DP0 TP0 ...}] ``
  (date absent before 2024-10), custom logging configs
  ``YYYY-MM-DD HH:MM:SS INFO <pid> [DP3 TP3 EP3 file.py:222] ``, Python ``logging`` format
  strings of one's own (``YYYY-MM-DD HH:MM:SS,mmm [INFO] logger.name: ``,
  ``... - logger - INFO - ``, ...: ``PYTHON_LOGGING``), vLLM ``INFO MM-DD HH:MM:SS [file.py:N] ``.

Patterns are plain strings valid for both Python ``re`` and RE2 (Arrow compute),
so the per-block fast path and the per-line fallback read the same shapes. Each
engine parser anchors its message pattern right after these prefixes, so text
that merely *contains* "Decode batch" further into a message is never a stats line.
"""
from __future__ import annotations

import re
import sys
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.errors import IngestError, MalformedInput
from ingest.formats import ParseOptions
from ingest.reader import open_binary

ProgressCallback = Callable[[int, int], None]
Result = TypeVar("Result")

NEWLINE = ord("\n")
BLOCK_BYTES = 4 * 1024 * 1024  # bigger blocks are no faster and hold more memory per worker
WORKERS = 2  # numpy and Arrow release the GIL: two blocks are scanned at once

ANSI = r"(?:\x1b\[[0-9;]*m)"
WRAPPER = (
    r"(?:[^\r\n]*\r)?"  # a progress bar overwritten by a carriage return
    r"(?:\s*\d+%[^\[\r\n]*\[[^\]]*(?:it/s|s/it)\])?"  # ... or glued before the line (tqdm without a newline)
    rf"{ANSI}*"
    r"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z? )?"  # kubectl logs --timestamps
    rf"(?:[\w.-]+ +\|(?: |{ANSI})*)?"  # docker compose service column
    r"(?:\([\w.:-]+(?: pid=\d+)?(?:, ip=[^)]*)?\) +)?"  # Ray actor / vLLM process tag
)

# One alternative per logging format; group names are unique (RE2 requires it) and
# prefixed so ``prefix_fields`` can coalesce them.
SGLANG_BRACKET = (
    r"\[(?:(?P<b_date>\d{4}-\d\d-\d\d) )?(?P<b_time>\d\d:\d\d:\d\d(?:[.,]\d+)?)"
    r"(?P<b_tags>(?: [A-Z][A-Z_]*\d+)*)\] "
)
CUSTOM_LOGGING = (
    r"(?P<c_date>\d{4}-\d\d-\d\d)[ T](?P<c_time>\d\d:\d\d:\d\d(?:[.,]\d+)?) (?:[A-Z]+ |\d+ )*"
    r"\[(?P<c_tags>(?:[A-Z][A-Z_]*\d+ )*)[\w.-]+:\d+\] "
)
# Python's ``logging`` with a format string of someone's own (SGLANG_LOGGING_CONFIG_PATH hands SGLang a
# dictConfig; scripts call logging.basicConfig): an asctime, bare or as SGLang brackets it (with rank
# tags), then any run of the fields such formats print, each ended by its separator. The message
# starts after the last one. What makes a field recognizable, and so keeps message text out of the
# prefix: a level word; a logger name followed by " - "/" | ", in brackets, or, when it starts in
# lower case as ``getLogger(__name__)`` names do, followed by ": " (so "PROFILE: " is message text);
# a ``file.py:N`` site; a process id. Examples, each a format string and what it prints:
#   %(asctime)s [%(levelname)s] %(name)s: %(message)s
#       2026-01-02 10:11:12,345 [INFO] sglang.srt.managers.scheduler: Decode batch, ...
#   %(asctime)s - %(name)s - %(levelname)s - %(message)s
#       2025-12-04 20:35:55,417 - sglang.srt.managers.scheduler - INFO - Prefill batch. ...
#   %(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s
#       INFO 2026-01-02 10:11:15.731 scheduler.py:287] Decode batch, ...
#   [%(asctime)s{ranks}] %(filename)s:%(lineno)d - %(message)s
#       [2026-01-02 10:11:16 TP0] scheduler.py:287 - Decode batch, ...
LEVEL_WORD = r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)"
FIELD_END = r"(?: +[-|] +|: +| +)"  # " - ", " | " (padded, as %(levelname)-8s pads), ": " or spaces
# Any text is a run of fields in one way at most: no two alternatives take the same text (a level word
# before " - " or in brackets is read as a name), no field starts with "-" or "|", and each ends at
# its separator. Python's re backtracks through every way when the line turns out to be no stats
# line, which with two ways per field took 2 s for a line of twenty "INFO - ".
LOGGING_FIELD = (
    rf"(?:{LEVEL_WORD}(?:: +| +)"
    r"|\[[\w.-]+\] +|[\w.][\w.-]* +[-|] +|[a-z_]\w*(?:\.\w+)*: +"
    rf"|(?:\[[\w.-]+\.py:\d+\]|[\w.-]+\.py:\d+\]?){FIELD_END}"
    r"|\d+ +)"
)
LOGGING_LEAD = rf"(?:{LEVEL_WORD} +)?"  # %(levelname)s before the time
LOGGING_FIELDS = rf"{FIELD_END}{LOGGING_FIELD}*"
PYTHON_LOGGING = (
    rf"{LOGGING_LEAD}(?:\[(?P<l_date>\d{{4}}-\d\d-\d\d) (?P<l_time>\d\d:\d\d:\d\d(?:[.,]\d+)?)"
    r"(?P<l_tags>(?: [A-Z][A-Z_]*\d+)*)\]"
    r"|(?P<p_date>\d{4}-\d\d-\d\d) (?P<p_time>\d\d:\d\d:\d\d(?:[.,]\d+)?))"
    rf"{LOGGING_FIELDS}"
)
LOG_PREFIXES = rf"(?:{SGLANG_BRACKET}|{CUSTOM_LOGGING}|{PYTHON_LOGGING})"
# As stats and config lines are read, the prefix is optional (a message body pasted alone); a line
# is told to be SGLang's by its start-up messages only after a prefix (``SGLANG_LOG_PREFIX``).
SGLANG_PREFIX = rf"{WRAPPER}{LOG_PREFIXES}?"
SGLANG_LOG_PREFIX = rf"{WRAPPER}{LOG_PREFIXES}"

VLLM_PREFIX = (
    rf"{WRAPPER}(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    r"(?P<v_month>\d\d)-(?P<v_day>\d\d) (?P<v_time>\d\d:\d\d:\d\d(?:[.,]\d+)?) \[?[\w.-]+:\d+\] )?"
)

DATE_GROUPS = ("b_date", "c_date", "l_date", "p_date")
TIME_GROUPS = ("b_time", "c_time", "l_time", "p_time")
TAG_GROUPS = ("b_tags", "c_tags", "l_tags")

RANK_TAG = re.compile(r"([A-Z][A-Z_]*?)(\d+)")
RANK_COLUMNS = {"DP": "dp_rank", "TP": "tp_rank"}

# A date and time near the start of a line: to date ``[HH:MM:SS]`` lines and vLLM's year-less stamps.
ANY_DATE = re.compile(r"^(?:.{0,80}?\D)?(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)[ T](?P<hm>\d\d:\d\d)")

# Lines that are not stats or config, by kind: first match wins. Applied to the whole line.
# HTTP access lines, the most common kind, are also found by the SGLang reader's compiled pass
# (log_kernels._is_http_access), from these methods.
HTTP_ACCESS = "noise: http access"
HTTP_ACCESS_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH")
NOISE_KINDS: tuple[tuple[str, str], ...] = (
    ("blank line", r"^\s*$"),
    (HTTP_ACCESS, rf'"(?:{"|".join(HTTP_ACCESS_METHODS)}) \S* HTTP/\d'),
    ("noise: tqdm", r"\d+%\|[^|]*\| *\d+/\d+|\[\d\d:\d\d(?::\d\d)?<[^\]]*(?:it/s|s/it)"),
    (
        "noise: traceback",
        r"^(?:\S+ +\| ?)?(?:Traceback \(most recent call last\)|\s+File \"[^\"]+\", line \d+|\s+\^+~*\s*$|"
        r"During handling of the above exception|The above exception was the direct cause|"
        r"(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit)(?::|\s*$)| {4})",
    ),
    ("noise: profiler", r"(?i)profil|torch_profiles|trace\.json"),
)
OTHER_LOG_LINE = "other log line"
OTHER_LOG_LINE_PATTERN = (
    rf"^{WRAPPER}(?:\[(?:\d{{4}}-\d\d-\d\d )?\d\d:\d\d:\d\d|\d{{4}}-\d\d-\d\d[ T]\d\d:\d\d|"
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ :])"
)
OTHER_TEXT = "other text"


def prefix_fields(match: re.Match[str]) -> tuple[str, str, str]:
    """(date, time, rank tags) from whichever prefix alternative of ``match`` matched; '' when absent."""
    date = next(filter(None, match.group(*DATE_GROUPS)), "")
    time = next(filter(None, match.group(*TIME_GROUPS)), "")
    tags = next(filter(None, match.group(*TAG_GROUPS)), "")
    return date, time, tags


MAX_RANK_DIGITS = 9  # rank columns are int32: a longer number in a tag is not a rank (a garbled line)


def rank_tags(tags: str) -> dict[str, int]:
    """``" DP3 TP3 EP3"`` → {"dp_rank": 3, "tp_rank": 3, "ep_rank": 3}; tags with absurd numbers are left out."""
    ranks: dict[str, int] = {}
    for name, number in RANK_TAG.findall(tags):
        if len(number) <= MAX_RANK_DIGITS:
            ranks[RANK_COLUMNS.get(name, f"{name.lower()}_rank")] = int(number)
    return ranks


def iter_blocks(
    path: Path, on_progress: ProgressCallback | None = None, block_bytes: int | None = None
) -> Iterator[np.ndarray]:
    """The decompressed content in blocks (uint8 arrays) that end at a newline (the last one may not).

    Each block is read straight into a buffer, behind the previous block's unfinished last line:
    one copy per byte. Buffers are numpy arrays, not zeroed first (a ``bytearray`` is: ~1 ms per
    4 MB with the GIL held), and are used again once nothing refers to their block (``_Buffers``)."""
    total = path.stat().st_size
    size = block_bytes or BLOCK_BYTES
    buffers = _Buffers(size + CARRY_ROOM)
    with open_binary(path) as stream:
        raw = getattr(stream, "fileobj", None) or stream  # gzip: progress counts compressed bytes
        carry = b""
        while True:
            data = buffers.take(len(carry) + size)
            data[: len(carry)] = np.frombuffer(carry, dtype=np.uint8)
            try:
                read = stream.readinto(memoryview(data)[len(carry) : len(carry) + size])  # type: ignore[attr-defined, arg-type]
            except (EOFError, OSError, zlib.error) as error:
                raise MalformedInput(
                    path, f"corrupt or truncated gzip ({error})", hint="re-copy the file; `gzip -t FILE` checks it"
                ) from error
            if not read:
                break
            data = data[: len(carry) + read]
            cut = kernels().last_index(data, NEWLINE) + 1
            if cut == 0:  # no newline yet: a very long line, keep reading
                carry = data.tobytes()
                continue
            carry = data[cut:].tobytes()
            yield data[:cut]
            if on_progress is not None:
                on_progress(min(raw.tell(), total), total)
        if carry:
            yield np.frombuffer(bytearray(carry), dtype=np.uint8)
    if on_progress is not None:
        on_progress(total, total)


CARRY_ROOM = 64 * 1024  # a kept buffer also holds a previous block's unfinished line up to this long
# Blocks left with the workers while the reading thread finishes an earlier one. More than the
# workers hold at once keeps them busy meanwhile (the 1 GB log: 3.57 -> 3.47 s with 2 to 4 more,
# peak RSS +5 MB; 8 more gained nothing).
IN_FLIGHT = WORKERS + 3
KEPT_BUFFERS = IN_FLIGHT + 3  # the blocks in flight, the one being read, the one just handed out


@dataclass
class _Buffers:
    """Block buffers given out again once nothing refers to them: a fresh 4 MB buffer costs the
    reading thread ~1,000 page faults (measured 0.42 -> 0.11 CPU-s to read 1 GB).

    A buffer is reused only when its reference count is what the pool's own references give, counted
    the same way on a probe array: a block whose bytes anything still holds (a worker, a numpy view,
    an Arrow buffer, all of which keep a reference) is never overwritten."""

    size: int
    kept: list[np.ndarray] = field(default_factory=list)
    unreferenced: int = 0

    def __post_init__(self) -> None:
        self.unreferenced = _reference_counts([np.empty(1, dtype=np.uint8)])[0]

    def take(self, size: int) -> np.ndarray:
        if size > self.size:
            return np.empty(size, dtype=np.uint8)
        for buffer, count in zip(self.kept, _reference_counts(self.kept), strict=True):
            if count == self.unreferenced:
                return buffer
        buffer = np.empty(self.size, dtype=np.uint8)
        if len(self.kept) < KEPT_BUFFERS:
            self.kept.append(buffer)
        return buffer


def _reference_counts(arrays: list[np.ndarray]) -> list[int]:
    return [sys.getrefcount(array) for array in arrays]


def map_blocks(
    path: Path, scan: Callable[[np.ndarray, int], Result], on_progress: ProgressCallback | None = None
) -> list[Result]:
    """``scan(block_bytes, first_line_no)`` for every block, on worker threads, results in file order."""
    return list(iter_mapped_blocks(path, scan, on_progress))


def iter_mapped_blocks(
    path: Path, scan: Callable[[np.ndarray, int], Result], on_progress: ProgressCallback | None = None
) -> Iterator[Result]:
    """``map_blocks`` as a generator: each result as soon as it and all before it are done.

    At most ``IN_FLIGHT + 1`` blocks are read ahead, so memory does not grow with the file
    as long as the caller does not keep the results.
    """
    pending: deque[Future[Result]] = deque()
    next_line_no = 1
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="log-block") as pool:
        try:
            for data in iter_blocks(path, on_progress):
                pending.append(pool.submit(scan, data, next_line_no))
                next_line_no += _line_count(data)
                while len(pending) > IN_FLIGHT:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # the consumer stopped early (an error): do not scan the blocks already queued
            for future in pending:
                future.cancel()


def _line_count(data: np.ndarray) -> int:
    newlines = kernels().count_byte(data, NEWLINE)
    return newlines + (0 if len(data) and data[-1] == NEWLINE else 1)


def kernels() -> ModuleType:
    """The compiled byte scans (``byte_kernels``), imported on first use: see that module for why."""
    from ingest.parsers.logs import byte_kernels

    return byte_kernels


@dataclass(frozen=True)
class Block:
    """A run of whole lines held once in memory; lines are addressed by byte offsets.

    ``lines`` is a zero-copy Arrow view of ``array``, one element per line *with*
    its line break (patterns that anchor at the end allow for ``\\r?\\n?``), so
    Arrow compute (find_substring, match_substring_regex, ...) runs over a whole
    block at once instead of a Python loop per line. ``starts``/``ends`` give each
    line's content without the line break.
    """

    array: np.ndarray  # the block's bytes (uint8)
    starts: np.ndarray  # int64: first byte of each line
    ends: np.ndarray  # int64: one past its last byte, without "\\r\\n"
    lines: pa.StringArray
    first_line_no: int  # 1-based number of the first line in the file
    buffer: pa.Buffer  # the bytes as an Arrow buffer (one wrapper, shared by every view cut from it)

    @property
    def size(self) -> int:
        return len(self.starts)

    def line_text(self, index: int) -> str:
        return self.array[self.starts[index] : self.ends[index]].tobytes().decode("utf-8", errors="replace")


def make_block(data: np.ndarray | bytes | bytearray, first_line_no: int) -> Block:
    array = np.frombuffer(data, dtype=np.uint8)
    count = _line_count(array) if len(array) else 0
    offsets = np.empty(count + 1, dtype=np.int32)
    starts = np.empty(count, dtype=np.int64)
    ends = np.empty(count, dtype=np.int64)
    kernels().line_bounds(array, offsets, starts, ends)
    buffer = pa.py_buffer(data)
    lines = pa.StringArray.from_buffers(count, pa.py_buffer(offsets), buffer)
    try:
        lines.validate(full=True)  # UTF-8 check in C++, ~20x faster than bytes.decode
    except pa.ArrowInvalid:
        return make_block(array.tobytes().decode("utf-8", errors="replace").encode("utf-8"), first_line_no)
    return Block(array, starts, ends, lines, first_line_no, buffer)


def substrings(buffer: pa.Buffer, starts: np.ndarray, ends: np.ndarray) -> pa.StringArray:
    """``buffer[starts[i]:ends[i]]`` as strings; ranges must be ordered and disjoint.

    A zero-copy array of the ranges and the gaps between them, of which every other element is
    taken (measured 35 % faster than filtering with a mask, which must be built first)."""
    count = len(starts)
    if count == 0:
        return pa.array([], type=pa.string())
    cuts = np.empty(2 * count, dtype=np.int32)
    cuts[0::2] = starts
    cuts[1::2] = ends
    pieces = pa.StringArray.from_buffers(2 * count - 1, pa.py_buffer(cuts), buffer)
    return pieces.take(pa.array(np.arange(0, 2 * count - 1, 2, dtype=np.int32)))


def count_noise(lines: pa.StringArray, known_http_access: int = 0) -> Counter[str]:
    """How many of ``lines`` are of each ``NOISE_KINDS`` kind (first match wins), the rest as other lines;
    ``known_http_access`` lines found elsewhere to be HTTP access lines are counted with them."""
    counts: Counter[str] = Counter()
    remaining = lines
    for kind, pattern in NOISE_KINDS:
        found = known_http_access if kind == HTTP_ACCESS else 0
        if len(remaining):
            hit = pc.match_substring_regex(remaining, pattern)
            matched = pc.sum(hit).as_py() or 0
            if matched:
                remaining = remaining.filter(pc.invert(hit))
            found += matched
        if found:
            counts[kind] += found
    if len(remaining):
        prefixed = pc.sum(pc.match_substring_regex(remaining, OTHER_LOG_LINE_PATTERN)).as_py() or 0
        counts[OTHER_LOG_LINE] += prefixed
        counts[OTHER_TEXT] += len(remaining) - prefixed
    return +counts


def classify_line(line: str) -> str:
    """The noise kind of one line (the per-line twin of ``count_noise``)."""
    for kind, pattern in _NOISE_PATTERNS:
        if pattern.search(line):
            return kind
    return OTHER_LOG_LINE if _OTHER_LOG_LINE.search(line) else OTHER_TEXT


_NOISE_PATTERNS = [(kind, re.compile(pattern)) for kind, pattern in NOISE_KINDS]
_OTHER_LOG_LINE = re.compile(OTHER_LOG_LINE_PATTERN)


def last_date(block: Block) -> str | None:
    """``YYYY-MM-DD HH:MM`` of the last line in the block that carries a date."""
    for index in range(block.size - 1, max(block.size - 64, -1), -1):
        found = ANY_DATE.match(block.line_text(index))
        if found:
            return _anchor(found)
    dated = pc.match_substring_regex(block.lines, ANY_DATE.pattern).to_numpy(zero_copy_only=False)
    hits = np.flatnonzero(dated)
    if len(hits) == 0:
        return None
    found = ANY_DATE.match(block.line_text(int(hits[-1])))
    return _anchor(found) if found else None


def dates_before(block: Block, carried: str | None) -> list[str | None]:
    """For each line, ``YYYY-MM-DD HH:MM`` of the closest dated line at or before it (``carried`` from earlier blocks)."""
    extracted = pc.extract_regex(block.lines, ANY_DATE.pattern)
    result: list[str | None] = []
    current = carried
    for found in extracted.to_pylist():
        if found:
            current = _anchor(found)
        result.append(current)
    return result


def _anchor(found: re.Match[str] | dict[str, str]) -> str:
    return f"{found['y']}-{found['m']}-{found['d']} {found['hm']}"


# --- what every server-log reader checks -------------------------------------------------

def check_engine(path: Path, options: ParseOptions, shown: str | None) -> None:
    """``--engine`` must agree with the engine the content shows (None: it shows none)."""
    given = (options.engine or "").lower()
    if not given or shown is None or given == shown:
        return
    raise IngestError(
        path,
        f"--engine {options.engine} was given, but the content is a {shown} server log "
        f"({'Decode/Prefill batch stats or server_args lines' if shown == 'sglang' else 'SpecDecoding/Speculative metrics lines'})",
        hint=f"drop --engine, or pass --engine {shown}",
    )
