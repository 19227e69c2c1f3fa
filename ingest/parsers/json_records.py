"""A tolerant reader of JSON-lines benchmark output, as people actually hand it over.

Benchmark tools append one ``json.dumps`` object per line, so values such as
``Infinity``, ``-Infinity`` and ``NaN`` appear bare (Python's json accepts them;
no text is rewritten, so a string that happens to contain "Infinity" is safe).
Files reach us pasted from terminals and issue threads, so the reader also:

* skips lines that do not start a JSON object (a poster's own echo, a shell
  prompt, a note) — counted as ``not JSON`` and reported as ``file:line`` warnings;
* joins a record wrapped onto several lines: lines are accumulated from a line
  starting with ``{`` until the text parses as one complete JSON value (past the
  first line a parse is only tried when a line ends with ``}``, so long wrapped
  or pretty-printed records do not cost a parse per line); the record is
  reported at its first line;
* reads records that run together (``}{``, as pasted pretty-printed output shows);
* skips a truncated record (a line that never closes, e.g. the last line of a
  run that crashed mid-write): it is dropped with a ``truncated JSON record``
  warning when the next record starts or the file ends, and the good records
  around it are kept. A record whose text is broken in the middle is dropped the
  same way as ``malformed JSON``.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.model import ParsedSource

NOT_JSON = "not JSON (preamble or note)"
TRUNCATED = "truncated JSON record"
MALFORMED = "malformed JSON record"
NOT_OBJECT = "JSON value that is not an object"
MAX_PENDING_LINES = 1_000_000  # a pretty-printed record with per-request arrays stays far below
SNIPPET_CHARS = 60

DECODER = json.JSONDecoder(strict=False)  # strict=False: a record wrapped inside a string keeps the newline


@dataclass(frozen=True)
class JsonRecord:
    line_no: int  # first line of the record (1-based)
    value: dict[str, Any]


def note_skip(parsed: ParsedSource, path: Path, line_no: int | None, reason: str, detail: str = "") -> None:
    """Count a skipped line under ``reason`` and report it as ``file:line: reason: detail``."""
    parsed.skipped[reason] += 1
    where = f"{path}:{line_no}" if line_no is not None else str(path)
    parsed.warnings.append(f"{where}: {reason}{': ' + detail if detail else ''}")


def snippet(text: str) -> str:
    return repr(text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "…")


@dataclass
class JsonRecordReader:
    """Feeds lines in, hands complete records out; skips and warnings go to ``parsed``."""

    path: Path
    parsed: ParsedSource
    pending: list[tuple[int, str]] = field(default_factory=list)

    def feed(self, line_no: int, raw: str) -> list[JsonRecord]:
        text = raw.strip()
        if not text:
            return []
        if not self.pending and not text.startswith("{"):
            self.skip([(line_no, text)], NOT_JSON, snippet(text))
            return []
        self.pending.append((line_no, text))
        return self.try_complete()

    def finish(self) -> None:
        if self.pending:
            self.skip(self.pending, TRUNCATED, "the file ends before the record closes")
            self.pending = []

    def try_complete(self) -> list[JsonRecord]:
        closed = self.pending[-1][1].endswith("}")  # a record is an object: only "}" can end it
        if not closed and len(self.pending) > 1:
            return self.wait_for_more()
        document = "\n".join(text for _, text in self.pending)
        try:
            value, end = DECODER.raw_decode(document)
        except json.JSONDecodeError as error:
            if not closed or looks_incomplete(error, document):
                return self.wait_for_more()
            return self.recover(error)
        lines, self.pending = self.pending, []
        first_line = lines[0][0]
        records = [JsonRecord(first_line, value)] if isinstance(value, dict) else []
        if not records:
            self.skip(lines, NOT_OBJECT, f"a JSON {type(value).__name__}")
        rest = document[end:].lstrip()
        if rest.startswith("{"):  # records run together ("}{"): read on from there
            rest_line = first_line + document.count("\n", 0, len(document) - len(rest))
            self.pending = [(rest_line, rest)]
            records += self.try_complete()
        elif rest:
            self.parsed.warnings.append(f"{self.path}:{first_line}: text after the JSON record ignored: {snippet(rest)}")
        return records

    def wait_for_more(self) -> list[JsonRecord]:
        if len(self.pending) > MAX_PENDING_LINES:
            self.skip(self.pending, MALFORMED, f"no complete record after {MAX_PENDING_LINES} lines")
            self.pending = []
        return []

    def recover(self, error: json.JSONDecodeError) -> list[JsonRecord]:
        # A line that starts a record right after an unclosed one means the earlier lines were
        # a truncated record: drop them, and read the new line on its own.
        if len(self.pending) > 1 and self.pending[-1][1].startswith("{"):
            newest = self.pending.pop()
            self.skip(self.pending, TRUNCATED, "the record never closes; the next record starts at line " + str(newest[0]))
            self.pending = [newest]
            return self.try_complete()
        self.skip(self.pending, MALFORMED, f"{error.msg} (column {error.colno})")
        self.pending = []
        return []

    def skip(self, lines: list[tuple[int, str]], reason: str, detail: str) -> None:
        note_skip(self.parsed, self.path, lines[0][0], reason, detail)
        self.parsed.skipped[reason] += len(lines) - 1  # every line of a dropped record counts


def looks_incomplete(error: json.JSONDecodeError, document: str) -> bool:
    """True when the JSON text stops early rather than going wrong in the middle."""
    return error.pos >= len(document.rstrip()) or error.msg.startswith("Unterminated string")


def read_json_records(path: Path, lines: Iterable[str], parsed: ParsedSource) -> Iterator[JsonRecord]:
    """Every complete JSON object in ``lines``; sets ``parsed.lines_read``."""
    reader = JsonRecordReader(path, parsed)
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        yield from reader.feed(line_no, raw)
    reader.finish()
    parsed.lines_read = line_no



RECORD_START = re.compile(r"^\s*\{", re.MULTILINE)
QUOTED_KEY = re.compile(r'"(\w+)"\s*:')
MAX_PREAMBLE_LINES = 20


def sniff_keys(head: bytes) -> frozenset[str] | None:
    """The top-level keys of the first JSON record in ``head``, for sniffers; None if no record starts near the top.

    Keys nested deeper (a report quoting benchmark records) do not count. When the first
    record does not end within the head (per-request arrays), the keys quoted in its text
    up to an embedded ``server_info`` (whose server args may hold any key) stand in.
    """
    text = head.decode("utf-8", errors="replace")
    start = RECORD_START.search(text)
    if start is None or text.count("\n", 0, start.start()) > MAX_PREAMBLE_LINES:
        return None
    reader = JsonRecordReader(Path("<head>"), ParsedSource(kind="sniff"))
    for line_no, line in enumerate(text[start.start():].splitlines(), start=1):
        records = reader.feed(line_no, line)
        if records:
            return frozenset(records[0].value)
    own_text = text[start.start():].split('"server_info"', 1)[0]
    return frozenset(QUOTED_KEY.findall(own_text))
