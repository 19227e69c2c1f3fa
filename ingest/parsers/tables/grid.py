"""Finding the tables in a text: Markdown pipe tables, grid tables, and fixed-width tables under a rule.

Three shapes, as people paste them:

- **Markdown**: a header row of ``|``-separated cells (outer pipes optional), then a separator row
  (``|---|:---:|``), then rows. Without the separator row a line of pipes is not a table (log
  lines such as ``id 1 | task 0 | ...`` have pipes too).
- **Grid** (tabulate ``grid``/``psql``, evalscope): ``+----+----+`` rules around ``| a | b |`` rows, the
  header ruled off by ``+====+`` or ``+----+``.
- **Fixed-width** (tabulate ``simple``, llama.cpp ``speed-bench``): a header line, a rule of dash
  groups (``-------  -----``) whose groups give the columns, then rows cut at those columns.

Each table keeps the Markdown headings above it (its label) and the text lines under those headings
(where the model, the batch size and the hardware are often written: ``- Experimental Settings:
Vicuna-7B-v1.3, greedy decoding, FP16 precision, batch size = 1``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ingest.parsers.bench import bench_table

PIPE_SPLIT = re.compile(r"(?<!\\)\|")
GRID_RULE = re.compile(r"^\s*\+[-=+:]+\+\s*$")
DASH_RULE = re.compile(r"^\s*-{2,}(?:\s+-{2,})+\s*$")
# No lazy ".+?" before optional trailing marks: on a long line of spaces that backtracks cubically.
HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})[ \t]+(?P<title>\S.*)$")
BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)(?P<title>[^*_]{2,120})(?:\*\*|__)\s*:?\s*$")
MAX_LINE_CHARS = bench_table.MAX_HEADER_CHARS  # a longer line is no table row (splitting megabytes would cost seconds)
CONTEXT_LINES = 40  # text lines kept under each heading (settings are written just above a table)
CONTEXT_CHARS = 500  # of each: a settings line is short, and the patterns run over what is kept


@dataclass
class Table:
    """A table as printed: header cells, rows (line, cells), where it starts, what is written above it."""

    line_no: int
    header: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    ragged: list[tuple[int, int]] = field(default_factory=list)  # (line, cells) of rows that do not fit
    headings: list[str] = field(default_factory=list)  # outermost first
    context: list[str] = field(default_factory=list)  # text lines under those headings
    caption: str | None = None  # a bold line or a "...:" line just above the table


def pipe_cells(line: str) -> list[str] | None:
    text = line.strip()
    if "|" not in text or len(text) > MAX_LINE_CHARS:
        return None
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip() for cell in PIPE_SPLIT.split(text)]


def is_pipe_separator(line: str) -> bool:
    cells = pipe_cells(line)
    return bool(cells) and all(bench_table.SEPARATOR_CELL.match(cell) for cell in cells or ())


def dash_spans(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-{2,}", rule)]


def cut(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cells of a fixed-width line at the rule's columns (a cell runs to the next column's start)."""
    starts = [start for start, _ in spans]
    ends = starts[1:] + [max(len(line), spans[-1][1])]
    return [line[start:end].strip() for start, end in zip(starts, ends, strict=True)]


@dataclass
class Outline:
    """The headings above the current line, each with the text lines written under it."""

    sections: list[tuple[int, str, list[str]]] = field(default_factory=lambda: [(0, "", [])])
    recent: list[str] = field(default_factory=list)  # the last few text lines, for a caption

    def heading(self, level: int, title: str) -> None:
        while len(self.sections) > 1 and self.sections[-1][0] >= level:
            self.sections.pop()
        self.sections.append((level, title, []))
        self.recent = []

    def text(self, line: str) -> None:
        lines = self.sections[-1][2]
        lines.append(line.strip()[:CONTEXT_CHARS])
        del lines[:-CONTEXT_LINES]
        self.recent = (self.recent + [lines[-1]])[-2:]

    def forget(self, line: str) -> None:
        lines, kept = self.sections[-1][2], line.strip()[:CONTEXT_CHARS]
        if lines and lines[-1] == kept:
            lines.pop()
        if self.recent and self.recent[-1] == kept:
            self.recent.pop()

    def titles(self) -> list[str]:
        return [title for _, title, _ in self.sections[1:]]

    def lines(self) -> list[str]:
        return [line for _, _, lines in self.sections for line in lines]

    def caption(self) -> str | None:
        for line in reversed(self.recent):
            if (bold := BOLD_LINE.match(line)) is not None:
                return bold["title"].strip()
            if line.endswith(":") and len(line) <= 120:
                return line.rstrip(":").strip()
        return None


def find_tables(lines: Iterable[str]) -> tuple[list[Table], int]:
    """Every table of the text, and the number of lines read."""
    tables: list[Table] = []
    outline = Outline()
    pending: list[tuple[int, str]] = []  # the last two lines, to see a header once its separator comes
    current: Table | None = None
    spans: list[tuple[int, int]] | None = None  # a fixed-width table's columns
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if current is not None:
            if add_row(current, line_no, line, spans):
                continue
            current, spans = None, None
        started = start_table(pending, line_no, line, outline)
        if started is not None:
            current, spans = started
            tables.append(current)
            pending = []
            continue
        pending = (pending + [(line_no, line)])[-2:]
        if len(line) <= MAX_LINE_CHARS and (heading := HEADING.match(line)) is not None:
            title = heading["title"].rstrip().rstrip("#").rstrip() or heading["title"].strip()
            outline.heading(len(heading["marks"]), title[:CONTEXT_CHARS])
        elif line.strip() and not GRID_RULE.match(line):
            outline.text(line)
    return tables, line_no


def start_table(pending: list[tuple[int, str]], line_no: int, line: str,
                outline: Outline) -> tuple[Table, list[tuple[int, int]] | None] | None:
    """A table starts when ``line`` rules off the line before it as a header."""
    if not pending:
        return None
    header_no, header_line = pending[-1]
    if not header_line.strip() or len(header_line) > MAX_LINE_CHARS:
        return None
    header: list[str] | None = None
    spans: list[tuple[int, int]] | None = None
    if is_pipe_separator(line) or GRID_RULE.match(line):
        header = pipe_cells(header_line)
        if header is not None and GRID_RULE.match(line) and not header_line.strip().startswith("|"):
            header = None
        if header is not None and not GRID_RULE.match(line) and len(pipe_cells(line) or ()) != len(header):
            header = None
    elif DASH_RULE.match(line) and "|" not in header_line:
        spans = dash_spans(line)
        header = cut(header_line, spans)
        if any(not cell for cell in header):
            header = None
    if header is None or len(header) < 2:
        return None
    outline.forget(header_line)  # it was read as text before its rule came
    table = Table(line_no=header_no, header=header, headings=outline.titles(), context=outline.lines(),
                  caption=outline.caption())
    return table, spans


def add_row(table: Table, line_no: int, line: str, spans: list[tuple[int, int]] | None) -> bool:
    """Take ``line`` into the table; False when the table has ended before it."""
    if not line.strip():
        return False
    if spans is not None:
        if "|" in line or DASH_RULE.match(line) or len(line) > MAX_LINE_CHARS:
            return False
        table.rows.append((line_no, cut(line, spans)))
        return True
    if GRID_RULE.match(line) or (not table.rows and is_pipe_separator(line)):
        return True
    cells = pipe_cells(line)
    if cells is None:
        return False
    if len(cells) == len(table.header):
        table.rows.append((line_no, cells))
    else:
        table.ragged.append((line_no, len(cells)))
    return True
