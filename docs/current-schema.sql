-- The specdash store's schema after every migration (generated: python -m ingest.storage.schema).
-- Edit the migrations, not this file; docs/schema.md says what each column means.

-- Tables

CREATE TABLE acceptance_positions(
    source_id VARCHAR NOT NULL,
    segment INTEGER,
    line_no BIGINT,
    ts TIMESTAMP,
    engine_index INTEGER,
    "position" INTEGER NOT NULL,
    rate DOUBLE NOT NULL,
    drafts BIGINT,
    origin VARCHAR NOT NULL,
    extra VARCHAR
);

CREATE TABLE acceptance_requests(
    source_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    request_index INTEGER NOT NULL,
    line_no BIGINT,
    request_id VARCHAR,
    engine VARCHAR,
    origin VARCHAR NOT NULL,
    dataset VARCHAR,
    accept_length DOUBLE,
    accepted_drafts BIGINT,
    draft_tokens BIGINT,
    spec_steps BIGINT,
    num_spec_tokens INTEGER,
    accept_rate DOUBLE,
    histogram DOUBLE[],
    input_tokens BIGINT,
    output_tokens BIGINT,
    extra VARCHAR
);

CREATE TABLE bench_requests(
    source_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    request_index INTEGER NOT NULL,
    input_len BIGINT,
    output_len BIGINT,
    ttft_ms DOUBLE,
    tpot_ms DOUBLE,
    itls_ms DOUBLE[],
    start_time_s DOUBLE,
    "error" VARCHAR,
    generated_text VARCHAR,
    extra VARCHAR
);

CREATE TABLE bench_runs(
    source_id VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    session_key INTEGER NOT NULL,
    run_index INTEGER NOT NULL,
    is_warmup BOOLEAN NOT NULL,
    prompt_tokens BIGINT,
    output_tokens BIGINT,
    duration_s DOUBLE,
    tok_per_s DOUBLE,
    max_tokens BIGINT,
    hit_max_tokens BOOLEAN,
    started_at TIMESTAMP,
    ended_at TIMESTAMP,
    finish_reason VARCHAR,
    extra VARCHAR,
    phase VARCHAR,
    variant VARCHAR
);

CREATE TABLE bench_serving(
    source_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    line_no BIGINT,
    tool VARCHAR,
    backend VARCHAR,
    dataset_name VARCHAR,
    tag VARCHAR,
    request_rate DOUBLE,
    max_concurrency BIGINT,
    duration_s DOUBLE,
    completed BIGINT,
    total_input_tokens BIGINT,
    total_output_tokens BIGINT,
    request_throughput DOUBLE,
    input_throughput DOUBLE,
    output_throughput DOUBLE,
    mean_ttft_ms DOUBLE,
    median_ttft_ms DOUBLE,
    p99_ttft_ms DOUBLE,
    mean_tpot_ms DOUBLE,
    median_tpot_ms DOUBLE,
    mean_itl_ms DOUBLE,
    median_itl_ms DOUBLE,
    p99_itl_ms DOUBLE,
    mean_e2e_latency_ms DOUBLE,
    accept_length DOUBLE,
    extra VARCHAR
);

CREATE TABLE counter_deltas(
    source_id VARCHAR NOT NULL,
    "window" INTEGER NOT NULL,
    line_no BIGINT,
    metric VARCHAR NOT NULL,
    labels VARCHAR,
    engine_index INTEGER,
    "position" INTEGER,
    value_before DOUBLE,
    value_after DOUBLE,
    delta DOUBLE,
    "reset" BOOLEAN NOT NULL
);

CREATE TABLE cycle_phase_times(
    source_id VARCHAR NOT NULL,
    session_id VARCHAR,
    session_key INTEGER,
    phase VARCHAR,
    variant VARCHAR,
    rank INTEGER NOT NULL,
    cycle_idx INTEGER NOT NULL,
    cycle_kind VARCHAR NOT NULL,
    complete BOOLEAN NOT NULL,
    cycle_start_us DOUBLE,
    cycle_ms DOUBLE,
    cycle_phase VARCHAR NOT NULL,
    kernel_class VARCHAR NOT NULL,
    duration_ms DOUBLE NOT NULL,
    union_ms DOUBLE,
    kernels BIGINT,
    attribution VARCHAR,
    extra VARCHAR
);

CREATE TABLE decisions(
    decision_id VARCHAR PRIMARY KEY,
    created_at TIMESTAMP NOT NULL,
    title VARCHAR NOT NULL,
    phase VARCHAR,
    verdict VARCHAR NOT NULL,
    note_md VARCHAR,
    session_ids VARCHAR NOT NULL,
    evidence VARCHAR NOT NULL,
    evidence_hash VARCHAR NOT NULL
);

CREATE TABLE decode_stats(
    source_id VARCHAR NOT NULL,
    segment INTEGER,
    line_no BIGINT NOT NULL,
    ts TIMESTAMP,
    dp_rank INTEGER,
    tp_rank INTEGER,
    running_req BIGINT,
    num_tokens BIGINT,
    token_usage DOUBLE,
    accept_len_raw DOUBLE,
    tokens_per_step DOUBLE,
    accepted_drafts_per_step DOUBLE,
    accept_rate_raw DOUBLE,
    accept_rate_drafts DOUBLE,
    cuda_graph BOOLEAN,
    gen_throughput DOUBLE,
    queue_req BIGINT,
    extra VARCHAR
);

CREATE TABLE drafter_vocab(
    source_id VARCHAR NOT NULL,
    draft_id INTEGER NOT NULL,
    target_id BIGINT NOT NULL
);

CREATE TABLE drafters(
    source_id VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    "name" VARCHAR NOT NULL,
    architecture VARCHAR,
    hidden_size BIGINT,
    vocab_size BIGINT,
    draft_vocab_size BIGINT,
    mapping_form VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    headline VARCHAR NOT NULL,
    verdicts VARCHAR NOT NULL,
    config VARCHAR,
    weights_files INTEGER NOT NULL,
    tensors INTEGER NOT NULL,
    has_d2t BOOLEAN NOT NULL,
    has_t2d BOOLEAN NOT NULL,
    bytes_read BIGINT NOT NULL
);

CREATE TABLE label_changes(
    change_id VARCHAR NOT NULL,
    changed_at TIMESTAMP NOT NULL,
    "action" VARCHAR NOT NULL,
    source_id VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    old_phase VARCHAR,
    old_variant VARCHAR,
    new_phase VARCHAR,
    new_variant VARCHAR
);

CREATE TABLE log_profiles(
    source_id VARCHAR NOT NULL,
    segment INTEGER,
    line_no BIGINT,
    ts TIMESTAMP,
    tp_rank INTEGER,
    profile_id VARCHAR,
    stage VARCHAR,
    output_dir VARCHAR
);

CREATE TABLE log_segment_spans(
    log_source_id VARCHAR NOT NULL,
    segment INTEGER,
    phase VARCHAR,
    variant VARCHAR,
    first_ts TIMESTAMP,
    last_ts TIMESTAMP,
    decode_lines BIGINT,
    ingest_group VARCHAR
);

CREATE TABLE metric_samples(
    source_id VARCHAR NOT NULL,
    "snapshot" INTEGER NOT NULL,
    line_no BIGINT,
    ts TIMESTAMP,
    metric VARCHAR NOT NULL,
    "family" VARCHAR,
    kind VARCHAR NOT NULL,
    labels VARCHAR,
    engine_index INTEGER,
    "position" INTEGER,
    "value" DOUBLE
);

CREATE TABLE metric_snapshots(
    source_id VARCHAR NOT NULL,
    "snapshot" INTEGER NOT NULL,
    first_line BIGINT,
    last_line BIGINT,
    samples BIGINT NOT NULL,
    scraped_at TIMESTAMP,
    file_mtime TIMESTAMP
);

CREATE TABLE prefill_stats(
    source_id VARCHAR NOT NULL,
    segment INTEGER,
    line_no BIGINT NOT NULL,
    ts TIMESTAMP,
    dp_rank INTEGER,
    tp_rank INTEGER,
    new_seq BIGINT,
    new_token BIGINT,
    cached_token BIGINT,
    token_usage DOUBLE,
    running_req BIGINT,
    queue_req BIGINT,
    input_throughput DOUBLE,
    cuda_graph BOOLEAN,
    extra VARCHAR
);

CREATE TABLE run_windows(
    session_id VARCHAR NOT NULL,
    run_index INTEGER,
    is_warmup BOOLEAN,
    log_source_id VARCHAR NOT NULL,
    segment INTEGER,
    join_method VARCHAR,
    decode_lines BIGINT,
    first_line_no BIGINT,
    last_line_no BIGINT,
    window_start TIMESTAMP,
    window_end TIMESTAMP,
    tokens_per_step DOUBLE,
    accepted_drafts_per_step DOUBLE,
    gen_throughput_mean DOUBLE,
    gen_throughput_min DOUBLE,
    gen_throughput_max DOUBLE,
    range_lines BIGINT,
    range_accept_lines BIGINT,
    range_tokens_weighted DOUBLE,
    range_tokens_weight HUGEINT,
    range_drafts_weighted DOUBLE,
    range_drafts_weight HUGEINT,
    range_cuda_graph_off BOOLEAN,
    range_cuda_graph_on BOOLEAN
);

CREATE TABLE server_configs(
    source_id VARCHAR NOT NULL,
    segment INTEGER NOT NULL,
    line_no BIGINT,
    ts TIMESTAMP,
    phase VARCHAR,
    variant VARCHAR,
    model_path VARCHAR,
    tp_size INTEGER,
    dp_size INTEGER,
    speculative_algorithm VARCHAR,
    speculative_draft_model_path VARCHAR,
    speculative_num_steps INTEGER,
    speculative_eagle_topk INTEGER,
    speculative_num_draft_tokens INTEGER,
    args VARCHAR,
    accept_rate_formulas VARCHAR
);

CREATE TABLE session_log_links(
    session_id VARCHAR NOT NULL,
    log_source_id VARCHAR NOT NULL,
    segment INTEGER,
    link_method VARCHAR NOT NULL
);

CREATE TABLE sessions(
    session_id VARCHAR PRIMARY KEY,
    source_id VARCHAR NOT NULL,
    session_key INTEGER NOT NULL,
    phase VARCHAR,
    variant VARCHAR,
    engine VARCHAR,
    endpoint VARCHAR,
    model VARCHAR,
    max_tokens BIGINT,
    warmup INTEGER,
    started_at TIMESTAMP,
    extra VARCHAR
);

CREATE TABLE sources(
    source_id VARCHAR PRIMARY KEY,
    path VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL UNIQUE,
    kind VARCHAR NOT NULL,
    engine VARCHAR,
    size_bytes BIGINT,
    phase VARCHAR,
    variant VARCHAR,
    ingest_group VARCHAR,
    ingested_at TIMESTAMP NOT NULL,
    rows_loaded BIGINT NOT NULL,
    lines_skipped BIGINT NOT NULL,
    skipped_detail VARCHAR,
    warnings VARCHAR,
    link_to VARCHAR
);

CREATE TABLE store_meta(
    "key" VARCHAR PRIMARY KEY,
    "value" VARCHAR
);

CREATE TABLE sweep_points(
    source_id VARCHAR NOT NULL,
    session_id VARCHAR,
    session_key INTEGER NOT NULL,
    phase VARCHAR,
    point_index INTEGER NOT NULL,
    line_no BIGINT,
    sweep VARCHAR,
    model VARCHAR,
    dataset VARCHAR,
    variant VARCHAR,
    is_baseline BOOLEAN NOT NULL,
    batch_size BIGINT,
    concurrency BIGINT,
    steps INTEGER,
    topk INTEGER,
    num_draft_tokens INTEGER,
    accept_length DOUBLE,
    step_time_ms DOUBLE,
    throughput DOUBLE,
    throughput_kind VARCHAR NOT NULL,
    simulated BOOLEAN NOT NULL,
    simulated_by VARCHAR,
    extra VARCHAR
);

CREATE TABLE token_counts(
    source_id VARCHAR NOT NULL,
    target_id BIGINT NOT NULL,
    count BIGINT NOT NULL
);

CREATE TABLE trace_kernels(
    source_id VARCHAR NOT NULL,
    phase VARCHAR,
    variant VARCHAR,
    rank INTEGER NOT NULL,
    "name" VARCHAR NOT NULL,
    kernel_class VARCHAR NOT NULL,
    cycle_phase VARCHAR NOT NULL,
    count BIGINT NOT NULL,
    total_ms DOUBLE NOT NULL,
    mean_ms DOUBLE,
    p50_ms DOUBLE,
    p99_ms DOUBLE,
    max_ms DOUBLE
);

CREATE TABLE trace_links(
    profile_key VARCHAR NOT NULL,
    link_method VARCHAR NOT NULL,
    log_source_id VARCHAR NOT NULL,
    segment INTEGER,
    own_session_id VARCHAR,
    benchmark_session_id VARCHAR,
    phase VARCHAR,
    variant VARCHAR
);

CREATE TABLE trace_ranks(
    source_id VARCHAR NOT NULL,
    phase VARCHAR,
    variant VARCHAR,
    rank INTEGER NOT NULL,
    world_size INTEGER,
    tp_rank INTEGER,
    dp_rank INTEGER,
    pp_rank INTEGER,
    ep_rank INTEGER,
    stage VARCHAR,
    profile_id VARCHAR,
    merged BOOLEAN,
    file_name VARCHAR,
    gpu_name VARCHAR,
    time_base VARCHAR,
    time_unit_note VARCHAR,
    trace_start_at TIMESTAMP,
    span_ms DOUBLE,
    events_read BIGINT,
    kernels BIGINT,
    memory_ops BIGINT,
    launches_matched BIGINT,
    attributed_share DOUBLE,
    phase_source VARCHAR,
    busy_ms DOUBLE,
    idle_ms DOUBLE,
    communication_ms DOUBLE,
    attention_ms DOUBLE,
    gemm_ms DOUBLE,
    moe_ms DOUBLE,
    memcpy_ms DOUBLE,
    other_kernel_ms DOUBLE,
    cycles INTEGER,
    complete_cycles INTEGER,
    median_cycle_ms DOUBLE,
    max_cycle_ms DOUBLE,
    median_verify_ms DOUBLE,
    median_verify_comm_ms DOUBLE,
    verify_comm_share DOUBLE,
    extra VARCHAR
);

CREATE TABLE training_steps(
    source_id VARCHAR NOT NULL,
    phase VARCHAR,
    variant VARCHAR,
    line_no BIGINT NOT NULL,
    ts TIMESTAMP,
    epoch INTEGER,
    step BIGINT,
    split VARCHAR NOT NULL,
    "position" INTEGER,
    loss DOUBLE,
    accuracy DOUBLE,
    acceptance_rate DOUBLE,
    simulated_accept_length DOUBLE,
    learning_rate DOUBLE,
    origin VARCHAR NOT NULL,
    extra VARCHAR
);

-- Macros

CREATE MACRO acceptance_variant(given, prefix, path) AS COALESCE(given, folder_variant(path));

CREATE MACRO clock_skew_us() AS CAST((1000000.0 * COALESCE((SELECT TRY_CAST("value" AS "DOUBLE") FROM store_meta WHERE ("key" = 'clock_skew_s')), 2.0)) AS BIGINT);

CREATE MACRO file_label(path) AS regexp_replace(regexp_replace(regexp_replace(path, '^.*[/\\]', ''), '(\.(gz|zst|json|jsonl|trace|pt|log|txt|csv|tsv|out|md))+$', ''), '([_-]rank[_-]?[0-9]+|-TP-[0-9]+.*)$', '');

CREATE MACRO folder_phase(path) AS CASE  WHEN (((len(path_parts(path)) >= 3) AND regexp_full_match(path_parts(path)[-3], '(?i)(phase|stage|round)[-_ ]?[0-9]+([-_.][A-Za-z0-9._-]*)?'))) THEN (path_parts(path)[-3]) ELSE NULL END;

CREATE MACRO folder_variant(path) AS CASE  WHEN ((folder_phase(path) IS NOT NULL)) THEN (path_parts(path)[-2]) WHEN (((len(path_parts(path)) >= 3) AND (path_parts(path)[-3] ~~ '%.uploads'))) THEN (('unlabelled: upload ' || path_parts(path)[-2])) WHEN (((len(path_parts(path)) >= 2) AND (path_parts(path)[-2] != ''))) THEN (('unlabelled: ' || path_parts(path)[-2])) ELSE 'unlabelled' END;

CREATE MACRO folder_variant_from(path) AS CASE  WHEN ((folder_phase(path) IS NOT NULL)) THEN ('folder layout') ELSE 'folder, no label' END;

CREATE MACRO link_targets(wanted) AS TABLE SELECT l.* FROM server_lifetimes AS l WHERE EXISTS(SELECT 1 FROM lifetime_names AS n WHERE ((n."name" = wanted) AND (n.log_source_id = l.log_source_id) AND (n.segment IS NOT DISTINCT FROM l.segment)));

CREATE MACRO model_label(path) AS CASE  WHEN (regexp_matches(path, 'models--[^/\\]+?--[^/\\]+[/\\]snapshots')) THEN (regexp_extract(path, 'models--[^/\\]+?--([^/\\]+)[/\\]snapshots', 1)) ELSE "nullif"(regexp_extract(rtrim(path, '/\\'), '([^/\\]+)$', 1), '') END;

CREATE MACRO path_parts(path) AS regexp_split_to_array(COALESCE(path, ''), '[/\\]');

CREATE MACRO run_log_stats_for(session_ids) AS TABLE WITH skew AS (SELECT to_microseconds(CAST((1000000.0 * COALESCE((SELECT TRY_CAST("value" AS "DOUBLE") FROM store_meta WHERE ("key" = 'clock_skew_s')), 2.0)) AS BIGINT)) AS s), windows AS (SELECT r.session_id, r.run_index, r.is_warmup, l.log_source_id, l.segment, CASE  WHEN (((r.started_at IS NOT NULL) AND (r.ended_at IS NOT NULL))) THEN ('time_window') ELSE 'grouping' END AS join_method, r.started_at, r.ended_at, (r.started_at - skew.s) AS window_start, (r.ended_at + skew.s) AS window_end FROM bench_runs AS r INNER JOIN session_logs AS l USING (session_id) , skew WHERE ((session_ids IS NULL) OR list_contains(session_ids, r.session_id))), candidates AS (SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, d.line_no, d.ts, d.tokens_per_step AS tps, d.accepted_drafts_per_step AS adps, COALESCE(d.running_req, 1) AS weight, d.gen_throughput, CASE  WHEN ((w.join_method = 'grouping')) THEN (to_seconds(CAST(0 AS DOUBLE))) WHEN ((d.ts < w.started_at)) THEN ((w.started_at - d.ts)) WHEN ((d.ts > w.ended_at)) THEN ((d.ts - w.ended_at)) ELSE to_seconds(CAST(0 AS DOUBLE)) END AS distance FROM windows AS w INNER JOIN decode_stats AS d ON (((d.source_id = w.log_source_id) AND (d.segment = w.segment) AND ((w.join_method = 'grouping') OR (d.ts BETWEEN w.window_start AND w.window_end))))), assigned AS (SELECT * FROM candidates QUALIFY ((join_method = 'grouping') OR (row_number() OVER (PARTITION BY session_id, log_source_id, segment, line_no ORDER BY distance, is_warmup DESC, run_index) = 1))), lines AS (SELECT *, row_number() OVER (PARTITION BY session_id, run_index, is_warmup, log_source_id, segment ORDER BY ts, line_no) AS nth FROM assigned)SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, count(l.line_no) AS decode_lines, min(l.line_no) AS first_line_no, max(l.line_no) AS last_line_no, w.window_start, w.window_end, (sum((l.tps * l.weight)) FILTER (WHERE (l.tps IS NOT NULL)) / sum(l.weight) FILTER (WHERE (l.tps IS NOT NULL))) AS tokens_per_step, (sum((l.adps * l.weight)) FILTER (WHERE (l.adps IS NOT NULL)) / sum(l.weight) FILTER (WHERE (l.adps IS NOT NULL))) AS accepted_drafts_per_step, avg(l.gen_throughput) FILTER (WHERE (l.nth > 1)) AS gen_throughput_mean, min(l.gen_throughput) FILTER (WHERE (l.nth > 1)) AS gen_throughput_min, max(l.gen_throughput) FILTER (WHERE (l.nth > 1)) AS gen_throughput_max FROM windows AS w LEFT JOIN lines AS l USING (session_id, run_index, is_warmup, log_source_id, segment) GROUP BY w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, w.window_start, w.window_end;

CREATE MACRO run_windows_basis() AS ((((((((((('clock_skew_us=' || clock_skew_us()) || ' sources=') || (SELECT count_star() FROM sources)) || ' sessions=') || (SELECT count_star() FROM sessions)) || ' bench_runs=') || (SELECT count_star() FROM bench_runs)) || ' server_configs=') || (SELECT count_star() FROM server_configs)) || ' decode_stats=') || (SELECT count_star() FROM decode_stats));

CREATE MACRO run_windows_for(session_ids) AS TABLE WITH skew AS (SELECT to_microseconds(clock_skew_us()) AS s), windows AS (SELECT r.session_id, r.run_index, r.is_warmup, l.log_source_id, l.segment, CASE  WHEN (((r.started_at IS NOT NULL) AND (r.ended_at IS NOT NULL))) THEN ('time_window') ELSE 'grouping' END AS join_method, r.started_at, r.ended_at, (r.started_at - skew.s) AS window_start, (r.ended_at + skew.s) AS window_end FROM bench_runs AS r INNER JOIN session_log_links AS l USING (session_id) , skew WHERE ((session_ids IS NULL) OR (r.session_id = ANY(SELECT unnest(session_ids))))), reachable AS (SELECT * FROM windows AS w WHERE ((w.join_method = 'grouping') OR EXISTS(SELECT 1 FROM log_segment_spans AS g WHERE ((g.log_source_id = w.log_source_id) AND (g.segment = w.segment) AND (g.first_ts <= w.window_end) AND (w.window_start <= g.last_ts))))), candidates AS (SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, d.line_no, d.ts, d.tokens_per_step AS tps, d.accepted_drafts_per_step AS adps, COALESCE(d.running_req, 1) AS weight, d.gen_throughput, CASE  WHEN ((w.join_method = 'grouping')) THEN (to_seconds(CAST(0 AS DOUBLE))) WHEN ((d.ts < w.started_at)) THEN ((w.started_at - d.ts)) WHEN ((d.ts > w.ended_at)) THEN ((d.ts - w.ended_at)) ELSE to_seconds(CAST(0 AS DOUBLE)) END AS distance FROM reachable AS w INNER JOIN decode_stats AS d ON (((d.source_id = w.log_source_id) AND (d.segment = w.segment) AND ((w.join_method = 'grouping') OR (d.ts BETWEEN w.window_start AND w.window_end))))), assigned AS (SELECT * FROM candidates QUALIFY ((join_method = 'grouping') OR (row_number() OVER (PARTITION BY session_id, log_source_id, segment, line_no ORDER BY distance, is_warmup DESC, run_index) = 1))), lines AS (SELECT *, row_number() OVER (PARTITION BY session_id, run_index, is_warmup, log_source_id, segment ORDER BY ts, line_no) AS nth FROM assigned), stats AS (SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, count(l.line_no) AS decode_lines, min(l.line_no) AS first_line_no, max(l.line_no) AS last_line_no, w.window_start, w.window_end, (sum((l.tps * l.weight)) FILTER (WHERE (l.tps IS NOT NULL)) / sum(l.weight) FILTER (WHERE (l.tps IS NOT NULL))) AS tokens_per_step, (sum((l.adps * l.weight)) FILTER (WHERE (l.adps IS NOT NULL)) / sum(l.weight) FILTER (WHERE (l.adps IS NOT NULL))) AS accepted_drafts_per_step, avg(l.gen_throughput) FILTER (WHERE (l.nth > 1)) AS gen_throughput_mean, min(l.gen_throughput) FILTER (WHERE (l.nth > 1)) AS gen_throughput_min, max(l.gen_throughput) FILTER (WHERE (l.nth > 1)) AS gen_throughput_max FROM windows AS w LEFT JOIN lines AS l USING (session_id, run_index, is_warmup, log_source_id, segment) GROUP BY w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, w.window_start, w.window_end), ranges AS (SELECT s.session_id, s.run_index, s.is_warmup, s.log_source_id, s.segment, count_star() AS range_lines, count_star() FILTER (WHERE (d.tokens_per_step IS NOT NULL)) AS range_accept_lines, sum((d.tokens_per_step * COALESCE(d.running_req, 1))) FILTER (WHERE (d.tokens_per_step IS NOT NULL)) AS range_tokens_weighted, sum(COALESCE(d.running_req, 1)) FILTER (WHERE (d.tokens_per_step IS NOT NULL)) AS range_tokens_weight, sum((d.accepted_drafts_per_step * COALESCE(d.running_req, 1))) FILTER (WHERE (d.accepted_drafts_per_step IS NOT NULL)) AS range_drafts_weighted, sum(COALESCE(d.running_req, 1)) FILTER (WHERE (d.accepted_drafts_per_step IS NOT NULL)) AS range_drafts_weight, bool_or((NOT d.cuda_graph)) AS range_cuda_graph_off, bool_or(d.cuda_graph) AS range_cuda_graph_on FROM stats AS s INNER JOIN decode_stats AS d ON (((d.source_id = s.log_source_id) AND (d.segment IS NOT DISTINCT FROM s.segment) AND (d.line_no BETWEEN s.first_line_no AND s.last_line_no))) GROUP BY s.session_id, s.run_index, s.is_warmup, s.log_source_id, s.segment)SELECT s.*, r.range_lines, r.range_accept_lines, r.range_tokens_weighted, r.range_tokens_weight, r.range_drafts_weighted, r.range_drafts_weight, r.range_cuda_graph_off, r.range_cuda_graph_on FROM stats AS s LEFT JOIN ranges AS r ON (((r.session_id = s.session_id) AND (r.run_index = s.run_index) AND (r.is_warmup = s.is_warmup) AND (r.log_source_id = s.log_source_id) AND (r.segment IS NOT DISTINCT FROM s.segment)));

CREATE MACRO session_logs_for(session_ids) AS TABLE WITH skew AS (SELECT to_microseconds(clock_skew_us()) AS s), session_spans AS (SELECT s.session_id, s.phase, s.variant, src.ingest_group, (min(r.started_at) - any_value(skew.s)) AS first_start, (max(r.ended_at) + any_value(skew.s)) AS last_end FROM sessions AS s INNER JOIN sources AS src USING (source_id) LEFT JOIN bench_runs AS r USING (session_id) , skew WHERE ((session_ids IS NULL) OR (s.session_id = ANY(SELECT unnest(session_ids)))) GROUP BY s.session_id, s.phase, s.variant, src.ingest_group), segments AS (SELECT log_source_id AS source_id, segment, phase, variant, first_ts, last_ts, decode_lines, ingest_group, count() OVER (PARTITION BY ingest_group) AS segments_in_group FROM log_segment_spans), same_call AS (SELECT s.session_id, l.source_id, l.segment, CASE  WHEN (((l.variant = s.variant) OR ((s.first_start <= l.last_ts) AND (l.first_ts <= s.last_end)))) THEN ('same ingest call') WHEN (((s.first_start IS NULL) AND (l.segments_in_group = 1))) THEN ('same ingest call, only log') ELSE NULL END AS link_method FROM session_spans AS s INNER JOIN segments AS l USING (ingest_group)), by_labels AS (SELECT s.session_id, l.source_id, l.segment, 'phase+variant labels' AS link_method FROM session_spans AS s INNER JOIN segments AS l ON (((l.variant = s.variant) AND (l.phase IS NOT DISTINCT FROM s.phase))) WHERE ((s.ingest_group IS DISTINCT FROM l.ingest_group) AND ((s.first_start IS NULL) OR (l.first_ts IS NULL) OR ((s.first_start <= l.last_ts) AND (l.first_ts <= s.last_end)))))(SELECT session_id, source_id AS log_source_id, segment, link_method FROM same_call WHERE (link_method IS NOT NULL)) UNION ALL (SELECT session_id, source_id, segment, link_method FROM by_labels);

CREATE MACRO spec_method(raw) AS CASE  WHEN (((raw IS NULL) OR (lower(main."trim"(raw)) IN ('', 'none', 'null', 'speculativealgorithm.none')))) THEN (NULL) WHEN (regexp_matches(lower(raw), 'eagle[-_ ]?3')) THEN ('EAGLE-3') WHEN (regexp_matches(lower(raw), 'eagle')) THEN ('EAGLE') WHEN (regexp_matches(lower(raw), 'mtp|nextn')) THEN ('MTP') WHEN (regexp_matches(lower(raw), 'n-?gram|prompt[-_ ]?lookup|^pld$')) THEN ('n-gram') WHEN (regexp_matches(lower(raw), 'medusa')) THEN ('Medusa') WHEN (regexp_matches(lower(raw), 'lookahead')) THEN ('lookahead') WHEN (regexp_matches(lower(raw), 'hydra')) THEN ('Hydra') WHEN (regexp_matches(lower(raw), 'standalone|draft[-_ ]?model|^draft$|^sps$')) THEN ('draft model') WHEN (regexp_matches(lower(raw), 'dflash')) THEN ('DFlash') WHEN (regexp_matches(lower(raw), '^suffix$')) THEN ('suffix decoding') WHEN (regexp_matches(lower(raw), '^mlp[-_ ]?speculator$')) THEN ('MLP speculator') ELSE main."trim"(raw) END;

-- Views

CREATE VIEW acceptance_datasets AS (SELECT COALESCE(e.variant, acceptance_variant(src.variant, 'bench:', src.path)) AS variant, COALESCE(e.phase, src.phase) AS phase, b.dataset_name AS dataset, b.source_id, (b.tool || ' record') AS origin, CASE  WHEN ((b.tool IN ('sglang_eagle_bench', 'vllm spec_decode.py'))) THEN ('run') ELSE 'server lifetime' END AS "scope", b.accept_length, b.output_throughput, b.completed AS requests, 1 AS records FROM bench_serving AS b INNER JOIN sources AS src USING (source_id) LEFT JOIN evidence_sessions AS e ON (((e.origin = 'bench_record') AND (e.source_id = b.source_id) AND (e.part = b.record_index))) WHERE ((b.dataset_name IS NOT NULL) AND (b.accept_length IS NOT NULL))) UNION ALL (SELECT variant, phase, dataset, source_id, ('per-request ' || origin), 'requests', (sum((accept_length * COALESCE(spec_steps, 1))) / sum(COALESCE(spec_steps, 1))), NULL, count_star(), count(DISTINCT record_index) FROM acceptance_request_rows WHERE ((dataset IS NOT NULL) AND (accept_length IS NOT NULL)) GROUP BY variant, phase, dataset, source_id, origin);

CREATE VIEW acceptance_metric_windows AS WITH deltas AS (SELECT source_id, "window", bool_or("reset") AS "reset", sum(delta) FILTER (WHERE (metric = 'vllm:spec_decode_num_drafts_total')) AS drafts, sum(delta) FILTER (WHERE (metric = 'vllm:spec_decode_num_draft_tokens_total')) AS draft_tokens, sum(delta) FILTER (WHERE (metric = 'vllm:spec_decode_num_accepted_tokens_total')) AS accepted, count(DISTINCT engine_index) AS engines FROM counter_deltas GROUP BY ALL), lifetime AS (SELECT source_id, "snapshot", any_value(ts) AS ts, sum("value") FILTER (WHERE (metric = 'vllm:spec_decode_num_drafts_total')) AS drafts, sum("value") FILTER (WHERE (metric = 'vllm:spec_decode_num_draft_tokens_total')) AS draft_tokens, sum("value") FILTER (WHERE (metric = 'vllm:spec_decode_num_accepted_tokens_total')) AS accepted, count(DISTINCT engine_index) AS engines FROM metric_samples WHERE (kind = 'counter') GROUP BY ALL), file_deltas AS (SELECT before_source_id, before_path, after_source_id, after_path, bool_or("reset") AS "reset", sum(delta) FILTER (WHERE (metric = 'vllm:spec_decode_num_drafts_total')) AS drafts, sum(delta) FILTER (WHERE (metric = 'vllm:spec_decode_num_draft_tokens_total')) AS draft_tokens, sum(delta) FILTER (WHERE (metric = 'vllm:spec_decode_num_accepted_tokens_total')) AS accepted, count(DISTINCT engine_index) AS engines FROM metric_file_deltas GROUP BY ALL)(SELECT acceptance_variant(src.variant, 'metrics:', src.path) AS variant, src.phase, d.source_id, 'counter delta' AS "scope", ((('snapshots ' || (d."window" - 1)) || '→') || d."window") AS "window", d."reset", d.engines, d.drafts, d.draft_tokens, d.accepted, CASE  WHEN ((d.drafts > 0)) THEN ((1 + (d.accepted / d.drafts))) ELSE NULL END AS accept_length, CASE  WHEN ((d.draft_tokens > 0)) THEN ((d.accepted / d.draft_tokens)) ELSE NULL END AS accept_rate FROM deltas AS d INNER JOIN sources AS src USING (source_id) WHERE ((d.drafts IS NOT NULL) OR (d.accepted IS NOT NULL))) UNION ALL (SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, f.after_source_id, 'counter delta', ((file_label(f.before_path) || ' → ') || file_label(f.after_path)), f."reset", f.engines, f.drafts, f.draft_tokens, f.accepted, CASE  WHEN ((f.drafts > 0)) THEN ((1 + (f.accepted / f.drafts))) ELSE NULL END, CASE  WHEN ((f.draft_tokens > 0)) THEN ((f.accepted / f.draft_tokens)) ELSE NULL END FROM file_deltas AS f INNER JOIN sources AS src ON ((src.source_id = f.after_source_id)) WHERE ((f.drafts IS NOT NULL) OR (f.accepted IS NOT NULL)))UNION ALL (SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, l.source_id, 'counters since start', ('snapshot ' || l."snapshot"), CAST('f' AS BOOLEAN), l.engines, l.drafts, l.draft_tokens, l.accepted, CASE  WHEN ((l.drafts > 0)) THEN ((1 + (l.accepted / l.drafts))) ELSE NULL END, CASE  WHEN ((l.draft_tokens > 0)) THEN ((l.accepted / l.draft_tokens)) ELSE NULL END FROM lifetime AS l INNER JOIN sources AS src USING (source_id) WHERE ((l.drafts IS NOT NULL) OR (l.accepted IS NOT NULL)))UNION ALL (SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, m.source_id, 'gauge (as exported)', ('snapshot ' || m."snapshot"), CAST('f' AS BOOLEAN), count(DISTINCT m.engine_index), NULL, NULL, NULL, avg(m."value") FILTER (WHERE (m.metric = 'sglang:spec_accept_length')), avg(m."value") FILTER (WHERE (m.metric = 'sglang:spec_accept_rate')) FROM metric_samples AS m INNER JOIN sources AS src USING (source_id) WHERE ((m.kind = 'gauge') AND (m.metric IN ('sglang:spec_accept_length', 'sglang:spec_accept_rate'))) GROUP BY ALL);

CREATE VIEW acceptance_position_rates AS WITH bench AS (SELECT b.source_id, b.record_index, b.line_no, b.tool, b.extra, e.variant, e.phase FROM bench_serving AS b LEFT JOIN evidence_sessions AS e ON (((e.origin = 'bench_record') AND (e.source_id = b.source_id) AND (e.part = b.record_index))) WHERE (b.extra IS NOT NULL)), bench_lists AS ((SELECT source_id, record_index, line_no, tool, variant, phase, 1.0 AS scale, CAST(json_extract(extra, '$.spec_decode_per_position_acceptance_rates') AS "DOUBLE"[]) AS rates, TRY_CAST(json_extract(extra, '$.spec_decode_num_drafts') AS BIGINT) AS drafts FROM bench WHERE json_exists(extra, '$.spec_decode_per_position_acceptance_rates')) UNION ALL (SELECT source_id, record_index, line_no, tool, variant, phase, 1.0, CAST(json_extract(extra, '$.acceptance_at_token') AS "DOUBLE"[]), TRY_CAST(json_extract(extra, '$.num_drafts') AS BIGINT) FROM bench WHERE json_exists(extra, '$.acceptance_at_token'))UNION ALL (SELECT source_id, record_index, line_no, tool, variant, phase, 0.01, CAST(json_extract(extra, '$.per_position_acceptance_pct') AS "DOUBLE"[]), NULL FROM bench WHERE json_exists(extra, '$.per_position_acceptance_pct'))), drafts_per_window AS (SELECT source_id, "window", engine_index, sum(delta) AS drafts, bool_or("reset") AS "reset" FROM counter_deltas WHERE (metric = 'vllm:spec_decode_num_drafts_total') GROUP BY ALL), lifetime_drafts AS (SELECT source_id, "snapshot", engine_index, sum("value") AS drafts FROM metric_samples WHERE (metric = 'vllm:spec_decode_num_drafts_total') GROUP BY ALL), file_drafts AS (SELECT before_source_id, after_source_id, engine_index, sum(delta) AS drafts FROM metric_file_deltas WHERE (metric = 'vllm:spec_decode_num_drafts_total') GROUP BY ALL)(SELECT COALESCE(l.variant, acceptance_variant(src.variant, 'log:', src.path)) AS variant, COALESCE(l.phase, src.phase) AS phase, p.source_id, COALESCE(p.origin, 'vLLM SpecDecoding metrics line') AS origin, 'window' AS "scope", ('line ' || p.line_no) AS "window", p.ts, p.engine_index, p."position", p.rate, p.drafts FROM acceptance_positions AS p INNER JOIN sources AS src USING (source_id) LEFT JOIN server_lifetimes AS l ON (((l.log_source_id = p.source_id) AND (l.segment IS NOT DISTINCT FROM p.segment)))) UNION ALL (SELECT COALESCE(x.variant, acceptance_variant(src.variant, 'bench:', src.path)), COALESCE(x.phase, src.phase), x.source_id, (x.tool || ' summary'), 'run', ('record ' || x.record_index), CAST(NULL AS TIMESTAMP), NULL, CAST(g.i AS INTEGER), (x.rates[g.i] * x.scale), x.drafts FROM bench_lists AS x INNER JOIN sources AS src USING (source_id) , (SELECT unnest("range"(1, (len(x.rates) + 1))) AS i) AS g WHERE (x.rates[g.i] IS NOT NULL))UNION ALL (SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, c.source_id, 'Prometheus counter delta', 'window', ((('snapshots ' || (c."window" - 1)) || '→') || c."window"), CAST(NULL AS TIMESTAMP), c.engine_index, (c."position" + 1), (c.delta / d.drafts), CAST(d.drafts AS BIGINT) FROM counter_deltas AS c INNER JOIN sources AS src USING (source_id) INNER JOIN drafts_per_window AS d ON (((d.source_id = c.source_id) AND (d."window" = c."window") AND (d.engine_index IS NOT DISTINCT FROM c.engine_index))) WHERE ((c.metric = 'vllm:spec_decode_num_accepted_tokens_per_pos_total') AND (c."position" IS NOT NULL) AND (d.drafts > 0)))UNION ALL (SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, m.source_id, 'Prometheus counters since server start', 'lifetime', ('snapshot ' || m."snapshot"), m.ts, m.engine_index, (m."position" + 1), (m."value" / d.drafts), CAST(d.drafts AS BIGINT) FROM metric_samples AS m INNER JOIN sources AS src USING (source_id) INNER JOIN lifetime_drafts AS d ON (((d.source_id = m.source_id) AND (d."snapshot" = m."snapshot") AND (d.engine_index IS NOT DISTINCT FROM m.engine_index))) WHERE ((m.metric = 'vllm:spec_decode_num_accepted_tokens_per_pos_total') AND (m."position" IS NOT NULL) AND (d.drafts > 0) AND (NOT EXISTS(SELECT 1 FROM counter_deltas AS c WHERE (c.source_id = m.source_id)))))UNION ALL (SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, f.after_source_id, 'Prometheus counter delta between files', 'window', ((file_label(f.before_path) || ' → ') || file_label(f.after_path)), CAST(NULL AS TIMESTAMP), f.engine_index, (f."position" + 1), (f.delta / d.drafts), CAST(d.drafts AS BIGINT) FROM metric_file_deltas AS f INNER JOIN sources AS src ON ((src.source_id = f.after_source_id)) INNER JOIN file_drafts AS d ON (((d.before_source_id = f.before_source_id) AND (d.after_source_id = f.after_source_id) AND (d.engine_index IS NOT DISTINCT FROM f.engine_index))) WHERE ((f.metric = 'vllm:spec_decode_num_accepted_tokens_per_pos_total') AND (f."position" IS NOT NULL) AND (d.drafts > 0)));

CREATE VIEW acceptance_request_rows AS SELECT COALESCE(e.variant, src.variant, json_extract_string(r.extra, '$.variant'), folder_variant(src.path)) AS variant, COALESCE(e.phase, src.phase) AS phase, src.path, r.* FROM acceptance_requests AS r INNER JOIN sources AS src USING (source_id) LEFT JOIN evidence_sessions AS e ON (((e.origin = 'bench_record') AND (e.source_id = r.source_id) AND (e.part = r.record_index) AND (src.kind = 'bench_serving_jsonl')));

CREATE VIEW bench_record_links AS WITH lifetimes AS MATERIALIZED (SELECT * FROM server_lifetimes WHERE (evidence != 'profiler messages')), call_logs AS (SELECT ingest_group, variant, count() OVER (PARTITION BY ingest_group) AS in_call, log_source_id, segment, phase FROM log_segment_spans QUALIFY (row_number() OVER (PARTITION BY ingest_group, variant ORDER BY first_ts DESC NULLS LAST, log_source_id, segment) = 1)), records AS (SELECT b.source_id, b.record_index, src.phase AS given_phase, src.variant AS given_variant, src.path, src.ingest_group, src.link_to, c.variant AS own_variant FROM bench_serving AS b INNER JOIN sources AS src USING (source_id) LEFT JOIN config_names AS c ON (((c.source_id = b.source_id) AND (c.segment = b.record_index)))), chosen AS (SELECT r.source_id, r.record_index, any_value(l.log_source_id) AS log_source_id, any_value(l.segment) AS segment, any_value(l.variant) AS log_variant, any_value(l.phase) AS log_phase FROM records AS r INNER JOIN lifetime_names AS n ON ((n."name" = r.link_to)) INNER JOIN lifetimes AS l ON (((l.log_source_id = n.log_source_id) AND (l.segment IS NOT DISTINCT FROM n.segment))) GROUP BY ALL), same_config AS (SELECT r.source_id, r.record_index, any_value(l.log_source_id) AS log_source_id, any_value(l.segment) AS segment, any_value(l.variant) AS log_variant, any_value(l.phase) AS log_phase FROM records AS r INNER JOIN server_configs AS own ON (((own.source_id = r.source_id) AND (own.segment = r.record_index))) INNER JOIN server_configs AS "logged" ON ((("logged".model_path IS NOT DISTINCT FROM own.model_path) AND ("logged".tp_size IS NOT DISTINCT FROM own.tp_size) AND ("logged".speculative_algorithm IS NOT DISTINCT FROM own.speculative_algorithm) AND ("logged".speculative_draft_model_path IS NOT DISTINCT FROM own.speculative_draft_model_path) AND ("logged".speculative_num_steps IS NOT DISTINCT FROM own.speculative_num_steps) AND ("logged".speculative_eagle_topk IS NOT DISTINCT FROM own.speculative_eagle_topk) AND ("logged".speculative_num_draft_tokens IS NOT DISTINCT FROM own.speculative_num_draft_tokens))) INNER JOIN lifetimes AS l ON (((l.log_source_id = "logged".source_id) AND (l.segment IS NOT DISTINCT FROM "logged".segment))) WHERE ((r.link_to IS NULL) AND (own.model_path IS NOT NULL)) GROUP BY r.source_id, r.record_index HAVING (count_star() = 1))SELECT r.source_id, r.record_index, r.given_phase, r.given_variant, r.path, r.own_variant, COALESCE(x.log_source_id, l.log_source_id, q.log_source_id) AS log_source_id, COALESCE(x.segment, l.segment, q.segment) AS segment, COALESCE(x.log_variant, l.variant, q.log_variant) AS log_variant, COALESCE(x.log_phase, l.phase, q.log_phase) AS log_phase, CASE  WHEN ((x.log_source_id IS NOT NULL)) THEN ('--link-to') WHEN (((l.log_source_id IS NOT NULL) AND (r.given_variant IS NOT NULL))) THEN ('same ingest call and variant label') WHEN ((l.log_source_id IS NOT NULL)) THEN ('same ingest call, only log') WHEN ((q.log_source_id IS NOT NULL)) THEN ('server_info equal to the lifetime''s config') ELSE NULL END AS link_method FROM records AS r LEFT JOIN chosen AS x USING (source_id, record_index) LEFT JOIN call_logs AS l ON (((r.link_to IS NULL) AND (l.ingest_group = r.ingest_group) AND (((r.given_variant IS NOT NULL) AND (l.variant = r.given_variant)) OR ((r.given_variant IS NULL) AND (r.own_variant IS NULL) AND (l.in_call = 1))))) LEFT JOIN same_config AS q USING (source_id, record_index);

CREATE VIEW benchmark_sessions AS SELECT s.* REPLACE (COALESCE(s.variant, folder_variant(src.path)) AS variant) FROM sessions AS s INNER JOIN sources AS src USING (source_id);

CREATE VIEW config_names AS WITH named AS (SELECT c.source_id, c.segment, (c.variant || CASE  WHEN (((src.variant IS NULL) AND (c.speculative_algorithm IS NOT NULL) AND (count(DISTINCT main.list_value(c.speculative_num_steps, c.speculative_eagle_topk, c.speculative_num_draft_tokens)) OVER (PARTITION BY c.variant, (src.variant IS NULL)) > 1))) THEN (((((((' (steps ' || COALESCE(CAST(c.speculative_num_steps AS VARCHAR), '?')) || ', topk ') || COALESCE(CAST(c.speculative_eagle_topk AS VARCHAR), '?')) || ', draft tokens ') || COALESCE(CAST(c.speculative_num_draft_tokens AS VARCHAR), '?')) || ')')) ELSE '' END) AS variant, c.model_path, (src.variant IS NULL) AS unlabelled FROM server_configs AS c INNER JOIN sources AS src USING (source_id))SELECT source_id, segment, (variant || CASE  WHEN ((unlabelled AND (count(DISTINCT COALESCE(model_path, '')) OVER (PARTITION BY variant, unlabelled) > 1))) THEN ((' · ' || COALESCE(model_label(model_path), 'model unknown'))) ELSE '' END) AS variant, model_path FROM named;

CREATE VIEW cycle_breakdown AS SELECT source_id, session_id, rank, cycle_idx, cycle_phase AS phase, kernel_class, duration_ms, cycle_kind, complete, cycle_ms, cycle_start_us, union_ms, kernels, attribution, phase AS experiment_phase, variant FROM cycle_phase_times;

CREATE VIEW cycle_pace AS WITH per_rank AS (SELECT s.*, COALESCE(t.profile_id, s.source_id) AS profile_key FROM cycle_rank_summary AS s LEFT JOIN trace_ranks AS t USING (source_id, rank))SELECT profile_key, experiment_phase, variant, count_star() AS ranks, median(median_cycle_ms) AS median_cycle_ms_median, max(median_cycle_ms) AS median_cycle_ms_max, arg_max(rank, main."row"(median_cycle_ms, -(rank))) FILTER (WHERE (median_cycle_ms IS NOT NULL)) AS slowest_rank, median(median_verify_ms) AS median_verify_ms_median, max(median_verify_ms) AS median_verify_ms_max, median(median_verify_comm_ms) AS median_verify_comm_ms_median, max(median_verify_comm_ms) AS median_verify_comm_ms_max, median(verify_comm_share) AS verify_comm_share_median, max(verify_comm_share) AS verify_comm_share_max FROM per_rank GROUP BY profile_key, experiment_phase, variant;

CREATE VIEW cycle_rank_spread AS SELECT COALESCE(t.profile_id, c.source_id) AS profile_key, c.experiment_phase, c.variant, c.cycle_idx, count_star() AS ranks, min(c.verify_comm_ms) AS verify_comm_ms_min, median(c.verify_comm_ms) AS verify_comm_ms_median, max(c.verify_comm_ms) AS verify_comm_ms_max, min(c.cycle_ms) AS cycle_ms_min, max(c.cycle_ms) AS cycle_ms_max FROM cycle_totals AS c LEFT JOIN trace_ranks AS t USING (source_id, rank) GROUP BY ALL;

CREATE VIEW cycle_rank_summary AS SELECT source_id, experiment_phase, variant, rank, count_star() AS complete_cycles, median(cycle_ms) AS median_cycle_ms, max(cycle_ms) AS max_cycle_ms, CASE  WHEN ((sum(verify_ms) > 0)) THEN (median(verify_ms)) ELSE NULL END AS median_verify_ms, CASE  WHEN ((sum(verify_ms) > 0)) THEN (median(verify_comm_ms)) ELSE NULL END AS median_verify_comm_ms, (sum(verify_comm_ms) / "nullif"(sum(verify_ms), 0)) AS verify_comm_share FROM cycle_totals GROUP BY source_id, experiment_phase, variant, rank;

CREATE VIEW cycle_totals AS SELECT source_id, any_value(session_id) AS session_id, phase AS experiment_phase, variant, rank, cycle_idx, cycle_kind, any_value(cycle_ms) AS cycle_ms, COALESCE(sum(duration_ms) FILTER (WHERE (cycle_phase = 'draft')), 0) AS draft_ms, COALESCE(sum(duration_ms) FILTER (WHERE (cycle_phase = 'verify')), 0) AS verify_ms, CASE  WHEN (bool_or((kernel_class = 'measured'))) THEN (NULL) ELSE COALESCE(sum(duration_ms) FILTER (WHERE ((cycle_phase = 'verify') AND (kernel_class = 'communication'))), 0) END AS verify_comm_ms, COALESCE(sum(duration_ms) FILTER (WHERE (cycle_phase = 'draft_extend')), 0) AS draft_extend_ms, COALESCE(sum(duration_ms) FILTER (WHERE (cycle_phase = 'decode')), 0) AS decode_ms, COALESCE(sum(duration_ms) FILTER (WHERE (cycle_phase = 'unattributed')), 0) AS unattributed_ms, COALESCE(sum(duration_ms) FILTER (WHERE (cycle_phase = 'idle')), 0) AS idle_ms FROM cycle_phase_times WHERE (complete AND (cycle_kind IN ('speculative', 'decode'))) GROUP BY source_id, phase, variant, rank, cycle_idx, cycle_kind;

CREATE VIEW drafter_coverage AS WITH totals AS (SELECT source_id, sum(count) AS tokens, count_star() AS distinct_tokens FROM token_counts GROUP BY source_id), mapped AS (SELECT v.source_id AS drafter_source_id, tc.source_id AS tokens_source_id, sum(tc.count) AS covered, count_star() AS distinct_covered FROM token_counts AS tc INNER JOIN drafter_vocab AS v ON ((v.target_id = tc.target_id)) GROUP BY ALL), full_vocab AS (SELECT d.source_id AS drafter_source_id, tc.source_id AS tokens_source_id, sum(tc.count) AS covered, count_star() AS distinct_covered FROM drafters AS d INNER JOIN token_counts AS tc ON ((tc.target_id < d.vocab_size)) WHERE (d.mapping_form = 'full target vocabulary') GROUP BY ALL), covered AS ((SELECT * FROM mapped) UNION ALL (SELECT * FROM full_vocab))SELECT d.source_id AS drafter_source_id, d."name" AS drafter, t.source_id AS tokens_source_id, s.path AS tokens_path, t.tokens, t.distinct_tokens, COALESCE(c.covered, 0) AS covered_tokens, COALESCE(c.distinct_covered, 0) AS covered_distinct, (COALESCE(c.covered, 0) / t.tokens) AS coverage FROM drafters AS d CROSS JOIN totals AS t INNER JOIN sources AS s ON ((s.source_id = t.source_id)) LEFT JOIN covered AS c ON (((c.drafter_source_id = d.source_id) AND (c.tokens_source_id = t.source_id))) WHERE (d.weights_files > 0);

CREATE VIEW evidence_sessions AS WITH lifetimes AS MATERIALIZED (SELECT * FROM server_lifetimes), traces AS (SELECT COALESCE(t.profile_id, t.source_id) AS profile_key, t.phase, t.variant, min(t.source_id) AS source_id, count(DISTINCT t.source_id) AS files, bool_or((src.variant IS NOT NULL)) AS labelled, min(src.path) AS path, min(t.trace_start_at) AS started_at, max((t.trace_start_at + to_microseconds(CAST((1000 * t.span_ms) AS BIGINT)))) AS ended_at FROM trace_ranks AS t INNER JOIN sources AS src USING (source_id) GROUP BY ALL)(SELECT s.session_id, 'benchmark' AS origin, s.source_id, s.session_key AS part, s.phase, COALESCE(s.variant, folder_variant(src.path)) AS variant, CASE  WHEN ((src.variant IS NOT NULL)) THEN ('--variant') WHEN ((s.variant IS NOT NULL)) THEN ('benchmark file') ELSE folder_variant_from(src.path) END AS variant_from, s.started_at, CAST(NULL AS TIMESTAMP) AS ended_at, s.model, CAST(NULL AS VARCHAR) AS log_source_id, CAST(NULL AS INTEGER) AS log_segment, CAST(NULL AS VARCHAR) AS link_method, 1 AS files FROM sessions AS s INNER JOIN sources AS src USING (source_id)) UNION ALL (SELECT l.own_session_id, 'server_lifetime', l.log_source_id, l.segment, l.phase, l.variant, l.variant_from, l.first_ts, l.last_ts, l.model_path, l.log_source_id, l.segment, 'own log', 1 FROM lifetimes AS l WHERE ((l.benchmark_session_id IS NULL) AND (l.evidence != 'profiler messages')))UNION ALL (SELECT ((r.source_id || '-rec') || r.record_index), 'bench_record', r.source_id, r.record_index, COALESCE(r.given_phase, r.log_phase), COALESCE(r.given_variant, r.own_variant, r.log_variant, folder_variant(r.path)), CASE  WHEN ((r.given_variant IS NOT NULL)) THEN ('--variant') WHEN ((r.own_variant IS NOT NULL)) THEN ('server_info in the record') WHEN (((r.log_variant IS NOT NULL) AND (r.link_method = '--link-to'))) THEN ('server log named by --link-to') WHEN ((r.log_variant IS NOT NULL)) THEN ('server log of the same ingest call') ELSE folder_variant_from(r.path) END, CAST(NULL AS TIMESTAMP), CAST(NULL AS TIMESTAMP), CAST(NULL AS VARCHAR), r.log_source_id, r.segment, r.link_method, 1 FROM bench_record_links AS r)UNION ALL (SELECT ('trace-' || t.profile_key), 'trace_set', t.source_id, CAST(NULL AS INTEGER), t.phase, t.variant, CASE  WHEN (t.labelled) THEN ('--variant') WHEN ((k.profile_key IS NOT NULL)) THEN ('linked server log') ELSE folder_variant_from(t.path) END, t.started_at, t.ended_at, CAST(NULL AS VARCHAR), k.log_source_id, k.segment, k.link_method, t.files FROM traces AS t LEFT JOIN trace_links AS k USING (profile_key));

CREATE VIEW lifetime_names AS WITH lifetimes AS MATERIALIZED (SELECT log_source_id, segment, own_session_id, benchmark_session_id, path, count() OVER (PARTITION BY log_source_id) AS in_log FROM server_lifetimes), "names" AS (SELECT log_source_id, segment, main.list_value(own_session_id, benchmark_session_id) AS ids, CASE  WHEN ((in_log = 1)) THEN (main.list_value(path, regexp_replace(path, '^.*[/\\]', ''), file_label(path))) ELSE main.list_value() END AS files FROM lifetimes)SELECT DISTINCT "name", log_source_id, segment FROM (SELECT unnest(list_concat(ids, files)) AS "name", log_source_id, segment FROM "names") WHERE ("name" IS NOT NULL);

CREATE VIEW log_segments AS WITH segs AS ((SELECT source_id, segment, min(ts) AS first_ts, max(ts) AS last_ts, count_star() AS decode_lines FROM decode_stats GROUP BY source_id, segment) UNION ALL (SELECT c.source_id, c.segment, c.ts, c.ts, 0 FROM server_configs AS c WHERE (NOT EXISTS(SELECT 1 FROM decode_stats AS d WHERE ((d.source_id = c.source_id) AND (d.segment = c.segment))))))SELECT s.source_id, s.segment, COALESCE(c.phase, src.phase) AS phase, COALESCE(c.variant, src.variant) AS variant, s.first_ts, s.last_ts, s.decode_lines FROM segs AS s INNER JOIN sources AS src USING (source_id) LEFT JOIN server_configs AS c ON (((c.source_id = s.source_id) AND (c.segment = s.segment))) WHERE (src.kind NOT IN ('bench_serving_jsonl', 'nested_runs_jsonl'));

CREATE VIEW metric_file_deltas AS SELECT p.folder, p.variant, p.phase, p.ordered_by, p.before_source_id, p.before_path, p.after_source_id, p.after_path, a.line_no, a.metric, a.labels, a.engine_index, a."position", b."value" AS value_before, a."value" AS value_after, CASE  WHEN ((a."value" < b."value")) THEN (a."value") ELSE (a."value" - b."value") END AS delta, (a."value" < b."value") AS "reset", CASE  WHEN ((a."value" < b."value")) THEN ((((((((((((((('server restarted between snapshots: ' || a.metric) || ' ') || a.labels) || ' went down from ') || CAST(b."value" AS VARCHAR)) || ' in ') || p.before_path) || ' to ') || CAST(a."value" AS VARCHAR)) || ' in ') || p.after_path) || ' (files ordered by ') || p.ordered_by) || '); this window counts from zero')) ELSE NULL END AS warning FROM metric_file_pairs AS p INNER JOIN metric_samples AS b ON (((b.source_id = p.before_source_id) AND (b."snapshot" = p.before_snapshot) AND (b.kind = 'counter'))) INNER JOIN metric_samples AS a ON (((a.source_id = p.after_source_id) AND (a."snapshot" = p.after_snapshot) AND (a.kind = 'counter') AND (a.metric = b.metric) AND (a.labels = b.labels)));

CREATE VIEW metric_file_order AS WITH files AS (SELECT s.source_id, src.path, src.variant, src.phase, regexp_replace(src.path, '[/\\][^/\\]*$', '') AS folder, min(s."snapshot") AS first_snapshot, max(s."snapshot") AS last_snapshot, min(s.scraped_at) AS scraped_at, max(s.file_mtime) AS file_mtime FROM metric_snapshots AS s INNER JOIN sources AS src USING (source_id) GROUP BY ALL), counted AS (SELECT *, CASE  WHEN ((count(scraped_at) OVER (PARTITION BY folder, variant) = count() OVER (PARTITION BY folder, variant))) THEN ('scrape time') WHEN ((count(file_mtime) OVER (PARTITION BY folder, variant) = count() OVER (PARTITION BY folder, variant))) THEN ('file modification time') ELSE 'file name' END AS ordered_by FROM files)SELECT source_id, path, variant, phase, folder, first_snapshot, last_snapshot, scraped_at, file_mtime, ordered_by, CAST(row_number() OVER (PARTITION BY folder, variant ORDER BY CASE  WHEN ((ordered_by = 'scrape time')) THEN (scraped_at) WHEN ((ordered_by = 'file modification time')) THEN (file_mtime) ELSE NULL END NULLS FIRST, path, source_id) AS INTEGER) AS file_order FROM counted;

CREATE VIEW metric_file_pairs AS SELECT * FROM (SELECT folder, variant, phase, ordered_by, lag(source_id) OVER (PARTITION BY folder, variant ORDER BY file_order) AS before_source_id, lag(path) OVER (PARTITION BY folder, variant ORDER BY file_order) AS before_path, lag(last_snapshot) OVER (PARTITION BY folder, variant ORDER BY file_order) AS before_snapshot, source_id AS after_source_id, path AS after_path, first_snapshot AS after_snapshot FROM metric_file_order) WHERE (before_source_id IS NOT NULL);

CREATE VIEW run_log_stats AS SELECT * FROM run_log_stats_for(CAST(NULL AS VARCHAR[]));

CREATE VIEW server_lifetimes AS WITH spans AS ((SELECT log_source_id, segment, phase, first_ts, last_ts, ingest_group, 'decode lines' AS evidence FROM log_segment_spans) UNION ALL (SELECT p.source_id, p.segment, src.phase, min(p.ts), max(p.ts), src.ingest_group, 'prefill lines' FROM prefill_stats AS p INNER JOIN sources AS src USING (source_id) WHERE (NOT EXISTS(SELECT 1 FROM log_segment_spans AS l WHERE ((l.log_source_id = p.source_id) AND (l.segment IS NOT DISTINCT FROM p.segment)))) GROUP BY p.source_id, p.segment, src.phase, src.ingest_group)UNION ALL (SELECT p.source_id, p.segment, src.phase, min(p.ts), max(p.ts), src.ingest_group, 'profiler messages' FROM log_profiles AS p INNER JOIN sources AS src USING (source_id) WHERE ((NOT EXISTS(SELECT 1 FROM log_segment_spans AS l WHERE ((l.log_source_id = p.source_id) AND (l.segment IS NOT DISTINCT FROM p.segment)))) AND (NOT EXISTS(SELECT 1 FROM prefill_stats AS f WHERE ((f.source_id = p.source_id) AND (f.segment IS NOT DISTINCT FROM p.segment))))) GROUP BY p.source_id, p.segment, src.phase, src.ingest_group))SELECT s.log_source_id, s.segment, s.evidence, s.ingest_group, s.first_ts, s.last_ts, ((s.log_source_id || '-seg') || COALESCE(CAST(s.segment AS VARCHAR), '')) AS own_session_id, b.session_id AS benchmark_session_id, COALESCE(b.phase, s.phase) AS phase, COALESCE(b.variant, src.variant, n.variant, folder_variant(src.path)) AS variant, CASE  WHEN ((b.session_id IS NOT NULL)) THEN ('benchmark session') WHEN ((src.variant IS NOT NULL)) THEN ('--variant') WHEN ((n.source_id IS NOT NULL)) THEN ('server config') ELSE folder_variant_from(src.path) END AS variant_from, n.model_path, src.path FROM spans AS s INNER JOIN sources AS src ON ((src.source_id = s.log_source_id)) LEFT JOIN config_names AS n ON (((n.source_id = s.log_source_id) AND (n.segment IS NOT DISTINCT FROM s.segment))) LEFT JOIN (SELECT k.log_source_id, k.segment, any_value(k.session_id) AS session_id, any_value(x.phase) AS phase, any_value(COALESCE(x.variant, folder_variant(xs.path))) AS variant FROM session_log_links AS k INNER JOIN sessions AS x USING (session_id) INNER JOIN sources AS xs ON ((xs.source_id = x.source_id)) GROUP BY ALL) AS b ON (((b.log_source_id = s.log_source_id) AND (b.segment IS NOT DISTINCT FROM s.segment)));

CREATE VIEW session_logs AS WITH skew AS (SELECT to_microseconds(CAST((1000000.0 * COALESCE((SELECT TRY_CAST("value" AS "DOUBLE") FROM store_meta WHERE ("key" = 'clock_skew_s')), 2.0)) AS BIGINT)) AS s), session_spans AS (SELECT s.session_id, s.phase, s.variant, src.ingest_group, (min(r.started_at) - any_value(skew.s)) AS first_start, (max(r.ended_at) + any_value(skew.s)) AS last_end FROM sessions AS s INNER JOIN sources AS src USING (source_id) LEFT JOIN bench_runs AS r USING (session_id) , skew GROUP BY s.session_id, s.phase, s.variant, src.ingest_group), segments AS (SELECT l.*, src.ingest_group, count() OVER (PARTITION BY src.ingest_group) AS segments_in_group FROM log_segments AS l INNER JOIN sources AS src USING (source_id)), same_call AS (SELECT s.session_id, l.source_id, l.segment, CASE  WHEN (((l.variant = s.variant) OR ((s.first_start <= l.last_ts) AND (l.first_ts <= s.last_end)))) THEN ('same ingest call') WHEN (((s.first_start IS NULL) AND (l.segments_in_group = 1))) THEN ('same ingest call, only log') ELSE NULL END AS link_method FROM session_spans AS s INNER JOIN segments AS l USING (ingest_group)), by_labels AS (SELECT s.session_id, l.source_id, l.segment, 'phase+variant labels' AS link_method FROM session_spans AS s INNER JOIN segments AS l ON (((l.variant = s.variant) AND (l.phase IS NOT DISTINCT FROM s.phase))) WHERE ((s.ingest_group IS DISTINCT FROM l.ingest_group) AND ((s.first_start IS NULL) OR (l.first_ts IS NULL) OR ((s.first_start <= l.last_ts) AND (l.first_ts <= s.last_end)))))(SELECT session_id, source_id AS log_source_id, segment, link_method FROM same_call WHERE (link_method IS NOT NULL)) UNION ALL (SELECT session_id, source_id, segment, link_method FROM by_labels);

CREATE VIEW sweep_series AS WITH records AS (SELECT b.source_id, b.record_index, COALESCE(l.given_phase, l.log_phase) AS phase, b.tool, b.dataset_name, b.request_rate, b.max_concurrency, b.output_throughput, b.accept_length, b.extra, COALESCE(l.given_variant, l.own_variant, l.log_variant, folder_variant(l.path)) AS variant, c.model_path, c.tp_size, c.speculative_algorithm, c.speculative_num_steps, c.speculative_eagle_topk, c.speculative_num_draft_tokens, (c.source_id IS NOT NULL) AS has_config FROM bench_serving AS b INNER JOIN bench_record_links AS l USING (source_id, record_index) LEFT JOIN server_configs AS c ON (((c.source_id = b.source_id) AND (c.segment = b.record_index)))), shaped AS (SELECT *, (((COALESCE((phase || ' · '), '') || COALESCE(tool, 'bench')) || ' · ') || COALESCE(dataset_name, 'unnamed dataset')) AS sweep, CASE  WHEN ((tool ~~ '%bench_one_batch%')) THEN (max_concurrency) ELSE NULL END AS batch_size, CASE  WHEN (((tool !~~ '%bench_one_batch%') OR (tool IS NULL))) THEN (max_concurrency) ELSE NULL END AS concurrency, CASE  WHEN (((max_concurrency IS NULL) AND isfinite(request_rate))) THEN (request_rate) ELSE NULL END AS rate FROM records), swept AS (SELECT sweep, model_path FROM shaped GROUP BY sweep, model_path HAVING (count(DISTINCT COALESCE(CAST(batch_size AS "DOUBLE"), CAST(concurrency AS "DOUBLE"), rate)) >= 2))(SELECT p.source_id, p.session_id, ((COALESCE((p.phase || ' · '), '') || p.sweep) || CASE  WHEN ((t.sweep IS NOT NULL)) THEN ((' · ' || COALESCE(p.dataset, 'no task'))) ELSE '' END) AS sweep, p.phase, p.model, p.dataset, p.variant, p.is_baseline, p.batch_size, p.concurrency, CAST(NULL AS "DOUBLE") AS request_rate, p.steps, p.topk, p.num_draft_tokens, p.accept_length, p.step_time_ms, p.throughput, p.throughput_kind, 'sweep file' AS accept_length_from, p.simulated, p.simulated_by, CAST(NULL AS INTEGER) AS tp_size, src.kind AS origin, src.path, CASE  WHEN (p.is_baseline) THEN ('none') ELSE COALESCE(spec_method(json_extract_string(p.extra, '$.method')), m."method") END AS "method", CASE  WHEN ((NOT p.is_baseline)) THEN (TRY_CAST(COALESCE(json_extract_string(p.extra, '$.speedup'), json_extract_string(p.extra, '$.decode_speedup')) AS "DOUBLE")) ELSE NULL END AS speedup_reported, TRY_CAST(json_extract_string(p.extra, '$.acceptance_rate') AS "DOUBLE") AS acceptance_rate FROM sweep_points AS p INNER JOIN sources AS src USING (source_id) LEFT JOIN variant_config_methods AS m ON ((m.variant = p.variant)) LEFT JOIN (SELECT source_id, sweep FROM sweep_points GROUP BY ALL HAVING ((count(DISTINCT COALESCE(dataset, '')) > 1) AND ((count(batch_size) + count(concurrency)) > 0))) AS t ON (((t.source_id = p.source_id) AND (t.sweep = p.sweep)))) UNION ALL (SELECT s.source_id, ((s.source_id || '-rec') || s.record_index), s.sweep, s.phase, s.model_path, s.dataset_name, s.variant, CASE  WHEN ((s.variant ~~* 'baseline%')) THEN (CAST('t' AS BOOLEAN)) WHEN (s.has_config) THEN ((s.speculative_algorithm IS NULL)) ELSE (s.accept_length IS NULL) END, s.batch_size, s.concurrency, s.rate, s.speculative_num_steps, s.speculative_eagle_topk, s.speculative_num_draft_tokens, s.accept_length, CAST(NULL AS "DOUBLE"), s.output_throughput, 'measured wall-clock', 'server-reported', COALESCE(((s.extra ~~* '%simulate_acc%') OR (s.extra ~~* '%synthetic%')), CAST('f' AS BOOLEAN)), CASE  WHEN ((s.extra ~~* '%simulate_acc%')) THEN ('SGLANG_SIMULATE_ACC_LEN in the record') WHEN ((s.extra ~~* '%synthetic%')) THEN ('synthetic acceptance in the record') ELSE NULL END, s.tp_size, 'bench_serving', src.path, CASE  WHEN (s.has_config) THEN (COALESCE(spec_method(s.speculative_algorithm), 'none')) ELSE NULL END, CAST(NULL AS "DOUBLE"), CAST(NULL AS "DOUBLE") FROM shaped AS s INNER JOIN swept AS w ON (((w.sweep = s.sweep) AND (w.model_path IS NOT DISTINCT FROM s.model_path))) INNER JOIN sources AS src USING (source_id));

CREATE VIEW trace_labels AS SELECT DISTINCT t.source_id, COALESCE(src.phase, k.phase) AS phase, COALESCE(src.variant, k.variant, folder_variant(src.path)) AS variant FROM trace_ranks AS t INNER JOIN sources AS src USING (source_id) LEFT JOIN trace_links AS k ON ((k.profile_key = COALESCE(t.profile_id, t.source_id)));

CREATE VIEW trace_set_links AS WITH lifetimes AS MATERIALIZED (SELECT * FROM server_lifetimes), "names" AS MATERIALIZED (SELECT * FROM lifetime_names), "sets" AS (SELECT COALESCE(t.profile_id, t.source_id) AS profile_key, any_value(t.profile_id) AS profile_id, any_value(src.variant) AS given_variant, any_value(src.link_to) AS link_to, min(src.ingest_group) AS ingest_group, COALESCE(CAST(to_timestamp(any_value(TRY_CAST(t.profile_id AS "DOUBLE"))) AS TIMESTAMP), min(t.trace_start_at)) AS started_at FROM trace_ranks AS t INNER JOIN sources AS src USING (source_id) GROUP BY 1), call_lifetimes AS (SELECT *, count() OVER (PARTITION BY ingest_group) AS in_call FROM lifetimes), candidates AS ((SELECT s.profile_key, 1 AS rank, '--link-to' AS link_method, n.log_source_id, n.segment FROM "sets" AS s INNER JOIN "names" AS n ON ((n."name" = s.link_to))) UNION ALL (SELECT s.profile_key, 2, 'profile id in the server log', p.source_id, p.segment FROM "sets" AS s INNER JOIN log_profiles AS p ON (((p.profile_id = s.profile_id) OR (abs((TRY_CAST(p.profile_id AS "DOUBLE") - TRY_CAST(s.profile_id AS "DOUBLE"))) < 0.001))))UNION ALL (SELECT s.profile_key, 3, 'same ingest call and variant label', l.log_source_id, l.segment FROM "sets" AS s INNER JOIN call_lifetimes AS l ON (((l.ingest_group = s.ingest_group) AND (l.variant = s.given_variant))))UNION ALL (SELECT s.profile_key, 4, 'same ingest call, only log', l.log_source_id, l.segment FROM "sets" AS s INNER JOIN call_lifetimes AS l ON (((l.ingest_group = s.ingest_group) AND (l.in_call = 1))) WHERE (s.given_variant IS NULL))UNION ALL (SELECT s.profile_key, 5, 'trace start inside the lifetime (UTC clock)', any_value(l.log_source_id), any_value(l.segment) FROM "sets" AS s INNER JOIN lifetimes AS l ON ((s.started_at BETWEEN (l.first_ts - to_seconds(CAST(60 AS DOUBLE))) AND (l.last_ts + to_seconds(CAST(60 AS DOUBLE))))) GROUP BY s.profile_key HAVING (count_star() = 1)))SELECT c.profile_key, c.link_method, c.log_source_id, c.segment, l.own_session_id, l.benchmark_session_id, l.phase, l.variant FROM candidates AS c INNER JOIN "sets" AS s USING (profile_key) INNER JOIN lifetimes AS l ON (((l.log_source_id = c.log_source_id) AND (l.segment IS NOT DISTINCT FROM c.segment))) WHERE (s.link_to IS DISTINCT FROM 'none') QUALIFY (row_number() OVER (PARTITION BY c.profile_key ORDER BY c.rank, c.log_source_id, c.segment) = 1);

CREATE VIEW variant_config_methods AS SELECT variant, any_value(COALESCE(spec_method(speculative_algorithm), 'none')) AS "method" FROM server_configs WHERE (variant IS NOT NULL) GROUP BY variant HAVING (count(DISTINCT COALESCE(spec_method(speculative_algorithm), 'none')) = 1);
