"""The normalized tables parsers produce, one explicit Arrow schema each.

Parsers emit these columns (never ``source_id``: the store adds it, and turns
``session_key`` into a store-wide ``session_id``). Columns a parser cannot fill
are left null; unknown input keys go into ``extra`` as a JSON object text so
nothing a file said is lost. ``docs/schema.md`` documents every column.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

TS = pa.timestamp("us")

SESSIONS = pa.schema(
    [
        ("session_key", pa.int32()),
        ("phase", pa.string()),
        ("variant", pa.string()),
        ("engine", pa.string()),
        ("endpoint", pa.string()),
        ("model", pa.string()),
        ("max_tokens", pa.int64()),
        ("warmup", pa.int32()),
        ("started_at", TS),
        ("extra", pa.string()),
    ]
)

BENCH_RUNS = pa.schema(
    [
        ("session_key", pa.int32()),
        ("run_index", pa.int32()),
        ("is_warmup", pa.bool_()),
        ("prompt_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("duration_s", pa.float64()),
        ("tok_per_s", pa.float64()),
        ("max_tokens", pa.int64()),
        ("hit_max_tokens", pa.bool_()),
        ("started_at", TS),
        ("ended_at", TS),
        ("finish_reason", pa.string()),
        ("extra", pa.string()),
    ]
)

SERVER_CONFIGS = pa.schema(
    [
        ("segment", pa.int32()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("variant", pa.string()),
        ("model_path", pa.string()),
        ("tp_size", pa.int32()),
        ("dp_size", pa.int32()),
        ("speculative_algorithm", pa.string()),
        ("speculative_draft_model_path", pa.string()),
        ("speculative_num_steps", pa.int32()),
        ("speculative_eagle_topk", pa.int32()),
        ("speculative_num_draft_tokens", pa.int32()),
        ("args", pa.string()),
        ("accept_rate_formulas", pa.string()),
    ]
)

DECODE_STATS = pa.schema(
    [
        ("segment", pa.int32()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("dp_rank", pa.int32()),
        ("tp_rank", pa.int32()),
        ("running_req", pa.int64()),
        ("num_tokens", pa.int64()),
        ("token_usage", pa.float64()),
        ("accept_len_raw", pa.float64()),
        ("tokens_per_step", pa.float64()),
        ("accepted_drafts_per_step", pa.float64()),
        ("accept_rate_raw", pa.float64()),
        ("accept_rate_drafts", pa.float64()),
        ("cuda_graph", pa.bool_()),
        ("gen_throughput", pa.float64()),
        ("queue_req", pa.int64()),
        ("extra", pa.string()),
    ]
)

PREFILL_STATS = pa.schema(
    [
        ("segment", pa.int32()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("dp_rank", pa.int32()),
        ("tp_rank", pa.int32()),
        ("new_seq", pa.int64()),
        ("new_token", pa.int64()),
        ("cached_token", pa.int64()),
        ("token_usage", pa.float64()),
        ("running_req", pa.int64()),
        ("queue_req", pa.int64()),
        ("input_throughput", pa.float64()),
        ("cuda_graph", pa.bool_()),
        ("extra", pa.string()),
    ]
)

BENCH_SERVING = pa.schema(
    [
        ("record_index", pa.int32()),
        ("line_no", pa.int64()),
        ("tool", pa.string()),
        ("backend", pa.string()),
        ("dataset_name", pa.string()),
        ("tag", pa.string()),
        ("request_rate", pa.float64()),
        ("max_concurrency", pa.int64()),
        ("duration_s", pa.float64()),
        ("completed", pa.int64()),
        ("total_input_tokens", pa.int64()),
        ("total_output_tokens", pa.int64()),
        ("request_throughput", pa.float64()),
        ("input_throughput", pa.float64()),
        ("output_throughput", pa.float64()),
        ("mean_ttft_ms", pa.float64()),
        ("median_ttft_ms", pa.float64()),
        ("p99_ttft_ms", pa.float64()),
        ("mean_tpot_ms", pa.float64()),
        ("median_tpot_ms", pa.float64()),
        ("mean_itl_ms", pa.float64()),
        ("median_itl_ms", pa.float64()),
        ("p99_itl_ms", pa.float64()),
        ("mean_e2e_latency_ms", pa.float64()),
        ("accept_length", pa.float64()),
        ("extra", pa.string()),
    ]
)

# One row per request of a bench_serving record saved with --output-details
# (SGLang/vLLM per-request arrays); see docs/bench-formats.md.
BENCH_REQUESTS = pa.schema(
    [
        ("record_index", pa.int32()),
        ("request_index", pa.int32()),
        ("input_len", pa.int64()),
        ("output_len", pa.int64()),
        ("ttft_ms", pa.float64()),
        ("tpot_ms", pa.float64()),
        ("itls_ms", pa.list_(pa.float64())),
        ("start_time_s", pa.float64()),
        ("error", pa.string()),
        ("generated_text", pa.string()),
        ("extra", pa.string()),
    ]
)

# Trace breakdown (ingest/parsers/traces/kineto.py, ingest/parsers/traces/cycle_timing.py; docs/breakdown.md).
# ``phase``/``variant`` are the experiment labels (--phase/--variant); the speculative
# phase of a cycle is ``cycle_phase`` (the public view ``cycle_breakdown`` calls it ``phase``).
CYCLE_PHASE_TIMES = pa.schema(
    [
        ("session_key", pa.int32()),
        ("phase", pa.string()),
        ("variant", pa.string()),
        ("rank", pa.int32()),
        ("cycle_idx", pa.int32()),
        ("cycle_kind", pa.string()),
        ("complete", pa.bool_()),
        ("cycle_start_us", pa.float64()),
        ("cycle_ms", pa.float64()),
        ("cycle_phase", pa.string()),
        ("kernel_class", pa.string()),
        ("duration_ms", pa.float64()),
        ("union_ms", pa.float64()),
        ("kernels", pa.int64()),
        ("attribution", pa.string()),
        ("extra", pa.string()),
    ]
)

TRACE_KERNELS = pa.schema(
    [
        ("phase", pa.string()),
        ("variant", pa.string()),
        ("rank", pa.int32()),
        ("name", pa.string()),
        ("kernel_class", pa.string()),
        ("cycle_phase", pa.string()),
        ("count", pa.int64()),
        ("total_ms", pa.float64()),
        ("mean_ms", pa.float64()),
        ("p50_ms", pa.float64()),
        ("p99_ms", pa.float64()),
        ("max_ms", pa.float64()),
    ]
)

TRACE_RANKS = pa.schema(
    [
        ("phase", pa.string()),
        ("variant", pa.string()),
        ("rank", pa.int32()),
        ("world_size", pa.int32()),
        ("tp_rank", pa.int32()),
        ("dp_rank", pa.int32()),
        ("pp_rank", pa.int32()),
        ("ep_rank", pa.int32()),
        ("stage", pa.string()),
        ("profile_id", pa.string()),
        ("merged", pa.bool_()),
        ("file_name", pa.string()),
        ("gpu_name", pa.string()),
        ("time_base", pa.string()),
        ("time_unit_note", pa.string()),
        ("trace_start_at", TS),
        ("span_ms", pa.float64()),
        ("events_read", pa.int64()),
        ("kernels", pa.int64()),
        ("memory_ops", pa.int64()),
        ("launches_matched", pa.int64()),
        ("attributed_share", pa.float64()),
        ("phase_source", pa.string()),
        ("busy_ms", pa.float64()),
        ("idle_ms", pa.float64()),
        ("communication_ms", pa.float64()),
        ("attention_ms", pa.float64()),
        ("gemm_ms", pa.float64()),
        ("moe_ms", pa.float64()),
        ("memcpy_ms", pa.float64()),
        ("other_kernel_ms", pa.float64()),
        ("cycles", pa.int32()),
        ("complete_cycles", pa.int32()),
        ("median_cycle_ms", pa.float64()),
        ("max_cycle_ms", pa.float64()),
        ("median_verify_ms", pa.float64()),
        ("median_verify_comm_ms", pa.float64()),
        ("verify_comm_share", pa.float64()),
        ("extra", pa.string()),
    ]
)

# The profiler start messages of a server log: each names the profile id its trace files are named
# after, which links a trace set to the server lifetime that wrote it (migration 012).
LOG_PROFILES = pa.schema(
    [
        ("segment", pa.int32()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("tp_rank", pa.int32()),
        ("profile_id", pa.string()),
        ("stage", pa.string()),
        ("output_dir", pa.string()),
    ]
)

# Acceptance in depth (migration 017; docs/acceptance.md is docs/metrics.md's "Acceptance" section).
# Per-position acceptance as the engine reports it: ``rate`` = drafts with position ``position``
# (1-based) accepted ÷ drafts, i.e. P(at least ``position`` drafts accepted) — vLLM's definition.
ACCEPTANCE_POSITIONS = pa.schema(
    [
        ("segment", pa.int32()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("engine_index", pa.int32()),
        ("position", pa.int32()),
        ("rate", pa.float64()),
        ("drafts", pa.int64()),
        ("origin", pa.string()),
        ("extra", pa.string()),
    ]
)

# One row per request whose response (or export record) carries spec-decode statistics.
ACCEPTANCE_REQUESTS = pa.schema(
    [
        ("record_index", pa.int32()),
        ("request_index", pa.int32()),
        ("line_no", pa.int64()),
        ("request_id", pa.string()),
        ("engine", pa.string()),
        ("origin", pa.string()),
        ("dataset", pa.string()),
        ("accept_length", pa.float64()),
        ("accepted_drafts", pa.int64()),
        ("draft_tokens", pa.int64()),
        ("spec_steps", pa.int64()),
        ("num_spec_tokens", pa.int32()),
        ("accept_rate", pa.float64()),
        ("histogram", pa.list_(pa.float64())),  # whole counts, stored as DOUBLE[] like other lists
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("extra", pa.string()),
    ]
)

# Prometheus /metrics text: every sample of every snapshot, and the counters' deltas between
# consecutive snapshots of one file (a gauge is never differenced).
METRIC_SAMPLES = pa.schema(
    [
        ("snapshot", pa.int32()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("metric", pa.string()),
        ("family", pa.string()),
        ("kind", pa.string()),
        ("labels", pa.string()),
        ("engine_index", pa.int32()),
        ("position", pa.int32()),
        ("value", pa.float64()),
    ]
)

# One row per snapshot of a Prometheus text file: where it sits, when it was scraped (the samples' own
# timestamps) and the file's modification time, so that two files can be paired in order (migration 018).
METRIC_SNAPSHOTS = pa.schema(
    [
        ("snapshot", pa.int32()),
        ("first_line", pa.int64()),
        ("last_line", pa.int64()),
        ("samples", pa.int64()),
        ("scraped_at", TS),
        ("file_mtime", TS),
    ]
)

COUNTER_DELTAS = pa.schema(
    [
        ("window", pa.int32()),
        ("line_no", pa.int64()),
        ("metric", pa.string()),
        ("labels", pa.string()),
        ("engine_index", pa.int32()),
        ("position", pa.int32()),
        ("value_before", pa.float64()),
        ("value_after", pa.float64()),
        ("delta", pa.float64()),
        ("reset", pa.bool_()),
    ]
)

# One point of a batch-size / concurrency / drafter-config sweep (ingest/parsers/bench/sweeps.py; migration 016).
SWEEP_POINTS = pa.schema(
    [
        ("session_key", pa.int32()),
        ("point_index", pa.int32()),
        ("line_no", pa.int64()),
        ("sweep", pa.string()),
        ("model", pa.string()),
        ("dataset", pa.string()),
        ("variant", pa.string()),
        ("is_baseline", pa.bool_()),
        ("batch_size", pa.int64()),
        ("concurrency", pa.int64()),
        ("steps", pa.int32()),
        ("topk", pa.int32()),
        ("num_draft_tokens", pa.int32()),
        ("accept_length", pa.float64()),
        ("step_time_ms", pa.float64()),
        ("throughput", pa.float64()),
        ("throughput_kind", pa.string()),
        ("simulated", pa.bool_()),
        ("simulated_by", pa.string()),
        ("extra", pa.string()),
    ]
)

# An EAGLE-3 drafter checkpoint (eagle3_drafter): its config, and the verdicts on its vocabulary
# mapping (ingest/parsers/drafters/drafter_checks.py); one row per drafter (migration 015).
DRAFTERS = pa.schema(
    [
        ("path", pa.string()),
        ("name", pa.string()),
        ("architecture", pa.string()),
        ("hidden_size", pa.int64()),
        ("vocab_size", pa.int64()),
        ("draft_vocab_size", pa.int64()),
        ("mapping_form", pa.string()),
        ("status", pa.string()),
        ("headline", pa.string()),
        ("verdicts", pa.string()),
        ("config", pa.string()),
        ("weights_files", pa.int32()),
        ("tensors", pa.int32()),
        ("has_d2t", pa.bool_()),
        ("has_t2d", pa.bool_()),
        ("bytes_read", pa.int64()),
    ]
)

# A drafter's mapping as the engines load it: one row per draft id (draft id + d2t[draft id]).
DRAFTER_VOCAB = pa.schema(
    [
        ("draft_id", pa.int32()),
        ("target_id", pa.int64()),
    ]
)

# What the target generated (token_counts), for a drafter's coverage: counts per target token id.
TOKEN_COUNTS = pa.schema(
    [
        ("target_id", pa.int64()),
        ("count", pa.int64()),
    ]
)

# Drafter training logs (ingest/parsers/training/, migration 021): one row per logged step, split and (for
# per-position figures) draft position. ``simulated_accept_length`` is what training promises (bonus-inclusive),
# never a served figure; ``position`` is 1-based, null for a figure over every position.
TRAINING_STEPS = pa.schema(
    [
        ("phase", pa.string()),
        ("variant", pa.string()),
        ("line_no", pa.int64()),
        ("ts", TS),
        ("epoch", pa.int32()),
        ("step", pa.int64()),
        ("split", pa.string()),
        ("position", pa.int32()),
        ("loss", pa.float64()),
        ("accuracy", pa.float64()),
        ("acceptance_rate", pa.float64()),
        ("simulated_accept_length", pa.float64()),
        ("learning_rate", pa.float64()),
        ("origin", pa.string()),
        ("extra", pa.string()),
    ]
)

SCHEMAS: dict[str, pa.Schema] = {
    "sessions": SESSIONS,
    "bench_runs": BENCH_RUNS,
    "server_configs": SERVER_CONFIGS,
    "log_profiles": LOG_PROFILES,
    "decode_stats": DECODE_STATS,
    "prefill_stats": PREFILL_STATS,
    "bench_serving": BENCH_SERVING,
    "bench_requests": BENCH_REQUESTS,
    "cycle_phase_times": CYCLE_PHASE_TIMES,
    "trace_kernels": TRACE_KERNELS,
    "trace_ranks": TRACE_RANKS,
    "acceptance_positions": ACCEPTANCE_POSITIONS,
    "acceptance_requests": ACCEPTANCE_REQUESTS,
    "metric_samples": METRIC_SAMPLES,
    "counter_deltas": COUNTER_DELTAS,
    "metric_snapshots": METRIC_SNAPSHOTS,
    "sweep_points": SWEEP_POINTS,
    "drafters": DRAFTERS,
    "drafter_vocab": DRAFTER_VOCAB,
    "token_counts": TOKEN_COUNTS,
    "training_steps": TRAINING_STEPS,
}


def table_from_rows(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Build table ``name`` from row dicts; missing columns become null, unknown ones are an error."""
    schema = SCHEMAS[name]
    unknown = {key for row in rows for key in row} - set(schema.names)
    if unknown:
        raise ValueError(f"{name}: columns not in the schema: {sorted(unknown)}")
    columns = {column: [row.get(column) for row in rows] for column in schema.names}
    return pa.table(columns, schema=schema)
