"""SGLang ``Decode batch`` / ``Prefill batch`` stats lines as table columns: the general reader.

Each line that holds " batch" and that no line template took (``sglang_templates``, the fast path
that reads most lines of a busy log) is read here by the grammar itself, one line at a time:
``STATS_LINE`` for its prefix, stem and separator, ``split_pairs`` and ``cast_value`` for its
``key: value`` pairs (``sglang_grammar``). The rows of a block are then built into Arrow columns
at once, with the helpers the template reader shares: ``extra``'s JSON text (unknown keys as
written, rank tags other than DP/TP, ``[gpu=N]``, the time of a date-less line, the forward count
of ``Decode batch [N],``), rank columns, timestamps. So both readers spell every value the same
way (tests/test_log_templates.py compares them on every fixture and corpus log).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.parsers.logs.log_lines import Block, prefix_fields, rank_tags
from ingest.parsers.sglang.sglang_grammar import (
    BATCH,
    GRAPH_NAME_IN_EXTRA,
    JSON_NUMBER,
    NUMBER,
    STATS_LINE,
    STEMS,
    MalformedValue,
    Stem,
    cast_value,
    split_pairs,
)
from ingest.tables import SCHEMAS


@dataclass
class StatsRows:
    """The stats lines of one stem in one block, as table columns (``segment`` is set later)."""

    table: str
    line_index: np.ndarray  # positions in the block
    columns: dict[str, pa.Array]
    undated: np.ndarray  # row positions whose prefix had a time but no date
    undated_times: list[str]
    malformed: dict[int, str] = field(default_factory=dict)  # block line index → message


# --- the per-line reader -------------------------------------------------------------


def read_lines(block: Block, skip: np.ndarray | None = None) -> tuple[dict[str, StatsRows], np.ndarray]:
    """The stats rows per table, and a mask of the block's lines that were stats lines (kept or malformed):
    each line holding " batch" (and not marked in ``skip``) read by the grammar, ``STATS_LINE`` and
    ``split_pairs``, one line at a time. Line templates (``sglang_templates``) read most lines of a busy
    log before this does; it reads what they do not, and the lines they learn from."""
    candidates = pc.match_substring(block.lines, BATCH).to_numpy(zero_copy_only=False)
    if skip is not None:
        candidates &= ~skip
    taken = np.zeros(block.size, dtype=bool)
    stems = {stem.text: _LineRows(stem) for stem in STEMS}
    for index in np.flatnonzero(candidates).tolist():
        match = STATS_LINE.match(block.line_text(index))
        if match is not None:
            stems[match["stem"]].add(index, match)
            taken[index] = True
    result = {}
    for lines in stems.values():
        if lines.line_index or lines.malformed:
            result[lines.stem.table] = lines.finish(block.first_line_no)
    return result, taken


class _LineRows:
    """The stats lines of one stem in a block, gathered a line at a time and built into columns once."""

    def __init__(self, stem: Stem) -> None:
        self.stem = stem
        self.line_index: list[int] = []
        self.prefixes: list[tuple[str, str, str]] = []  # (date, time, rank tags)
        self.labels: list[str | None] = []
        self.gpu: dict[int, int] = {}
        self.typed: list[dict[str, Any]] = []  # column → value, per row
        self.pairs: list[list[tuple[str, str]]] = []  # every pair as written, per row
        self.malformed: dict[int, str] = {}

    def add(self, index: int, match: re.Match[str]) -> None:
        fields = self.stem.fields
        try:
            pairs = split_pairs(match["payload"])
            # a key repeated in a line (or two graph flags): the value written last
            typed = {fields[key][0]: cast_value(key, value, fields[key][1]) for key, value in pairs if key in fields}
        except MalformedValue as error:
            self.malformed[index] = f"{self.stem.text} line skipped: {error}"
            return
        if match["gpu"]:
            self.gpu[len(self.line_index)] = int(match["gpu"])
        self.line_index.append(index)
        self.prefixes.append(prefix_fields(match))
        self.labels.append(match["label"])
        self.typed.append(typed)
        self.pairs.append(pairs)

    def finish(self, first_line_no: int) -> StatsRows:
        count = len(self.line_index)
        schema = SCHEMAS[self.stem.table]
        undated = {row: time for row, (date, time, _) in enumerate(self.prefixes) if time and not date}
        ts, dp_rank, tp_rank, prefix_members = self._prefix_columns(undated)
        columns: dict[str, pa.Array] = {
            "line_no": pa.array(first_line_no + np.array(self.line_index, dtype=np.int64), type=pa.int64()),
            "ts": ts,
            "dp_rank": dp_rank,
            "tp_rank": tp_rank,
        }
        for column, _ in self.stem.fields.values():
            columns[column] = pa.array([typed.get(column) for typed in self.typed], type=schema.field(column).type)
        columns["extra"] = json_objects([self._extra(count), prefix_members, _labels(self.labels)], count)
        rows = sorted(undated)
        return StatsRows(
            table=self.stem.table,
            line_index=np.array(self.line_index, dtype=np.int64),
            columns=columns,
            undated=np.array(rows, dtype=np.int64),
            undated_times=[undated[row] for row in rows],
            malformed=self.malformed,
        )

    def _prefix_columns(self, undated: dict[int, str]) -> tuple[pa.Array, pa.Array, pa.Array, Members]:
        """ts, dp_rank, tp_rank, and extra members: other rank tags, ``[gpu=N]``, the time of date-less lines."""
        datetimes = [f"{date} {time}" if date and time else None for date, time, _ in self.prefixes]
        tag_codes, tag_texts = _distinct_codes([tags for _, _, tags in self.prefixes])
        dp_rank, tp_rank, members = rank_columns(tag_texts, tag_codes)
        if self.gpu or undated:
            per_row = members.to_array().to_numpy(zero_copy_only=False).astype(object)
            for row, gpu in self.gpu.items():
                per_row[row] += f'"gpu": {gpu}, '
            for row, time in undated.items():
                per_row[row] += f'"log_time": {json.dumps(time)}, '
            members = Members(array=pa.array(per_row, type=pa.string()))
        return _timestamps(pa.array(datetimes, type=pa.string())), dp_rank, tp_rank, members

    def _extra(self, count: int) -> Members:
        """The members of each row's unknown keys (and graph flags), spelled as the template reader spells them."""
        key_codes, names = _distinct_codes([key for pairs in self.pairs for key, _ in pairs])
        if not names:
            return Members()
        fields = self.stem.fields
        in_extra = np.array([name not in fields or name in GRAPH_NAME_IN_EXTRA for name in names], dtype=bool)
        values = pa.array([value for pairs in self.pairs for _, value in pairs], type=pa.string())
        parent = np.repeat(np.arange(count, dtype=np.int64), [len(pairs) for pairs in self.pairs])
        return _extra_members(names, key_codes, values, parent, in_extra[key_codes], count)


def _distinct_codes(texts: list[str]) -> tuple[np.ndarray, list[str]]:
    """Each text's index among the distinct texts, and those texts in first-seen order."""
    index: dict[str, int] = {}
    codes = np.array([index.setdefault(text, len(index)) for text in texts], dtype=np.int32)
    return codes, list(index)


def _labels(labels: list[str | None]) -> Members:
    """``Decode batch [N],``: N is SGLang's forward count (sometimes a word: ``[first graph replay]``)."""
    if not any(label is not None for label in labels):
        return Members()
    texts = pa.array(labels, type=pa.string())
    members = pc.binary_join_element_wise('"forward_ct": ', _json_value_text(texts), ", ", "")
    return Members(array=pc.fill_null(members, ""))


# --- the columns both readers build -------------------------------------------------------


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
