"""Results tables people post (READMEs, issue comments, notes): any layout, mapped by what the headers say.

The run table (``bench_table_text``) and the sweep table (``sweep_table_text``) read two narrow shapes;
this format reads the rest of what people paste, when a column (or, transposed, a row) is a result:
a throughput, a time per output token, an accept length, an acceptance rate or a speedup.

- **Where tables are**: ``grid.find_tables`` (Markdown pipe tables, grid tables, fixed-width tables
  under a dash rule). Several tables in one file are each read; each is labelled by the Markdown
  headings above it (kept in ``extra`` as ``table``) and is one sweep (``sweep`` = that label, or
  ``<file> · table N``).
- **Which column is what**: ``vocabulary.read_header`` (the header words and units, as data). A
  header that maps to nothing is *skipped*: its cells go to each row's ``extra`` under the header's
  name and the file gets one warning naming the skipped columns. A column is never assigned by position.
- **Layouts** (``layouts.py``): one result per row; transposed (one result per column, the first
  column naming the measures); ``metric | value`` (one result); and leaderboards (Spec-Bench's ``Leaderboard.md``: one
  row per method, one speedup column per task, ``2.85x``), read as one point per (method, task).
- **Cells**: ``cells.read_cell`` (``**bold**``, ``1,234.5``, ``82.1 tok/s``, ``57 %``, ``1.8×``,
  ``3.1 ± 0.2``, ``x / y``, ``41.2/0.8 (1.23×)``). A percentage acceptance rate becomes a rate in
  [0, 1]; a time per output token becomes tok/s (1000 / TPOT ms) only when no throughput column is
  given, and the row says so (``throughput_from``; ``throughput_kind`` 'decode rate from TPOT').
- **Where rows go**: a table of runs (output tokens and a time, nothing that names a config, a
  method or a task) becomes ``sessions`` + ``bench_runs`` as ``bench_table`` makes them; every other
  table becomes ``sweep_points`` (variant = the method, dataset = the task, speedup, acceptance rate and
  the method in ``extra``). A batch size, model or hardware the table does not give is taken from the
  text under its headings when it says so (``context.py``: ``batch size = 1``, ``Vicuna-7B-v1.3``,
  ``Device: ...``), and ``extra`` says where it came from.

Asked last of all formats, it claims only files no other format reads (``bench_table_text``,
``sweep_table_text``, llama.cpp's speed tables keep theirs), and a table with no result column is not
claimed: notes and READMEs without results stay "not data". Slow on purpose-built huge tables
(~6,000 rows/s): pasted tables are small.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench import bench_table, sweeps
from ingest.parsers.bench.bench_fields import extra_json
from ingest.parsers.tables.cells import NO_VALUE, Cell, plain_text
from ingest.parsers.tables.context import Setting, setting_of
from ingest.parsers.tables.grid import Table, find_tables
from ingest.parsers.tables.layouts import (
    Entry,
    Reading,
    has_results,
    read_layout,
    split_pairs,
)
from ingest.parsers.tables.vocabulary import CONFIG, FIGURES, Header, extra_key
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "results_table_text"
FROM_TPOT = "decode rate from TPOT"
# Words that name the run without speculation, in a method cell or a row's label.
BASELINE_WORDS = re.compile(
    r"\b(?:baseline|vanilla|autoregressive|auto-regressive|no[ -]?spec(?:ulation|ulative)?|"
    r"without (?:spec\w*|eagle\w*|draft\w*)|w/o (?:spec\w*|eagle\w*)|target only|ar decoding)\b",
    re.IGNORECASE,
)
# A depth sweep may name its method only where it leaves it out: llama.cpp PR #22673's "n/a - no mtp" in the
# spec-draft-n-max column is the baseline row, and says the other rows' depths are MTP's.
NO_METHOD = re.compile(r"\b(?:no|without|w/o)[ -](?P<method>mtp|nextn|eagle[- ]?3?|medusa|n-?gram|draft model)\b",
                       re.IGNORECASE)
WHOLE_FIELDS = frozenset({"batch_size", "concurrency", "steps", "topk", "num_draft_tokens", "tokens", "run"})
TIME_UNITS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "ms": 0.001, "min": 60.0}
TPOT_UNITS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "µs": 0.001, "μs": 0.001}
RATE_UNITS = {None, "tok/s", "tokens/s", "t/s", "toks/s", "tok/sec", "toks/sec", "tokens/sec", "token/s", "tps"}
NO_POINT = "table row without a result"
BAD_VALUE = "cell that does not fit its column"


def sniff(head: bytes) -> bool:
    return claims_a_table(head) and not read_by_another_format(head)


def read_by_another_format(head: bytes) -> bool:
    """Tables are everywhere (bench_table's run tables, sweep tables, llama.cpp's speed tables): a file another
    format reads is that format's, so this one, the most general, takes only what no other format claims."""
    # The registry imports this module to find FORMATS, so it is imported when asked, not at the top.
    from ingest import registry

    return any(other.kind != KIND and other.sniff(head) for other in registry.registered_formats() if not other.binary)


def claims_a_table(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    tables, _ = find_tables(text.splitlines())
    for table in tables:
        if len(table.rows) > 1 and (table.rows[-1][0] == text.count("\n") + 1):
            table.rows.pop()  # the head may end mid-row
        reading = read_layout(table)
        if reading is not None and has_results(reading):
            return True
    return False


# --- from an entry to a row ------------------------------------------------------------------------


@dataclass
class Values:
    """An entry's cells by field (first column of a field wins), and everything else for ``extra``."""

    fields: dict[str, tuple[Header, Cell]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    doubled: list[str] = field(default_factory=list)
    ratio: float | None = None  # a "(1.23×)" written after a figure: the speedup when no column gives one


def values_of(entry: Entry) -> Values:
    values = Values()
    for header, cell in split_pairs(entry.pairs):
        if header.field is not None and header.field not in values.fields:
            values.fields[header.field] = (header, cell)
            if cell.spread is not None or (cell.second is not None and header.mean_sd):
                values.extra[f"{header.field}_sd"] = cell.spread if cell.spread is not None else cell.second
            elif cell.second is not None:
                values.extra[f"{header.field}_as_written"] = cell.text
            if cell.ratio is not None:
                values.ratio = values.ratio if values.ratio is not None else cell.ratio
                values.extra[f"{header.field}_speedup"] = cell.ratio
            if cell.link is not None:
                values.extra[f"{header.field}_link"] = cell.link
            continue
        if header.field is not None:
            values.doubled.append(header.text)
        if cell.text:  # a plain number is kept as a number, anything else as written
            plain = cell.value is not None and cell.unit is None and cell.spread is None and cell.second is None
            values.extra[extra_key(header) if header.text else "column"] = cell.value if plain else cell.text
    return values


def figure(name: str, header: Header, cell: Cell) -> tuple[float | None, str | None]:
    """A cell's value in the unit its field is stored in, or the reason it is not one."""
    value = cell.value
    if value is None:
        return None, None if cell.text.lower() in NO_VALUE else f"{cell.text!r} is not a number"
    unit = (cell.unit or header.unit or "").strip().lower() or None
    if name == "acceptance_rate":
        percent = unit == "%" or "%" in header.name
        rate = value / 100 if percent else value
        rate = round(rate, 12)  # 11.2 / 100 without the binary noise
        return (rate, None) if 0 <= rate <= 1 else (None, f"an acceptance rate must be in [0, 1] or a percentage, got {cell.text!r}")
    if name == "tpot":
        scale = TPOT_UNITS.get(unit or "ms")
        return (value * scale, None) if scale is not None and value > 0 else (None, f"{cell.text!r} is no time per token")
    if name in {"time", "latency"}:
        scale = TIME_UNITS.get(unit or "s")
        return (value * scale, None) if scale is not None else (None, f"{cell.text!r}: unit {unit!r} is not a time")
    if name == "throughput":
        return (value, None) if unit in RATE_UNITS else (None, f"{cell.text!r}: unit {unit!r} is not tokens per second")
    if name in WHOLE_FIELDS:
        whole = sweeps.whole(value)
        return (float(whole), None) if whole is not None and whole == value else (None, f"{cell.text!r} is not a whole number")
    return value, None


def says_no_speculation(cell: Cell) -> bool:
    """A config cell with words and no number that name the run without speculation ("n/a - no mtp")."""
    return cell.value is None and bool(cell.text) and (
        BASELINE_WORDS.search(cell.text) is not None or NO_METHOD.search(cell.text) is not None)


def method_left_out(reading: Reading) -> str | None:
    """The method a table names only in its baseline row's config cell ("no mtp": the depths are MTP's), when it has
    no method column; None otherwise or when two such cells name different methods."""
    if any(header.field == "method" for entry in reading.entries for header, _ in entry.pairs):
        return None
    named = {found["method"].lower() for entry in reading.entries for header, cell in entry.pairs
             if header.field in CONFIG and cell.value is None and (found := NO_METHOD.search(cell.text)) is not None}
    return named.pop() if len(named) == 1 else None


def text_of(values: Values, name: str) -> str | None:
    found = values.fields.get(name)
    if found is None:
        return None
    text, _, _ = plain_text(found[1].text)
    return text or None


class Collector:
    """Turns entries into rows, with ``file:line`` warnings for what it could not place."""

    def __init__(self, path: Path, parsed: ParsedSource) -> None:
        self.path, self.parsed = path, parsed
        self.points: list[tuple[int, sweeps.Point]] = []
        self.sweeps: dict[str, int] = {}
        self.sessions: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []

    def warn(self, line_no: int, reason: str, message: str) -> None:
        self.parsed.skipped[reason] += 1
        self.parsed.warnings.append(f"{self.path}:{line_no}: {message}")

    def numbers(self, entry: Entry, values: Values) -> dict[str, float]:
        found: dict[str, float] = {}
        for name, (header, cell) in values.fields.items():
            if name in {"task", "model", "method", "hardware"}:
                continue
            if name in CONFIG and says_no_speculation(cell):  # the baseline row's depth: "n/a - no mtp"
                values.extra[f"{name}_as_written"] = cell.text
                continue
            value, problem = figure(name, header, cell)
            if problem is not None:
                self.warn(entry.line_no, BAD_VALUE, f'column "{header.text}": {problem}; kept in extra')
                values.extra[extra_key(header)] = cell.text
            elif value is not None:
                found[name] = value
        return found

    def add_table(self, table: Table, reading: Reading, setting: Setting) -> None:
        fields = {h.field for entry in reading.entries for h, _ in entry.pairs}
        is_runs = {"tokens", "time"} <= fields and not (fields & (CONFIG | {"method", "task", "speedup"}))
        if is_runs and reading.layout == "rows":
            self.add_runs(table, reading, setting)
            return
        sweep = setting.label if setting.label not in self.sweeps else f"{setting.label} (line {table.line_no})"
        self.sweeps[sweep] = len(self.sweeps) + len(self.sessions)
        method = method_left_out(reading)
        for entry in reading.entries:
            point = self.point(entry, reading, setting, sweep, method)
            if point is not None:
                self.points.append((self.sweeps[sweep], point))

    def point(self, entry: Entry, reading: Reading, setting: Setting, sweep: str,
              left_out: str | None = None) -> sweeps.Point | None:
        values = values_of(entry)
        numbers = self.numbers(entry, values)
        if not FIGURES & numbers.keys():
            self.warn(entry.line_no, NO_POINT, "no throughput, TPOT, accept length, acceptance rate or speedup that "
                                               "its column's header names; row skipped")
            return None
        method = text_of(values, "method") or entry.name
        label = method or text_of(values, "task")
        baseline = label is not None and (sweeps.BASELINE_NAMES.match(label) is not None
                                          or BASELINE_WORDS.search(label) is not None)
        baseline = baseline or any(name in CONFIG and says_no_speculation(cell)
                                   for name, (_, cell) in values.fields.items())
        extra: dict[str, Any] = {"table": setting.label, "layout": reading.layout, **setting.notes, **values.extra}
        if method is not None:
            extra["method"] = method
        elif left_out is not None and not baseline:
            extra["method"], extra["method_from"] = left_out, "the baseline row's config cell"
        if "speedup" in numbers:
            extra["speedup"] = numbers["speedup"]
        elif values.ratio is not None:
            extra["speedup"] = values.ratio
            extra.pop(next(k for k in values.extra if k.endswith("_speedup")), None)
        if "acceptance_rate" in numbers:
            extra["acceptance_rate"] = numbers["acceptance_rate"]
        hardware = text_of(values, "hardware") or setting.hardware
        if hardware is not None:
            extra["hardware"] = hardware
        if values.doubled:
            extra["columns_repeating_a_field"] = values.doubled
        for name in ("tokens", "time", "run", "tpot"):
            if name in numbers:
                extra[{"time": "time_s", "tpot": "tpot_ms"}.get(name, name)] = numbers[name]
        throughput, kind = numbers.get("throughput"), sweeps.MEASURED
        if throughput is None and "tpot" in numbers:
            throughput, kind = 1000.0 / numbers["tpot"], FROM_TPOT
            extra["throughput_from"] = f'1000 / "{values.fields["tpot"][0].text}" (ms per output token)'
        if entry.task is not None and "task" in values.fields:  # the row names a task and the column another
            extra["task_column"] = entry.task
        batch = numbers.get("batch_size")
        if batch is None and setting.batch_size is not None:
            batch = setting.batch_size
        config = [None if baseline or numbers.get(k) is None else int(numbers[k]) for k in sweeps.CONFIG_KEYS]
        if baseline:  # a baseline has no drafter config (as in sweeps.py); what the table wrote is kept
            extra.update({f"{k}_as_written": int(numbers[k]) for k in sweeps.CONFIG_KEYS if numbers.get(k) is not None})
        return sweeps.Point(
            line_no=entry.line_no, where=str(entry.line_no), sweep=sweep,
            variant=sweeps.BASELINE if baseline else method or setting.label, is_baseline=baseline,
            batch_size=None if batch is None else int(batch),
            concurrency=None if numbers.get("concurrency") is None else int(numbers["concurrency"]),
            steps=config[0], topk=config[1], num_draft_tokens=config[2],
            accept_length=numbers.get("accept_length"), throughput=throughput, throughput_kind=kind,
            latency_s=numbers.get("latency"), model=text_of(values, "model") or setting.model,
            dataset=text_of(values, "task") or entry.task, simulated_by=setting.simulated_by, extra=extra,
        )

    def add_runs(self, table: Table, reading: Reading, setting: Setting) -> None:
        session_key = len(self.sessions) + len(self.sweeps)
        self.sessions.append({
            "session_key": session_key, "variant": setting.label, "model": setting.model, "engine": "custom",
            "extra": extra_json({"table": setting.label, "line": table.line_no, **setting.notes}),
        })
        for position, entry in enumerate(reading.entries):
            values = values_of(entry)
            numbers = self.numbers(entry, values)
            extra: dict[str, Any] = {"line": entry.line_no, **values.extra}
            for name in ("accept_length", "acceptance_rate", "speedup", "latency"):
                if name in numbers:
                    extra[name] = numbers[name]
            if "tpot" in numbers:
                extra["tpot_ms"] = numbers["tpot"]
            tokens, duration = numbers.get("tokens"), numbers.get("time")
            rate = numbers.get("throughput")
            if rate is None and tokens is not None and duration:
                rate = tokens / duration  # no throughput column: derived, as bench_table does
            self.runs.append({
                "session_key": session_key, "run_index": int(numbers.get("run", position + 1)), "is_warmup": False,
                "output_tokens": None if tokens is None else int(tokens), "duration_s": duration, "tok_per_s": rate,
                "extra": extra_json(extra),
            })

    def finish(self) -> ParsedSource:
        if not self.points and not self.runs:
            raise MalformedInput(
                self.path, "no results table found",
                hint="a results table needs a column (or, transposed, a row) of throughput, TPOT, accept length, "
                     "acceptance rate or speedup (docs/bench-formats.md, 'Results tables')",
            )
        if self.points:
            rows = [sweeps.row_of(key, index, point) for index, (key, point) in enumerate(self.points)]
            self.parsed.tables["sweep_points"] = table_from_rows("sweep_points", rows)
        if self.runs:
            self.parsed.tables["sessions"] = table_from_rows("sessions", self.sessions)
            self.parsed.tables["bench_runs"] = table_from_rows("bench_runs", self.runs)
        return self.parsed


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="custom")
    with text_lines(path) as lines:
        tables, parsed.lines_read = find_tables(lines)
    collector = Collector(path, parsed)
    for number, table in enumerate(tables, start=1):
        for line_no, cells in table.ragged:
            collector.warn(line_no, bench_table.MALFORMED_ROW,
                           f"{cells} cells, the header (line {table.line_no}) has {len(table.header)}; row skipped")
        reading = read_layout(table)
        if reading is None or not has_results(reading):
            parsed.skipped["table without a result column"] += 1
            continue
        if reading.skipped:
            names = ", ".join(f'"{name}"' for name in reading.skipped)
            parsed.warnings.append(f"{path}:{table.line_no}: columns skipped (no results-table meaning): {names}; "
                                   "their cells are kept in each row's extra")
        if reading.doubled:
            names = ", ".join(f'"{name}"' for name in reading.doubled)
            parsed.warnings.append(f"{path}:{table.line_no}: columns naming a field an earlier column gives: {names}; "
                                   "the first column is read, these are kept in each row's extra")
        collector.add_table(table, reading, setting_of(path, table, number))
    return collector.finish()


# The rule under a table's header: Markdown's |---|:--:|, a grid's +---+ / +===+, or fixed-width dashes per column.
RULE_LINE = r"^\s*(\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?|\+[-=+]{5,}\+?|-{3,}(\s+-{3,})+)\s*$"

FORMAT = Format(
    kind=KIND,
    description="a results table as people post it (Markdown, grid or fixed-width; per row, transposed, "
                "metric | value, or a method × task leaderboard such as Spec-Bench's)",
    sniff=sniff,
    signs=(
        Sign(RULE_LINE, "a table (Markdown, grid or fixed-width) with its header rule"),
        Sign(r"^[^\n]*(throughput|tok/s|\bt/s\b|\btps\b|speed-?up|accept|τ|\bAL\b|accepted tokens|tpot)[^\n]*\n" + RULE_LINE,
             "a header naming a throughput, speedup, accept length or acceptance rate"),
    ),
    parse=parse,
    example="| Models | Multi-turn Conversation | Translation | … | #Mean Accepted Tokens |  Overall  |",
    precedence=97,
)

FORMATS = (FORMAT,)
