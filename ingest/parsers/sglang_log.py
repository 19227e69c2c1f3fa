"""SGLang server logs: the scheduler's periodic ``Decode batch`` / ``Prefill batch``
stats lines and the ``server_args=`` configuration dump.

Where it comes from: ``python -m sglang.launch_server ...`` writes these to
stderr (often captured through docker compose, Ray, or a custom logging
config); see DOMAIN.md §4 and docs/log-formats.md for every shape read.

What it reads:

* ``server_args=ServerArgs(...)`` or ``server_args={...}`` → one
  ``server_configs`` row per server lifetime (a new dump = a restart = a new
  segment);
* ``Decode batch.`` / ``Decode batch,`` / ``Decode batch [N],`` and the same for
  ``Prefill batch`` → ``decode_stats`` / ``prefill_stats`` rows, key:value pairs read
  order-independently; unknown keys kept in ``extra``.

What it deliberately ignores (counted in ``skipped`` by kind): every other line —
start-up chatter, HTTP access lines, tqdm bars, tracebacks, profiler messages —
and "Decode batch" text that is not at the start of a message
(``PROFILE: Decode batch 1/10 processed``).
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.accept import (
    accept_rate_drafts,
    accepted_drafts_per_step,
    tokens_per_step_from_sglang_accept_len,
)
from ingest.errors import IngestError, UnrecognizedFormat
from ingest.formats import Format, ParseOptions
from ingest.model import ParsedSource
from ingest.parsers import log_lines
from ingest.parsers.log_lines import SGLANG_PREFIX, ProgressCallback, prefix_fields, rank_tags
from ingest.parsers.pyrepr import ReprError, parse_repr
from ingest.tables import table_from_rows
from ingest.variants import variant_label

KIND = "sglang_log"
ENGINE = "sglang"

STATS_LINE = re.compile(
    rf"^{SGLANG_PREFIX}(?:\[gpu=(?P<gpu>\d+)\] )?(?P<stem>Decode|Prefill) batch"
    r"(?: \[(?P<batch>[^\]]*)\])?[.,](?P<payload>.*)$"
)
CONFIG_LINE = re.compile(rf"^{SGLANG_PREFIX}server_args=(?P<repr>.*)$")
PAIR = re.compile(r"^(?P<key>[^:]+?):\s*(?P<value>.*)$")

INT, FLOAT, BOOL = "int", "float", "bool"

# Logged key → (column, type). Keys not listed here go to ``extra``.
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
}
FIELDS_BY_STEM = {"Decode": DECODE_FIELDS, "Prefill": PREFILL_FIELDS}
TABLE_BY_STEM = {"Decode": "decode_stats", "Prefill": "prefill_stats"}
# The graph flag's name is kept in extra when it is not CUDA's (the column is cuda_graph for all).
GRAPH_KEYS_KEPT_IN_EXTRA = {"cpu graph", "npu graph", "musa graph"}

# Config keys copied to server_configs columns.
CONFIG_COLUMNS = (
    "model_path",
    "tp_size",
    "dp_size",
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
)
INT_CONFIG_COLUMNS = {"tp_size", "dp_size", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"}

NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
INTEGER = re.compile(r"^[-+]?\d+(?:\.0*)?$")
BOOLS = {"True": True, "False": False, "true": True, "false": False}

EXPECTED_SHAPES = (
    "'[YYYY-MM-DD HH:MM:SS TP0] Decode batch. #running-req: ..., gen throughput (token/s): ...', "
    "'... Prefill batch, #new-seq: ...', or 'server_args=ServerArgs(...)' / 'server_args={...}'"
)


class MalformedValue(ValueError):
    pass


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()
    return any(STATS_LINE.match(line) or CONFIG_LINE.match(line) for line in lines)


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    return parse_with_progress(path, options, None)


@dataclass
class _Scan:
    """What the scan has gathered so far, block after block."""

    path: Path
    configs: list[dict[str, Any]] = field(default_factory=list)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {"decode_stats": [], "prefill_stats": []})
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    lines_read: int = 0
    last_date: str | None = None
    stats_seen_in_segment: bool = False
    segment: int = 0

    def warn(self, line_no: int, message: str) -> None:
        self.warnings.append(f"{self.path}:{line_no}: {message}")


def parse_with_progress(path: Path, options: ParseOptions, on_progress: ProgressCallback | None) -> ParsedSource:
    """Parse ``path``; ``on_progress(bytes_done, bytes_total)`` is called after each block when given."""
    check_engine(path, options, ENGINE)
    scan = _Scan(path)
    for block in log_lines.iter_blocks(path, on_progress):
        _scan_block(scan, block)
    if not scan.configs and not any(scan.rows.values()):
        raise UnrecognizedFormat(
            path,
            f"no SGLang stats or server_args line in {scan.lines_read} lines",
            hint=f"expected lines like {EXPECTED_SHAPES}; a start-up-only excerpt has nothing to load",
        )
    _derive_accept_columns(scan)
    tables = {
        "server_configs": table_from_rows("server_configs", scan.configs),
        "decode_stats": table_from_rows("decode_stats", scan.rows["decode_stats"]),
        "prefill_stats": table_from_rows("prefill_stats", scan.rows["prefill_stats"]),
    }
    return ParsedSource(
        kind=KIND,
        engine=ENGINE,
        tables=tables,
        skipped=scan.skipped,
        warnings=scan.warnings,
        lines_read=scan.lines_read,
    )


def check_engine(path: Path, options: ParseOptions, engine: str) -> None:
    if options.engine and options.engine.lower() != engine:
        raise IngestError(
            path,
            f"--engine {options.engine} was given, but the content is a{'n' if engine[0] in 'aeiou' else ''} {engine} server log",
            hint=f"drop --engine or pass --engine {engine}",
        )


def _scan_block(scan: _Scan, block: bytes) -> None:
    text = block.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for offset, line in enumerate(lines):
        line_no = scan.lines_read + offset + 1
        line = line.rstrip("\r")
        _scan_line(scan, line_no, line)
    scan.lines_read += len(lines)


def _scan_line(scan: _Scan, line_no: int, line: str) -> None:
    stats = STATS_LINE.match(line)
    if stats:
        _read_stats_line(scan, line_no, stats.groupdict())
        return
    config = CONFIG_LINE.match(line)
    if config:
        _read_config_line(scan, line_no, config.groupdict())
        return
    dated = log_lines.ANY_DATE.match(line)
    if dated:
        scan.last_date = f"{dated[1]}-{dated[2]}-{dated[3]}"
    scan.skipped[classify_noise(line)] += 1


def classify_noise(line: str) -> str:
    for kind, pattern in _NOISE:
        if pattern.search(line):
            return kind
    return log_lines.OTHER_LOG_LINE if _OTHER_LOG_LINE.search(line) else log_lines.OTHER_TEXT


_NOISE = [(kind, re.compile(pattern)) for kind, pattern in log_lines.NOISE_KINDS]
_OTHER_LOG_LINE = re.compile(log_lines.OTHER_LOG_LINE_PATTERN)


def _read_stats_line(scan: _Scan, line_no: int, match: dict[str, str | None]) -> None:
    date, time, tags = prefix_fields(match)
    if date:
        scan.last_date = date
    stem = match["stem"] or "Decode"
    try:
        columns, extra = parse_pairs(match["payload"] or "", FIELDS_BY_STEM[stem])
    except MalformedValue as error:
        scan.skipped["malformed stats line"] += 1
        scan.warn(line_no, f"{stem} batch line skipped: {error}")
        return
    ranks = rank_tags(tags)
    for name in list(ranks):
        if name not in ("dp_rank", "tp_rank"):
            extra[name] = ranks.pop(name)
    if match.get("gpu"):
        extra["gpu"] = int(match["gpu"])
    if match.get("batch"):
        extra["batch"] = _json_value(match["batch"])
    row: dict[str, Any] = {
        "segment": scan.segment,
        "line_no": line_no,
        "ts": _timestamp(date or scan.last_date, time),
        **ranks,
        **columns,
        "extra": json.dumps(extra) if extra else None,
    }
    if row["ts"] is None and time:
        extra["log_time"] = time
        row["extra"] = json.dumps(extra)
    scan.rows[TABLE_BY_STEM[stem]].append(row)
    scan.stats_seen_in_segment = True


def parse_pairs(payload: str, fields: dict[str, tuple[str, str]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``key: value, key: value, `` into typed known columns and an ``extra`` dict."""
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for part in payload.split(", "):
        part = part.strip().rstrip(",").strip()
        if not part:
            continue
        pair = PAIR.match(part)
        if not pair:
            raise MalformedValue(f"{part!r} is not 'key: value'")
        key, value = pair["key"].strip(), pair["value"].strip()
        if key in fields:
            column, kind = fields[key]
            columns[column] = cast_value(key, value, kind)
            if key in GRAPH_KEYS_KEPT_IN_EXTRA:
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
        if not INTEGER.match(value):
            raise MalformedValue(f"{key!r}: {value!r} is not an integer")
        return int(float(value))
    if not NUMBER.match(value):
        raise MalformedValue(f"{key!r}: {value!r} is not a number")
    return float(value)


def extra_item(key: str, value: str) -> tuple[str, Any]:
    """Unknown keys: numbers as numbers, ``12.5%`` as ``"key (%)": 12.5``, the rest as text."""
    if value.endswith("%") and NUMBER.match(value[:-1].strip()):
        return f"{key} (%)", _json_value(value[:-1].strip())
    return key, _json_value(value)


def _json_value(text: str) -> Any:
    if text in BOOLS:
        return BOOLS[text]
    if NUMBER.match(text):
        number = float(text)
        if math.isfinite(number):
            return int(number) if INTEGER.match(text) and "." not in text else number
    return text


def _timestamp(date: str | None, time: str) -> datetime | None:
    if not date or not time:
        return None
    try:
        return datetime.fromisoformat(f"{date} {time.replace(',', '.')}")
    except ValueError:
        return None


def _read_config_line(scan: _Scan, line_no: int, match: dict[str, str | None]) -> None:
    date, time, _ = prefix_fields(match)
    if date:
        scan.last_date = date
    try:
        _, config = parse_repr(match["repr"] or "")
    except ReprError as error:
        scan.skipped["malformed config line"] += 1
        scan.warn(line_no, f"server_args could not be read ({error}); its segment has no config")
        return
    if scan.configs or scan.stats_seen_in_segment:
        scan.segment += 1
    scan.stats_seen_in_segment = False
    row: dict[str, Any] = {
        "segment": scan.segment,
        "line_no": line_no,
        "ts": _timestamp(date or scan.last_date, time),
        "variant": variant_label(config),
        "args": to_json_text(config),
    }
    for column in CONFIG_COLUMNS:
        value = config.get(column)
        if column in INT_CONFIG_COLUMNS:
            value = value if isinstance(value, int) and not isinstance(value, bool) else None
        elif value is not None:
            value = str(value)
        row[column] = value
    scan.configs.append(row)


def to_json_text(value: Any) -> str:
    """JSON text of a parsed config; non-finite floats become the strings "inf"/"-inf"/"nan"."""
    return json.dumps(_finite(value), ensure_ascii=False, default=str)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _derive_accept_columns(scan: _Scan) -> None:
    draft_tokens = {config["segment"]: config["speculative_num_draft_tokens"] for config in scan.configs}
    missing_config_lines = 0
    for row in scan.rows["decode_stats"]:
        accept_len = row.get("accept_len_raw")
        if accept_len is None:
            continue
        tokens = tokens_per_step_from_sglang_accept_len(accept_len)
        row["tokens_per_step"] = tokens
        row["accepted_drafts_per_step"] = accepted_drafts_per_step(tokens)
        num_draft_tokens = draft_tokens.get(row["segment"])
        row["accept_rate_drafts"] = accept_rate_drafts(tokens, num_draft_tokens)
        if row["accept_rate_drafts"] is None:
            missing_config_lines += 1
    if missing_config_lines:
        scan.warnings.append(
            f"{scan.path}: accept_rate_drafts left empty on {missing_config_lines} decode lines: "
            "no server_args with speculative_num_draft_tokens precedes them (include the server start-up in the log)"
        )


FORMAT = Format(
    kind=KIND,
    description="SGLang server log (Decode/Prefill batch stats lines, server_args dump)",
    sniff=sniff,
    parse=parse,
)
