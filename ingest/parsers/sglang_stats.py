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
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.parsers.log_lines import SGLANG_PREFIX, Block, rank_tags, substrings
from ingest.tables import SCHEMAS

INT, FLOAT, BOOL = "int", "float", "bool"

# Logged key → (column, type), per stem. Keys not listed go to ``extra``.
DECODE_FIELDS: dict[str, tuple[str, str]] = {
    "#running-req": ("running_req", INT),
    "#token": ("num_tokens", INT),
    "token usage": ("token_usage", FLOAT),
    "accept len": ("accept_len_raw", FLOAT),
    "accept rate": ("accept_rate_raw", FLOAT),
    "cuda graph": ("cuda_graph", BOOL),
    "cpu graph": ("cuda_graph", BOOL),
    "npu graph": ("cuda_graph", BOOL),
    "musa graph": ("cuda_graph", BOOL),
    "gen throughput (token/s)": ("gen_throughput", FLOAT),
    "#queue-req": ("queue_req", INT),
}
PREFILL_FIELDS: dict[str, tuple[str, str]] = {
    "#new-seq": ("new_seq", INT),
    "#new-token": ("new_token", INT),
    "#cached-token": ("cached_token", INT),
    "token usage": ("token_usage", FLOAT),
    "#running-req": ("running_req", INT),
    "#queue-req": ("queue_req", INT),
    "input throughput (token/s)": ("input_throughput", FLOAT),
}
# The column is cuda_graph for every graph flag; a non-CUDA flag's name is also kept in extra.
GRAPH_NAME_IN_EXTRA = {"cpu graph", "npu graph", "musa graph"}


@dataclass(frozen=True)
class Stem:
    text: str  # as it appears in the log
    table: str
    fields: dict[str, tuple[str, str]]


STEMS = (
    Stem("Decode batch", "decode_stats", DECODE_FIELDS),
    Stem("Prefill batch", "prefill_stats", PREFILL_FIELDS),
)

STATS_LINE = re.compile(
    rf"^{SGLANG_PREFIX}(?:\[gpu=(?P<gpu>\d+)\] )?(?P<stem>Decode batch|Prefill batch)"
    r"(?:[.,]| \[(?P<label>[^\]]*)\][.,])(?P<payload>.*)$"
)
PREFIX_ONLY = rf"^{SGLANG_PREFIX}(?:\[gpu=(?P<gpu>\d+)\] )?$"
RANK_TAGS_ONLY = re.compile(r"^(?: [A-Z][A-Z_]*\d+)*$")
BRACKET_DATETIME = "[dddd-dd-dd dd:dd:dd"  # 'd' = any digit: the common prefix, read without regex

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
FLOAT_VALUE = re.compile(rf"^(?:{NUMBER}|[-+]?(?i:nan|inf|infinity))$")
INT_VALUE = re.compile(r"^[-+]?\d+(?:\.0*)?$")
JSON_NUMBER = r"^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$"
BOOLS = {"True": True, "False": False}

BYTE = {char: ord(char) for char in "[]-: .,0123456789"}


class MalformedValue(ValueError):
    """A stats line whose shape is right but a value is not."""


@dataclass
class StatsRows:
    """The stats lines of one stem in one block, as table columns (``segment`` is set later)."""

    table: str
    line_index: np.ndarray  # positions in the block
    columns: dict[str, pa.Array]
    undated: np.ndarray  # row positions whose prefix had a time but no date
    undated_times: list[str]
    malformed: dict[int, str] = field(default_factory=dict)  # block line index → message


# --- per-line reference ---------------------------------------------------------------


def parse_pairs(payload: str, fields: dict[str, tuple[str, str]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``key: value, key: value, `` → (typed known columns, extra). The rules the block reader applies."""
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    parts = [part.strip() for part in payload.strip().rstrip(", ").split(", ")]
    parts = [part for part in parts if part]
    if not parts:
        raise MalformedValue("no 'key: value' pairs after the stem")
    for part in parts:
        key, sep, value = part.partition(": ")
        if not sep:
            raise MalformedValue(f"{part!r} is not 'key: value'")
        key = key.strip()
        if key in fields:
            column, kind = fields[key]
            columns[column] = cast_value(key, value, kind)
            if key in GRAPH_NAME_IN_EXTRA:
                extra["graph"] = key
        else:
            extra_key, extra_value = extra_item(key, value)
            extra[extra_key] = extra_value
    return columns, extra


def cast_value(key: str, value: str, kind: str) -> Any:
    if kind == BOOL:
        if value not in BOOLS:
            raise MalformedValue(f"{key!r}: {value!r} is not True/False")
        return BOOLS[value]
    if kind == INT:
        if not INT_VALUE.match(value):
            raise MalformedValue(f"{key!r}: {value!r} is not an integer")
        return int(float(value))
    if not FLOAT_VALUE.match(value):
        raise MalformedValue(f"{key!r}: {value!r} is not a number")
    return float(value)


def extra_item(key: str, value: str) -> tuple[str, Any]:
    """Unknown keys: numbers as numbers, ``12.5%`` as ``"key (%)": 12.5``, True/False as booleans, else text."""
    if value.endswith("%") and re.fullmatch(NUMBER, value[:-1]):
        return f"{key} (%)", json_scalar(value[:-1])
    return key, json_scalar(value)


def json_scalar(text: str) -> Any:
    if text in BOOLS:
        return BOOLS[text]
    if re.fullmatch(NUMBER, text):
        number = float(text)
        if re.fullmatch(JSON_NUMBER[1:-1], text) and "." not in text and "e" not in text.lower():
            return int(text)
        return number if math.isfinite(number) else text
    return text


# --- the block reader -----------------------------------------------------------------


def read_stats(block: Block) -> tuple[dict[str, StatsRows], np.ndarray]:
    """The stats rows per table, and a mask of the block's lines that were stats lines (kept or malformed)."""
    positions = {stem.text: pc.find_substring(block.lines, stem.text).to_numpy() for stem in STEMS}
    decode_at, prefill_at = positions["Decode batch"], positions["Prefill batch"]
    is_decode = (decode_at >= 0) & ((prefill_at < 0) | (decode_at < prefill_at))
    is_prefill = (prefill_at >= 0) & ~is_decode
    taken = np.zeros(block.size, dtype=bool)
    result: dict[str, StatsRows] = {}
    for stem, mask in ((STEMS[0], is_decode), (STEMS[1], is_prefill)):
        candidates = np.flatnonzero(mask)
        if len(candidates) == 0:
            continue
        rows = _read_stem(block, stem, candidates, positions[stem.text][candidates])
        if rows is not None:
            result[stem.table] = rows
            taken[rows.line_index] = True
            taken[list(rows.malformed)] = True
    return result, taken


def _read_stem(block: Block, stem: Stem, candidates: np.ndarray, stem_offsets: np.ndarray) -> StatsRows | None:
    bytes_ = block.array
    line_start, line_end = block.starts[candidates], block.ends[candidates]
    stem_start = line_start + stem_offsets
    stem_end = stem_start + len(stem.text)
    after = _byte_at(bytes_, stem_end, line_end)
    plain = (after == BYTE["."]) | (after == BYTE[","])
    payload_start = np.where(plain, stem_end + 1, -1)
    label_start = np.full(len(candidates), -1, dtype=np.int64)
    label_end = np.full(len(candidates), -1, dtype=np.int64)
    labelled = np.flatnonzero((after == BYTE[" "]) & (_byte_at(bytes_, stem_end + 1, line_end) == BYTE["["]))
    if len(labelled):
        starts = stem_end[labelled] + 2
        close = pc.find_substring(substrings(block.buffer, starts, line_end[labelled]), "]").to_numpy()
        closing = starts + close
        sep = _byte_at(bytes_, closing + 1, line_end[labelled])
        ok = (close >= 0) & ((sep == BYTE["."]) | (sep == BYTE[","]))
        payload_start[labelled[ok]] = closing[ok] + 2
        label_start[labelled[ok]] = starts[ok]
        label_end[labelled[ok]] = closing[ok]
    shaped = payload_start >= 0
    prefixes = substrings(block.buffer, line_start[shaped], stem_start[shaped])
    anchored = pc.match_substring_regex(prefixes, PREFIX_ONLY).to_numpy(zero_copy_only=False)
    keep = np.flatnonzero(shaped)[anchored]
    if len(keep) == 0:
        return None
    return _rows(block, stem, candidates[keep], stem_start[keep], payload_start[keep], label_start[keep], label_end[keep])


def _byte_at(bytes_: np.ndarray, at: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``bytes_[at]`` where ``at < limit``, else 0 (past the end of the line)."""
    inside = at < limit
    values = bytes_[np.minimum(at, len(bytes_) - 1)]
    return np.where(inside, values, 0)


def _rows(
    block: Block,
    stem: Stem,
    line_index: np.ndarray,
    stem_start: np.ndarray,
    payload_start: np.ndarray,
    label_start: np.ndarray,
    label_end: np.ndarray,
) -> StatsRows:
    line_start, line_end = block.starts[line_index], block.ends[line_index]
    payload_end = _trim_right(block.array, payload_start, line_end)
    payload_start = _trim_left(block.array, payload_start, payload_end)
    pairs = _read_pairs(block.buffer, payload_start, payload_end, stem.fields)
    prefix = _read_prefixes(block, line_start, stem_start)
    count = len(line_index)

    extra_parts = [pairs.extra, prefix.extra, _label_fragments(block, label_start, label_end)]
    columns: dict[str, pa.Array] = {"line_no": pa.array(block.first_line_no + line_index, type=pa.int64())}
    columns["ts"] = prefix.ts
    columns["dp_rank"] = prefix.dp_rank
    columns["tp_rank"] = prefix.tp_rank
    columns.update(pairs.columns)
    columns["extra"] = _json_objects(extra_parts, count)

    malformed = {int(line_index[row]): _malformed_message(block, int(line_index[row]), stem) for row in pairs.malformed}
    good = np.ones(count, dtype=bool)
    good[list(pairs.malformed)] = False
    if not good.all():
        keep_mask = pa.array(good)
        columns = {name: array.filter(keep_mask) for name, array in columns.items()}
    positions = np.cumsum(good) - 1
    undated = [index for index in prefix.undated if good[index]]
    return StatsRows(
        table=stem.table,
        line_index=line_index[good],
        columns=columns,
        undated=positions[undated] if undated else np.array([], dtype=np.int64),
        undated_times=[prefix.times[index] for index in undated],
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
        last = _byte_at(bytes_, end - 1, end + 1)
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


@dataclass
class _Pairs:
    columns: dict[str, pa.Array]
    extra: pa.StringArray  # per row: "json fragment, " ... or ""
    malformed: set[int]  # row positions


def _read_pairs(buffer: pa.Buffer, start: np.ndarray, end: np.ndarray, fields: dict[str, tuple[str, str]]) -> _Pairs:
    count = len(start)
    lists = pc.split_pattern(substrings(buffer, start, end), ", ")
    parts = lists.flatten()
    parent = pc.list_parent_indices(lists).to_numpy()
    lengths = pc.binary_length(parts).to_numpy()
    if (lengths == 0).any():  # ", , " or a separator left at either end
        nonempty = lengths > 0
        parts, parent = parts.filter(pa.array(nonempty)), parent[nonempty]
    malformed: set[int] = set(np.flatnonzero(np.bincount(parent, minlength=count) == 0).tolist())
    colon = pc.find_substring(parts, ": ").to_numpy().astype(np.int64)
    no_colon = colon < 0
    malformed.update(parent[no_colon].tolist())
    offsets = _offsets(parts)
    part_start, part_end = offsets[:-1], offsets[1:]
    key_end = np.where(no_colon, part_end, part_start + colon)
    value_start = np.where(no_colon, part_end, key_end + 2)
    part_buffer = parts.buffers()[2]
    keys = pc.dictionary_encode(substrings(part_buffer, part_start, key_end))
    values = substrings(part_buffer, value_start, part_end)
    codes = keys.indices.to_numpy()
    names = [name.strip() for name in keys.dictionary.to_pylist()]

    columns = _empty_columns(fields, count)
    extra_mask = np.zeros(len(parts), dtype=bool)
    for code, name in enumerate(names):
        selected = (codes == code) & ~no_colon
        if not selected.any():
            continue
        if name in fields:
            column, kind = fields[name]
            rows = parent[selected]
            ok, cast = _cast(values.filter(pa.array(selected)), kind)
            columns[column].assign(rows[ok], cast[ok])
            malformed.update(rows[~ok].tolist())
            if name in GRAPH_NAME_IN_EXTRA:
                extra_mask |= selected
        else:
            extra_mask |= selected
    extra = _extra_fragments(names, codes, values, parent, extra_mask, count)
    return _Pairs({name: column.array() for name, column in columns.items()}, extra, malformed)


def _offsets(strings: pa.StringArray) -> np.ndarray:
    raw = np.frombuffer(strings.buffers()[1], dtype=np.int32)
    return raw[strings.offset : strings.offset + len(strings) + 1].astype(np.int64)


class _Column:
    def __init__(self, kind: str, arrow_type: pa.DataType, count: int) -> None:
        dtype = {INT: np.int64, FLOAT: np.float64, BOOL: np.bool_}[kind]
        self.values = np.zeros(count, dtype=dtype)
        self.valid = np.zeros(count, dtype=bool)
        self.arrow_type = arrow_type

    def assign(self, rows: np.ndarray, values: np.ndarray) -> None:
        self.values[rows] = values
        self.valid[rows] = True

    def array(self) -> pa.Array:
        return pa.array(self.values, mask=~self.valid, type=self.arrow_type)


def _empty_columns(fields: dict[str, tuple[str, str]], count: int) -> dict[str, _Column]:
    schema = SCHEMAS["decode_stats"] if "accept len" in fields else SCHEMAS["prefill_stats"]
    return {column: _Column(kind, schema.field(column).type, count) for column, kind in fields.values()}


def _cast(values: pa.StringArray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(valid mask, values) for one key's values; invalid ones are reported, not guessed."""
    if kind == BOOL:
        true, false = pc.equal(values, "True").to_numpy(zero_copy_only=False), pc.equal(values, "False").to_numpy(zero_copy_only=False)
        return true | false, true
    target = pa.int64() if kind == INT else pa.float64()
    try:
        cast = pc.cast(values, target)
        return np.ones(len(values), dtype=bool), cast.to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    pattern = INT_VALUE if kind == INT else FLOAT_VALUE
    texts = values.to_pylist()
    ok = np.array([bool(pattern.match(text)) for text in texts], dtype=bool)
    numbers = np.array([float(text) if good else 0.0 for text, good in zip(texts, ok, strict=True)])
    return ok, numbers.astype(np.int64) if kind == INT else numbers


def _extra_fragments(
    names: list[str], codes: np.ndarray, values: pa.StringArray, parent: np.ndarray, mask: np.ndarray, count: int
) -> pa.StringArray:
    """Per row, the JSON members (``"key": value, ``) of its unknown keys, in line order."""
    if not mask.any():
        return pa.array([""] * count, type=pa.string())
    selected = pa.array(mask)
    kept_codes = codes[mask]
    kept_values = values.filter(selected)
    is_percent = pc.match_substring_regex(kept_values, rf"^{NUMBER}%$")
    number_text = pc.if_else(is_percent, pc.utf8_slice_codeunits(kept_values, 0, -1), kept_values)
    member = pc.binary_join_element_wise(
        _dictionary_take([json.dumps(name) + ": " for name in names], kept_codes),
        _json_value_text(number_text),
        ", ",
        "",
    )
    percent_member = pc.binary_join_element_wise(
        _dictionary_take([json.dumps(f"{name} (%)") + ": " for name in names], kept_codes),
        _json_value_text(number_text),
        ", ",
        "",
    )
    graph_member = _dictionary_take(
        [f'"graph": {json.dumps(name)}, ' if name in GRAPH_NAME_IN_EXTRA else "" for name in names], kept_codes
    )
    is_graph = pc.not_equal(graph_member, "")
    member = pc.if_else(is_graph, graph_member, pc.if_else(is_percent, percent_member, member))
    row_offsets = np.concatenate(([0], np.cumsum(np.bincount(parent[mask], minlength=count)))).astype(np.int32)
    return pc.binary_join(pa.ListArray.from_arrays(pa.array(row_offsets), member), "")


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


@dataclass
class _Prefixes:
    ts: pa.TimestampArray
    dp_rank: pa.Int32Array
    tp_rank: pa.Int32Array
    extra: pa.StringArray  # per row: "json fragment, " ... or ""
    undated: list[int]
    times: list[str]


def _read_prefixes(block: Block, line_start: np.ndarray, stem_start: np.ndarray) -> _Prefixes:
    """Timestamps and rank tags. The common ``[YYYY-MM-DD HH:MM:SS(.mmm)( TAGS)] `` is read by
    byte position; every other prefix shape by the full pattern (slower, still per block)."""
    count = len(line_start)
    datetimes = np.empty(count, dtype=object)
    tags = np.empty(count, dtype=object)
    gpu = np.empty(count, dtype=object)
    fast = _read_common_prefixes(block, line_start, stem_start, datetimes, tags)
    undated: list[int] = []
    times: dict[int, str] = {}
    slow_rows = np.flatnonzero(~fast)
    if len(slow_rows):
        prefixes = substrings(block.buffer, line_start[slow_rows], stem_start[slow_rows])
        for row, found in zip(slow_rows.tolist(), pc.extract_regex(prefixes, PREFIX_ONLY).to_pylist(), strict=True):
            found = found or {}
            date = found.get("b_date") or found.get("c_date") or found.get("p_date") or ""
            time = found.get("b_time") or found.get("c_time") or found.get("p_time") or ""
            tags[row] = found.get("b_tags") or found.get("c_tags") or ""
            gpu[row] = found.get("gpu") or None
            datetimes[row] = f"{date} {time}" if date and time else None
            if time and not date:
                undated.append(row)
                times[row] = time
    ts = _timestamps(datetimes)
    dp, tp, extra = _rank_columns(tags, gpu, undated, times)
    return _Prefixes(ts, dp, tp, extra, undated, [times[row] for row in undated])


def _read_common_prefixes(
    block: Block, line_start: np.ndarray, stem_start: np.ndarray, datetimes: np.ndarray, tags: np.ndarray
) -> np.ndarray:
    """Fill date-times and tags of rows in the common bracket shape; return which rows those are."""
    bytes_ = block.array
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
    fast &= closes & (stem_start - 2 >= time_end)
    rows = np.flatnonzero(fast)
    if len(rows) == 0:
        return fast
    tag_texts = pc.dictionary_encode(substrings(block.buffer, time_end[rows], stem_start[rows] - 2))
    tag_ok = np.array([bool(RANK_TAGS_ONLY.match(text)) for text in tag_texts.dictionary.to_pylist()], dtype=bool)
    codes = tag_texts.indices.to_numpy(zero_copy_only=False)
    if not tag_ok.all():  # e.g. "[2024-07-01 10:00:00] [gpu=0] ": leave those rows to the full pattern
        fast[rows[~tag_ok[codes]]] = False
        rows, codes = rows[tag_ok[codes]], codes[tag_ok[codes]]
    datetimes[rows] = substrings(block.buffer, line_start[rows] + 1, time_end[rows]).to_numpy(zero_copy_only=False)
    tags[rows] = np.array(tag_texts.dictionary.to_pylist(), dtype=object)[codes]
    return fast


def _matches_template(bytes_: np.ndarray, start: np.ndarray, limit: np.ndarray, template: str) -> np.ndarray:
    ok = start + len(template) <= limit
    for offset, char in enumerate(template):
        byte = _byte_at(bytes_, start + offset, limit)
        ok &= (byte >= BYTE["0"]) & (byte <= BYTE["9"]) if char == "d" else byte == ord(char)
    return ok


def _timestamps(datetimes: np.ndarray) -> pa.TimestampArray:
    texts = pa.array(datetimes, type=pa.string())
    if pc.any(pc.match_substring(texts, ",")).as_py():
        texts = pc.replace_substring(texts, ",", ".")
    try:
        return pc.cast(texts, pa.timestamp("us"))
    except pa.ArrowInvalid:  # an impossible date somewhere: null just those
        return pa.array([_timestamp_or_none(text) for text in texts.to_pylist()], type=pa.timestamp("us"))


def _timestamp_or_none(text: str | None) -> Any:
    from datetime import datetime

    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _rank_columns(
    tags: np.ndarray, gpu: np.ndarray, undated: list[int], times: dict[int, str]
) -> tuple[pa.Array, pa.Array, pa.StringArray]:
    """dp_rank / tp_rank columns from rank tags; other ranks, [gpu=N] and date-less times as extra members."""
    count = len(tags)
    encoded = pc.dictionary_encode(pa.array(tags, type=pa.string()))
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    parsed = [rank_tags(text or "") for text in encoded.dictionary.to_pylist()]
    dp = np.array([ranks.get("dp_rank", -1) for ranks in parsed], dtype=np.int64)[codes]
    tp = np.array([ranks.get("tp_rank", -1) for ranks in parsed], dtype=np.int64)[codes]
    others = [
        "".join(f"{json.dumps(name)}: {value}, " for name, value in ranks.items() if name not in ("dp_rank", "tp_rank"))
        for ranks in parsed
    ]
    extra = _dictionary_take(others, codes)
    per_row = [None] * count
    for row in range(count) if any(value is not None for value in gpu) else ():
        if gpu[row] is not None:
            per_row[row] = f'"gpu": {int(gpu[row])}, '
    for row in undated:
        per_row[row] = (per_row[row] or "") + f'"log_time": {json.dumps(times[row])}, '
    if any(value is not None for value in per_row):
        extra = pc.binary_join_element_wise(extra, pa.array([value or "" for value in per_row], type=pa.string()), "")
    return (
        pa.array(dp, mask=dp < 0, type=pa.int32()),
        pa.array(tp, mask=tp < 0, type=pa.int32()),
        extra,
    )


def _label_fragments(block: Block, start: np.ndarray, end: np.ndarray) -> pa.StringArray:
    """``Decode batch [N],``: N is SGLang's forward count (sometimes a word: ``[first graph replay]``)."""
    count = len(start)
    rows = np.flatnonzero(start >= 0)
    if len(rows) == 0:
        return pa.array([""] * count, type=pa.string())
    labels = substrings(block.buffer, start[rows], end[rows])
    members = pc.binary_join_element_wise('"forward_ct": ', _json_value_text(labels), ", ", "")
    texts = np.full(count, "", dtype=object)
    texts[rows] = members.to_numpy(zero_copy_only=False)
    return pa.array(texts, type=pa.string())


def _json_objects(parts: list[pa.StringArray], count: int) -> pa.StringArray:
    """Join per-row ``"k": v, `` members from several sources into ``{...}`` text, null when empty."""
    joined = pc.binary_join_element_wise(*parts, "") if len(parts) > 1 else parts[0]
    members = pc.utf8_rtrim(joined, ", ")
    wrapped = pc.binary_join_element_wise("{", members, "}", "")
    return pc.if_else(pc.equal(members, ""), pa.scalar(None, pa.string()), wrapped)
