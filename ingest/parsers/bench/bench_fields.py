"""Shared by the benchmark-output parsers: mapping a record's keys onto a table's columns.

Benchmark tools rename their keys between versions, so every parser declares an
alias table (column -> key names, as data) and hands it to ``map_record``, which
reads each column by name, coerces the value to the column's Arrow type, and
returns what it could not place: keys nobody declared (for ``extra``) and values
of the wrong type (a warning naming the key; the raw value is kept in ``extra``).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

# Values benchmark tools write to mean "no value": bench_one_batch_server's acc_length -1,
# SGLang console "not set"/"N/A".
NULL_SENTINELS: dict[str, tuple[Any, ...]] = {
    "accept_length": (-1, -1.0),
}
NULL_TEXTS = {"", "not set", "none", "null", "n/a", "na", "-"}
WHOLE_TEXT = re.compile(r"\s*[+-]?\d{1,400}\s*")


@dataclass
class MappedRecord:
    """One record's columns, its unplaced keys and the problems found on the way."""

    row: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (key, what is wrong)


def map_record(
    record: Mapping[str, Any],
    aliases: Mapping[str, tuple[str, ...]],
    schema: pa.Schema,
    *,
    not_extra: frozenset[str] = frozenset(),
) -> MappedRecord:
    """Read every aliased column of ``schema`` from ``record``; the first alias present wins.

    Keys in ``not_extra`` are handled elsewhere by the caller (per-request arrays,
    embedded server info) and are neither mapped nor copied into ``extra``.
    """
    mapped = MappedRecord()
    used: set[str] = set()
    for column, keys in aliases.items():
        key = next((k for k in keys if k in record), None)
        if key is None:
            continue
        used.add(key)
        value, problem = coerce(record[key], schema.field(column).type)
        if problem:
            mapped.problems.append((key, f"{problem}; raw value kept in extra"))
            mapped.extra[key] = record[key]
            continue
        if value in NULL_SENTINELS.get(column, ()):
            value = None
        mapped.row[column] = value
    for key, value in record.items():
        if key not in used and key not in not_extra:
            mapped.extra[key] = value
    return mapped


def coerce(value: Any, arrow_type: pa.DataType) -> tuple[Any, str | None]:
    """``value`` as a Python value of ``arrow_type``, or (None, what was wrong)."""
    if value is None:
        return None, None
    if isinstance(value, str) and value.strip().lower() in NULL_TEXTS:
        return None, None
    if pa.types.is_floating(arrow_type):
        return as_float(value)
    if pa.types.is_integer(arrow_type):
        return as_int(value, bits=arrow_type.bit_width)
    if pa.types.is_string(arrow_type):
        if isinstance(value, (dict, list)):
            return None, f"expected text, got a JSON {type(value).__name__}"
        return str(value), None
    if pa.types.is_boolean(arrow_type):
        if isinstance(value, bool):
            return value, None
        return None, f"expected true/false, got {value!r}"
    raise TypeError(f"no coercion for Arrow type {arrow_type}")  # a bug in a schema, not bad input


def as_float(value: Any) -> tuple[float | None, str | None]:
    """A number (int, float, or numeric text such as "inf" or "3.5"); NaN means no value."""
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        return None, f"expected a number, got {json.dumps(value)[:40]}"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None, f"expected a number, got {short(value)}"
    except OverflowError:  # an integer beyond float range
        return None, f"expected a number, got {short(value)}: too large for a 64-bit float"
    return (None if math.isnan(number) else number), None


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text)} characters)"


def as_int(value: Any, bits: int = 64) -> tuple[int | None, str | None]:
    """A whole number that fits a signed ``bits``-bit column; 3.0 is accepted, 3.5 and "three" are not.

    JSON integers have no size limit, Arrow and DuckDB columns do: a larger number is a problem
    to report, not an overflow. Integers (and integer text) are checked exactly, not via float.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and WHOLE_TEXT.fullmatch(value):
        number = int(value)
    else:
        as_number, problem = as_float(value)
        if problem or as_number is None:
            return None, problem
        if not math.isfinite(as_number) or as_number != int(as_number):
            return None, f"expected a whole number, got {short(value)}"
        number = int(as_number)
    limit = 2 ** (bits - 1)
    if not -limit <= number < limit:
        return None, f"expected a whole number, got {short(value)}: too large for a {bits}-bit column"
    return number, None


def strict_json_value(value: Any) -> Any:
    """``value`` with non-finite floats spelled as text, so the result is strict JSON.

    Python's json writes bare Infinity/NaN, which DuckDB's JSON functions reject.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): strict_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json_value(v) for v in value]
    return value


def extra_json(extra: Mapping[str, Any]) -> str | None:
    """The ``extra`` column: a strict-JSON object text, or null when nothing is left over."""
    if not extra:
        return None
    return json.dumps(strict_json_value(dict(extra)), sort_keys=True, default=str)
