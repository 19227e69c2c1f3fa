"""Cycle timing: phase times a team measured in its own code, one row per (cycle, phase, rank).

For teams that time draft / verify / draft-extend themselves (CUDA events, ``time.perf_counter``
around a synchronize) instead of taking a profiler trace. specdash defines the format
(``docs/breakdown.md``): CSV (comma or tab separated, header row, ``#`` comment lines) or
JSON Lines with the same keys::

    cycle,phase,ms,rank,variant,session
    0,draft,0.35,0,k2-drafter,run-1
    0,verify,29.8,0,k2-drafter,run-1
    0,draft_extend,0.20,0,k2-drafter,run-1
    0,total,30.5,0,k2-drafter,run-1

``cycle``, ``phase`` and a duration are required (``ms``; ``us`` or ``s`` columns are
converted); ``rank`` defaults to 0. A ``total`` row gives the cycle's wall time, so the
time no phase covers becomes an ``idle`` row. Rows become ``cycle_phase_times`` rows with
kernel class ``measured``, the same table traces fill. ``session`` labels become
``sessions`` rows (linked through ``session_key``); ``variant`` fills the variant column.
Other columns are kept per row in ``extra``. A malformed row is skipped with a
``file:line`` warning; the rest of the file loads.
"""
from __future__ import annotations

import csv
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.derive.breakdown import MEASURED, PHASE_CODES, cycle_kind, is_complete
from ingest.derive.trace_rules import (
    DECODE,
    DRAFT,
    DRAFT_EXTEND,
    IDLE,
    OTHER_PHASE,
    TARGET_PREFILL,
    VERIFY,
)
from ingest.errors import MalformedInput, UnrecognizedFormat
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "cycle_timing"
TOTAL = "total"
ROUNDING_MS = 1e-9  # phases "filling" a total up to float rounding leave no idle row

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "cycle": ("cycle", "cycle_idx", "cycle_index", "step", "iteration", "iter"),
    "phase": ("phase", "stage", "cycle_phase"),
    "rank": ("rank", "tp_rank", "gpu"),
    "session": ("session", "session_label", "run"),
    "variant": ("variant", "label", "drafter"),
}
# duration column -> factor to milliseconds
DURATION_COLUMNS: dict[str, float] = {
    "ms": 1.0, "duration_ms": 1.0, "time_ms": 1.0, "elapsed_ms": 1.0,
    "us": 1e-3, "duration_us": 1e-3, "time_us": 1e-3,
    "s": 1e3, "seconds": 1e3, "duration_s": 1e3,
}
PHASE_ALIASES: dict[str, str] = {
    "draft": DRAFT, "drafting": DRAFT, "draft_forward": DRAFT,
    "verify": VERIFY, "verification": VERIFY, "target_verify": VERIFY,
    "draft_extend": DRAFT_EXTEND, "draftextend": DRAFT_EXTEND, "extend": DRAFT_EXTEND, "draft_extend_v2": DRAFT_EXTEND,
    "target_prefill": TARGET_PREFILL, "prefill": TARGET_PREFILL,
    "decode": DECODE, "other": OTHER_PHASE, "idle": IDLE,
    "total": TOTAL, "cycle": TOTAL, "wall": TOTAL, "cycle_total": TOTAL,
}
FORMAT_HINT = "expected a header with cycle, phase and ms columns (see docs/breakdown.md, 'Cycle timing files')"


def normalized(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", key.strip().lower())


def column_role(key: str) -> str | None:
    name = normalized(key)
    if name in DURATION_COLUMNS:
        return "duration"
    return next((role for role, aliases in COLUMN_ALIASES.items() if name in aliases), None)


def has_required_columns(keys: list[str]) -> bool:
    roles = {column_role(key) for key in keys}
    return {"cycle", "phase", "duration"} <= roles


def first_content_line(head: bytes) -> str | None:
    for line in head.decode("utf-8", errors="replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return None


def sniff(head: bytes) -> bool:
    line = first_content_line(head)
    if line is None:
        return False
    if line.lstrip().startswith("{"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # JSONDecodeError, 4,300+ digit numbers, deep nesting
            return False
        return isinstance(record, dict) and has_required_columns(list(record))
    return has_required_columns(split_header(line))


def split_header(line: str) -> list[str]:
    delimiter = "\t" if "\t" in line else ","
    return [cell.strip() for cell in line.split(delimiter)]


# --- reading rows ---------------------------------------------------------------------------------

@dataclass
class TimedRow:
    line: int
    rank: int
    cycle: int
    phase: str
    ms: float
    session: str | None
    variant: str | None
    extra: dict[str, Any] = field(default_factory=dict)


def records(path: Path, parsed: ParsedSource) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) for every data line, from CSV or JSON Lines."""
    with text_lines(path) as stream:
        lines = [(number, line) for number, line in enumerate(stream, start=1)]
    content = [(n, line) for n, line in lines if line.strip() and not line.lstrip().startswith("#")]
    parsed.lines_read = len(lines)
    if not content:
        raise UnrecognizedFormat(path, "no data lines", hint=FORMAT_HINT)
    if content[0][1].lstrip().startswith("{"):
        return json_records(path, parsed, content)
    header_line, header = content[0][0], content[0][1]
    delimiter = "\t" if "\t" in header else ","
    header_cells = csv_cells(header, delimiter)
    if isinstance(header_cells, str):
        raise MalformedInput(path, f"the header row cannot be read ({header_cells})", line=header_line, hint=FORMAT_HINT)
    names = [cell.strip() for cell in header_cells]
    result = []
    for number, line in content[1:]:
        cells = csv_cells(line, delimiter)
        if isinstance(cells, str):
            skip(parsed, path, number, cells)
            continue
        if len(cells) != len(names):
            skip(parsed, path, number, f"{len(cells)} cells, the header (line {header_line}) has {len(names)}")
            continue
        result.append((number, dict(zip(names, (cell.strip() for cell in cells), strict=True))))
    return result


def csv_cells(line: str, delimiter: str) -> list[str] | str:
    """The cells of one CSV line, or what is wrong with it (a NUL byte, a cell over the csv module's limit)."""
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error as error:
        return f"not a CSV row ({error})"


def json_records(path: Path, parsed: ParsedSource, content: list[tuple[int, str]]) -> list[tuple[int, dict[str, Any]]]:
    result = []
    for number, line in content:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as error:  # JSONDecodeError, 4,300+ digit numbers, deep nesting
            skip(parsed, path, number, f"not a JSON object ({getattr(error, 'msg', type(error).__name__)})")
            continue
        if not isinstance(record, dict):
            skip(parsed, path, number, "not a JSON object")
            continue
        result.append((number, record))
    return result


def skip(parsed: ParsedSource, path: Path, line: int, message: str) -> None:
    parsed.skipped["malformed row"] += 1
    parsed.warnings.append(f"{path}:{line}: {message}; row skipped")


def timed_row(path: Path, parsed: ParsedSource, line: int, record: dict[str, Any]) -> TimedRow | None:
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    ms = None
    for key, value in record.items():
        role = column_role(key)
        if role == "duration":
            number = as_number(value)
            if number is None or number < 0 or not math.isfinite(number):
                skip(parsed, path, line, f"{key}={value!r} is not a duration")
                return None
            ms = number * DURATION_COLUMNS[normalized(key)]
        elif role is not None:
            values[role] = value
        elif value not in (None, ""):
            extra[key] = extra_value(value)
    cycle, rank = as_int(values.get("cycle")), as_int(values.get("rank", 0) or 0)
    if cycle is None or cycle < 0:
        skip(parsed, path, line, f"cycle={values.get('cycle')!r} is not a cycle number")
        return None
    if rank is None or rank < 0:
        skip(parsed, path, line, f"rank={values.get('rank')!r} is not a rank")
        return None
    if ms is None:
        skip(parsed, path, line, "no duration")
        return None
    label = str(values.get("phase", "")).strip()
    phase = PHASE_ALIASES.get(normalized(label))
    if phase is None:
        phase = OTHER_PHASE
        extra["phase_label"] = label
        warning = f"unknown phase {label!r}: counted as 'other' (label kept in extra)"
        if not any(w.endswith(warning) for w in parsed.warnings):
            parsed.warnings.append(f"{path}:{line}: {warning}")
    session, variant = values.get("session"), values.get("variant")
    return TimedRow(line, rank, cycle, phase, ms, str(session) if session not in (None, "") else None,
                    str(variant) if variant not in (None, "") else None, extra)


def extra_value(value: Any) -> Any:
    """CSV cells are text: keep numbers as numbers in ``extra``."""
    if isinstance(value, str) and (number := as_number(value)) is not None and math.isfinite(number):
        return int(number) if number == int(number) and "." not in value else number
    return value


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond float range
            return math.copysign(math.inf, value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


INT32_LIMIT = 2**31  # cycle_idx and rank are int32 columns


def as_int(value: Any) -> int | None:
    number = as_number(value)
    if number is None or not math.isfinite(number) or number != int(number) or not -INT32_LIMIT <= number < INT32_LIMIT:
        return None
    return int(number)


# --- rows -> tables ----------------------------------------------------------------------------------

def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="custom")
    rows = [row for line, record in records(path, parsed) if (row := timed_row(path, parsed, line, record))]
    if not rows:
        raise MalformedInput(path, "no valid timing row", hint=FORMAT_HINT)
    sessions = session_keys(rows)
    cycle_rows = []
    by_cycle: dict[tuple[int, int, str | None], list[TimedRow]] = defaultdict(list)
    for row in rows:
        by_cycle[(row.rank, row.cycle, row.session)].append(row)
    seen = {PHASE_CODES.index(r.phase) for r in rows if r.phase in PHASE_CODES}
    for (_rank, _cycle, session), members in sorted(by_cycle.items(), key=lambda item: (item[0][0], item[0][2] or "", item[0][1])):
        cycle_rows += rows_of_cycle(path, parsed, members, sessions.get(session), seen, options)
    tables = {"cycle_phase_times": table_from_rows("cycle_phase_times", cycle_rows)}
    if sessions:
        tables["sessions"] = table_from_rows("sessions", session_rows(rows, sessions))
    parsed.tables = tables
    return parsed


def session_keys(rows: list[TimedRow]) -> dict[str | None, int]:
    labels = list(dict.fromkeys(row.session for row in rows if row.session is not None))
    return {label: key for key, label in enumerate(labels)}


def session_rows(rows: list[TimedRow], sessions: dict[str | None, int]) -> list[dict[str, Any]]:
    result = []
    for label, key in sessions.items():
        variants = {row.variant for row in rows if row.session == label and row.variant}
        result.append({
            "session_key": key,
            "variant": variants.pop() if len(variants) == 1 else None,
            "engine": "custom",
            "extra": json.dumps({"label": label, "source": KIND}),
        })
    return result


def rows_of_cycle(
    path: Path,
    parsed: ParsedSource,
    members: list[TimedRow],
    session_key: int | None,
    phases_in_file: set[int],
    options: ParseOptions,
) -> list[dict[str, Any]]:
    parts = [row for row in members if row.phase != TOTAL]
    totals = [row for row in members if row.phase == TOTAL]
    measured = sum(row.ms for row in parts)
    wall = totals[-1].ms if totals else measured
    if totals and wall + ROUNDING_MS < measured:
        parsed.warnings.append(
            f"{path}:{totals[-1].line}: phases of cycle {members[0].cycle} add up to {measured:.3f} ms, "
            f"more than its total {wall:.3f} ms: cycle time taken as the sum"
        )
        wall = measured
    codes = {PHASE_CODES.index(row.phase) for row in parts if row.phase in PHASE_CODES}
    kind = cycle_kind(codes)
    common = {
        "session_key": session_key,
        "phase": options.extra.get("phase"),
        "rank": members[0].rank,
        "cycle_idx": members[0].cycle,
        "cycle_kind": kind,
        "complete": is_complete(kind, codes, phases_in_file),
        "cycle_start_us": None,
        "cycle_ms": wall,
        "union_ms": None,
        "kernels": None,
        "attribution": MEASURED,
    }
    result = []
    for row in parts:
        result.append({
            **common,
            "variant": row.variant or options.extra.get("variant"),
            "cycle_phase": row.phase,
            "kernel_class": IDLE if row.phase == IDLE else MEASURED,
            "duration_ms": row.ms,
            "extra": json.dumps(row.extra, sort_keys=True) if row.extra else None,
        })
    if totals and wall - measured > ROUNDING_MS:
        result.append({**common, "variant": members[0].variant or options.extra.get("variant"),
                       "cycle_phase": IDLE, "kernel_class": IDLE, "duration_ms": wall - measured, "attribution": None})
    return result


FORMAT = Format(
    kind=KIND,
    description="cycle timing CSV/JSONL (cycle, phase, ms[, rank, variant, session]) measured by a team's own code",
    sniff=sniff,
    signs=(
        Sign('^\\W*cycle\\W', "a 'cycle' column"),
        Sign('\\bphase\\b', "a 'phase' column"),
        Sign('\\bms\\b|_ms\\b|duration', "a time column ('ms')"),
    ),
    parse=parse,
    example="cycle,phase,ms,rank,variant,session,batch_size",
    precedence=20,
)

FORMATS = (FORMAT,)
