"""NVIDIA AIPerf exports (github.com/ai-dynamo/aiperf, the successor of GenAI-Perf): the aggregate
``profile_export_aiperf.json`` and the per-request ``profile_export.jsonl``.

**Aggregate** (``aiperf/exporters/json_exporter.py``). Each metric is an object of statistics in the metric's
display unit (``unit``, ``avg``, ``min``, ``max``, ``p1``…``p99``, ``std``; ``count`` before 2025-10-10).
Two shapes, both read:

* until aiperf #343 (2025-10-10): ``{"records": {tag: {tag, unit, header, avg, …, count}}, "input_config",
  "was_cancelled", "error_summary", "start_time", "end_time"}``;
* from #343 on, "to match GenAI-Perf": the metrics at the top level (``{unit, avg, p1, …}``, no tag or header)
  next to the same five keys, and ``ttft``/``ttst`` renamed ``time_to_first_token``/``time_to_second_token``.

One ``bench_serving`` row (``tool`` "aiperf"), read from the writer's definitions (``aiperf/metrics/types``):
``output_token_throughput`` = total output sequence length ÷ benchmark duration (reasoning tokens included),
so ``total_output_tokens`` is ``total_osl`` (AIPerf's own ``total_output_tokens`` leaves reasoning tokens out and
stays in ``extra``); ``inter_token_latency`` = (request latency − TTFT) ÷ (output length − 1) per request, which
is what bench_serving calls TPOT; ``inter_chunk_latency`` (the gaps between streamed chunks) is its ITL. The
load comes from ``input_config.loadgen`` (``concurrency``, ``request_rate``); the config is dumped with
``exclude_unset``, so a load the user left at its default is absent and stays null rather than guessed. The
model (``input_config.endpoint.model_names``), error counts and every metric go to ``extra``.

**Per-request** (``aiperf/post_processors/record_export_results_processor.py``): one ``MetricRecordInfo`` per
line, ``{"metadata": {...}, "metrics": {name: {"value", "unit"}}, "error": null | {code, type, message}}``.
A successful record is one ``bench_runs`` row: prompt tokens = ``input_sequence_length``, output tokens =
``output_sequence_length``, wall time = ``request_latency``, start = ``metadata.request_start_ns`` (later
versions) or ``timestamp_ns`` (early ones). A cancelled or failed record is no run: it is counted, warned about
and kept as a count in the session's ``extra``. Records with ``spec_decode_acceptance`` (aiperf PR #1191) also
give ``acceptance_requests`` rows, read by ``spec_requests``' own functions, so such a file keeps its acceptance
while its runs reach Compare.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import as_float, as_int, extra_json
from ingest.parsers.bench.bench_json import load_json
from ingest.parsers.bench.json_records import JsonRecord, read_json_records
from ingest.parsers.metrics.spec_requests import (
    AIPERF_RECORD,
    request_row,
    spec_objects,
)
from ingest.reader import text_lines
from ingest.tables import table_from_rows

AGGREGATE_KIND = "aiperf_json"
RECORDS_KIND = "aiperf_records_jsonl"
TOOL = "aiperf"
ENGINE = "custom"  # AIPerf talks to any OpenAI-compatible server and does not say which engine served it
HINT = "pass the profile_export_aiperf.json / profile_export.jsonl AIPerf wrote, whole"

# A metric object of the aggregate: a known AIPerf tag opening {"tag": ...} (records wrapper) or {"unit": ...}.
METRIC_TAGS = ("request_throughput", "output_token_throughput", "request_latency", "request_count", "time_to_first_token",
               "ttft", "inter_token_latency", "benchmark_duration", "output_sequence_length", "input_sequence_length")
METRIC_OBJECT = re.compile(rb'"(?:' + "|".join(METRIC_TAGS).encode() + rb')"\s*:\s*\{\s*"(?:tag|unit)"\s*:')
AIPERF_MARKERS = ("records", "was_cancelled", "error_summary")

TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "sec": 1e3}
TO_S = {unit: factor / 1e3 for unit, factor in TO_MS.items()}
# bench_serving column <- (AIPerf tags, the statistic, how the unit converts). First tag present wins.
AGGREGATE_COLUMNS: dict[str, tuple[tuple[str, ...], str, dict[str, float] | None]] = {
    "completed": (("request_count",), "avg", None),
    "duration_s": (("benchmark_duration",), "avg", TO_S),
    "total_input_tokens": (("total_isl",), "avg", None),
    "total_output_tokens": (("total_osl",), "avg", None),
    "request_throughput": (("request_throughput",), "avg", None),
    "output_throughput": (("output_token_throughput",), "avg", None),
    "mean_ttft_ms": (("time_to_first_token", "ttft"), "avg", TO_MS),
    "median_ttft_ms": (("time_to_first_token", "ttft"), "p50", TO_MS),
    "p99_ttft_ms": (("time_to_first_token", "ttft"), "p99", TO_MS),
    "mean_tpot_ms": (("inter_token_latency",), "avg", TO_MS),
    "median_tpot_ms": (("inter_token_latency",), "p50", TO_MS),
    "mean_itl_ms": (("inter_chunk_latency",), "avg", TO_MS),
    "median_itl_ms": (("inter_chunk_latency",), "p50", TO_MS),
    "p99_itl_ms": (("inter_chunk_latency",), "p99", TO_MS),
    "mean_e2e_latency_ms": (("request_latency",), "avg", TO_MS),
}
WHOLE_COLUMNS = {"completed", "total_input_tokens", "total_output_tokens"}
# The units the writer gives these tags (display units); another unit means another meaning: not placed.
EXPECTED_UNITS = {"request_throughput": "requests/sec", "output_token_throughput": "tokens/sec"}


# --- the aggregate ---------------------------------------------------------------------------------------------

def sniff_aggregate(head: bytes) -> bool:
    """One JSON object holding at least two AIPerf metric objects ({"unit": …} or, before #343, {"tag": …})."""
    return head.lstrip()[:1] == b"{" and len(set(METRIC_OBJECT.findall(head))) >= 2 and not AIPERF_RECORD.search(head)


def parse_aggregate(path: Path, options: ParseOptions) -> ParsedSource:
    document = load_json(path)
    if not isinstance(document, dict):
        raise MalformedInput(path, f"expected one JSON object, got a JSON {type(document).__name__}", hint=HINT)
    wrapped = isinstance(document.get("records"), dict)
    metrics = metric_objects(document["records"] if wrapped else document)
    if not metrics.keys() & {"output_token_throughput", "request_throughput", "request_count"}:
        raise MalformedInput(path, "no AIPerf throughput or request count found", key="output_token_throughput",
                             hint="expected metric objects such as \"output_token_throughput\": {\"unit\": …, \"avg\": …}")
    parsed = ParsedSource(kind=AGGREGATE_KIND, engine=ENGINE, lines_read=1)
    row: dict[str, Any] = {"record_index": 0, "line_no": 1, "tool": TOOL}
    for column, (tags, stat, units) in AGGREGATE_COLUMNS.items():
        row[column] = metric_value(path, parsed, metrics, column, tags, stat, units)
    if row["duration_s"] is None:
        row["duration_s"] = span_seconds(document)
    config = as_object(document.get("input_config"))
    loadgen = as_object(config.get("loadgen"))
    row["max_concurrency"] = load_value(path, parsed, loadgen, "concurrency", whole=True)
    row["request_rate"] = load_value(path, parsed, loadgen, "request_rate", whole=False)
    warn_errors(path, parsed, document, metrics)
    row["extra"] = extra_json(aggregate_extra(document, metrics, wrapped, config))
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", [row])
    return parsed


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def metric_objects(holder: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The metric objects among ``holder``'s values: objects with a unit and an average."""
    return {tag: value for tag, value in holder.items() if isinstance(value, dict) and "unit" in value and "avg" in value}


def metric_value(
    path: Path, parsed: ParsedSource, metrics: dict[str, dict[str, Any]], column: str,
    tags: tuple[str, ...], stat: str, units: dict[str, float] | None,
) -> float | int | None:
    tag = next((t for t in tags if t in metrics), None)
    if tag is None:
        return None
    metric = metrics[tag]
    number, problem = as_float(metric.get(stat))
    unit = str(metric.get("unit"))
    if problem is None and number is not None and not math.isfinite(number):
        problem = f"{number} is not a finite number"
    if problem is None and units is not None and unit not in units:
        problem = f"unit {unit!r} is not a time unit ({', '.join(units)})"
    if problem is None and tag in EXPECTED_UNITS and unit != EXPECTED_UNITS[tag]:
        problem = f"unit {unit!r}, where AIPerf writes {EXPECTED_UNITS[tag]!r}"
    if problem is not None:
        parsed.warnings.append(f'{path}: key "{tag}.{stat}": {problem}; kept in extra, {column} left empty')
        return None
    if number is None:
        return None
    if column in WHOLE_COLUMNS:
        whole, problem = as_int(number)
        if problem is not None:
            parsed.warnings.append(f'{path}: key "{tag}.{stat}": {problem}; kept in extra, {column} left empty')
        return whole
    return number * units[unit] if units is not None else number


def load_value(path: Path, parsed: ParsedSource, loadgen: dict[str, Any], key: str, *, whole: bool) -> float | int | None:
    value = loadgen.get(key)
    if value is None:  # left at its default (exclude_unset) or null: not recorded
        return None
    number, problem = as_int(value) if whole else as_float(value)
    if problem is not None:
        parsed.warnings.append(f'{path}: key "input_config.loadgen.{key}": {problem}; kept in extra')
        return None
    return number


def span_seconds(document: dict[str, Any]) -> float | None:
    """end_time − start_time (ISO times the exporter writes), for an export without benchmark_duration."""
    try:
        start = datetime.fromisoformat(str(document["start_time"]))
        end = datetime.fromisoformat(str(document["end_time"]))
    except (KeyError, ValueError):
        return None
    seconds = (end - start).total_seconds()
    return seconds if seconds > 0 else None


def warn_errors(path: Path, parsed: ParsedSource, document: dict[str, Any], metrics: dict[str, dict[str, Any]]) -> None:
    errors = as_object(metrics.get("error_request_count")).get("avg")
    summary = document.get("error_summary")
    if not errors or not isinstance(summary, list):
        return
    kinds = ", ".join(error_kind(entry.get("error_details"), entry.get("count")) for entry in summary if isinstance(entry, dict))
    parsed.warnings.append(f"{path}: {errors:g} requests ended in an error ({kinds}): not in completed or the throughput")


def error_kind(details: Any, count: Any) -> str:
    details = details if isinstance(details, dict) else {}
    return f"{details.get('code')} {details.get('type')} ×{count}"


def aggregate_extra(
    document: dict[str, Any], metrics: dict[str, dict[str, Any]], wrapped: bool, config: dict[str, Any],
) -> dict[str, Any]:
    endpoint = as_object(config.get("endpoint"))
    names = endpoint.get("model_names")
    extra: dict[str, Any] = {
        "shape": "records wrapper (before aiperf #343)" if wrapped else "metrics at the top level (aiperf #343 on)",
        "metrics": metrics,
    }
    if isinstance(names, list) and names:
        extra["model"] = names[0] if len(names) == 1 else names
    if "error_request_count" in metrics:
        extra["error_request_count"] = metrics["error_request_count"].get("avg")
    holder = document["records"] if wrapped else document
    extra.update({key: value for key, value in document.items() if key != "records" and key not in metrics})
    extra.update({key: value for key, value in holder.items() if key not in metrics and key not in document})
    return extra


# --- the per-request records ------------------------------------------------------------------------------------

def sniff_records(head: bytes) -> bool:
    """A JSON object with "metadata" and "metrics" whose values are {"value": …, "unit": …}."""
    return head.lstrip()[:1] == b"{" and b'"metadata"' in head and AIPERF_RECORD.search(head) is not None


def parse_records(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=RECORDS_KIND, engine=ENGINE)
    with text_lines(path) as lines:
        # Python's json keeps the last of a duplicated key: the AIPerf doc's record (2025-10-10) names
        # time_to_first_token twice, and its second value (4.898 ms, the pre-#343 "ttst") is the one read.
        records = list(read_json_records(path, lines, parsed))
    runs: list[dict[str, Any]] = []
    accepts: list[dict[str, Any]] = []
    not_runs: Counter[str] = Counter()
    for record in records:
        for found in spec_objects(record.value):
            accepts.append(request_row(path, parsed, record.line_no, len(accepts), record.value, *found))
        reason = not_a_run(record.value)
        if reason is not None:
            not_runs[reason] += 1
            continue
        run = run_row(path, parsed, len(runs), record)
        if run is not None:
            runs.append(run)
    for reason, count in not_runs.items():
        parsed.warnings.append(f"{path}: {count} records {reason}: not runs")
    if not runs and not accepts:
        raise MalformedInput(path, f"no successful AIPerf request among {len(records)} records"
                             + (f" ({', '.join(f'{n} {why}' for why, n in not_runs.items())})" if not_runs else ""),
                             line=records[0].line_no if records else None, hint=HINT)
    parsed.tables["sessions"] = table_from_rows("sessions", [session_row(runs, len(records), not_runs)])
    parsed.tables["bench_runs"] = table_from_rows("bench_runs", runs)
    if accepts:
        parsed.tables["acceptance_requests"] = table_from_rows("acceptance_requests", accepts)
        engines = {row["engine"] for row in accepts}
        parsed.engine = engines.pop() if len(engines) == 1 else ENGINE
    return parsed


def not_a_run(record: dict[str, Any]) -> str | None:
    """Why a record is no run (cancelled, failed, not an AIPerf record), or None."""
    metadata, metrics, error = record.get("metadata"), record.get("metrics"), record.get("error")
    if not isinstance(metadata, dict) or not isinstance(metrics, dict):
        return "without AIPerf's metadata and metrics objects"
    if isinstance(error, dict):
        return f"{'cancelled' if metadata.get('was_cancelled') or error.get('code') == 499 else 'failed'} " \
               f"(error {error.get('code')} {error.get('type')})"
    if error is not None:
        return "failed (an error that is not an object)"
    if metadata.get("was_cancelled"):
        return "cancelled"
    return None


def value_of(metrics: dict[str, Any], name: str) -> tuple[Any, str | None]:
    entry = metrics.get(name)
    return (entry.get("value"), entry.get("unit")) if isinstance(entry, dict) else (None, None)


def run_row(path: Path, parsed: ParsedSource, index: int, record: JsonRecord) -> dict[str, Any] | None:
    metadata, metrics = record.value["metadata"], record.value["metrics"]
    where = f"{path}:{record.line_no}"
    prompt, _ = value_of(metrics, "input_sequence_length")
    output, _ = value_of(metrics, "output_sequence_length")
    latency, unit = value_of(metrics, "request_latency")
    tokens, problem = as_int(output)
    seconds, latency_problem = as_float(latency)
    if problem or latency_problem or tokens is None or seconds is None:
        parsed.warnings.append(f'{where}: key "output_sequence_length"/"request_latency": '
                               f"{problem or latency_problem or 'missing'}; the record is no run")
        return None
    if unit not in TO_S or not math.isfinite(seconds) or seconds <= 0:
        parsed.warnings.append(f'{where}: key "request_latency": {latency!r} {unit!r} is not a positive time; the record is no run')
        return None
    duration = seconds * TO_S[unit]
    prompt_tokens, problem = as_int(prompt)
    if problem:
        parsed.warnings.append(f'{where}: key "input_sequence_length": {problem}; kept in extra')
    started = epoch_ns(metadata.get("request_start_ns", metadata.get("timestamp_ns")))
    ended = epoch_ns(metadata.get("request_end_ns"))
    phase = metadata.get("benchmark_phase", metadata.get("credit_phase"))
    return {
        "session_key": 0, "run_index": index + 1, "is_warmup": phase == "warmup",
        "prompt_tokens": prompt_tokens, "output_tokens": tokens, "duration_s": duration,
        "tok_per_s": tokens / duration, "started_at": started,
        "ended_at": ended if ended is not None else (started + timedelta(seconds=duration) if started else None),
        "extra": extra_json({"line_no": record.line_no, "metadata": metadata,
                             "metrics": {name: entry for name, entry in metrics.items()}}),
    }


def epoch_ns(value: Any) -> datetime | None:
    whole, problem = as_int(value)
    if problem or whole is None or whole <= 0:
        return None
    try:
        return datetime.fromtimestamp(whole / 1e9, tz=UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        return None


def session_row(runs: list[dict[str, Any]], records: int, not_runs: Counter[str]) -> dict[str, Any]:
    starts = [run["started_at"] for run in runs if run["started_at"] is not None]
    extra = {"tool": TOOL, "records": records, "runs": len(runs), "not_runs": dict(not_runs)}
    return {"session_key": 0, "engine": None, "started_at": min(starts) if starts else None,
            "warmup": sum(1 for run in runs if run["is_warmup"]) or None, "extra": json.dumps(extra, sort_keys=True)}


AGGREGATE = Format(
    kind=AGGREGATE_KIND,
    description="AIPerf aggregate export (profile_export_aiperf.json: metrics {unit, avg, p50, …} + input_config)",
    sniff=sniff_aggregate,
    signs=(
        Sign('"(output_token_throughput|request_throughput|request_latency|time_to_first_token|ttft)"\\s*:\\s*\\{\\s*"(tag|unit)"',
             "AIPerf metric objects ('output_token_throughput': {'unit': …, 'avg': …})"),
        Sign('"(avg|p50|p99)"\\s*:', "statistics per metric ('avg', 'p50', 'p99')"),
        Sign('"(input_config|records|benchmark_duration)"\\s*:', "an 'input_config' or a 'records' object"),
    ),
    parse=parse_aggregate,
    example='"output_token_throughput": {"tag": "output_token_throughput", "unit": "tokens/sec", … "avg": 2320.7222350404572, …',
    precedence=55,
)

RECORDS = Format(
    kind=RECORDS_KIND,
    description="AIPerf per-request export (profile_export.jsonl: metadata + metrics {name: {value, unit}} + error)",
    sniff=sniff_records,
    signs=(
        Sign('"metadata"\\s*:\\s*\\{', "a 'metadata' object per record"),
        Sign('"metrics"\\s*:\\s*\\{\\s*"\\w+"\\s*:\\s*\\{\\s*"value"', "metrics as {'value': …, 'unit': …}"),
        Sign('"(request_latency|output_sequence_length|x_request_id)"\\s*:', "request_latency / output_sequence_length"),
    ),
    parse=parse_records,
    example='{"metadata": {"x_request_id": "1ed40a0d-…", …}, "metrics": {"input_sequence_length": {"value": 550, "unit": "tokens"}, …}, "error": null}',
    precedence=55,
)

FORMATS = (AGGREGATE, RECORDS)
