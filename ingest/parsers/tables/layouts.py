"""Undoing a results table's layout: from the table as printed to entries, one per result.

Four layouts (docs/bench-formats.md, "Results tables"): one result per row; transposed (the first
column names the measures, each other column is a result); ``metric | value`` (one result); and
leaderboards (Spec-Bench's: a row per method, a column per task holding speedups such as ``2.85x``).
Which layout a table has is read from its headers and cells, never from the file's name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.parsers.tables.cells import Cell, is_speedup, read_cell
from ingest.parsers.tables.grid import Table
from ingest.parsers.tables.vocabulary import (
    FIGURES,
    METRIC_HEADERS,
    VALUE_HEADERS,
    Header,
    read_header,
)

# A column of a leaderboard that is the mean over its tasks: the method's accept length belongs to it.
OVERALL = re.compile(r"^(?:overall|average|avg|mean|all|total)\b", re.IGNORECASE)


@dataclass
class Entry:
    """One result once the layout is undone: the (header, cell) pairs that describe it."""

    line_no: int
    pairs: list[tuple[Header, Cell]]
    name: str | None = None  # a transposed table's column header: the run's name
    task: str | None = None  # a leaderboard's task column this speedup was read from


@dataclass
class Reading:
    layout: str  # "rows", "columns", "metrics", "leaderboard"
    entries: list[Entry]
    skipped: list[str] = field(default_factory=list)  # headers that map to nothing
    doubled: list[str] = field(default_factory=list)  # headers naming a field an earlier column gives


def column_cells(table: Table, index: int) -> list[Cell]:
    return [read_cell(cells[index]) for _, cells in table.rows]


def speedup_columns(table: Table, headers: list[Header]) -> list[int]:
    """Columns no header word maps whose every cell is a multiple (``2.85x``): a leaderboard's tasks."""
    found = []
    for index, header in enumerate(headers):
        if header.field is not None or not header.text:
            continue
        cells = [cell for cell in column_cells(table, index) if cell.text]
        if cells and all(is_speedup(cell) for cell in cells):
            found.append(index)
    return found


def read_layout(table: Table) -> Reading | None:
    """The table's layout and its entries; None when nothing in it is a result."""
    reading = undo_layout(table)
    if reading is not None and reading.entries:
        seen: set[str | None] = set()
        for header, _ in reading.entries[0].pairs:
            if header.field is not None and header.field in seen:
                reading.doubled.append(header.text)
            seen.add(header.field)
    return reading


def undo_layout(table: Table) -> Reading | None:
    if not table.rows:
        return None
    headers = [read_header(cell) for cell in table.header]
    tasks = speedup_columns(table, headers)
    if len(tasks) >= 2:
        return leaderboard(table, headers, tasks)
    if FIGURES & {f for h in headers for f in h.fields()}:
        entries = [Entry(line_no, list(zip(headers, map(read_cell, cells), strict=True))) for line_no, cells in table.rows]
        return Reading("rows", entries, [h.text for h in headers if not h.fields() and h.text])
    return transposed(table, headers)


def leaderboard(table: Table, headers: list[Header], tasks: list[int]) -> Reading:
    label = next((i for i in range(len(headers)) if i not in tasks and headers[i].field is None
                  and any(cell.value is None and cell.text for cell in column_cells(table, i))), None)
    # The column naming each row is the method it ranks (Spec-Bench heads it "Models"), unless it says "model".
    named = [Header(h.text, h.name, h.unit, "method", h.mean_sd) if i == label else h for i, h in enumerate(headers)]
    overall = next((i for i in tasks if OVERALL.match(headers[i].text)), None)
    entries: list[Entry] = []
    for line_no, cells in table.rows:
        read = [read_cell(cell) for cell in cells]
        shared = [(named[i], read[i]) for i in range(len(cells)) if i not in tasks]
        row_figures = [(h, c) for h, c in shared if h.field in FIGURES and c.value is not None]
        for index in tasks:
            pairs = [(h, c) for h, c in shared if h.field not in FIGURES or index == overall]
            speedup = Header(headers[index].text, headers[index].name, "x", "speedup", False)
            entries.append(Entry(line_no, [*pairs, (speedup, read[index])], task=headers[index].text))
        if overall is None and row_figures:  # the method's own figures with no overall column to hold them
            entries.append(Entry(line_no, shared, task=None))
    skipped = [h.text for i, h in enumerate(headers) if not h.fields() and i not in tasks and i != label and h.text]
    return Reading("leaderboard", entries, skipped)


def transposed(table: Table, headers: list[Header]) -> Reading | None:
    """The first column names the measures: one result per other column (one: a ``metric | value`` table)."""
    measures = [(line_no, read_header(cells[0])) for line_no, cells in table.rows]
    if not FIGURES & {m.field for _, m in measures} or any(h.field is not None for h in headers[1:]):
        return None
    metrics = len(headers) == 2 and headers[0].name in METRIC_HEADERS and headers[1].name in VALUE_HEADERS
    named = [m for _, m in measures if m.text]
    if not metrics and 2 * sum(m.field is not None for m in named) < len(named):
        return None  # mostly rows of other things (a glossary's "column | definition | example" table): not results
    entries = []
    for column in range(1, len(headers)):
        pairs = [(measure, read_cell(cells[column])) for (_, measure), (_, cells) in zip(measures, table.rows, strict=True)]
        name = None if headers[column].name in VALUE_HEADERS else headers[column].text
        entries.append(Entry(table.line_no, pairs, name=name))
    skipped = [m.text for _, m in measures if m.field is None and m.text]
    return Reading("metrics" if metrics else "columns", entries, skipped)


def has_results(reading: Reading) -> bool:
    return any(h.field in FIGURES and c.value is not None
               for entry in reading.entries for h, c in split_pairs(entry.pairs))


def split_pairs(pairs: list[tuple[Header, Cell]]) -> list[tuple[Header, Cell]]:
    """A "TPS / AL" column's cell "82.1 / 2.3" as two cells, one per field; without a "/" in it, kept whole."""
    split: list[tuple[Header, Cell]] = []
    for header, cell in pairs:
        if header.pair is not None and cell.second is not None:
            first, second = header.pair
            split += [(first, Cell(cell.text, cell.value, cell.unit)), (second, Cell(cell.text, cell.second))]
        else:
            split.append((header, cell))
    return split
