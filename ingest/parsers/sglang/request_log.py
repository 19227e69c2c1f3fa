"""SGLang's per-request ``Finish:`` lines (``--log-requests``): each finished request's ``meta_info``,
spec statistics included, as ``acceptance_requests`` rows.

Where it comes from: the tokenizer manager's request logger (sgl-project/sglang
``python/sglang/srt/utils/request_logger.py``, ``RequestLogger.log_finished_request``; before it,
``tokenizer_manager.py``) logs, once per finished request,
``Finish: obj={GenerateReqInput repr}, out={output dict repr}`` — Python reprs built by
``_dataclass_to_string_truncated``, not JSON. ``--log-requests-level`` decides what is left out: levels 0
and 1 drop ``text``/``output_ids`` from ``out``; level 2 cuts strings and lists longer than 2048 into
``'head' ... 'tail'`` (not valid Python, so the repr reader keeps such a value as text); level 3 keeps all.
``out['meta_info']`` carries ``spec_verify_ct``, ``spec_accept_length``, ``spec_accept_rate``,
``spec_num_correct_drafts``, ``spec_num_proposed_drafts`` and ``spec_correct_drafts_histogram`` when the
server speculates (names as the JSON ``meta_info`` that ``ingest/parsers/metrics/spec_requests.py`` reads;
PR #18332's ``spec_accept_histogram`` is the same histogram under its first name, a backward-compatible
alias since).

What it reads: files whose content is ``Finish:`` lines (a grep of a server log, a paste) — a whole server
log, with its ``Decode batch`` lines, stays the SGLang server-log format's (``sglang_log.py``), and this
format claims no file that one claims. A record starts at ``Finish: obj=``; lines after it that do not start
another record are joined to it until its ``out={...}`` closes (posters hard-wrap these long lines). The text
before ``Finish:`` (a log prefix, a collector's columns) gives the time the line was logged, kept in ``extra``
as ``logged_at``.

Rows: one per request whose ``meta_info`` has ``spec_verify_ct``, built by ``spec_requests.request_row``
exactly as for a JSON response. A request without spec fields (a server not speculating) has nothing the
table holds, and is counted in ``skipped``; a file of only such requests, or of lines cut before ``out=``,
fails saying which. A record whose repr does not close (a cut line) is skipped with a warning naming its line.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.logs.pyrepr import (
    CLOSERS,
    OPENERS,
    ReprError,
    outside_quotes,
    parse_dict_repr,
)
from ingest.parsers.metrics.spec_requests import request_row, spec_objects
from ingest.parsers.sglang import sglang_log
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "sglang_request_log"
START = "Finish: obj="
# A line that begins with the record, after at most a log prefix (time, rank, level, a collector's columns): a note
# quoting one in prose (`Finish: obj=…`, a .source file) is no record.
SNIFF_LINE = re.compile(rb"(?m)^[^`'\"\n]{0,100}?Finish: obj=(?:GenerateReqInput\(|.*\bout=\{)")
LOGGED_AT = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:\.\d+)?)")
OUT = ", out="
HEADERS = ", headers="  # whitelisted request headers, logged between obj and out in recent builds
# A line a logger or collector began: the end of a wrapped record (which never starts one).
LOG_LINE = re.compile(r"\s*(?:\[\d{4}-\d\d-\d\d|\[\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:|\d{10,}\s)")
# A record that has not closed after this many joined lines is a cut one: a wrapped line runs to dozens, not thousands.
MAX_JOINED = 2000
HISTOGRAM = "spec_correct_drafts_histogram"
HISTOGRAM_ALIAS = "spec_accept_histogram"  # PR #18332's name for the same list, kept as an alias since
NO_SPEC = "request without spec statistics (meta_info has no spec_verify_ct)"
NO_OUT = "Finish line without out= (cut before it, or a multimodal request)"
CUT = "Finish line whose repr does not close (cut short)"


def sniff(head: bytes) -> bool:
    """A ``Finish: obj=`` request line, in a file that is not a whole SGLang server log."""
    return SNIFF_LINE.search(head) is not None and not sglang_log.sniff(head)


@dataclass(frozen=True)
class Record:
    line_no: int
    prefix: str  # the text before ``Finish:``
    body: str  # from ``obj=`` on, wrapped lines joined
    closed: bool  # the repr closed before the file (or the next record) began


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="sglang")
    rows: list[dict[str, Any]] = []
    records = 0
    with_out = 0  # records that reach their out=
    for record in records_of(path, parsed):
        records += 1
        with_out += OUT in record.body
        meta = finished_meta_info(path, parsed, record)
        if meta is not None:
            rows += spec_rows(path, parsed, record, meta, len(rows))
    if not rows:
        message, hint = nothing_stored(records, with_out, parsed)
        raise MalformedInput(path, message, hint=hint)
    parsed.tables["acceptance_requests"] = table_from_rows("acceptance_requests", rows)
    return parsed


def nothing_stored(records: int, with_out: int, parsed: ParsedSource) -> tuple[str, str]:
    """Why no row came from the file's ``records`` Finish lines, and what to do."""
    one = records == 1
    lead = ("an SGLang `Finish:` request line (--log-requests)" if one
            else f"{records} SGLang `Finish:` request lines (--log-requests)")
    if not with_out:
        return (f"{lead}, cut before {'its' if one else 'their'} out={{'meta_info': …}}: no request statistics",
                "copy whole Finish lines: the statistics are in out={'meta_info': …} at the end of each")
    if parsed.skipped[NO_SPEC]:
        return (f"{lead}, {'without' if one else 'none with'} spec statistics in meta_info (no spec_verify_ct: "
                "the server was not speculating): no per-request acceptance to store",
                "only a server started with --speculative-algorithm adds spec_* fields to meta_info")
    return (f"{lead}, cut short or without out={{'meta_info': …}}: no request statistics",
            "copy whole Finish lines: the statistics are in out={'meta_info': …} at the end of each")


def records_of(path: Path, parsed: ParsedSource) -> Iterator[Record]:
    """Every ``Finish:`` record, its hard-wrapped continuation lines joined; other lines counted."""
    with text_lines(path) as lines:
        texts = [line.rstrip("\r\n") for line in lines]
    parsed.lines_read = len(texts)
    index = 0
    while index < len(texts):
        at = texts[index].find(START)
        if at < 0:
            if texts[index].strip():
                parsed.skipped["not a Finish line"] += 1
            index += 1
            continue
        body, end, closed = join_record(texts, index, at + len("Finish: "))
        yield Record(index + 1, texts[index][:at], body, closed)
        index = end


def join_record(texts: list[str], first: int, start: int) -> tuple[str, int, bool]:
    """The record from ``texts[first][start:]`` on, continuation lines appended as the poster cut them
    (a wrap keeps its space at one end of the cut); the index after it; whether its repr closed."""
    body = texts[first][start:]
    index = first + 1
    while True:
        state = record_state(body)
        following = texts[index] if index < len(texts) else ""
        if state == ENDED and not following.lstrip().startswith(","):
            return body, index, True
        if state == CLOSED:
            return body, index, True
        if index >= len(texts) or not continues(following) or index - first > MAX_JOINED:
            return body, index, state == ENDED
        body += following
        index += 1


def continues(line: str) -> bool:
    """Whether ``line`` can be the rest of a wrapped record: not blank, not another record or log line."""
    return bool(line.strip()) and START not in line and LOG_LINE.match(line) is None


OPEN, ENDED, CLOSED = "open", "ended", "closed"


def record_state(body: str) -> str:
    """``closed`` once ``obj=…`` (``, headers={…}``) ``, out={…}`` have all closed; ``ended`` when ``obj=``
    closed with nothing after it (a multimodal request logs no ``out``, or the wrap fell there); else ``open``."""
    at = after_request(body)
    if at is None:
        return OPEN
    if body.startswith(OUT, at):
        return OPEN if closing(body, at + len(OUT)) is None else CLOSED
    rest = body[at:].rstrip()
    if not rest:
        return ENDED
    return OPEN if OUT.startswith(rest) else CLOSED


def after_request(body: str) -> int | None:
    """Where ``obj=…`` and the ``, headers={…}`` after it (when logged) end; None while either is open."""
    at = closing(body, len("obj="))
    if at is not None and body.startswith(HEADERS, at):
        at = closing(body, at + len(HEADERS))
    return at


def out_span(body: str) -> tuple[int, int] | None:
    """Where the ``out={…}`` dict of a record lies, when it is there and closed."""
    at = after_request(body)
    if at is None or not body.startswith(OUT, at):
        return None
    end = closing(body, at + len(OUT))
    return None if end is None else (at + len(OUT), end)


def closing(text: str, start: int) -> int | None:
    """The index after the bracket that closes the value starting at ``start`` (``Name(``, ``{`` or ``[``)."""
    at = start
    while at < len(text) and text[at] not in OPENERS:
        if not (text[at].isalnum() or text[at] in "_."):
            return None
        at += 1
    for index, char, depth in outside_quotes(text, at, len(text)):
        if depth is None:
            return None
        if depth == 0 and char in CLOSERS:
            return index + 1
    return None


def finished_meta_info(path: Path, parsed: ParsedSource, record: Record) -> dict[str, Any] | None:
    """The record's ``out['meta_info']``; None (counted, or warned naming the line) when it has none."""
    if not record.closed:
        parsed.skipped[CUT] += 1
        parsed.warnings.append(f"{path}:{record.line_no}: Finish line skipped: its repr does not close (cut short)")
        return None
    span = out_span(record.body)
    if span is None:
        parsed.skipped[NO_OUT] += 1
        return None
    try:
        out = parse_dict_repr(record.body[span[0]:span[1]])
    except ReprError as error:
        parsed.skipped[CUT] += 1
        parsed.warnings.append(f"{path}:{record.line_no}: Finish line skipped: out= does not read ({error})")
        return None
    meta = out.get("meta_info")
    if not isinstance(meta, dict):
        parsed.skipped[NO_OUT] += 1
        return None
    return meta


def spec_rows(path: Path, parsed: ParsedSource, record: Record, meta: dict[str, Any], first: int) -> list[dict[str, Any]]:
    """The request's ``acceptance_requests`` row as ``spec_requests`` builds it, with the time it was logged."""
    if HISTOGRAM not in meta and HISTOGRAM_ALIAS in meta:
        meta = {**meta, HISTOGRAM: meta[HISTOGRAM_ALIAS]}
        del meta[HISTOGRAM_ALIAS]
    rows = [request_row(path, parsed, record.line_no, first + i, meta, *found)
            for i, found in enumerate(spec_objects(meta))]
    if not rows:
        parsed.skipped[NO_SPEC] += 1
    logged_at = logged_time(record.prefix)
    for row in rows:
        if logged_at is not None:
            extra = json.loads(row["extra"]) if row["extra"] else {}
            row["extra"] = json.dumps({**extra, "logged_at": logged_at}, ensure_ascii=False)
    return rows


def logged_time(prefix: str) -> str | None:
    """``YYYY-MM-DD HH:MM:SS[.fff]`` of the last date-time in the text before ``Finish:`` (SGLang's own prefix
    comes last, after any collector's columns); None when the line has none."""
    found = LOGGED_AT.findall(prefix)
    return f"{found[-1][0]} {found[-1][1]}" if found else None


FORMAT = Format(
    kind=KIND,
    description="SGLang `Finish:` request lines (--log-requests): per-request spec statistics from meta_info",
    sniff=sniff,
    parse=parse,
    signs=(
        Sign(r"Finish: obj=", "a `Finish: obj=` request line (--log-requests)"),
        Sign(r"out=\{.*'meta_info': \{", "an out={… 'meta_info': {…}} dict after the request"),
        Sign(r"'spec_verify_ct': \d", "meta_info spec fields ('spec_verify_ct': …)"),
    ),
    example="2026-05-20T08:02:44.565Z Finish: obj=GenerateReqInput(rid='bf890d9ca8ce4008bef7ef25d97f8fba', …), "
            "out={'meta_info': {'id': 'bf890d9ca8ce4008bef7ef25d97f8fba', … 'spec_verify_ct': 43, "
            "'spec_correct_drafts_histogram': [11, 14, 11, 4, 0, 3]}}",
    precedence=60,
)

FORMATS = (FORMAT,)
