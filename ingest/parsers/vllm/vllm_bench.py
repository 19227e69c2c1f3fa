"""vLLM benchmark outputs: ``vllm bench serve --save-result`` JSON and ``spec_decode.py``'s summary.

**Result JSON** (``FORMAT``). ``vllm bench serve --save-result`` (formerly
``benchmarks/benchmark_serving.py``) writes one JSON object: setup (``date``,
``backend``/``endpoint_type``, ``label``, ``model_id``, ``tokenizer_id``,
``num_prompts``, ``--metadata`` pairs), traffic (``request_rate`` — the *text*
``"inf"`` when unbounded — ``burstiness``, ``max_concurrency``), then the results
and, when speculating, ``spec_decode_acceptance_length`` (bonus-inclusive, like
SGLang's), ``spec_decode_acceptance_rate`` (**percent**), counts and
``spec_decode_per_position_acceptance_rates``. ``--append-result`` appends one
object per line; older versions pretty-print it; both are read by
``json_records``. One ``bench_serving`` row per object (``tool`` "vllm bench
serve"): ``label`` -> ``tag``, ``mean_e2el_ms`` -> ``mean_e2e_latency_ms``,
``spec_decode_acceptance_length`` -> ``accept_length``. The acceptance *rate*
stays raw, in percent, in ``extra`` (it is not the fraction SGLang logs). Per-request
arrays (``--save-detailed``) go to ``bench_requests`` exactly as for SGLang.

**Offline summary** (``SUMMARY_FORMAT``). ``examples/offline_inference/spec_decode.py``
prints, per run, ``total_num_output_tokens``, ``num_drafts``, ``num_draft_tokens``,
``num_accepted_tokens``, ``mean acceptance length`` (= 1 + accepted / drafts,
bonus-inclusive) and ``acceptance at token i`` (fractions). One ``bench_serving``
row per run (``tool`` "vllm spec_decode.py"): ``total_output_tokens``,
``accept_length``; the counts and ``acceptance_at_token`` (a list, index = draft
position) in ``extra``. A run starts where a key repeats. Ignored: separator
lines and other output, counted in ``skipped``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import as_float, extra_json, map_record
from ingest.parsers.bench.bench_serving import records_to_tables, require_records
from ingest.parsers.bench.json_records import read_json_records, sniff_keys
from ingest.reader import text_lines
from ingest.tables import BENCH_SERVING, table_from_rows

JSON_KIND = "vllm_bench_json"
SUMMARY_KIND = "vllm_spec_decode_text"
SERVE_TOOL = "vllm bench serve"
OFFLINE_TOOL = "vllm spec_decode.py"

VLLM_ALIASES: dict[str, tuple[str, ...]] = {
    "backend": ("backend", "endpoint_type"),
    "dataset_name": ("dataset_name",),
    "tag": ("label",),
    "request_rate": ("request_rate",),
    "max_concurrency": ("max_concurrency",),
    "duration_s": ("duration",),
    "completed": ("completed",),
    "total_input_tokens": ("total_input_tokens",),
    "total_output_tokens": ("total_output_tokens",),
    "request_throughput": ("request_throughput",),
    "input_throughput": ("input_throughput",),
    "output_throughput": ("output_throughput",),
    "mean_ttft_ms": ("mean_ttft_ms",),
    "median_ttft_ms": ("median_ttft_ms",),
    "p99_ttft_ms": ("p99_ttft_ms",),
    "mean_tpot_ms": ("mean_tpot_ms",),
    "median_tpot_ms": ("median_tpot_ms",),
    "mean_itl_ms": ("mean_itl_ms",),
    "median_itl_ms": ("median_itl_ms",),
    "p99_itl_ms": ("p99_itl_ms",),
    "mean_e2e_latency_ms": ("mean_e2el_ms",),
    "accept_length": ("spec_decode_acceptance_length",),
}

# --- result JSON --------------------------------------------------------------------------------

VLLM_KEYS = frozenset({"model_id", "tokenizer_id", "endpoint_type", "spec_decode_acceptance_length"})
RESULT_KEYS = frozenset({"completed", "duration", "request_throughput", "output_throughput", "mean_ttft_ms"})


def sniff_json(head: bytes) -> bool:
    """A JSON object near the top with vLLM's setup keys and serving results."""
    keys = sniff_keys(head)
    return keys is not None and bool(keys & VLLM_KEYS) and len(keys & RESULT_KEYS) >= 2


def parse_json(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=JSON_KIND, engine="vllm")
    with text_lines(path) as lines:
        records = list(read_json_records(path, lines, parsed))
    require_records(path, parsed, records, what="vllm bench serve result", written_by="--save-result")
    records_to_tables(path, parsed, records, tool_of=lambda record: SERVE_TOOL, aliases=VLLM_ALIASES)
    return parsed


# --- offline spec_decode.py summary -------------------------------------------------------------

SUMMARY_LINE = re.compile(r"^\s*(?P<key>[a-z][a-z_ ]*?[a-z])(?:\s+(?P<index>\d+))?\s*:\s*(?P<value>\S+)\s*$")
SEPARATOR = re.compile(r"^\s*-{10,}\s*$")
# printed key -> bench_serving column, or None for "keep in extra under this name".
SUMMARY_KEYS: dict[str, str | None] = {
    "total_num_output_tokens": "total_output_tokens",
    "mean acceptance length": "accept_length",
    "num_drafts": None,
    "num_draft_tokens": None,
    "num_accepted_tokens": None,
}
SUMMARY_LISTS = {"acceptance at token": "acceptance_at_token"}  # "acceptance at token 3: 0.30"
SUMMARY_ALIASES = {column: (key,) for key, column in SUMMARY_KEYS.items() if column}
NOISE = "not a summary line"
POSITION_OUT_OF_RANGE = "acceptance position out of range"
MAX_POSITIONS = 1024  # speculative decoding drafts a handful of tokens per step; far below this


@dataclass
class SummaryRun:
    line_no: int
    values: dict[str, str] = field(default_factory=dict)
    lists: dict[str, dict[int, str]] = field(default_factory=dict)
    key_lines: dict[str, int] = field(default_factory=dict)  # where each value was printed

    def has(self, key: str, index: int | None) -> bool:
        if index is None:
            return key in self.values
        return index in self.lists.get(key, {})


def sniff_summary(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    return re.search(r"(?m)^\s*mean acceptance length:", text) is not None and re.search(
        r"(?m)^\s*num_drafts:", text
    ) is not None


def parse_summary(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=SUMMARY_KIND, engine="vllm")
    with text_lines(path) as lines:
        runs = read_summary_runs(path, lines, parsed)
    if not runs:
        raise MalformedInput(
            path,
            "no spec_decode.py summary found",
            hint="expected lines such as 'num_drafts: 4687' and 'mean acceptance length: 3.64'",
        )
    rows = [summary_row(path, parsed, index, run) for index, run in enumerate(runs)]
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", rows)
    return parsed


def read_summary_runs(path: Path, lines: Iterable[str], parsed: ParsedSource) -> list[SummaryRun]:
    runs: list[SummaryRun] = []
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        if not raw.strip() or SEPARATOR.match(raw):
            continue
        match = SUMMARY_LINE.match(raw)
        key = match["key"] if match else None
        if match is None or (key not in SUMMARY_KEYS and key not in SUMMARY_LISTS):
            parsed.skipped[NOISE] += 1
            continue
        printed_index = match["index"]
        index = None if printed_index is None else int(printed_index) if len(printed_index) < 10 else MAX_POSITIONS
        if index is not None and index >= MAX_POSITIONS:  # not a draft position: a list that long is a typo
            parsed.skipped[POSITION_OUT_OF_RANGE] += 1
            parsed.warnings.append(f"{path}:{line_no}: {key} {printed_index[:20]}: beyond {MAX_POSITIONS} draft positions; line skipped")
            continue
        if not runs or runs[-1].has(key, index):  # a key seen again starts the next run
            runs.append(SummaryRun(line_no))
        if index is None:
            runs[-1].values[key] = match["value"]
            runs[-1].key_lines[key] = line_no
        else:
            runs[-1].lists.setdefault(key, {})[index] = match["value"]
    parsed.lines_read = line_no
    return runs


def summary_row(path: Path, parsed: ParsedSource, record_index: int, run: SummaryRun) -> dict[str, Any]:
    mapped = map_record(run.values, SUMMARY_ALIASES, BENCH_SERVING)
    for key, problem in mapped.problems:
        parsed.warnings.append(f'{path}:{run.key_lines[key]}: key "{key}": {problem}')
    extra: dict[str, Any] = {key: number_or_text(value) for key, value in mapped.extra.items()}
    for key, items in run.lists.items():
        extra[SUMMARY_LISTS[key]] = [number_or_text(items.get(i)) for i in range(max(items) + 1)]
    return {
        **mapped.row,
        "record_index": record_index,
        "line_no": run.line_no,
        "tool": OFFLINE_TOOL,
        "extra": extra_json(extra),
    }


def number_or_text(value: str | None) -> Any:
    if value is None:
        return None
    if value.lstrip("+-").isdigit():  # a count: exact, and as printed when beyond int64
        return int(value) if len(value.lstrip("+-")) <= 18 else value
    number, problem = as_float(value)
    if problem or number is None:
        return value
    return number


FORMAT = Format(
    kind=JSON_KIND,
    description="vllm bench serve --save-result JSON",
    sniff=sniff_json,
    signs=(
        Sign('"(model_id|tokenizer_id|endpoint_type)"\\s*:', "vLLM's setup keys ('model_id', 'endpoint_type')"),
        Sign('"(output_throughput|request_throughput)"\\s*:', "a throughput key ('output_throughput')"),
        Sign('"(completed|duration|mean_ttft_ms)"\\s*:', "result keys ('completed', 'duration', 'mean_ttft_ms')"),
    ),
    parse=parse_json,
    example='{"date": "20251020-101500", "endpoint_type": "openai", "label": null, … "output_throughput": 59.08, …}',
    precedence=50,
)

SUMMARY_FORMAT = Format(
    kind=SUMMARY_KIND,
    description="vLLM spec_decode.py summary (num_drafts / mean acceptance length / acceptance at token i)",
    sniff=sniff_summary,
    signs=(
        Sign('^\\s*mean acceptance length:', "a 'mean acceptance length:' line"),
        Sign('^\\s*num_drafts:', "a 'num_drafts:' line"),
        Sign('^\\s*acceptance at token \\d+:', "'acceptance at token i:' lines"),
    ),
    parse=parse_summary,
    example="mean acceptance length: 2.56",
    precedence=80,
)

FORMATS = (FORMAT, SUMMARY_FORMAT)
