"""The fast path for SGLang stats lines: line templates learned from the file itself.

Why: a server prints every ``Decode batch`` line from the same format string, so a log
holds only a handful of line shapes (one per SGLang build, logging setup and DP rank
layout). The general reader (``sglang_stats``) applies the grammar line by line, so it accepts
any key order, spacing and value spelling, and pays for it with Python per line (~6 MB/s).
Once it has read a line, this module turns that line into a *template*: its prefix shape and
wrapper, stem, separator and ordered keys, as one anchored pattern and as the same shape in
steps (``template_steps``).
A block's lines go through one compiled pass (``log_kernels.scan_lines``) that matches
each against the templates' steps and reads the values of those that match in full; the
columns are built from the bounds it kept (rank tags numbered and ``extra`` written by
compiled passes too).

Only shapes whose reading is unambiguous become templates: a ``[date time(.ms) TAGS] ``,
custom-logging or Python-logging prefix (``log_lines.PYTHON_LOGGING``: its fields after the
time are one fixed text per format string, kept literally but for a process id), each value
a plain number (``True``/``False`` for a graph flag, whose name other than ``cuda graph`` also goes
to ``extra``; ``12.5%`` for an unknown key), no repeated key, no text value. Everything else, and any line that
does not match a template exactly, is read by the general reader, so both paths give
the same rows (tests/test_log_templates.py checks this on every fixture and corpus log).
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.parsers.logs.log_lines import (
    LOGGING_FIELDS,
    LOGGING_LEAD,
    Block,
    substrings,
)
from ingest.parsers.sglang import template_steps as step
from ingest.parsers.sglang.sglang_grammar import (
    BOOL,
    FLOAT,
    GRAPH_NAME_IN_EXTRA,
    INT,
    STEMS,
    Stem,
)
from ingest.parsers.sglang.sglang_stats import (
    Members,
    StatsRows,
    json_objects,
    rank_columns,
    read_lines,
)
from ingest.tables import SCHEMAS

MAX_TEMPLATES = 24  # per file; a log with more shapes than this is read by the general reader
LEARN_PER_BLOCK = 4  # lines of a block the general reader took that are tried as new templates
# A block where many lines hold " batch" but match no template shows a shape not learned yet (the
# file's start, a restart with another logging setup): the general reader reads a few of them first,
# to learn it before the block is read, rather than after (when the next block is already in flight).
LEARN_FIRST_FROM = 64  # such lines a block must hold to try it
LEARN_FIRST_SAMPLE = 16  # lines the general reader reads for it
LEARN_FIRST_FRUITLESS = 8  # tries per file that may learn nothing (shapes that cannot become templates)

# What a value must look like for its kind to be read by position; the general reader takes the rest.
VALUE_PATTERNS = {
    INT: r"\d{1,18}",
    FLOAT: r"-?\d{1,15}(?:\.\d{1,15})?",
    BOOL: r"(?:True|False)",
    "extra": r"-?(?:0|[1-9]\d{0,14})(?:\.\d{1,15})?",  # printed as is: already a JSON number
}
# An unknown key's ``12.5%`` (SGLang 0.4's "cache hit rate: 0.00%"): "key (%)": 12.5 in extra, as the grammar reads it.
PERCENT = "percent"
VALUE_PATTERNS[PERCENT] = VALUE_PATTERNS["extra"] + "%"
LABEL_PATTERN = r"(?:0|[1-9]\d{0,17})"
TAGS = {"bracket": r"(?: [A-Z][A-Z_]*\d{1,9})*", "custom": r"(?:[A-Z][A-Z_]*\d{1,9} )*"}

# A stats line the general reader took, split into the parts a template fixes or leaves free.
LEARNABLE = re.compile(
    r"^(?P<wrapper>[^\[\r\n]*?)"
    r"(?:\[(?P<b_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,](?P<b_fraction>\d+))?)(?P<b_tags>(?: [A-Z][A-Z_]*\d+)*)\] "
    r"|(?P<c_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,](?P<c_fraction>\d+))?) (?P<c_level>(?:[A-Z]+ |\d+ )*)"
    r"\[(?P<c_tags>(?:[A-Z][A-Z_]*\d+ )*)(?P<c_site>[\w.-]+:\d+)\] "
    # Python logging formats (log_lines.PYTHON_LOGGING): what follows the time is the same text on every
    # line of one format string but a process id, so it is kept as written.
    rf"|(?P<p_lead>{LOGGING_LEAD})(?:\[(?P<l_datetime>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,](?P<l_fraction>\d+))?)"
    r"(?P<l_tags>(?: [A-Z][A-Z_]*\d+)*)\]"
    r"|(?P<p_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,](?P<p_fraction>\d+))?))"
    rf"(?P<p_fields>{LOGGING_FIELDS}))"
    r"(?P<stem>Decode batch|Prefill batch)(?P<sep>\. |, | \[(?P<label>[^\]]*)\], )"
    r"(?P<payload>.*?)[, \t]*\r?\n?$",
    re.DOTALL,
)


@dataclass(frozen=True, eq=False)  # compared by identity: the steps are an array
class Template:
    """One line shape: ``pattern`` matches its lines whole, and ``steps`` is the same shape as a
    program for the compiled reader (``log_kernels``); ``literals`` holds the text it compares."""

    pattern: str
    stem: Stem
    labelled: bool
    keys: tuple[str, ...]
    kinds: tuple[str, ...]  # each key's value: a column's type, "extra" or PERCENT
    steps: np.ndarray  # int64 rows of (code, a, b): see template_steps
    literals: bytes

    @property
    def table(self) -> str:
        return self.stem.table

    def extra_name(self, slot: int) -> str:
        """The name the key in ``slot`` has in ``extra``."""
        return f"{self.keys[slot]} (%)" if self.kinds[slot] == PERCENT else self.keys[slot]

    @property
    def has_tags(self) -> bool:
        """Whether its prefix has a place for rank tags (a Python logging format may have none): only
        then does the compiled pass mark where a line's tags are."""
        return bool(np.isin(self.steps[:, 0], (step.BRACKET_TAGS, step.CUSTOM_TAGS)).any())


def log_kernels() -> ModuleType:
    """The compiled passes (``log_kernels``), imported on first use: see that module for why."""
    from ingest.parsers.sglang import log_kernels

    return log_kernels


def _literal(text: str) -> str:
    """``text`` as a pattern that matches it literally, in syntax both RE2 and Python accept."""
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text)


def learn(line: str) -> Template | None:
    """The template of ``line`` (a stats line the general reader read), or None when its shape
    is not one that can be read by position."""
    found = LEARNABLE.match(line)
    if found is None:
        return None
    stem = next(stem for stem in STEMS if stem.text == found["stem"])
    pairs = [part.partition(": ") for part in found["payload"].split(", ")]
    keys = tuple(key for key, _, _ in pairs)
    if not keys or len(set(keys)) != len(keys) or any(not sep for _, sep, _ in pairs):
        return None
    kinds = []
    for key, _, value in pairs:
        kind = _value_kind(key, stem)
        if kind == "extra" and re.fullmatch(VALUE_PATTERNS[PERCENT], value):
            kind = PERCENT
        if kind is None or not re.fullmatch(VALUE_PATTERNS[kind], value) or key != key.strip() or ", " in key:
            return None
        kinds.append(kind)
    if found["label"] is not None and not re.fullmatch(LABEL_PATTERN, found["label"]):
        return None
    if len(_fraction(found)) > step.MAX_FRACTION_DIGITS:
        return None  # finer than the microseconds a timestamp holds
    return _template(found, stem, keys, kinds)


def _value_kind(key: str, stem: Stem) -> str | None:
    if key in stem.fields:
        return stem.fields[key][1]
    return "extra"


def _fraction(found: re.Match[str]) -> str:
    return found["b_fraction"] or found["c_fraction"] or found["l_fraction"] or found["p_fraction"] or ""


def _template(found: re.Match[str], stem: Stem, keys: tuple[str, ...], kinds: list[str]) -> Template:
    """The pattern and the program of ``found``'s shape, built part by part side by side."""
    shape = _Shape()
    fraction = _fraction(found)
    datetime = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d" + (rf"[.,]\d{{{len(fraction)}}}" if fraction else "")
    if found["b_datetime"]:
        shape.literal(found["wrapper"] + "[")
        shape.part(datetime, step.DATETIME, len(fraction))
        shape.part(TAGS["bracket"], step.BRACKET_TAGS)
        shape.literal("] ")
    elif found["l_datetime"] or found["p_datetime"]:
        shape.literal(found["wrapper"] + found["p_lead"])
        if found["l_datetime"]:
            shape.literal("[")
            shape.part(datetime, step.DATETIME, len(fraction))
            shape.part(TAGS["bracket"], step.BRACKET_TAGS)
            shape.literal("]")
        else:
            shape.part(datetime, step.DATETIME, len(fraction))
        # A field of digits alone is a process id (log_lines.LOGGING_FIELD): it changes with each start.
        for text in re.split(r"(?<= )(\d+)(?= )", found["p_fields"]):
            if text.isdigit():
                shape.part(r"\d{1,12}", step.DIGITS, 1, 12)
            else:
                shape.literal(text)
    else:
        shape.literal(found["wrapper"])
        shape.part(datetime, step.DATETIME, len(fraction))
        shape.literal(" ")
        for text in re.split(r"(\d+)", found["c_level"] or ""):
            if text.isdigit():
                shape.part(r"\d{1,12}", step.DIGITS, 1, 12)  # the process id changes with each start
            else:
                shape.literal(text)
        shape.literal("[")
        shape.part(TAGS["custom"], step.CUSTOM_TAGS)
        shape.literal(found["c_site"] + "] ")
    labelled = found["label"] is not None
    if labelled:
        shape.literal(stem.text + " [")
        shape.part(LABEL_PATTERN, step.LABEL)
        shape.literal("], ")
    else:
        shape.literal(stem.text + found["sep"])
    for slot, (key, kind) in enumerate(zip(keys, kinds, strict=True)):
        shape.literal((", " if slot else "") + key + ": ")
        if kind == PERCENT:  # the number is the value; the sign is part of the shape
            shape.part(VALUE_PATTERNS["extra"], step.EXTRA_VALUE, slot)
            shape.literal("%")
        else:
            shape.part(VALUE_PATTERNS[kind], VALUE_STEPS[kind], slot)
    shape.part(r"[, \t]*\r?\n?$", step.LINE_END)
    return Template(
        pattern="^" + "".join(shape.patterns),
        stem=stem,
        labelled=labelled,
        keys=keys,
        kinds=tuple(kinds),
        steps=np.array(shape.steps, dtype=np.int64).reshape(-1, 3),
        literals=bytes(shape.literals),
    )


VALUE_STEPS = {INT: step.INT_VALUE, FLOAT: step.FLOAT_VALUE, BOOL: step.BOOL_VALUE, "extra": step.EXTRA_VALUE}


@dataclass
class _Shape:
    """A template's pattern and program as they are built; adjacent literal text is one step."""

    patterns: list[str] = field(default_factory=list)
    steps: list[tuple[int, int, int]] = field(default_factory=list)
    literals: bytearray = field(default_factory=bytearray)

    def literal(self, text: str) -> None:
        if not text:
            return
        encoded = text.encode()
        self.patterns.append(_literal(text))
        if self.steps and self.steps[-1][0] == step.LITERAL:
            code, offset, length = self.steps.pop()
            self.steps.append((code, offset, length + len(encoded)))
        else:
            self.steps.append((step.LITERAL, len(self.literals), len(encoded)))
        self.literals += encoded

    def part(self, pattern: str, code: int, a: int = 0, b: int = 0) -> None:
        self.patterns.append(pattern)
        self.steps.append((code, a, b))


@dataclass
class TemplateBook:
    """The templates learned so far in one file; shared by the threads scanning its blocks."""

    templates: list[Template] = field(default_factory=list)
    tried: set[str] = field(default_factory=set)  # patterns already learned or refused
    recent_hits: dict[str, int] = field(default_factory=dict)  # pattern → lines it matched in the last block
    programs: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    fruitless_tries: int = 0  # learn-first tries that learned nothing
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[Template]:
        """The templates, those that matched most lines lately first: each line is tried against
        one template after another, so the usual shape should come first."""
        with self.lock:
            return sorted(self.templates, key=lambda template: -self.recent_hits.get(template.pattern, 0))

    def program(self, templates: list[Template]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``templates`` (in this order) as one program for ``log_kernels.scan_lines``."""
        key = tuple(template.pattern for template in templates)
        if key not in self.programs:
            self.programs[key] = _program(templates)
        return self.programs[key]

    def size(self) -> int:
        with self.lock:
            return len(self.templates)

    def record(self, hits: dict[str, int]) -> None:
        with self.lock:
            self.recent_hits.update(hits)

    def learn_from(self, block: Block, line_indexes: np.ndarray) -> int:
        """Learn templates from some of the lines the general reader took in ``block``; how many are new."""
        learned = 0
        for index in line_indexes[:LEARN_PER_BLOCK].tolist():
            template = learn(block.line_text(index))
            if template is None:
                continue
            with self.lock:
                if template.pattern not in self.tried and len(self.templates) < MAX_TEMPLATES:
                    self.tried.add(template.pattern)
                    self.templates.append(template)
                    learned += 1
        return learned


@dataclass
class Templated:
    """What the template pass read of a block: ``rows`` of the lines a template matched (``taken``),
    the lines the general reader need not look at (``settled``: those, and the lines without " batch"
    in them), and the HTTP access lines among the rest (``log_kernels.scan_lines``)."""

    rows: list[StatsRows]
    taken: np.ndarray
    settled: np.ndarray
    http_access: np.ndarray


def read_templated(block: Block, book: TemplateBook) -> Templated:
    """The lines that match one of ``book``'s templates read by position (see ``Templated``).

    When many lines are left to the general reader, it first reads a few of them to teach the book
    (``LEARN_FIRST_FROM``), and the block is read again with what was learned, here or meanwhile in
    another block: blocks are read two at a time, and the first blocks of a shape learn it together."""
    known = book.size()
    templated = _read_with_templates(block, book)
    unsettled = np.flatnonzero(~templated.settled)
    if len(unsettled) < LEARN_FIRST_FROM or book.fruitless_tries >= LEARN_FIRST_FRUITLESS:
        return templated
    sample = np.ones(block.size, dtype=bool)
    sample[unsettled[:LEARN_FIRST_SAMPLE]] = False
    read, _ = read_lines(block, skip=sample)
    learned = sum(book.learn_from(block, stats.line_index) for stats in read.values())
    if not learned and book.size() == known:
        book.fruitless_tries += 1
        return templated
    return _read_with_templates(block, book)


def _read_with_templates(block: Block, book: TemplateBook) -> Templated:
    templates = book.snapshot()
    scan = _scan(block, book, templates)
    taken = np.zeros(block.size, dtype=bool)
    taken[scan.line[: scan.count]] = True
    hits = np.bincount(scan.template[: scan.count], minlength=len(templates))
    book.record({template.pattern: int(count) for template, count in zip(templates, hits.tolist(), strict=True)})
    rows = []
    for index, template in enumerate(templates):
        if hits[index]:
            rows.append(_read_matched(block, template, scan, np.flatnonzero(scan.template[: scan.count] == index)))
    return Templated(rows, taken, ~scan.has_batch, scan.http_access)


@dataclass
class _Scan:
    """What ``log_kernels.scan_lines`` wrote: row r is line ``line[r]``, matched by ``template[r]``."""

    count: int
    line: np.ndarray
    template: np.ndarray
    ints: np.ndarray  # [key slot, row]: integer and True/False values
    floats: np.ndarray  # [key slot, row]
    bounds: np.ndarray  # [2 * slot (+1), row]: where an extra key's value starts and ends
    marks: np.ndarray  # [step.TIMESTAMP ..., row]
    has_batch: np.ndarray  # [line]: matched no template, holds " batch"
    http_access: np.ndarray  # [line]: matched no template, an HTTP access line without "server_args="


def _scan(block: Block, book: TemplateBook, templates: list[Template]) -> _Scan:
    steps, literals, program_bounds = book.program(templates)
    slots = max((len(template.keys) for template in templates), default=0)
    lines = block.size
    scan = _Scan(
        count=0,
        line=np.empty(lines, dtype=np.int64),
        template=np.empty(lines, dtype=np.int64),
        ints=np.empty((slots, lines), dtype=np.int64),
        floats=np.empty((slots, lines), dtype=np.float64),
        bounds=np.empty((2 * slots, lines), dtype=np.int64),
        marks=np.empty((step.MARKS, lines), dtype=np.int64),
        has_batch=np.empty(lines, dtype=bool),
        http_access=np.empty(lines, dtype=bool),
    )
    scan.count = log_kernels().scan_lines(
        block.array, block.starts, block.ends, steps, literals, program_bounds,
        scan.line, scan.template, scan.ints, scan.floats, scan.bounds, scan.marks, scan.has_batch, scan.http_access,
    )
    return scan


def _program(templates: list[Template]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The templates' programs as one: steps, their literal text, and each template's rows of steps."""
    programs, literals, bounds = [], bytearray(), []
    first_step = 0
    for template in templates:
        program = template.steps.copy()
        program[program[:, 0] == step.LITERAL, 1] += len(literals)
        programs.append(program)
        bounds.append((first_step, first_step + len(program)))
        first_step += len(program)
        literals += template.literals
    steps = np.concatenate(programs) if programs else np.empty((0, 3), dtype=np.int64)
    return steps, np.frombuffer(bytes(literals), dtype=np.uint8), np.array(bounds, dtype=np.int64).reshape(-1, 2)


def _read_matched(block: Block, template: Template, scan: _Scan, rows: np.ndarray) -> StatsRows:
    def column(values: np.ndarray) -> np.ndarray:  # all rows (the usual case): a view, no copy
        return values[: scan.count] if len(rows) == scan.count else values[rows]

    line_index = column(scan.line)
    marks = {name: column(scan.marks[index]) for index, name in enumerate(step.MARK_NAMES)}
    if not template.has_tags:  # the pass left those marks unwritten: every row has no tags
        marks["tags_start"] = marks["tags_end"] = np.zeros(len(line_index), dtype=np.int64)
    dp_rank, tp_rank, prefix_members = rank_columns(*_distinct_tags(block, marks["tags_start"], marks["tags_end"]))
    schema = SCHEMAS[template.table]
    columns: dict[str, pa.Array] = {}
    members: list[tuple[str, np.ndarray, np.ndarray]] = []  # extra's members in line order: text before the value, value bounds
    for slot, key in enumerate(template.keys):
        if key in template.stem.fields:
            name, kind = template.stem.fields[key]
            columns[name] = _values(column(scan.floats[slot] if kind == FLOAT else scan.ints[slot]), kind)
            if key in GRAPH_NAME_IN_EXTRA:  # the flag is named in extra too: a member of fixed text, no value
                nothing = np.zeros(len(line_index), dtype=np.int64)
                members.append((f'"graph": {json.dumps(key)}', nothing, nothing))
        else:
            members.append((json.dumps(template.extra_name(slot)) + ": ", column(scan.bounds[2 * slot]), column(scan.bounds[2 * slot + 1])))
    for name, _ in template.stem.fields.values():
        if name not in columns:
            columns[name] = pa.nulls(len(rows), schema.field(name).type)
    if members or template.labelled:
        extra = _extra_objects(
            block, members, (marks["label_start"], marks["label_end"]) if template.labelled else None, prefix_members
        )
    else:
        extra = json_objects([prefix_members], len(rows))
    return StatsRows(
        table=template.table,
        line_index=line_index,
        columns={
            "line_no": pa.array(block.first_line_no + line_index, type=pa.int64()),
            "ts": pa.array(marks["timestamp"].view("datetime64[us]"), type=pa.timestamp("us")),
            "dp_rank": dp_rank,
            "tp_rank": tp_rank,
            **columns,
            "extra": extra,
        },
        undated=np.array([], dtype=np.int64),
        undated_times=[],
    )


DISTINCT_TAGS = 512  # per block and template; more (a garbled log) goes to Arrow's dictionary encoding


def _distinct_tags(block: Block, starts: np.ndarray, ends: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Each row's rank tags as (distinct texts, each row's index into them)."""
    table = np.full(4 * DISTINCT_TAGS, -1, dtype=np.int64)
    firsts = np.empty(DISTINCT_TAGS, dtype=np.int64)
    codes = np.empty(len(starts), dtype=np.int64)
    count = log_kernels().distinct_ranges(block.array, starts, ends, table, firsts, codes)
    if count < 0:
        tags = pc.dictionary_encode(substrings(block.buffer, starts, ends))
        return tags.dictionary.to_pylist(), tags.indices.to_numpy(zero_copy_only=False)
    texts = [block.array[starts[row] : ends[row]].tobytes().decode() for row in firsts[:count].tolist()]
    return texts, codes


LABEL_KEY = np.frombuffer(b'"forward_ct": ', dtype=np.uint8)


def _extra_objects(
    block: Block, values: list[tuple[str, np.ndarray, np.ndarray]], labels: tuple[np.ndarray, np.ndarray] | None, prefix: Members
) -> pa.StringArray:
    """Each row's ``extra`` JSON text, for a template with keys no column holds, a graph flag other
    than CUDA's or a label (so every row has a member): those members in line order, each its text
    before the value (``"key": ``) and the value as logged (where it starts and ends in the block; the
    pattern admitted only JSON numbers), the rank tags other than DP/TP (``prefix``), then the label
    as ``forward_ct`` (a plain integer). Built by one compiled pass: joining Arrow string arrays for
    it took ~0.3 s of a 1 GB log's load."""
    assert prefix.texts is not None and prefix.codes is not None, "the template reader keeps prefixes as codes"
    count = len(prefix.codes)
    keys = [lead.encode() for lead, _, _ in values]
    members = [text.encode() for text in prefix.texts]
    bounds = np.stack([end for _, *pair in values for end in pair]) if values else np.empty((0, count), dtype=np.int64)
    label_bounds = np.stack(labels) if labels else np.empty((2, 0), dtype=np.int64)
    key_offsets, member_offsets = _offsets(keys), _offsets(members)
    member_codes = prefix.codes.astype(np.int64, copy=False)
    lengths = np.empty(count, dtype=np.int64)
    log_kernels().json_object_lengths(bounds, key_offsets, member_offsets, member_codes, label_bounds, len(LABEL_KEY), lengths)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    out = np.empty(int(offsets[-1]) + 1, dtype=np.uint8)  # + 1: see write_json_objects
    log_kernels().write_json_objects(
        block.array, bounds, _bytes(keys), key_offsets, _bytes(members), member_offsets, member_codes, label_bounds,
        LABEL_KEY, offsets, out,
    )
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(out))


def _offsets(texts: list[bytes]) -> np.ndarray:
    return np.cumsum([0, *map(len, texts)], dtype=np.int64)


def _bytes(texts: list[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(texts), dtype=np.uint8)


def _values(values: np.ndarray, kind: str) -> pa.Array:
    if kind == FLOAT:
        return pa.array(values, type=pa.float64())
    if kind == BOOL:
        return pa.array(values == 1, type=pa.bool_())
    return pa.array(values, type=pa.int64())
