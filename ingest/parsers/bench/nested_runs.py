"""Multi-run JSONL with nested fields: one benchmark run per line, its speculative settings in a nested block.

Hobby and lab benchmark archives keep every run as one JSON object per line: engine, model, parallelism, the
engine's knobs, the concurrency, the measured throughput and latencies, a nested speculative block
(``"spec_decode": {"method": "dflash", "k": 7, "acceptance": 0.22, ...}``, ``null`` when the run did not
speculate) and nested samples. The archive this was built from, ``4x3090-llm-benchmarks``
(``data/benchmarks.jsonl``, written by its ``scripts/schema_v2.py``), normalizes every source into
``{"method", "draft_ref", "draft_path", "k"}`` plus ``acceptance`` and ``accepted_tokens_per_round`` when
measured; other archives spell the block ``speculative`` or ``speculative_config`` and its depth
``num_speculative_tokens``.

Each record becomes one ``bench_serving`` row (``tool`` "run-per-line JSONL"; the run's figures through
``RUN_ALIASES``) and one ``server_configs`` row (``segment`` = the record's index) holding the method, drafter,
depth and the variant ``ingest.derive.variants`` derives from them, so every page sees each run under its
variant, as it sees a ``bench_serving`` record with ``server_info``. A record whose block is null, empty,
names no method, or is absent is a baseline run. The whole record stays in ``extra``, nested keys as written.

* **Method**: the block's ``method`` (or ``algorithm``/``kind``) is stored as written in
  ``speculative_algorithm``; the views map it onto the project's vocabulary (``spec_method`` in views.sql).
  A block given as bare text (``"mtp"``) is that method.
* **Depth**: ``k``/``num_speculative_tokens`` drafts a chain of k tokens (SGLang's num_steps = k, topk 1,
  num_draft_tokens = k + 1: ``variants.chain_settings``, as ``vllm_log`` maps it); a method text that spells SGLang's settings
  (``eagle steps=3 topk=1 draft=4``) or a draft length (``draft-mtp n=2``, ``n_max=3``) gives them too.
* **Accept length**, bonus-inclusive, in ``bench_serving.accept_length``: a key named ``accept_length``,
  ``acceptance_length`` or ``mean_acceptance_length`` (the convention of SGLang's bench_serving and vLLM,
  DOMAIN.md §3), looked for in the block, then the record, then its ``knobs`` (where the archive keeps SGLang's
  figure). Else ``accepted_tokens_per_round`` (accepted drafts per round, bonus excluded: in the archive it is
  ``acceptance`` × ``k`` on every line that has all three) + 1. A length below 1 is not bonus-inclusive and is
  not stored.
* **Acceptance rate** (``acceptance``, ``acceptance_rate``) has no bench_serving column: it stays in ``extra``
  inside its block, checked to be a fraction in [0, 1]; it is never turned into a length here.

Bad values are warnings naming the line and key (the record loads without them); malformed JSON lines are
skipped as ``json_records`` describes; a file without one record is a ``MalformedInput`` naming the first line.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.derive.variants import chain_settings, derive_variant
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import (
    as_float,
    as_int,
    extra_json,
    map_record,
    strict_json_value,
)
from ingest.parsers.bench.bench_serving import require_records
from ingest.parsers.bench.json_records import JsonRecord, read_json_records, sniff_keys
from ingest.reader import text_lines
from ingest.tables import BENCH_SERVING, SERVER_CONFIGS, table_from_rows

KIND = "nested_runs_jsonl"
TOOL = "run-per-line JSONL"
MIXED_ENGINES = "custom"

# bench_serving column <- the run's keys. p50 is the median the column means; total_tok_s (input + output)
# and e2e_p99_ms have no column and stay in extra.
RUN_ALIASES: dict[str, tuple[str, ...]] = {
    "backend": ("engine", "backend"),
    "dataset_name": ("dataset_name", "dataset"),
    "tag": ("run_id", "label", "tag", "name"),
    "max_concurrency": ("concurrency", "max_concurrency", "batch_size"),
    "duration_s": ("duration_s", "duration", "wall_s"),
    "completed": ("completed",),
    "request_throughput": ("req_s", "request_throughput"),
    "output_throughput": ("output_tok_s", "output_throughput", "output_tps", "tok_s", "tokens_per_second"),
    "mean_ttft_ms": ("mean_ttft_ms",),
    "median_ttft_ms": ("ttft_p50_ms", "median_ttft_ms"),
    "p99_ttft_ms": ("ttft_p99_ms", "p99_ttft_ms"),
    "mean_tpot_ms": ("mean_tpot_ms",),
    "median_tpot_ms": ("tpot_p50_ms", "median_tpot_ms"),
    "mean_itl_ms": ("mean_itl_ms",),
    "median_itl_ms": ("itl_p50_ms", "median_itl_ms"),
    "p99_itl_ms": ("itl_p99_ms", "p99_itl_ms"),
    "mean_e2e_latency_ms": ("mean_e2e_latency_ms", "e2e_mean_ms"),
}
# server_configs column <- the run's keys (the speculative ones come from the block, below).
CONFIG_ALIASES: dict[str, tuple[str, ...]] = {
    "model_path": ("model_path", "model_variant", "model", "model_name"),
    "tp_size": ("tp", "tp_size", "tensor_parallel_size"),
    "dp_size": ("dp", "dp_size", "data_parallel_size"),
}
SPEC_BLOCK_KEYS = ("spec_decode", "speculative", "speculative_config", "speculative_decoding")
METHOD_KEYS = ("method", "algorithm", "kind")
DRAFTER_KEYS = ("draft_path", "draft_model", "draft", "model", "draft_ref")
DEPTH_KEYS = ("k", "num_speculative_tokens", "num_spec_tokens")
RATE_KEYS = ("acceptance", "acceptance_rate", "accept_rate")
BONUS_INCLUSIVE_KEYS = ("accept_length", "acceptance_length", "mean_acceptance_length")
DRAFTS_ONLY_KEYS = ("accepted_tokens_per_round",)
KNOBS_KEY = "knobs"
NO_METHOD = {"", "none", "null", "off", "false"}
# A method text's own settings: SGLang's names, or a draft length (llama.cpp's n / n_max, k).
TEXT_SETTING = re.compile(r"\b(?P<name>steps|topk|draft|n_max|n|k)\s*=\s*(?P<value>\d{1,9})\b")
AGREEMENT = 1e-6  # acceptance × k against accepted_tokens_per_round: the archive's values agree to float precision
ENGINE_KEYS = RUN_ALIASES["backend"]
THROUGHPUT_KEYS = RUN_ALIASES["output_throughput"]


def sniff(head: bytes) -> bool:
    """A JSON record near the top whose own keys name a speculative block, an engine and a throughput."""
    keys = sniff_keys(head)
    if keys is None:
        return False
    return bool(keys & set(SPEC_BLOCK_KEYS)) and bool(keys & set(ENGINE_KEYS)) and bool(keys & set(THROUGHPUT_KEYS))


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine=MIXED_ENGINES)
    with text_lines(path) as lines:
        records = list(read_json_records(path, lines, parsed))
    require_records(path, parsed, records, what="run record", written_by="one JSON object per run and line")
    runs, configs = [], []
    for record_index, record in enumerate(records):
        problems = Problems(path, record.line_no, parsed)
        spec = speculation_of(record.value, problems)
        runs.append(run_row(record_index, record, spec, problems))
        if spec is not None:
            configs.append(config_row(record_index, record, spec, problems))
    parsed.engine = engine_of(runs)
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", runs)
    if configs:
        parsed.tables["server_configs"] = table_from_rows("server_configs", configs)
    return parsed


@dataclass(frozen=True)
class Problems:
    """Where a record's bad values are reported: ``file:line: key "k": what``."""

    path: Path
    line_no: int
    parsed: ParsedSource

    def report(self, key: str, problem: str) -> None:
        self.parsed.warnings.append(f'{self.path}:{self.line_no}: key "{key}": {problem}')


@dataclass(frozen=True)
class Speculation:
    """A record's speculative settings as the block gives them; ``method`` None is a baseline run."""

    block_key: str | None
    method: str | None
    drafter: str | None
    steps: int | None
    topk: int | None
    draft_tokens: int | None
    accept_length: float | None


def speculation_of(record: Mapping[str, Any], problems: Problems) -> Speculation | None:
    """The record's speculation; None when its block is unreadable (then no config row: the variant is unknown)."""
    block_key = next((key for key in SPEC_BLOCK_KEYS if key in record), None)
    block = record.get(block_key) if block_key else None
    if isinstance(block, str):
        block = {"method": block}
    if block is not None and not isinstance(block, dict):
        problems.report(str(block_key), f"expected an object, null or a method name, got {json.dumps(strict_json_value(block))[:40]}; "
                        "the run loads without a variant of its own")
        return None
    block = block or {}
    method = method_of(block)
    steps, topk, draft_tokens = depth_of(block, method, problems, str(block_key)) if method else (None, None, None)
    return Speculation(
        block_key=block_key,
        method=method,
        drafter=text_of(block, DRAFTER_KEYS) if method else None,
        steps=steps,
        topk=topk,
        draft_tokens=draft_tokens,
        accept_length=accept_length_of(record, block, problems, str(block_key)) if method else None,
    )


def method_of(block: Mapping[str, Any]) -> str | None:
    method = text_of(block, METHOD_KEYS)
    return None if method is None or method.strip().lower() in NO_METHOD else method.strip()


def text_of(block: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    value = next((block[key] for key in keys if isinstance(block.get(key), str) and block[key].strip()), None)
    return value


def depth_of(block: Mapping[str, Any], method: str, problems: Problems, block_key: str) -> tuple[int | None, int | None, int | None]:
    """(num_steps, topk, num_draft_tokens) in SGLang's terms, from the block's k or the method text's settings."""
    settings = {match["name"]: int(match["value"]) for match in TEXT_SETTING.finditer(method.lower())}
    k = chain_length(block, problems, block_key)
    if k is None:
        k = settings.get("n", settings.get("n_max", settings.get("k")))
    if "steps" in settings or "draft" in settings:
        return settings.get("steps"), settings.get("topk"), settings.get("draft")
    return chain_settings(k if k is not None and k >= 1 else None)


def chain_length(block: Mapping[str, Any], problems: Problems, block_key: str) -> int | None:
    key = next((key for key in DEPTH_KEYS if block.get(key) is not None), None)
    if key is None:
        return None
    k, problem = as_int(block[key], bits=31)  # k + 1 must fit an int32 column
    if problem or k is None or k < 1:
        problems.report(f"{block_key}.{key}", f"{problem or f'expected a draft length of 1 or more, got {k}'}; depth not stored")
        return None
    return k


def accept_length_of(record: Mapping[str, Any], block: Mapping[str, Any], problems: Problems, block_key: str) -> float | None:
    """Bonus-inclusive accept length: a length key (block, record, knobs), else accepted drafts per round + 1."""
    rate = acceptance_rate(block, problems, block_key)  # checked whether or not a length is given
    knobs = record.get(KNOBS_KEY)
    places = ((f"{block_key}.", block), ("", record), (f"{KNOBS_KEY}.", knobs if isinstance(knobs, dict) else {}))
    for prefix, place in places:
        for key in BONUS_INCLUSIVE_KEYS:
            if place.get(key) is not None:
                return bonus_inclusive(place[key], problems, prefix + key)
    return drafts_per_round_plus_bonus(block, rate, problems, block_key)


def drafts_per_round_plus_bonus(block: Mapping[str, Any], rate: float | None, problems: Problems, block_key: str) -> float | None:
    """``accepted_tokens_per_round`` + 1, when it is acceptance × k as in the archive (else it may hold the bonus)."""
    drafts_key = next((key for key in DRAFTS_ONLY_KEYS if block.get(key) is not None), None)
    if drafts_key is None:
        return None
    where = f"{block_key}.{drafts_key}"
    accepted, problem = as_float(block[drafts_key])
    if problem or accepted is None or not math.isfinite(accepted) or accepted < 0:
        problems.report(where, f"{problem or f'expected accepted drafts per round ≥ 0, got {accepted}'}; accept length not stored")
        return None
    k = next((as_int(block[key], bits=31)[0] for key in DEPTH_KEYS if block.get(key) is not None), None)
    if rate is not None and k and abs(rate * k - accepted) > AGREEMENT * max(1.0, accepted):
        problems.report(where, f"{accepted} is not acceptance × k ({rate} × {k}): it may not exclude the bonus "
                        "token; accept length not stored")
        return None
    return accepted + 1.0


def bonus_inclusive(value: Any, problems: Problems, key: str) -> float | None:
    length, problem = as_float(value)
    if problem or length is None or not math.isfinite(length):
        problems.report(key, f"{problem or 'not a finite number'}; accept length not stored")
        return None
    if length < 1.0:
        problems.report(key, f"an accept length that includes the bonus token is at least 1, got {length}; not stored "
                        "(if it counts accepted drafts only, its accept length is that + 1)")
        return None
    return length


def acceptance_rate(block: Mapping[str, Any], problems: Problems, block_key: str) -> float | None:
    """The block's acceptance rate when it is a fraction in [0, 1] (it stays in extra either way)."""
    key = next((key for key in RATE_KEYS if block.get(key) is not None), None)
    if key is None:
        return None
    rate, problem = as_float(block[key])
    if problem or rate is None or not 0.0 <= rate <= 1.0:
        problems.report(f"{block_key}.{key}", f"{problem or f'an acceptance rate is a fraction in [0, 1], got {rate}'} "
                        "(a percent? divide by 100); kept in extra as written")
        return None
    return rate


def run_row(record_index: int, record: JsonRecord, spec: Speculation | None, problems: Problems) -> dict[str, Any]:
    mapped = map_record(record.value, RUN_ALIASES, BENCH_SERVING)
    for key, problem in mapped.problems:
        problems.report(key, problem)
    return {
        **mapped.row,
        "record_index": record_index,
        "line_no": record.line_no,
        "tool": TOOL,
        "accept_length": spec.accept_length if spec else None,
        "extra": extra_json(mapped.extra),
    }


def config_row(record_index: int, record: JsonRecord, spec: Speculation, problems: Problems) -> dict[str, Any]:
    mapped = map_record(record.value, CONFIG_ALIASES, SERVER_CONFIGS)
    for key, problem in mapped.problems:
        problems.report(key, problem)
    settings = {"speculative_algorithm": spec.method, "speculative_draft_model_path": spec.drafter}
    return {
        **mapped.row,
        **settings,
        "segment": record_index,
        "line_no": record.line_no,
        "variant": derive_variant(settings),
        "speculative_num_steps": spec.steps,
        "speculative_eagle_topk": spec.topk,
        "speculative_num_draft_tokens": spec.draft_tokens,
        "args": json.dumps(strict_json_value(config_args(record.value, spec)), sort_keys=True, default=str),
    }


CONFIG_CONTEXT = ("engine", "engine_version", "model", "model_variant", "tp", "pp", "dp", KNOBS_KEY, "launch_argv")


def config_args(record: Mapping[str, Any], spec: Speculation) -> dict[str, Any]:
    """What the run was configured with: its engine, model, parallelism, knobs and speculative block."""
    keys = (*CONFIG_CONTEXT, *((spec.block_key,) if spec.block_key else ()))
    return {key: record[key] for key in keys if key in record}


def engine_of(rows: list[dict[str, Any]]) -> str:
    """The engine every run names, else ``custom`` (an archive of several engines)."""
    engines = {str(row["backend"]).strip().lower() for row in rows if row.get("backend")}
    return engines.pop() if len(engines) == 1 else MIXED_ENGINES


FORMAT = Format(
    kind=KIND,
    description="multi-run JSONL: one benchmark run per line with a nested speculative block (spec_decode: {…} or null)",
    sniff=sniff,
    signs=(
        Sign('"(spec_decode|speculative|speculative_config|speculative_decoding)"\\s*:\\s*(\\{|null|")',
             "a nested 'spec_decode' block (or null) per run"),
        Sign('"(engine|backend)"\\s*:', "an 'engine' key"),
        Sign('"(output_tok_s|output_throughput|output_tps|tok_s|tokens_per_second)"\\s*:', "a throughput key ('output_tok_s')"),
    ),
    parse=parse,
    example='{"schema_version": 2, … "engine": "vllm", … "spec_decode": {"method": "dflash", … "k": 7, "acceptance": 0.2221…}, … "concurrency": 1, … "output_tok_s": 79.005…}',
    precedence=30,
)

FORMATS = (FORMAT,)
