"""The fast path for SGLang stats lines: line templates learned from the file itself.

Why: a server prints every ``Decode batch`` line from the same format string, so a log
holds only a handful of line shapes (one per SGLang build, logging setup and DP rank
layout). The general reader (``sglang_stats``) accepts any key order, spacing and value
spelling, and pays for it with many passes per block. Once it has read a line, this
module turns that line into a *template*: its prefix shape and wrapper, stem, separator
and ordered keys, as one anchored pattern. A block's lines that match a template in
full are then read by byte position: the k-th ", " after the stem ends the k-th value.

Only shapes whose reading is unambiguous become templates: a ``[date time(.ms) TAGS] ``
or custom-logging prefix, each value a plain number (or ``True``/``False`` for the graph
flag), no repeated key, no percent or text value. Everything else, and any line that
does not match a template exactly, is read by the general reader, so both paths give
the same rows (tests/test_log_templates.py checks this on every fixture and corpus log).
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.parsers.log_lines import Block, substrings
from ingest.parsers.sglang_stats import (
    BOOL,
    FLOAT,
    GRAPH_NAME_IN_EXTRA,
    INT,
    STEMS,
    StatsRows,
    Stem,
    _json_objects,
    _label_members,
    _Members,
    _prefix_columns,
    _PrefixScan,
    _trim_right,
)
from ingest.tables import SCHEMAS

MAX_TEMPLATES = 24  # per file; a log with more shapes than this is read by the general reader
LEARN_PER_BLOCK = 4  # lines of a block the general reader took that are tried as new templates
FIND_WINDOW = 48  # bytes within which the parts of a prefix after its timestamp (tags, "[", "] ") usually end

# What a value must look like for its kind to be read by position; the general reader takes the rest.
VALUE_PATTERNS = {
    INT: r"\d{1,18}",
    FLOAT: r"-?\d{1,15}(?:\.\d{1,15})?",
    BOOL: r"(?:True|False)",
    "extra": r"-?(?:0|[1-9]\d{0,14})(?:\.\d{1,15})?",  # printed as is: already a JSON number
}
LABEL_PATTERN = r"(?:0|[1-9]\d{0,17})"
TAGS = {"bracket": r"(?: [A-Z][A-Z_]*\d{1,9})*", "custom": r"(?:[A-Z][A-Z_]*\d{1,9} )*"}

# A stats line the general reader took, split into the parts a template fixes or leaves free.
LEARNABLE = re.compile(
    r"^(?P<wrapper>[^\[\r\n]*?)"
    r"(?:\[(?P<b_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,](?P<b_fraction>\d+))?)(?P<b_tags>(?: [A-Z][A-Z_]*\d+)*)\] "
    r"|(?P<c_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,](?P<c_fraction>\d+))?) (?P<c_level>(?:[A-Z]+ |\d+ )*)"
    r"\[(?P<c_tags>(?:[A-Z][A-Z_]*\d+ )*)(?P<c_site>[\w.-]+:\d+)\] )"
    r"(?P<stem>Decode batch|Prefill batch)(?P<sep>\. |, | \[(?P<label>[^\]]*)\], )"
    r"(?P<payload>.*?)[, \t]*\r?\n?$",
    re.DOTALL,
)


@dataclass(frozen=True)
class Template:
    """One line shape: ``pattern`` matches its lines whole; the rest says where each part sits."""

    pattern: str
    stem: Stem
    prefix: str  # "bracket" or "custom"
    wrapper_length: int  # bytes before the "[" (bracket) or the date (custom)
    datetime_length: int
    site_length: int  # custom: "file.py:NNN" before "] "
    stem_text: str  # stem and separator up to the first key ("Decode batch. ", "Decode batch [")
    labelled: bool
    keys: tuple[str, ...]

    @property
    def table(self) -> str:
        return self.stem.table


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
    value_patterns = []
    for key, _, value in pairs:
        kind = _value_kind(key, stem)
        if kind is None or not re.fullmatch(VALUE_PATTERNS[kind], value) or key != key.strip() or ", " in key:
            return None
        value_patterns.append(_literal(key) + ": " + VALUE_PATTERNS[kind])
    if found["label"] is not None and not re.fullmatch(LABEL_PATTERN, found["label"]):
        return None
    prefix = "bracket" if found["b_datetime"] else "custom"
    return _template(found, stem, prefix, keys, value_patterns)


def _value_kind(key: str, stem: Stem) -> str | None:
    if key in GRAPH_NAME_IN_EXTRA:
        return None  # the flag is also named in extra: the general reader writes that
    if key in stem.fields:
        return stem.fields[key][1]
    return "extra"


def _template(found: re.Match[str], stem: Stem, prefix: str, keys: tuple[str, ...], value_patterns: list[str]) -> Template:
    wrapper = found["wrapper"]
    fraction = found["b_fraction"] if prefix == "bracket" else found["c_fraction"]
    datetime = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d" + (rf"[.,]\d{{{len(fraction)}}}" if fraction else "")
    site = found["c_site"] or ""
    if prefix == "bracket":
        prefix_pattern = rf"\[{datetime}{TAGS['bracket']}\] "
    else:
        level = re.sub(r"\d+", r"\\d{1,12}", _literal(found["c_level"] or ""))  # the process id changes with each start
        prefix_pattern = rf"{datetime} {level}\[{TAGS['custom']}{_literal(site)}\] "
    labelled = found["label"] is not None
    stem_text = stem.text + (" [" if labelled else found["sep"])
    separator = rf" \[{LABEL_PATTERN}\], " if labelled else _literal(found["sep"])
    pattern = (
        "^" + _literal(wrapper) + prefix_pattern + _literal(stem.text) + separator
        + ", ".join(value_patterns) + r"[, \t]*\r?\n?$"
    )
    return Template(
        pattern=pattern,
        stem=stem,
        prefix=prefix,
        wrapper_length=len(wrapper.encode()),
        datetime_length=len(found["b_datetime"] or found["c_datetime"]),
        site_length=len(site.encode()),
        stem_text=stem_text,
        labelled=labelled,
        keys=keys,
    )


@dataclass
class TemplateBook:
    """The templates learned so far in one file; shared by the threads scanning its blocks."""

    templates: list[Template] = field(default_factory=list)
    tried: set[str] = field(default_factory=set)  # patterns already learned or refused
    recent_hits: dict[str, int] = field(default_factory=dict)  # pattern → lines it matched in the last block
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[Template]:
        """The templates, those that matched most lines lately first: each line is tried against
        one template after another, so the usual shape should come first."""
        with self.lock:
            return sorted(self.templates, key=lambda template: -self.recent_hits.get(template.pattern, 0))

    def record(self, hits: dict[str, int]) -> None:
        with self.lock:
            self.recent_hits.update(hits)

    def learn_from(self, block: Block, line_indexes: np.ndarray) -> None:
        """Learn templates from some of the lines the general reader took in ``block``."""
        for index in line_indexes[:LEARN_PER_BLOCK].tolist():
            template = learn(block.data[block.starts[index] : block.ends[index]].decode("utf-8", errors="replace"))
            if template is None:
                continue
            with self.lock:
                if template.pattern not in self.tried and len(self.templates) < MAX_TEMPLATES:
                    self.tried.add(template.pattern)
                    self.templates.append(template)


def read_templated(block: Block, book: TemplateBook) -> tuple[list[StatsRows], np.ndarray]:
    """Rows of the lines that match one of ``book``'s templates, and a mask of those lines."""
    taken = np.zeros(block.size, dtype=bool)
    rows: list[StatsRows] = []
    templates = book.snapshot()
    if not templates:
        return rows, taken
    comma_spaces = _comma_space_positions(block.array)
    # The usual shape goes first over the block's lines as they are: an anchored pattern gives up on
    # another line within its first bytes, which costs less than finding and copying the stats lines.
    remaining = np.arange(block.size)
    lines: pa.StringArray = block.lines
    hits: dict[str, int] = {}
    for template in templates:
        if len(remaining) == 0:
            break
        hit = pc.match_substring_regex(lines, template.pattern).to_numpy(zero_copy_only=False)
        hits[template.pattern] = int(hit.sum())
        if not hits[template.pattern]:
            continue
        matched = remaining[hit]
        rows.append(_read_matched(block, template, matched, comma_spaces))
        taken[matched] = True
        remaining = remaining[~hit]
        lines = block.lines.take(pa.array(remaining))
    book.record(hits)
    return rows, taken


def _comma_space_positions(data: np.ndarray) -> np.ndarray:
    at = np.flatnonzero(data[:-1] == ord(","))
    return at[data[at + 1] == ord(" ")]


def _read_matched(block: Block, template: Template, line_index: np.ndarray, comma_spaces: np.ndarray) -> StatsRows:
    line_start = block.starts[line_index]
    prefix, stem_start = _prefix_scan(block, template, line_start, line_index)
    label_start = label_end = np.full(len(line_index), -1, dtype=np.int64)
    payload_start = stem_start + len(template.stem_text)
    if template.labelled:
        label_start = payload_start
        label_end = label_start + pc.find_substring(substrings(block.buffer, label_start, block.ends[line_index]), "]").to_numpy()
        payload_start = label_end + 3  # "], "
    payload_end = _trim_right(block.array, payload_start, block.ends[line_index])
    value_start, value_end = _value_bounds(template, payload_start, payload_end, comma_spaces)
    schema = SCHEMAS[template.table]
    columns = {column: pa.nulls(len(line_index), schema.field(column).type) for column, _ in template.stem.fields.values()}
    extra: list[_Members] = []
    for key, start, end in zip(template.keys, value_start, value_end, strict=True):
        values = substrings(block.buffer, start, end)
        if key in template.stem.fields:
            column, kind = template.stem.fields[key]
            # the pattern admitted only plain numbers and True/False: they cast as the general reader casts them
            columns[column] = pc.equal(values, "True") if kind == BOOL else pc.cast(values, schema.field(column).type)
        else:
            members = pc.binary_join_element_wise(json.dumps(key) + ": ", values, ", ", "")
            extra.append(_Members(array=members))
    ts, dp_rank, tp_rank, prefix_members = _prefix_columns(prefix)
    extra_members = _Members(array=pc.binary_join_element_wise(*(m.array for m in extra), "")) if extra else _Members()
    return StatsRows(
        table=template.table,
        line_index=line_index,
        columns={
            "line_no": pa.array(block.first_line_no + line_index, type=pa.int64()),
            "ts": ts,
            "dp_rank": dp_rank,
            "tp_rank": tp_rank,
            **columns,
            "extra": _json_objects([extra_members, prefix_members, _label_members(block, label_start, label_end)], len(line_index)),
        },
        undated=np.array([], dtype=np.int64),
        undated_times=[],
    )


def _prefix_scan(block: Block, template: Template, line_start: np.ndarray, line_index: np.ndarray) -> tuple[_PrefixScan, np.ndarray]:
    """Timestamps and rank tags by position, and where the stem starts."""
    datetime_start = line_start + template.wrapper_length + (1 if template.prefix == "bracket" else 0)
    datetime_end = datetime_start + template.datetime_length
    line_end = block.ends[line_index]
    if template.prefix == "bracket":
        tags_start = datetime_end
        stem_start = _find(block, datetime_end, line_end, "] ") + 2
        tags_end = stem_start - 2
    else:
        tags_start = _find(block, datetime_end, line_end, "[") + 1
        stem_start = _find(block, tags_start, line_end, "] ") + 2
        tags_end = stem_start - 2 - template.site_length
    encoded = pc.dictionary_encode(substrings(block.buffer, tags_start, tags_end))
    scan = _PrefixScan(
        valid=np.ones(len(line_index), dtype=bool),
        datetimes=substrings(block.buffer, datetime_start, datetime_end),
        tag_texts=encoded.dictionary.to_pylist(),
        tag_codes=encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32),
    )
    return scan, stem_start


def _find(block: Block, start: np.ndarray, end: np.ndarray, text: str) -> np.ndarray:
    """Where ``text`` first occurs in each ``block.data[start:end]`` (the template guarantees it does).

    Looked for in the first ``FIND_WINDOW`` bytes, then in the whole rest of the lines that
    were not found there: the prefix parts sought sit near the start, and copying each line's
    rest to search it cost more than the search."""
    at = np.full(len(start), -1, dtype=np.int64)
    todo = np.arange(len(start))
    for limit in (np.minimum(end, start + FIND_WINDOW), end):
        found = pc.find_substring(substrings(block.buffer, start[todo], limit[todo]), text).to_numpy()
        at[todo] = start[todo] + found
        todo = todo[found < 0]
        if len(todo) == 0:
            break
    return at


def _value_bounds(
    template: Template, payload_start: np.ndarray, payload_end: np.ndarray, comma_spaces: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Where each key's value starts and ends: the k-th ", " after the payload start ends the k-th value
    (values are plain numbers, so no ", " can hide inside one)."""
    first = np.searchsorted(comma_spaces, payload_start)
    starts, ends = [], []
    part_start = payload_start
    for position, key in enumerate(template.keys):
        starts.append(part_start + len(key.encode()) + 2)
        if position + 1 < len(template.keys):
            separator = comma_spaces[first + position]
            ends.append(separator)
            part_start = separator + 2
        else:
            ends.append(payload_end)
    return starts, ends
