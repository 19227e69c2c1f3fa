"""A team benchmark script's printed run table (the DOMAIN.md §1 story), as pasted from stdout.

The script prints one row per run, as a Markdown table::

    | Run | Tokens | Time (s) | Throughput (tok/s) | Prompt Length |
    |-----|--------|----------|---------------------|---------------|
    | 1 | 2048 | 40.50 | 50.6 | 32 |

or as whitespace-aligned columns under a header row (columns separated by two or
more spaces or a tab; single spaces work when no header has a space in it), and
often an ``Overall ...`` line after it. Each table becomes a ``sessions`` row
(``session_key`` 0, 1, ...) and its ``bench_runs``.

* Headers are normalized (lower case, units in parentheses dropped, CamelCase and
  spaces to ``_``: ``Time (s)`` -> ``time``, ``PromptLen`` -> ``prompt_len``) and
  mapped through ``bench_json.RUN_ALIASES``, the canonical benchmark JSON's own
  alias table, plus ``EXTRA_HEADER_ALIASES``. Unknown columns go to the run's ``extra``.
* Values are taken as printed: ``tok_per_s`` is the printed throughput (computed
  as tokens / time only when the table has no throughput column).
* A run cell like ``W1`` / ``warmup 2`` marks a warm-up run.
* ``key: value`` / ``key=value`` lines before a table describe its session
  (``bench_json.SESSION_ALIASES``: ``max_tokens=2048``, ``variant: k2-drafter``,
  ``endpoint: ...``); they carry over to later tables unless restated; unknown
  keys go to the session's ``extra``. ``hit_max_tokens`` is set only when
  ``max_tokens`` is known (tokens >= max_tokens), else null.
* Summary lines (``Overall ...``, ``Average ...``) after a table are kept in its
  session's ``extra`` (``summary``: line, text and the tok/s figure they print).

Deliberately ignored: every other line (logs, prompts, progress bars), counted
in ``skipped``; a single-space table whose headers contain spaces is not read.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import as_float, extra_json, map_record
from ingest.parsers.bench.bench_json import RUN_ALIASES, SESSION_ALIASES, as_timestamp
from ingest.reader import text_lines
from ingest.tables import BENCH_RUNS, SESSIONS, table_from_rows

KIND = "bench_table_text"

# Table columns read from a printed cell (timestamps and flags are not printed in run tables).
TABLE_COLUMNS = ("run_index", "prompt_tokens", "output_tokens", "duration_s", "tok_per_s", "finish_reason")
EXTRA_HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    "run_index": ("#", "no", "n"),
    "output_tokens": ("output", "gen_tokens", "out_tokens"),
    "prompt_tokens": ("prompt", "prompt_tok", "in_tokens"),
    "duration_s": ("time_sec", "wall", "wall_s"),
    "tok_per_s": ("tokens/s", "tok_s", "tokens_s"),
    "finish_reason": ("finish", "stop"),
}
HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    column: RUN_ALIASES[column] + EXTRA_HEADER_ALIASES.get(column, ()) for column in TABLE_COLUMNS
}
COLUMN_OF_HEADER = {alias: column for column, aliases in HEADER_ALIASES.items() for alias in aliases}
SESSION_SETTINGS: dict[str, tuple[str, ...]] = {
    **{column: SESSION_ALIASES[column] for column in ("endpoint", "model", "phase", "variant", "max_tokens", "warmup")},
    "engine": ("engine",),
}

SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
UNITS = re.compile(r"\([^)]*\)")
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
WARMUP_RUN = re.compile(r"^(?:w|warm-?up)\s*#?\s*(?P<index>\d+)$", re.IGNORECASE)
SETTING = re.compile(r"^\s*(?P<key>[A-Za-z][\w .-]{0,40}?)\s*(?::|=)\s*(?P<value>\S.*?)\s*$")
SUMMARY = re.compile(r"^\s*(?:overall|average|mean|total|summary)\b", re.IGNORECASE)
# Where a summary line prints its tok/s figure: "... = 51.78 tok/s", "tok/s: 51.8".
SUMMARY_RATE = (
    re.compile(r"(?P<rate>\d+(?:\.\d+)?)\s*tok(?:ens)?/s", re.IGNORECASE),
    re.compile(r"tok(?:ens)?/s\)?\s*[:=]\s*(?P<rate>\d+(?:\.\d+)?)", re.IGNORECASE),
)
NOISE = "not part of a run table"
MALFORMED_ROW = "malformed table row"
MAX_HEADER_CHARS = 4096


def header_key(cell: str) -> str:
    """``Time (s)`` -> ``time``; ``PromptLen`` -> ``prompt_len``; ``tok/s`` stays ``tok/s``."""
    text = UNITS.sub("", cell).strip() or cell.strip("() ")
    text = CAMEL.sub("_", text).lower()
    return re.sub(r"[\s-]+", "_", text).strip("_")


def split_cells(line: str) -> list[list[str]]:
    """Ways to cut a line into cells, most likely first (pipes; wide gaps; single spaces)."""
    text = line.strip()
    if text.startswith("|"):
        return [[cell.strip() for cell in text.strip("|").split("|")]]
    wide = [cell for cell in re.split(r"\t+|\s{2,}", text) if cell]
    narrow = merge_units(text.split())
    return [wide, narrow] if narrow != wide else [wide]


def merge_units(words: list[str]) -> list[str]:
    """Re-attach "(s)"-like unit words to the header word before them."""
    cells: list[str] = []
    for word in words:
        if cells and word.startswith("(") and word.endswith(")"):
            cells[-1] += " " + word
        else:
            cells.append(word)
    return cells


@dataclass
class Header:
    cells: list[str]
    columns: list[str | None]  # run column per cell; None -> extra under header_key
    piped: bool


def as_header(line: str) -> Header | None:
    if len(line) > MAX_HEADER_CHARS:  # not a header; splitting megabytes into cells would cost seconds
        return None
    for cells in split_cells(line):
        columns = [COLUMN_OF_HEADER.get(header_key(cell)) for cell in cells]
        known = set(columns)
        if (
            len(cells) >= 3
            and "output_tokens" in known
            and known & {"duration_s", "tok_per_s"}
            and not any(as_float(cell)[1] is None for cell in cells)  # a header has no numbers
            and not any(cell.endswith(":") for cell in cells)  # "Output token throughput (tok/s):  n/a" is a key and its value
        ):
            return Header(cells, columns, line.strip().startswith("|"))
    return None


def row_cells(line: str, header: Header) -> list[str] | None:
    if line.strip().startswith("|") != header.piped:
        return None
    return next((cells for cells in split_cells(line) if len(cells) == len(header.cells)), None)


def is_separator(line: str) -> bool:
    cells = split_cells(line)[0]
    return bool(cells) and all(SEPARATOR_CELL.match(cell) for cell in cells)


@dataclass
class Table:
    line_no: int
    header: Header
    settings: dict[str, tuple[int, str]]  # session key -> (line, printed value)
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)


def sniff(head: bytes) -> bool:
    lines = head.decode("utf-8", errors="replace").splitlines()
    for position, line in enumerate(lines[:-1]):
        header = as_header(line)
        if header is None:
            continue
        following = [candidate for candidate in lines[position + 1 : position + 3] if not is_separator(candidate)]
        if following and row_cells(following[0], header) is not None:
            return True
    return False


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="custom")
    with text_lines(path) as lines:
        tables = read_tables(path, lines, parsed)
    if not tables or not any(table.rows for table in tables):
        raise MalformedInput(
            path,
            "no run table found",
            hint="expected a header row such as '| Run | Tokens | Time (s) | Throughput (tok/s) |' followed by one row per run",
        )
    sessions, runs = [], []
    for session_key, table in enumerate(table for table in tables if table.rows):
        session = session_row(path, parsed, session_key, table)
        sessions.append(session)
        runs.extend(run_rows(path, parsed, session_key, table, session.get("max_tokens")))
    for session in sessions:  # no "warmup: N" setting: count the warm-up rows the table shows
        if session.get("warmup") is None:
            warmups = sum(1 for run in runs if run["session_key"] == session["session_key"] and run["is_warmup"])
            session["warmup"] = warmups or None
    parsed.tables["sessions"] = table_from_rows("sessions", sessions)
    parsed.tables["bench_runs"] = table_from_rows("bench_runs", runs)
    return parsed


def read_tables(path: Path, lines: Iterable[str], parsed: ParsedSource) -> list[Table]:
    tables: list[Table] = []
    settings: dict[str, tuple[int, str]] = {}
    current: Table | None = None
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            current = None if current is not None and current.rows else current
            continue
        if current is not None:
            if not current.rows and is_separator(line):
                continue
            cells = row_cells(line, current.header)
            if cells is not None and looks_like_run(cells, current.header):
                current.rows.append((line_no, cells))
                continue
            if cells is None and is_ragged_row(line, current.header):  # one bad row does not end the table
                parsed.skipped[MALFORMED_ROW] += 1
                parsed.warnings.append(
                    f"{path}:{line_no}: {len(split_cells(line)[0])} cells, the header (line {current.line_no}) has "
                    f"{len(current.header.cells)}; row skipped"
                )
                continue
            current = None
        header = as_header(line)
        if header is not None:
            current = Table(line_no, header, dict(settings))
            tables.append(current)
        elif SUMMARY.match(line) and tables:
            tables[-1].summaries.append(summary_of(line_no, line))
        elif (setting := SETTING.match(line)) is not None:
            settings[setting_key(setting["key"])] = (line_no, setting["value"])
        else:
            parsed.skipped[NOISE] += 1
    parsed.lines_read = line_no
    return tables


def is_ragged_row(line: str, header: Header) -> bool:
    """A Markdown row (``| ... |``) of a Markdown table, with too few or too many cells."""
    return header.piped and line.lstrip().startswith("|") and not is_separator(line) and as_header(line) is None


def looks_like_run(cells: list[str], header: Header) -> bool:
    tokens = cells[header.columns.index("output_tokens")]
    return as_float(tokens)[1] is None


def setting_key(key: str) -> str:
    return re.sub(r"[\s-]+", "_", key.strip().lower())


def summary_of(line_no: int, line: str) -> dict[str, Any]:
    summary: dict[str, Any] = {"line": line_no, "text": line.strip()}
    for pattern in SUMMARY_RATE:
        if (match := pattern.search(line)) is not None:
            summary["tok_per_s"] = float(match["rate"])
            break
    return summary


def session_row(path: Path, parsed: ParsedSource, session_key: int, table: Table) -> dict[str, Any]:
    values = {key: value for key, (_, value) in table.settings.items()}
    mapped = map_record(values, SESSION_SETTINGS, SESSIONS)
    for key, problem in mapped.problems:
        parsed.warnings.append(f'{path}:{table.settings[key][0]}: setting "{key}": {problem}')
    started_key = next((key for key in SESSION_ALIASES["started_at"] if key in values), None)
    started_at = None
    if started_key is not None:
        try:
            started_at = as_timestamp(path, started_key, values[started_key])
        except MalformedInput as error:
            parsed.warnings.append(f"{path}:{table.settings[started_key][0]}: {error.message}; kept in extra")
            mapped.extra[started_key] = values[started_key]
        else:
            mapped.extra.pop(started_key, None)
    extra: dict[str, Any] = dict(mapped.extra)
    if table.summaries:
        extra["summary"] = table.summaries
    return {
        **mapped.row,
        "session_key": session_key,
        "started_at": started_at,
        "extra": extra_json(extra),
    }


def run_rows(
    path: Path, parsed: ParsedSource, session_key: int, table: Table, max_tokens: int | None
) -> list[dict[str, Any]]:
    runs = []
    for position, (line_no, cells) in enumerate(table.rows):
        by_header = {table.header.cells[i]: cell for i, cell in enumerate(cells)}
        is_warmup, by_header = warmup_marker(table.header, by_header)
        named = {header_key(name): value for name, value in by_header.items()}
        aliases = {column: HEADER_ALIASES[column] for column in TABLE_COLUMNS}
        mapped = map_record(named, aliases, BENCH_RUNS)
        for key, problem in mapped.problems:
            parsed.warnings.append(f'{path}:{line_no}: column "{key}": {problem}')
        row = mapped.row
        tokens, duration = row.get("output_tokens"), row.get("duration_s")
        if duration is not None and not duration > 0:
            time_header = header_key(table.header.cells[table.header.columns.index("duration_s")])
            parsed.warnings.append(f'{path}:{line_no}: column "{time_header}": wall time must be positive, got {duration}')
        elif "tok_per_s" not in table.header.columns and tokens is not None and duration is not None:
            row["tok_per_s"] = tokens / duration  # no throughput column: derived, as the script would
        runs.append(
            {
                **row,
                "session_key": session_key,
                "run_index": row.get("run_index") if row.get("run_index") is not None else position + 1,
                "is_warmup": is_warmup,
                "max_tokens": max_tokens,
                "hit_max_tokens": None if max_tokens is None or tokens is None else tokens >= max_tokens,
                "extra": extra_json({"line": line_no, **mapped.extra}),
            }
        )
    return runs


def warmup_marker(header: Header, by_header: dict[str, str]) -> tuple[bool, dict[str, str]]:
    """A run cell "W1" / "warmup 2" marks a warm-up run; the cell then reads as its number."""
    if "run_index" not in header.columns:
        return False, by_header
    run_header = header.cells[header.columns.index("run_index")]
    match = WARMUP_RUN.match(by_header[run_header].strip())
    if match is None:
        return False, by_header
    return True, {**by_header, run_header: match["index"]}


FORMAT = Format(
    kind=KIND,
    description="a benchmark script's printed run table (| Run | Tokens | Time (s) | Throughput (tok/s) | ...)",
    sniff=sniff,
    signs=(
        Sign('^\\s*\\|?\\s*run\\s*(\\||\\s{2,})', "a 'Run' column"),
        Sign('(\\||\\s{2,})\\s*tokens\\s*(\\||\\s{2,})', "a 'Tokens' column"),
        Sign('time\\s*\\(s\\)|throughput\\s*\\(tok/s\\)', "a 'Time (s)' or 'Throughput (tok/s)' column"),
    ),
    parse=parse,
    example="| Run | Tokens | Time (s) | Throughput (tok/s) | Prompt Length |",
    precedence=90,
)

FORMATS = (FORMAT,)
