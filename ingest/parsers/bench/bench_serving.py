"""``python -m sglang.bench_serving --output-file X.jsonl``: one JSON record per benchmark run.

bench_serving appends ``json.dumps(result)`` per run, so the file is JSON Lines with
bare ``Infinity`` for an unbounded ``--request-rate`` (read as-is, see
``json_records``). The key set drifts across SGLang versions (renamed 2024-08;
``accept_length`` since 2025-03; ``tag``, ``server_info`` and ``total_throughput``
late 2025; more in 2026), so keys are read by name through ``SERVING_ALIASES``,
missing ones stay null and unknown ones go to ``extra``.

* ``accept_length`` is stored raw: bonus-inclusive and the server's *lifetime*
  average read after the run (it includes warm-up and earlier traffic); null for
  non-speculative runs.
* ``server_info`` (late 2025: the server's ``/get_server_info`` dict) becomes a
  ``server_configs`` row with ``segment`` = ``record_index`` and a derived variant;
  it is then not copied into ``extra`` (``server_configs.args`` holds all of it).
  Behind a PD router it is ``{"prefill": [...], "decode": [...]}``: the decode
  server's args are used. A ``server_info`` without server args (a router's
  load report) gives no config row and stays in ``extra``.
* ``--output-details`` arrays (``input_lens``, ``output_lens``, ``ttfts``,
  ``itls``, ``generated_texts``, ``errors``; vLLM also ``start_times``) become
  ``bench_requests`` rows, one per request, and are not copied into ``extra``; the
  refactored package (``sglang.benchmark``) nests the same arrays under ``details``.

Deliberately ignored: nothing a record says is dropped. The reader's tolerance
(preamble lines, wrapped and truncated records) is described in ``json_records``.
``vllm_bench`` reuses ``records_to_tables`` with vLLM's aliases.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.derive.variants import derive_variant
from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import (
    as_float,
    as_int,
    extra_json,
    map_record,
    strict_json_value,
)
from ingest.parsers.bench.json_records import JsonRecord, read_json_records, sniff_keys
from ingest.reader import text_lines
from ingest.tables import BENCH_SERVING, SERVER_CONFIGS, table_from_rows

KIND = "bench_serving_jsonl"
TOOL = "sglang.bench_serving"

# bench_serving column <- record keys, newest spelling first. The short spellings are SGLang's
# until 2024-08 (sglang PR #686's example: total_input, total_output, median_ttft, median_itl,
# output_token_throughput); request_inthroughput and mean_e2el_ms are vLLM benchmark_serving's.
SERVING_ALIASES: dict[str, tuple[str, ...]] = {
    "backend": ("backend",),
    "dataset_name": ("dataset_name",),
    "tag": ("tag",),
    "request_rate": ("request_rate",),
    "max_concurrency": ("max_concurrency",),
    "duration_s": ("duration",),
    "completed": ("completed",),
    "total_input_tokens": ("total_input_tokens", "total_input"),
    "total_output_tokens": ("total_output_tokens", "total_output"),
    "request_throughput": ("request_throughput", "request_inthroughput"),
    "input_throughput": ("input_throughput",),
    "output_throughput": ("output_throughput", "output_token_throughput"),
    "mean_ttft_ms": ("mean_ttft_ms",),
    "median_ttft_ms": ("median_ttft_ms", "median_ttft"),
    "p99_ttft_ms": ("p99_ttft_ms",),
    "mean_tpot_ms": ("mean_tpot_ms",),
    "median_tpot_ms": ("median_tpot_ms",),
    "mean_itl_ms": ("mean_itl_ms",),
    "median_itl_ms": ("median_itl_ms", "median_itl"),
    "p99_itl_ms": ("p99_itl_ms",),
    "mean_e2e_latency_ms": ("mean_e2e_latency_ms", "mean_e2el_ms"),
    "accept_length": ("accept_length",),
}


@dataclass(frozen=True)
class DetailArray:
    """A per-request array of ``--output-details`` and how one element becomes a column value."""

    column: str
    convert: Callable[[Any], tuple[Any, str | None]]


def seconds_to_ms(value: Any) -> tuple[float | None, str | None]:
    number, problem = as_float(value)
    return (None if number is None else number * 1000.0), problem


def seconds_list_to_ms(value: Any) -> tuple[list[float | None] | None, str | None]:
    if not isinstance(value, list):
        return None, f"expected a list of seconds, got {json.dumps(strict_json_value(value))[:40]}"
    converted = [seconds_to_ms(item) for item in value]
    problem = next((p for _, p in converted if p), None)
    return [ms for ms, _ in converted], problem


def text_or_none(value: Any) -> tuple[str | None, str | None]:
    if value is None or value == "":
        return None, None
    if isinstance(value, (dict, list)):
        return json.dumps(strict_json_value(value)), None
    return str(value), None


# --output-details key -> bench_requests column. Times are seconds in the file, ms in the table.
DETAIL_ARRAYS: dict[str, DetailArray] = {
    "input_lens": DetailArray("input_len", as_int),
    "output_lens": DetailArray("output_len", as_int),
    "ttfts": DetailArray("ttft_ms", seconds_to_ms),
    "itls": DetailArray("itls_ms", seconds_list_to_ms),
    "start_times": DetailArray("start_time_s", as_float),
    "errors": DetailArray("error", text_or_none),
    "generated_texts": DetailArray("generated_text", text_or_none),
}

# server_configs column <- keys of an embedded server_info / server_args dict.
CONFIG_ALIASES: dict[str, tuple[str, ...]] = {
    "model_path": ("model_path",),
    "tp_size": ("tp_size", "tensor_parallel_size"),
    "dp_size": ("dp_size", "data_parallel_size"),
    "speculative_algorithm": ("speculative_algorithm",),
    "speculative_draft_model_path": ("speculative_draft_model_path",),
    "speculative_num_steps": ("speculative_num_steps",),
    "speculative_eagle_topk": ("speculative_eagle_topk",),
    "speculative_num_draft_tokens": ("speculative_num_draft_tokens",),
}
SERVER_ARGS_MARKERS = ("model_path", "speculative_algorithm")
PD_ROLE_PREFERENCE = ("decode", "prefill")

# --- detection ----------------------------------------------------------------------------------

ARGUMENT_COLUMNS = ("backend", "dataset_name", "tag", "request_rate", "max_concurrency")  # other tools echo these
RESULT_KEYS = frozenset(
    key for column, keys in SERVING_ALIASES.items() if column not in ARGUMENT_COLUMNS for key in keys
)
# Keys that mean "not a bench_serving record": vLLM's --save-result JSON, bench_one_batch(_server)
# JSONL, and the canonical benchmark JSON.
FOREIGN_KEYS = frozenset({"model_id", "tokenizer_id", "run_name", "last_gen_throughput", "runs", "format"})
FOREIGN_PREFIXES = ("spec_decode_",)
MIN_RESULT_KEYS = 3


def sniff(head: bytes) -> bool:
    """A JSON object near the top whose own keys are bench_serving result keys of some generation."""
    keys = sniff_keys(head)
    if keys is None or keys & FOREIGN_KEYS or any(key.startswith(FOREIGN_PREFIXES) for key in keys):
        return False
    return len(keys & RESULT_KEYS) >= MIN_RESULT_KEYS


# --- parsing ------------------------------------------------------------------------------------

def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="sglang")
    with text_lines(path) as lines:
        records = list(read_json_records(path, lines, parsed))
    require_records(path, parsed, records, what="sglang.bench_serving record", written_by="--output-file")
    records_to_tables(path, parsed, records, tool_of=lambda record: TOOL, aliases=SERVING_ALIASES)
    return parsed


def require_records(
    path: Path, parsed: ParsedSource, records: list[JsonRecord], *, what: str, written_by: str
) -> None:
    """No record at all is an error naming the first thing that went wrong, not an empty load."""
    if records:
        return
    first = parsed.warnings[0].removeprefix(f"{path}:") if parsed.warnings else "0: the file has no content"
    line, _, problem = first.partition(": ")
    raise MalformedInput(
        path,
        f"no complete {what} found; first problem: {problem}",
        line=int(line) if line.isdigit() else None,
        hint=f"pass the file the benchmark wrote with {written_by}; each record is one JSON object",
    )


def records_to_tables(
    path: Path,
    parsed: ParsedSource,
    records: Iterable[JsonRecord],
    *,
    tool_of: Callable[[dict[str, Any]], str],
    aliases: Mapping[str, tuple[str, ...]],
) -> None:
    """Fill ``parsed.tables`` with bench_serving (+ bench_requests, server_configs) rows.

    ``tool_of`` names the tool that wrote a record (the ``tool`` column).
    """
    serving, requests, configs = [], [], []
    for record_index, record in enumerate(records):
        tool = tool_of(record.value)
        serving.append(serving_row(path, parsed, record_index, record, tool=tool, aliases=aliases))
        requests.extend(request_rows(path, parsed, record_index, record))
        config = server_config_row(path, parsed, record_index, record)
        if config is not None:
            configs.append(config)
    parsed.engine = engine_of(serving, default=parsed.engine)
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", serving)
    if requests:
        parsed.tables["bench_requests"] = table_from_rows("bench_requests", requests)
    if configs:
        parsed.tables["server_configs"] = table_from_rows("server_configs", configs)


def serving_row(
    path: Path,
    parsed: ParsedSource,
    record_index: int,
    record: JsonRecord,
    *,
    tool: str,
    aliases: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    has_config = server_args_of(record.value.get("server_info")) is not None
    nested = NESTED_DETAILS if detail_holder(record.value) is not record.value else None
    not_extra = frozenset(DETAIL_ARRAYS) | ({"server_info"} if has_config else set()) | ({nested} if nested else set())
    mapped = map_record(record.value, aliases, BENCH_SERVING, not_extra=not_extra)
    for key, problem in mapped.problems:
        parsed.warnings.append(f'{path}:{record.line_no}: key "{key}": {problem}')
    holder = detail_holder(record.value)
    for key in DETAIL_ARRAYS:  # a details key that is not an array is not details: keep it
        if key in holder and not isinstance(holder[key], list):
            mapped.extra[key] = holder[key]
    return {
        **mapped.row,
        "record_index": record_index,
        "line_no": record.line_no,
        "tool": tool,
        "extra": extra_json(mapped.extra),
    }


def engine_of(rows: list[dict[str, Any]], *, default: str) -> str:
    """The engine measured: vLLM when every record's backend is a vLLM one, else ``default``."""
    backends = [str(row.get("backend") or "") for row in rows]
    if backends and all(backend.startswith("vllm") for backend in backends):
        return "vllm"
    return default


NESTED_DETAILS = "details"  # sglang.benchmark's save_results: result["details"] = {"input_lens": …, …}


def detail_holder(record: dict[str, Any]) -> dict[str, Any]:
    """Where a record's ``--output-details`` arrays sit: under ``details`` (the refactored package)
    when that is an object holding one of them, else the record itself (the classic script, vLLM)."""
    nested = record.get(NESTED_DETAILS)
    if isinstance(nested, dict) and any(isinstance(nested.get(key), list) for key in DETAIL_ARRAYS):
        return nested
    return record


def request_rows(path: Path, parsed: ParsedSource, record_index: int, record: JsonRecord) -> list[dict[str, Any]]:
    arrays = {key: value for key, value in detail_holder(record.value).items()
              if key in DETAIL_ARRAYS and isinstance(value, list)}
    if not arrays:
        return []
    count = max(len(values) for values in arrays.values())
    uneven = sorted(f"{key}={len(values)}" for key, values in arrays.items() if len(values) != count)
    if uneven:
        parsed.warnings.append(
            f"{path}:{record.line_no}: per-request arrays differ in length ({', '.join(uneven)}; longest {count}); "
            "missing entries are null"
        )
    rows: list[dict[str, Any]] = [{"record_index": record_index, "request_index": i} for i in range(count)]
    for key, values in arrays.items():
        detail = DETAIL_ARRAYS[key]
        first_problem = None
        for row, value in zip(rows, values, strict=False):  # shorter arrays leave nulls
            row[detail.column], problem = detail.convert(value)
            first_problem = first_problem or problem
        if first_problem:
            parsed.warnings.append(f"{path}:{record.line_no}: key \"{key}\": {first_problem}; such entries are null")
    for row in rows:
        row["tpot_ms"] = request_tpot_ms(row.get("itls_ms"), row.get("output_len"))
    return rows


def request_tpot_ms(itls_ms: list[float | None] | None, output_len: int | None) -> float | None:
    """Time per output token after the first: sum(ITL) / (output_len - 1), as bench_serving defines it."""
    if not itls_ms or output_len is None or output_len <= 1 or any(v is None for v in itls_ms):
        return None
    return math.fsum(itls_ms) / (output_len - 1)  # type: ignore[arg-type]


def server_config_row(path: Path, parsed: ParsedSource, record_index: int, record: JsonRecord) -> dict[str, Any] | None:
    config = server_args_of(record.value.get("server_info"))
    if config is None:
        return None
    mapped = map_record(config, CONFIG_ALIASES, SERVER_CONFIGS)
    for key, problem in mapped.problems:
        parsed.warnings.append(f'{path}:{record.line_no}: key "server_info.{key}": {problem}')
    return {
        **mapped.row,
        "segment": record_index,
        "line_no": record.line_no,
        "variant": derive_variant(config),
        "args": json.dumps(strict_json_value(config), sort_keys=True, default=str),
    }


def server_args_of(info: Any) -> dict[str, Any] | None:
    """The server-args dict inside ``server_info``, or None when it holds none (then it stays in extra).

    With PD disaggregation the router answers ``{"prefill": [...], "decode": [...]}``; the
    decode server is the one that speculates.
    """
    if is_server_args(info):
        return info
    if isinstance(info, dict):
        for role in PD_ROLE_PREFERENCE:
            servers = info.get(role)
            if isinstance(servers, list) and servers and is_server_args(servers[0]):
                return servers[0]
    return None


def is_server_args(value: Any) -> bool:
    return isinstance(value, dict) and any(key in value for key in SERVER_ARGS_MARKERS)


FORMAT = Format(
    kind=KIND,
    description="sglang.bench_serving --output-file JSONL (one JSON record per run)",
    sniff=sniff,
    signs=(
        Sign('"(output_throughput|output_token_throughput)"\\s*:', "an 'output_throughput' key"),
        Sign('"(completed|duration|total_output_tokens|total_output)"\\s*:', "result keys ('completed', 'duration')"),
        Sign('"(backend|dataset_name|request_rate|max_concurrency)"\\s*:', "bench_serving's argument keys ('backend', 'request_rate')"),
    ),
    parse=parse,
    example='{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": 1, … "output_throughput": 81.98, …}',
    precedence=30,
)

FORMATS = (FORMAT,)
