"""SGLang ``Decode batch`` / ``Prefill batch`` stats lines, read a whole block at a time.

A stats line is ``<prefix><stem><sep> key: value, key: value, ...`` where the
stem is ``Decode batch`` or ``Prefill batch``, the separator ``.``, ``,`` or
`` [N],`` (N = SGLang's forward count), and the prefix one of the shapes in
``log_lines`` (nothing else may stand between prefix and stem: that is what
keeps ``PROFILE: Decode batch 1/10 processed`` out).

Why it is written this way: a busy server logs ~1 M stats lines per 200 MB, and a
Python loop per line reads ~10 MB/s. Here line, stem, key and value boundaries
are byte offsets found with numpy and Arrow kernels; strings are zero-copy views
of the block (``log_lines.substrings``) and values are cast per key with Arrow.
Python only runs per *distinct* key or rank tag and per malformed line.
``parse_pairs`` is the per-line reference of the same rules; it words the
warning of a malformed line and is what the property tests compare against.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.parsers.log_lines import (
    DATE_GROUPS,
    TAG_GROUPS,
    TIME_GROUPS,
    Block,
    rank_tags,
    substrings,
)
from ingest.parsers.sglang_grammar import (
    BATCH,
    BOOL,
    BRACKET_DATETIME,
    DECODE_FIELDS,
    FLOAT,
    FLOAT_VALUE,
    GRAPH_NAME_IN_EXTRA,
    INT,
    INT64_LIMIT,
    INT_VALUE,
    JSON_NUMBER,
    NUMBER,
    PREFIX_ONLY,
    RANK_TAGS_ONLY,
    STATS_LINE,
    STEMS,
    MalformedValue,
    Stem,
    parse_pairs,
)
from ingest.tables import SCHEMAS

BYTE = {char: ord(char) for char in "[]-: .,0123456789"}


@dataclass
class StatsRows:
    """The stats lines of one stem in one block, as table columns (``segment`` is set later)."""

    table: str
    line_index: np.ndarray  # positions in the block
    columns: dict[str, pa.Array]
    undated: np.ndarray  # row positions whose prefix had a time but no date
    undated_times: list[str]
    malformed: dict[int, str] = field(default_factory=dict)  # block line index → message


# --- the block reader -----------------------------------------------------------------

MAX_STEM_SEARCHES = 4  # " batch" may occur earlier in a line; look again after it this often


def read_stats(block: Block, skip: np.ndarray | None = None) -> tuple[dict[str, StatsRows], np.ndarray]:
    """The stats rows per table, and a mask of the block's lines that were stats lines (kept or malformed).

    Lines marked in ``skip`` (already read by a template) are left alone."""
    stem_at, stem_kind = _find_stems(block, skip)
    taken = np.zeros(block.size, dtype=bool)
    result: dict[str, StatsRows] = {}
    for kind, stem in enumerate(STEMS):
        line_index = np.flatnonzero(stem_kind == kind)
        if len(line_index) == 0:
            continue
        rows = _read_stem(block, stem, line_index, stem_at[line_index])
        if rows is not None:
            result[stem.table] = rows
            taken[rows.line_index] = True
            taken[list(rows.malformed)] = True
    return result, taken


def _find_stems(block: Block, skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per line: the byte position of its first "Decode batch"/"Prefill batch" (-1: none) and which stem."""
    found = np.full(block.size, -1, dtype=np.int64)
    kind = np.full(block.size, -1, dtype=np.int8)
    search_from = block.starts.copy()
    if skip is None or not skip.any():
        todo = np.arange(block.size)
        lines: pa.StringArray = block.lines
    else:
        todo = np.flatnonzero(~skip)
        lines = block.lines.take(pa.array(todo))
    for _ in range(MAX_STEM_SEARCHES):
        relative = pc.find_substring(lines, BATCH).to_numpy()
        hit = relative >= 0
        todo = todo[hit]
        at = search_from[todo] + relative[hit]
        unmatched = np.ones(len(todo), dtype=bool)
        for index, stem in enumerate(STEMS):
            word = stem.text[: -len(BATCH)]
            is_stem = _bytes_equal(block.array, at - len(word), word) & (at - len(word) >= block.starts[todo])
            found[todo[is_stem]] = at[is_stem] - len(word)
            kind[todo[is_stem]] = index
            unmatched &= ~is_stem
        if not unmatched.any():
            break
        todo = todo[unmatched]
        search_from[todo] = at[unmatched] + len(BATCH)
        lines = substrings(block.buffer, search_from[todo], block.ends[todo])
    return found, kind


def _bytes_equal(bytes_: np.ndarray, at: np.ndarray, text: str) -> np.ndarray:
    ok = (at >= 0) & (at + len(text) <= len(bytes_))
    for offset, char in enumerate(text.encode()):
        ok &= bytes_[np.clip(at + offset, 0, len(bytes_) - 1)] == char
    return ok


def _read_stem(block: Block, stem: Stem, line_index: np.ndarray, stem_start: np.ndarray) -> StatsRows | None:
    bytes_ = block.array
    line_start, line_end = block.starts[line_index], block.ends[line_index]
    stem_end = stem_start + len(stem.text)
    after = _byte_at(bytes_, stem_end, line_end)
    payload_start = np.where((after == BYTE["."]) | (after == BYTE[","]), stem_end + 1, -1)
    label_start = np.full(len(line_index), -1, dtype=np.int64)
    label_end = np.full(len(line_index), -1, dtype=np.int64)
    labelled = np.flatnonzero((after == BYTE[" "]) & (_byte_at(bytes_, stem_end + 1, line_end) == BYTE["["]))
    if len(labelled):
        starts = stem_end[labelled] + 2
        close = pc.find_substring(substrings(block.buffer, starts, line_end[labelled]), "]").to_numpy()
        closing = starts + close
        separator = _byte_at(bytes_, closing + 1, line_end[labelled])
        ok = (close >= 0) & ((separator == BYTE["."]) | (separator == BYTE[","]))
        payload_start[labelled[ok]] = closing[ok] + 2
        label_start[labelled[ok]] = starts[ok]
        label_end[labelled[ok]] = closing[ok]
    shaped = np.flatnonzero(payload_start >= 0)
    prefix = _read_prefixes(block, line_start[shaped], stem_start[shaped])
    keep = shaped[prefix.valid]
    if len(keep) == 0:
        return None
    return _rows(block, stem, line_index[keep], payload_start[keep], label_start[keep], label_end[keep], prefix.subset(prefix.valid))


def _byte_at(bytes_: np.ndarray, at: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``bytes_[at]`` where ``0 <= at < limit``, else 0 (outside the line)."""
    inside = (at < limit) & (at >= 0)
    values = bytes_[np.clip(at, 0, len(bytes_) - 1)]
    return np.where(inside, values, 0)


def _rows(
    block: Block,
    stem: Stem,
    line_index: np.ndarray,
    payload_start: np.ndarray,
    label_start: np.ndarray,
    label_end: np.ndarray,
    prefix: _PrefixScan,
) -> StatsRows:
    count = len(line_index)
    payload_end = _trim_right(block.array, payload_start, block.ends[line_index])
    payload_start = _trim_left(block.array, payload_start, payload_end)
    pairs = _read_pairs(block, payload_start, payload_end, stem.fields)
    ts, dp_rank, tp_rank, prefix_members = _prefix_columns(prefix)
    columns: dict[str, pa.Array] = {
        "line_no": pa.array(block.first_line_no + line_index, type=pa.int64()),
        "ts": ts,
        "dp_rank": dp_rank,
        "tp_rank": tp_rank,
        **pairs.columns,
        "extra": json_objects([pairs.extra, prefix_members, _label_members(block, label_start, label_end)], count),
    }
    malformed = {int(line_index[row]): _malformed_message(block, int(line_index[row]), stem) for row in pairs.malformed}
    good = np.ones(count, dtype=bool)
    good[list(pairs.malformed)] = False
    if not good.all():
        keep_mask = pa.array(good)
        columns = {name: array.filter(keep_mask) for name, array in columns.items()}
    position = np.cumsum(good) - 1
    undated = [row for row in sorted(prefix.undated) if good[row]]
    return StatsRows(
        table=stem.table,
        line_index=line_index[good],
        columns=columns,
        undated=position[undated] if undated else np.array([], dtype=np.int64),
        undated_times=[prefix.undated[row] for row in undated],
        malformed=malformed,
    )


def _malformed_message(block: Block, line_index: int, stem: Stem) -> str:
    """The per-line reader words what is wrong (it applies the same rules)."""
    match = STATS_LINE.match(block.line_text(line_index))
    if match is None:
        return f"{stem.text} line could not be read"
    try:
        parse_pairs(match["payload"], stem.fields)
    except MalformedValue as error:
        return f"{stem.text} line skipped: {error}"
    return f"{stem.text} line skipped: a value could not be read"


def _trim_right(bytes_: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Drop trailing ``, `` / spaces / tabs: the trailing separator comes and goes across versions."""
    end = end.copy()
    while True:
        last = _byte_at(bytes_, end - 1, end)
        strip = (end > start) & ((last == BYTE[" "]) | (last == BYTE[","]) | (last == 9))
        if not strip.any():
            return end
        end[strip] -= 1


def _trim_left(bytes_: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    start = start.copy()
    while True:
        first = _byte_at(bytes_, start, end)
        strip = (start < end) & ((first == BYTE[" "]) | (first == 9))
        if not strip.any():
            return start
        start[strip] += 1


# --- key: value pairs -------------------------------------------------------------------


@dataclass
class Members:
    """Per row, the members of its ``extra`` JSON object as text (``"k": v, `` ...; '' for none).

    Kept as a small dictionary + codes when it comes from a few distinct values
    (rank tags), as an Arrow array otherwise, and empty when no row has any.
    """

    texts: list[str] | None = None
    codes: np.ndarray | None = None
    array: pa.StringArray | None = None

    @property
    def empty(self) -> bool:
        if self.texts is not None:
            return not any(self.texts)
        return self.array is None

    def to_array(self) -> pa.StringArray:
        if self.array is not None:
            return self.array
        assert self.texts is not None and self.codes is not None
        return _dictionary_take(self.texts, self.codes)


@dataclass
class _Pairs:
    columns: dict[str, pa.Array]
    extra: Members
    malformed: set[int]  # row positions


def _read_pairs(block: Block, start: np.ndarray, end: np.ndarray, fields: dict[str, tuple[str, str]]) -> _Pairs:
    """Split each row's ``start:end`` into ``key: value`` parts and cast known keys, one key at a time."""
    count = len(start)
    has_text = end > start
    malformed = set(np.flatnonzero(~has_text).tolist())  # "Decode batch." with nothing after it
    payloads = substrings(block.buffer, start[has_text], end[has_text])
    row_of_payload = np.flatnonzero(has_text)
    parts = _split_parts(payloads)
    malformed.update(row_of_payload[parts.row[parts.malformed]].tolist())
    ok = ~parts.malformed
    buffer = payloads.buffers()[2]
    keys = pc.dictionary_encode(substrings(buffer, parts.start[ok], parts.colon[ok]))
    values = _trimmed(substrings(buffer, parts.colon[ok] + 2, parts.end[ok]), buffer, parts.colon[ok] + 2, parts.end[ok])
    parent = row_of_payload[parts.row[ok]]
    empty = _empty_values(values, parts.end[ok] - parts.colon[ok] - 2)
    malformed.update(parent[empty].tolist())  # "key: " with nothing after it
    codes = keys.indices.to_numpy()
    names = [name.strip() for name in keys.dictionary.to_pylist()]

    columns = _empty_columns(fields, count)
    extra_mask = np.zeros(len(codes), dtype=bool)
    for code, name in enumerate(names):
        selected = codes == code
        if not name:  # a key of spaces only
            malformed.update(parent[selected].tolist())
            continue
        if name not in fields:
            extra_mask |= selected
            continue
        column, kind = fields[name]
        valid, cast = _cast(values.filter(pa.array(selected)), kind)
        columns[column].add(np.flatnonzero(selected)[valid], parent[selected][valid], cast[valid])
        malformed.update(parent[selected][~valid].tolist())
        if name in GRAPH_NAME_IN_EXTRA:
            extra_mask |= selected
    extra = _extra_members(names, codes, values, parent, extra_mask, count)
    return _Pairs({name: column.array() for name, column in columns.items()}, extra, malformed)


COLON, COMMA, ROW_START = 1, 2, 4


@dataclass
class _Parts:
    """``key: value`` parts of back-to-back payloads, as byte offsets into the payloads' buffer."""

    start: np.ndarray
    colon: np.ndarray  # where ": " starts (the key ends); -1 when the part has none
    end: np.ndarray
    row: np.ndarray  # which payload the part belongs to
    malformed: np.ndarray  # a non-empty part without ": "


def _split_parts(payloads: pa.StringArray) -> _Parts:
    """Every ": ", ", " and payload start becomes an event, in byte order.

    A part runs from a payload start (or just after a ", ") to the next ", " or the
    payload's end; its key ends at the first ": " inside it (later ones belong to the
    value, as in ``parse_pairs``). Payloads abut in the buffer and are trimmed, so no
    separator straddles two of them.
    """
    if len(payloads) == 0:  # every candidate line was a bare stem ("Decode batch.")
        none = np.zeros(0, dtype=np.int64)
        return _Parts(none, none, none, none, np.zeros(0, dtype=bool))
    offsets = _offsets(payloads)
    base = int(offsets[0])
    data = np.frombuffer(payloads.buffers()[2], dtype=np.uint8)[base : int(offsets[-1])]
    offsets = offsets - base
    separators = [_two_byte_positions(data, separator) for separator in (b": ", b", ")]
    # Merge three sorted position lists; row starts first so they win ties (a stable sort keeps that order).
    events = np.concatenate((offsets[:-1], *separators))
    kinds = np.concatenate(
        [np.full(len(positions), kind, dtype=np.uint8) for positions, kind in zip((offsets[:-1], *separators), (ROW_START, COLON, COMMA), strict=True)]
    )
    order = np.argsort(events, kind="stable")
    events, kinds = events[order], kinds[order]
    row = np.cumsum(kinds >> 2, dtype=np.int64) - 1  # ROW_START is the only kind with bit 2

    boundary = np.flatnonzero((kinds & (ROW_START | COMMA)) != 0)
    part_start = events[boundary] + np.where((kinds[boundary] & COMMA) != 0, 2, 0)
    next_boundary = np.append(boundary[1:], len(events))
    same_row_comma = np.zeros(len(boundary), dtype=bool)
    inside = next_boundary < len(events)
    same_row_comma[inside] = kinds[next_boundary[inside]] == COMMA
    part_row = row[boundary]
    part_end = np.where(same_row_comma, events[np.minimum(next_boundary, len(events) - 1)], offsets[part_row + 1])
    first = boundary + 1
    has_colon = (first < next_boundary) & (kinds[np.minimum(first, len(events) - 1)] == COLON)
    colon = np.where(has_colon, events[np.minimum(first, len(events) - 1)], -1)

    nonempty = part_end > part_start
    if not nonempty.all():
        keep = nonempty
        part_start, part_end, colon, part_row, has_colon = (
            part_start[keep], part_end[keep], colon[keep], part_row[keep], has_colon[keep]
        )
    malformed = ~has_colon | (colon == part_start)
    if (~has_colon).any():  # a part of spaces only is empty, not malformed (as in parse_pairs)
        for index in np.flatnonzero(malformed).tolist():
            if not data[part_start[index] : part_end[index]].tobytes().strip():
                malformed[index] = False
        blank = ~has_colon & ~malformed
        if blank.any():
            keep = ~blank
            part_start, part_end, colon, part_row, malformed = (
                part_start[keep], part_end[keep], colon[keep], part_row[keep], malformed[keep]
            )
    return _Parts(part_start + base, colon + np.where(colon >= 0, base, 0), part_end + base, part_row, malformed)


def _empty_values(values: pa.StringArray, raw_lengths: np.ndarray) -> np.ndarray:
    offsets = _offsets(values)
    if len(values) and int(offsets[-1] - offsets[0]) != int(raw_lengths.sum()):  # some were trimmed
        return np.diff(offsets) == 0
    return raw_lengths <= 0


def _trimmed(values: pa.StringArray, buffer: pa.Buffer, start: np.ndarray, end: np.ndarray) -> pa.StringArray:
    """Values without surrounding spaces (``"#token:  5 , "``); checked by byte, trimmed only when needed."""
    if len(start) == 0:
        return values
    data = np.frombuffer(buffer, dtype=np.uint8)
    nonempty = end > start
    padded = nonempty & ((data[np.minimum(start, len(data) - 1)] <= 32) | (data[np.maximum(end - 1, 0)] <= 32))
    return pc.utf8_trim_whitespace(values) if padded.any() else values


def _two_byte_positions(data: np.ndarray, separator: bytes) -> np.ndarray:
    if len(data) < 2:
        return np.array([], dtype=np.int64)
    at = np.flatnonzero(data[:-1] == separator[0])
    return at[data[at + 1] == separator[1]]


def _offsets(strings: pa.StringArray) -> np.ndarray:
    raw = np.frombuffer(strings.buffers()[1], dtype=np.int32)
    return raw[strings.offset : strings.offset + len(strings) + 1].astype(np.int64)


class _Column:
    """One output column filled key by key; when several keys feed it (the graph flags) or a key
    repeats in a line, the value written last in the line wins, as in ``parse_pairs``."""

    def __init__(self, kind: str, arrow_type: pa.DataType, count: int) -> None:
        self.dtype = {INT: np.int64, FLOAT: np.float64, BOOL: np.bool_}[kind]
        self.count = count
        self.arrow_type = arrow_type
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (part index, row, value)

    def add(self, part_index: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
        self.chunks.append((part_index, rows, values))

    def array(self) -> pa.Array:
        values: np.ndarray = np.zeros(self.count, dtype=self.dtype)
        valid = np.zeros(self.count, dtype=bool)
        if len(self.chunks) == 1:
            _, rows, chunk_values = self.chunks[0]
            order = np.arange(len(rows))
        elif self.chunks:
            part_index, rows, chunk_values = (np.concatenate(parts) for parts in zip(*self.chunks, strict=True))
            order = np.argsort(part_index, kind="stable")
        else:
            return pa.nulls(self.count, type=self.arrow_type)
        if len(rows) == 0:
            return pa.nulls(self.count, type=self.arrow_type)
        rows, chunk_values = rows[order], chunk_values[order]  # in part order, hence by row
        last = np.append(rows[1:] != rows[:-1], True)  # a key repeated in a line: its last value
        values[rows[last]] = chunk_values[last]
        valid[rows] = True
        return pa.array(values, mask=~valid, type=self.arrow_type)


def _empty_columns(fields: dict[str, tuple[str, str]], count: int) -> dict[str, _Column]:
    schema = SCHEMAS["decode_stats"] if fields is DECODE_FIELDS else SCHEMAS["prefill_stats"]
    return {column: _Column(kind, schema.field(column).type, count) for column, kind in fields.values()}


def _cast(values: pa.StringArray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(valid mask, values) for one key's values; invalid ones are reported, never guessed."""
    if kind == BOOL:
        true = pc.equal(values, "True").to_numpy(zero_copy_only=False)
        false = pc.equal(values, "False").to_numpy(zero_copy_only=False)
        return true | false, true
    target = pa.int64() if kind == INT else pa.float64()
    try:
        return np.ones(len(values), dtype=bool), pc.cast(values, target).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass  # some value is off: check each (rare, so per value is fine)
    pattern = INT_VALUE if kind == INT else FLOAT_VALUE
    texts = [text.strip() for text in values.to_pylist()]
    ok = np.array([bool(pattern.match(text)) for text in texts], dtype=bool)
    numbers = np.array([float(text) if good else 0.0 for text, good in zip(texts, ok, strict=True)])
    if kind == INT:
        ok &= np.abs(numbers) < INT64_LIMIT  # beyond int64 a cast would wrap around: report it instead
        return ok, np.where(ok, numbers, 0).astype(np.int64)
    return ok, numbers


def _extra_members(
    names: list[str], codes: np.ndarray, values: pa.StringArray, parent: np.ndarray, mask: np.ndarray, count: int
) -> Members:
    """Per row, the JSON members (``"key": value, ``) of its unknown keys, in line order."""
    if not mask.any():
        return Members()
    kept_codes = codes[mask]
    kept_values = values.filter(pa.array(mask))
    is_percent = pc.match_substring_regex(kept_values, rf"^{NUMBER}%$")
    number_text = pc.if_else(is_percent, pc.utf8_slice_codeunits(kept_values, 0, -1), kept_values)
    value_json = _json_value_text(number_text)
    plain = pc.binary_join_element_wise(_dictionary_take([json.dumps(name) + ": " for name in names], kept_codes), value_json, ", ", "")
    percent = pc.binary_join_element_wise(
        _dictionary_take([json.dumps(f"{name} (%)") + ": " for name in names], kept_codes), value_json, ", ", ""
    )
    member = pc.if_else(is_percent, percent, plain)
    graph_names = [f'"graph": {json.dumps(name)}, ' if name in GRAPH_NAME_IN_EXTRA else "" for name in names]
    if any(graph_names):
        graph = _dictionary_take(graph_names, kept_codes)
        member = pc.if_else(pc.not_equal(graph, ""), graph, member)
    row_offsets = np.concatenate(([0], np.cumsum(np.bincount(parent[mask], minlength=count)))).astype(np.int32)
    return Members(array=pc.binary_join(pa.ListArray.from_arrays(pa.array(row_offsets), member), ""))


def _dictionary_take(texts: list[str], codes: np.ndarray) -> pa.StringArray:
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(texts, type=pa.string())).cast(pa.string())


def _json_value_text(values: pa.StringArray) -> pa.StringArray:
    """JSON text of each value: JSON numbers as they are, True/False as booleans, the rest as strings."""
    quoted = _json_string_literals(values)
    number = pc.match_substring_regex(values, JSON_NUMBER)
    other_number = pc.and_(pc.invert(number), pc.match_substring_regex(values, rf"^{NUMBER}$"))
    if pc.any(other_number).as_py():  # "+1", ".5", "1." are numbers but not JSON: normalize them
        normalized = pc.cast(pc.cast(pc.if_else(other_number, values, "0"), pa.float64()), pa.string())
        values = pc.if_else(other_number, normalized, values)
        number = pc.or_(number, other_number)
    boolean = pc.if_else(pc.equal(values, "True"), "true", pc.if_else(pc.equal(values, "False"), "false", None))
    return pc.coalesce(pc.if_else(number, values, None), boolean, quoted)


def _json_string_literals(values: pa.StringArray) -> pa.StringArray:
    escaped = pc.replace_substring(pc.replace_substring(values, "\\", "\\\\"), '"', '\\"')
    if pc.any(pc.match_substring_regex(escaped, r"[\x00-\x1f]")).as_py():
        return pa.array([json.dumps(text, ensure_ascii=False) for text in values.to_pylist()], type=pa.string())
    return pc.binary_join_element_wise('"', escaped, '"', "")


def json_objects(sources: list[Members], count: int) -> pa.StringArray:
    """Join per-row members from several sources into ``{...}`` text; null for rows with none."""
    active = [source for source in sources if not source.empty]
    if not active:
        return pa.nulls(count, type=pa.string())
    if len(active) == 1 and active[0].texts is not None:  # one dictionary source: build each object once
        objects = ["{" + text.rstrip(", ") + "}" if text else None for text in active[0].texts]
        return _dictionary_take(objects, active[0].codes)  # type: ignore[arg-type]
    arrays = [source.to_array() for source in active]
    joined = pc.binary_join_element_wise(*arrays, "") if len(arrays) > 1 else arrays[0]
    members = pc.utf8_rtrim(joined, ", ")
    wrapped = pc.binary_join_element_wise("{", members, "}", "")
    empty = pc.equal(pc.binary_length(members), 0)
    return pc.if_else(empty, pa.scalar(None, pa.string()), wrapped)


# --- prefixes: timestamps and rank tags ------------------------------------------------


@dataclass
class _PrefixScan:
    """What the prefixes of candidate rows say; ``valid`` marks prefixes of a known shape."""

    valid: np.ndarray
    datetimes: pa.StringArray  # "YYYY-MM-DD HH:MM:SS(.fff)", null when the line had no date
    tag_texts: list[str]
    tag_codes: np.ndarray
    gpu: dict[int, int] = field(default_factory=dict)  # row → id, from the pre-2024-08 "[gpu=N] " message start
    undated: dict[int, str] = field(default_factory=dict)  # row → time of day, for lines without a date

    def subset(self, keep: np.ndarray) -> _PrefixScan:
        position = np.cumsum(keep) - 1
        return _PrefixScan(
            valid=np.ones(int(keep.sum()), dtype=bool),
            datetimes=self.datetimes.filter(pa.array(keep)),
            tag_texts=self.tag_texts,
            tag_codes=self.tag_codes[keep],
            gpu={int(position[row]): gpu for row, gpu in self.gpu.items() if keep[row]},
            undated={int(position[row]): time for row, time in self.undated.items() if keep[row]},
        )


def _read_prefixes(block: Block, line_start: np.ndarray, stem_start: np.ndarray) -> _PrefixScan:
    """The common ``[YYYY-MM-DD HH:MM:SS(.mmm)( TAGS)] `` prefix is read by byte position; any
    other shape by the full prefix pattern, which also rejects text that is not a known prefix."""
    count = len(line_start)
    fast, time_end = _common_prefix_rows(block.array, line_start, stem_start)
    rows = np.flatnonzero(fast)
    tag_texts: list[str] = []
    tag_codes = np.zeros(count, dtype=np.int32)
    if len(rows):
        encoded = pc.dictionary_encode(substrings(block.buffer, time_end[rows], stem_start[rows] - 2))
        tag_texts = encoded.dictionary.to_pylist()
        codes = encoded.indices.to_numpy()
        tag_ok = np.array([bool(RANK_TAGS_ONLY.match(text)) for text in tag_texts], dtype=bool)
        if not tag_ok.all():  # e.g. "[2024-07-01 10:00:00] [gpu=0] ": the full pattern reads those
            fast[rows[~tag_ok[codes]]] = False
            rows, codes = rows[tag_ok[codes]], codes[tag_ok[codes]]
        tag_codes[rows] = codes
    if fast.all():
        datetimes = substrings(block.buffer, line_start + 1, time_end)
        return _PrefixScan(np.ones(count, dtype=bool), datetimes, tag_texts, tag_codes)
    return _read_other_prefixes(block, line_start, stem_start, fast, time_end, tag_texts, tag_codes)


def _read_other_prefixes(
    block: Block,
    line_start: np.ndarray,
    stem_start: np.ndarray,
    fast: np.ndarray,
    time_end: np.ndarray,
    tag_texts: list[str],
    tag_codes: np.ndarray,
) -> _PrefixScan:
    """Prefixes the byte-position reader does not take (docker compose, custom logging configs,
    ``[gpu=N]``, time-only): one regex over all of them, its groups kept as Arrow columns."""
    valid = fast.copy()
    rows = np.flatnonzero(fast)
    slow = np.flatnonzero(~fast)
    found = pc.extract_regex(substrings(block.buffer, line_start[slow], stem_start[slow]), PREFIX_ONLY)
    matched = found.is_valid().to_numpy(zero_copy_only=False)  # the rest are not stats lines
    slow = slow[matched]
    valid[slow] = True
    found = found.filter(pa.array(matched))
    date, time, tags = (_first_nonempty(found, names) for names in (DATE_GROUPS, TIME_GROUPS, TAG_GROUPS))
    dated = pc.and_(pc.not_equal(date, ""), pc.not_equal(time, ""))
    slow_datetimes = pc.if_else(dated, pc.binary_join_element_wise(date, time, " "), pa.scalar(None, pa.string()))
    fast_datetimes = substrings(block.buffer, line_start[rows] + 1, time_end[rows])
    invalid = np.flatnonzero(~valid)  # every row keeps a place; these are dropped by the caller
    order = np.argsort(np.concatenate((rows, slow, invalid)), kind="stable")
    datetimes = pa.concat_arrays([fast_datetimes, slow_datetimes, pa.nulls(len(invalid), pa.string())]).take(pa.array(order))
    encoded = pc.dictionary_encode(tags)
    tag_index = {text: index for index, text in enumerate(tag_texts)}
    remap = np.array([tag_index.setdefault(text, len(tag_index)) for text in encoded.dictionary.to_pylist()], dtype=np.int32)
    tag_codes[slow] = remap[encoded.indices.to_numpy(zero_copy_only=False)] if len(slow) else 0
    texts = [text for text, _ in sorted(tag_index.items(), key=lambda item: item[1])]
    gpu_text = found.field("gpu")
    with_gpu = np.flatnonzero(pc.not_equal(gpu_text, "").to_numpy(zero_copy_only=False))
    scan_gpu = {int(slow[index]): int(gpu_text[int(index)].as_py()) for index in with_gpu}
    undated_rows = np.flatnonzero(pc.and_(pc.equal(date, ""), pc.not_equal(time, "")).to_numpy(zero_copy_only=False))
    undated = {int(slow[index]): time[int(index)].as_py() for index in undated_rows}
    return _PrefixScan(valid, datetimes, texts, tag_codes, scan_gpu, undated)


def _first_nonempty(found: pa.StructArray, names: tuple[str, ...]) -> pa.StringArray:
    """The first of the regex groups ``names`` that matched (a group that did not take part is '')."""
    value = found.field(names[-1])
    for name in reversed(names[:-1]):
        field = found.field(name)
        value = pc.if_else(pc.not_equal(field, ""), field, value)
    return value


def _common_prefix_rows(bytes_: np.ndarray, line_start: np.ndarray, stem_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose prefix is ``[YYYY-MM-DD HH:MM:SS(.fff)...] `` right before the stem, and where their time ends."""
    fast = _matches_template(bytes_, line_start, stem_start, BRACKET_DATETIME)
    time_end = line_start + len(BRACKET_DATETIME)
    digits = fast & np.isin(_byte_at(bytes_, time_end, stem_start), (BYTE["."], BYTE[","]))
    time_end[digits] += 1
    while digits.any():
        digit = _byte_at(bytes_, time_end, stem_start)
        digits &= (digit >= BYTE["0"]) & (digit <= BYTE["9"])
        time_end[digits] += 1
    closes = (_byte_at(bytes_, stem_start - 2, stem_start) == BYTE["]"]) & (
        _byte_at(bytes_, stem_start - 1, stem_start) == BYTE[" "]
    )
    return fast & closes & (stem_start - 2 >= time_end), time_end


def _matches_template(bytes_: np.ndarray, start: np.ndarray, limit: np.ndarray, template: str) -> np.ndarray:
    """Rows whose bytes at ``start`` follow ``template``'s punctuation ('d' stands for a digit)."""
    ok = start + len(template) <= limit
    for offset, char in enumerate(template):
        found = _byte_at(bytes_, start + offset, limit)
        if char == "d":  # a digit: anything else (a stray byte) would put the byte positions after it off
            ok &= (found >= BYTE["0"]) & (found <= BYTE["9"])
        else:
            ok &= found == ord(char)
    return ok


def _prefix_columns(prefix: _PrefixScan) -> tuple[pa.Array, pa.Array, pa.Array, Members]:
    """ts, dp_rank, tp_rank, and extra members: other rank tags, ``[gpu=N]``, the time of date-less lines."""
    dp_rank, tp_rank, members = rank_columns(prefix.tag_texts, prefix.tag_codes)
    if prefix.gpu or prefix.undated:
        per_row = members.to_array().to_numpy(zero_copy_only=False).astype(object)
        for row, gpu in prefix.gpu.items():
            per_row[row] += f'"gpu": {gpu}, '
        for row, time in prefix.undated.items():
            per_row[row] += f'"log_time": {json.dumps(time)}, '
        members = Members(array=pa.array(per_row, type=pa.string()))
    return _timestamps(prefix.datetimes), dp_rank, tp_rank, members


def rank_columns(tag_texts: list[str], tag_codes: np.ndarray) -> tuple[pa.Array, pa.Array, Members]:
    """dp_rank, tp_rank and the other rank tags as extra members, from each row's tag text
    (``tag_texts[tag_codes[row]]``, e.g. ``" DP3 TP3 EP3"``): Python runs once per distinct text."""
    parsed = [rank_tags(text or "") for text in tag_texts] or [{}]
    dp = np.array([ranks.get("dp_rank", -1) for ranks in parsed], dtype=np.int64)[tag_codes]
    tp = np.array([ranks.get("tp_rank", -1) for ranks in parsed], dtype=np.int64)[tag_codes]
    rank_members = [
        "".join(f"{json.dumps(name)}: {value}, " for name, value in ranks.items() if name not in ("dp_rank", "tp_rank"))
        for ranks in parsed
    ]
    members = Members(texts=rank_members, codes=tag_codes)
    return pa.array(dp, mask=dp < 0, type=pa.int32()), pa.array(tp, mask=tp < 0, type=pa.int32()), members


def _timestamps(datetimes: pa.StringArray) -> pa.Array:
    if pc.any(pc.match_substring(datetimes, ",")).as_py():
        datetimes = pc.replace_substring(datetimes, ",", ".")
    try:
        return pc.cast(datetimes, pa.timestamp("us"))
    except pa.ArrowInvalid:  # an impossible date somewhere (2025-02-30): null just those
        return pa.array([_timestamp_or_none(text) for text in datetimes.to_pylist()], type=pa.timestamp("us"))


def _timestamp_or_none(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _label_members(block: Block, start: np.ndarray, end: np.ndarray) -> Members:
    """``Decode batch [N],``: N is SGLang's forward count (sometimes a word: ``[first graph replay]``)."""
    rows = np.flatnonzero(start >= 0)
    if len(rows) == 0:
        return Members()
    labels = substrings(block.buffer, start[rows], end[rows])
    members = pc.binary_join_element_wise('"forward_ct": ', _json_value_text(labels), ", ", "")
    texts = np.full(len(start), "", dtype=object)
    texts[rows] = members.to_numpy(zero_copy_only=False)
    return Members(array=pa.array(texts, type=pa.string()))


def merge_rows(pieces: list[StatsRows]) -> StatsRows:
    """Rows of one table read by different paths, as one set in line order."""
    if len(pieces) == 1:
        return pieces[0]
    line_index = np.concatenate([piece.line_index for piece in pieces])
    order = np.argsort(line_index, kind="stable")
    take = pa.array(order)
    columns = {name: pa.concat_arrays([piece.columns[name] for piece in pieces]).take(take) for name in pieces[0].columns}
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    offsets = np.cumsum([0] + [len(piece.line_index) for piece in pieces])
    undated = [position[offset + piece.undated] for offset, piece in zip(offsets, pieces, strict=False) if len(piece.undated)]
    undated_times = [time for piece in pieces for time in piece.undated_times]
    if undated:  # times follow their rows into line order
        undated_positions = np.concatenate(undated)
        by_position = np.argsort(undated_positions, kind="stable")
        undated_positions = undated_positions[by_position]
        undated_times = [undated_times[index] for index in by_position.tolist()]
    else:
        undated_positions = np.array([], dtype=np.int64)
    malformed = {index: message for piece in pieces for index, message in piece.malformed.items()}
    return StatsRows(pieces[0].table, line_index[order], columns, undated_positions, undated_times, malformed)

