"""The grammar of SGLang's stats lines, in one place: every reader of them derives from it.

A stats line is ``<prefix><stem><sep> key: value, key: value, ...``:

* the prefix is one of ``log_lines``' shapes (``SGLANG_PREFIX``; a ``[gpu=N] `` tag may follow);
* the stem is ``Decode batch`` or ``Prefill batch`` (``STEMS``), then ``.``, ``,`` or `` [N],``
  (N = SGLang's forward count); nothing else may stand between prefix and stem, which keeps
  ``PROFILE: Decode batch 1/10 processed`` out;
* each key is a column of its stem's table (``DECODE_FIELDS``, ``PREFILL_FIELDS``: key → column,
  type) or goes to ``extra``; values are spelled as ``INT_VALUE``, ``FLOAT_VALUE``, ``BOOLS``, and
  ``12.5%`` for an unknown key.

``STATS_LINE`` with ``split_pairs`` and ``cast_value`` is the executable definition, and the general
reader applies it as it is, line by line (``sglang_stats.read_lines``); it words a malformed line's
warning. The fast path, ``sglang_templates`` with ``log_kernels``, learns line shapes from lines the
general reader read and is held to it on every fixture and corpus log and on generated lines
(tests/test_log_templates.py, tests/test_log_kernels.py). ``parse_pairs`` gives a payload's typed
values, the reference the property tests (tests/test_log_properties.py) read rows back against.
A new key is one entry here (plus its column); a new prefix is ``log_lines.LOG_PREFIXES``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ingest.parsers.logs.log_lines import SGLANG_PREFIX

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
    "cuda graph": ("cuda_graph", BOOL),
    "cpu graph": ("cuda_graph", BOOL),
    "npu graph": ("cuda_graph", BOOL),
    "musa graph": ("cuda_graph", BOOL),
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

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
FLOAT_VALUE = re.compile(rf"^(?:{NUMBER}|[-+]?(?i:nan|inf|infinity))$")
INT_VALUE = re.compile(r"^[-+]?\d+(?:\.0*)?$")
INT64_LIMIT = 2.0**63
JSON_NUMBER = r"^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$"
BOOLS = {"True": True, "False": False}

BATCH = " batch"
CONFIG_SEARCH = "server_args="  # what a line must hold to be read as a config dump (sglang_log.CONFIG_LINE)


class MalformedValue(ValueError):
    """A stats line whose shape is right but a value is not."""


# --- per-line reference ---------------------------------------------------------------


def split_pairs(payload: str) -> list[tuple[str, str]]:
    """``key: value, key: value, `` → [(key, value), ...] as written, in line order."""
    pairs = []
    for part in payload.strip().rstrip(", ").split(", "):
        key, sep, value = part.partition(": ")  # as in the stripped part: whitespace holds no ": "
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            if not part.strip():
                continue  # ", , ": an empty part
            raise MalformedValue(f"{part.strip()!r} is not 'key: value'")
        pairs.append((key, value))
    if not pairs:
        raise MalformedValue("no 'key: value' pairs after the stem")
    return pairs


def parse_pairs(payload: str, fields: dict[str, tuple[str, str]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``key: value, key: value, `` → (typed known columns, extra)."""
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in split_pairs(payload):
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
        number = int(value) if value.lstrip("+-").isdigit() else int(float(value))  # "12.0": a float's digits
        if not abs(number) < INT64_LIMIT:
            raise MalformedValue(f"{key!r}: {value!r} is beyond the 64-bit integer range")
        return number
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
