"""``sglang.bench_one_batch_server`` (and ``sglang.bench_one_batch``) JSONL results.

``python -m sglang.bench_one_batch_server --result-filename X.jsonl`` appends one
object per (batch size, input len, output len) run: ``run_name, batch_size,
input_len, output_len, latency, input_throughput, output_throughput,
overall_throughput, last_ttft, last_gen_throughput, acc_length`` (later also
``cache_hit_rate`` and more). The offline ``sglang.bench_one_batch`` writes the
same kind of line with ``prefill_latency``/``median_decode_latency``/
``total_latency`` instead; ``TOOL_MARKERS`` tells them apart.

Each record is one ``bench_serving`` row (``tool`` names the script):
``run_name`` -> ``tag``, ``batch_size`` -> ``max_concurrency`` (the whole batch is
in flight at once), ``latency``/``total_latency`` -> ``duration_s``,
``acc_length`` -> ``accept_length`` (``-1`` means "not speculative" and becomes
null). Everything else (``input_len``, ``output_len``, ``overall_throughput``,
``last_ttft`` in seconds, ``last_gen_throughput``, prefill/decode latencies...)
stays in ``extra`` under its own name. Nothing is dropped; the tolerant reading
of pasted files is ``json_records``'.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_serving import records_to_tables, require_records
from ingest.parsers.bench.json_records import read_json_records, sniff_keys
from ingest.reader import text_lines

KIND = "bench_one_batch_jsonl"

ONE_BATCH_ALIASES: dict[str, tuple[str, ...]] = {
    "tag": ("run_name",),
    "max_concurrency": ("batch_size",),
    "duration_s": ("latency", "total_latency"),
    "input_throughput": ("input_throughput",),
    "output_throughput": ("output_throughput",),
    "accept_length": ("acc_length",),
}

# A key only one of the two scripts writes -> that script. The server variant is the default.
TOOL_MARKERS: tuple[tuple[str, str], ...] = (
    ("prefill_latency", "sglang.bench_one_batch"),
    ("median_decode_latency", "sglang.bench_one_batch"),
)
DEFAULT_TOOL = "sglang.bench_one_batch_server"

RESULT_KEYS = frozenset({"last_gen_throughput", "acc_length", "overall_throughput", "last_ttft", "prefill_latency",
                         "median_decode_throughput"})


def sniff(head: bytes) -> bool:
    """A JSON object near the top with ``run_name`` and one-batch result keys."""
    keys = sniff_keys(head)
    return keys is not None and "run_name" in keys and bool(keys & RESULT_KEYS)


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="sglang")
    with text_lines(path) as lines:
        records = list(read_json_records(path, lines, parsed))
    require_records(path, parsed, records, what="bench_one_batch result", written_by="--result-filename")
    records_to_tables(path, parsed, records, tool_of=tool_of, aliases=ONE_BATCH_ALIASES)
    return parsed


def tool_of(record: Mapping[str, Any]) -> str:
    return next((tool for key, tool in TOOL_MARKERS if key in record), DEFAULT_TOOL)


FORMAT = Format(
    kind=KIND,
    description="sglang.bench_one_batch_server / bench_one_batch JSONL (one JSON object per batch-size run)",
    sniff=sniff,
    signs=(
        Sign('"run_name"\\s*:', "a 'run_name' key"),
        Sign('"(last_gen_throughput|overall_throughput|median_decode_throughput|acc_length|prefill_latency)"\\s*:', "one-batch result keys ('last_gen_throughput', 'acc_length')"),
    ),
    parse=parse,
    example='{"run_name": "eagle3", "batch_size": 1, "input_len": 32, "output_len": 2048, "latency": 39.5, … "acc_length": 1.58}',
    precedence=40,
)

FORMATS = (FORMAT,)
