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
  or pretty-printed records do not cost a parse per line; past 64 KiB, only at a
  ``}`` in the first column or once the text grew by half, so a pretty-printed
  document of megabytes is not parsed from its start at every indented ``}``);
  the record is reported at its first line;
* reads records that run together (``}{``, as pasted pretty-printed output shows),
  any number of them on one line;
* treats a number of 4,300+ digits or nesting deeper than Python recurses as a
  malformed record (Python's json raises ValueError/RecursionError for those);
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
# Past this many characters, a record spread over lines is parsed again only at a "}" in the first
# column (where pretty-printers close a document) or once it grew by half since the last try: a long
# pretty-printed document must not cost a parse from its start at every indented "}".
BACKOFF_CHARS = 64 * 1024
SNIPPET_CHARS = 60

SPACE = re.compile(r"\s*")
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
    pending_chars: int = 0
    tried_chars: int = 0  # the pending text's size when a parse last found it incomplete

    def feed(self, line_no: int, raw: str) -> list[JsonRecord]:
        text = raw.strip()
        if not text:
            return []
        if not self.pending and not text.startswith("{"):
            self.skip([(line_no, text)], NOT_JSON, snippet(text))
            return []
        self.pending.append((line_no, text))
        self.pending_chars += len(text) + 1
        if self.put_off(at_margin=not raw[:1].isspace()):
            return self.wait_for_more()
        return self.try_complete()

    def put_off(self, *, at_margin: bool) -> bool:
        """Whether to skip the parse a closing line would get (see ``BACKOFF_CHARS``)."""
        if len(self.pending) == 1 or at_margin or self.pending_chars < BACKOFF_CHARS:
            return False
        return self.pending_chars < 1.5 * self.tried_chars

    def finish(self) -> list[JsonRecord]:
        records = self.try_complete() if self.pending else []  # the parse a put-off may have saved for last
        if self.pending:
            self.skip(self.pending, TRUNCATED, "the file ends before the record closes")
            self.set_pending([])
        return records

    def set_pending(self, lines: list[tuple[int, str]]) -> None:
        self.pending = lines
        self.pending_chars = sum(len(text) + 1 for _, text in lines)
        self.tried_chars = 0

    def try_complete(self) -> list[JsonRecord]:
        closed = self.pending[-1][1].endswith("}")  # a record is an object: only "}" can end it
        if not closed and len(self.pending) > 1:
            return self.wait_for_more()
        document = "\n".join(text for _, text in self.pending)
        records: list[JsonRecord] = []
        line_no, position = self.pending[0][0], 0
        while True:  # records may run together ("}{"): read them in turn, by offset (no copies)
            try:
                value, end = DECODER.raw_decode(document, position)
            except json.JSONDecodeError as error:
                self.keep_from(document, line_no, position)
                if not closed or looks_incomplete(error, document):
                    self.tried_chars = self.pending_chars
                    return records + self.wait_for_more()
                return records + self.recover(error.msg, error.colno)
            except (ValueError, RecursionError) as error:  # a number of 4,300+ digits; nesting deeper than Python recurses
                self.keep_from(document, line_no, position)
                return records + self.recover(f"{type(error).__name__}: {str(error)[:80]}", None)
            if isinstance(value, dict):
                records.append(JsonRecord(line_no, value))
            else:
                note_skip(self.parsed, self.path, line_no, NOT_OBJECT, f"a JSON {type(value).__name__}")
            rest = SPACE.match(document, end).end()  # type: ignore[union-attr]
            if document.startswith("{", rest):
                line_no += document.count("\n", position, rest)
                position = rest
                continue
            if rest < len(document):
                self.parsed.warnings.append(
                    f"{self.path}:{line_no}: text after the JSON record ignored: {snippet(document[rest:])}"
                )
            self.set_pending([])
            return records

    def keep_from(self, document: str, line_no: int, position: int) -> None:
        """After records that ran together, what is left of the text is the pending record."""
        if position:
            self.set_pending([(line_no, document[position:])])

    def wait_for_more(self) -> list[JsonRecord]:
        if len(self.pending) > MAX_PENDING_LINES:
            self.skip(self.pending, MALFORMED, f"no complete record after {MAX_PENDING_LINES} lines")
            self.set_pending([])
        return []

    def recover(self, problem: str, column: int | None) -> list[JsonRecord]:
        # A line that starts a record right after an unclosed one means the earlier lines were
        # a truncated record: drop them, and read the new line on its own.
        if len(self.pending) > 1 and self.pending[-1][1].startswith("{"):
            newest = self.pending.pop()
            self.skip(self.pending, TRUNCATED, "the record never closes; the next record starts at line " + str(newest[0]))
            self.set_pending([newest])
            return self.try_complete()
        self.skip(self.pending, MALFORMED, problem if column is None else f"{problem} (column {column})")
        self.set_pending([])
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
    yield from reader.finish()
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
