-- 016_sweeps: batch-size / concurrency / drafter-config sweeps (issue #21). Documented in docs/schema.md.

-- One row per sweep point as a sweep file gives it (ingest/parsers/bench/sweeps.py).
CREATE TABLE sweep_points (
    source_id        VARCHAR NOT NULL,
    session_id       VARCHAR,           -- source_id || '-' || session_key: one sweep of the file
    session_key      INTEGER NOT NULL,
    phase            VARCHAR,           -- the --phase label
    point_index      INTEGER NOT NULL,  -- position among the file's kept points
    line_no          BIGINT,            -- null for JSON documents (their messages name a JSON path)
    sweep            VARCHAR,           -- 'Kimi-K2-Instruct · gsm8k', a table's file name, ...
    model            VARCHAR,           -- the target model, when the file names it
    dataset          VARCHAR,           -- the benchmark (gsm8k, mtbench, ...)
    variant          VARCHAR,           -- the drafter (or 'baseline'); --variant overrides it
    is_baseline      BOOLEAN NOT NULL,  -- measured without speculation: config (0, 0, 0) or a baseline name
    batch_size       BIGINT,
    concurrency      BIGINT,
    steps            INTEGER,           -- speculative_num_steps
    topk             INTEGER,           -- speculative_eagle_topk
    num_draft_tokens INTEGER,           -- speculative_num_draft_tokens
    accept_length    DOUBLE,            -- tokens per verify step, bonus token included
    step_time_ms     DOUBLE,            -- one decode step (baseline) or cycle (speculative), ms
    throughput       DOUBLE,            -- tok/s, of the kind throughput_kind says
    throughput_kind  VARCHAR NOT NULL,  -- 'measured wall-clock' | 'modelled from step time' | 'server-reported'
    simulated        BOOLEAN NOT NULL,  -- acceptance was simulated (SGLANG_SIMULATE_ACC_LEN, synthetic sampling)
    simulated_by     VARCHAR,           -- where the file says so
    extra            VARCHAR
);

CREATE INDEX sweep_points_source ON sweep_points (source_id);

-- Every sweep point the store holds (its sweep named with its --phase label, when it has one): the sweep files' points, and bench_serving / bench_one_batch records
-- grouped into a sweep by (tool, dataset, model) when the group has two or more batch sizes, concurrencies or
-- request rates. A record's variant is the one evidence_sessions gives it; it is the baseline when its server
-- config has no speculative algorithm (or, with no config, when it reports no accept length).
CREATE OR REPLACE VIEW sweep_series AS
WITH records AS (
    SELECT b.source_id, b.record_index, coalesce(l.given_phase, l.log_phase) AS phase, b.tool, b.dataset_name, b.request_rate, b.max_concurrency, b.output_throughput,
           b.accept_length, b.extra,
           coalesce(l.given_variant, l.own_variant, l.log_variant, 'bench:' || file_label(l.path)) AS variant,
           c.model_path, c.tp_size, c.speculative_algorithm, c.speculative_num_steps, c.speculative_eagle_topk,
           c.speculative_num_draft_tokens, c.source_id IS NOT NULL AS has_config
    FROM bench_serving b
    JOIN bench_record_links l USING (source_id, record_index)
    LEFT JOIN server_configs c ON c.source_id = b.source_id AND c.segment = b.record_index
), shaped AS (
    SELECT *, coalesce(phase || ' · ', '') || coalesce(tool, 'bench') || ' · ' || coalesce(dataset_name, 'unnamed dataset') AS sweep,
           CASE WHEN tool LIKE '%bench_one_batch%' THEN max_concurrency END AS batch_size,
           CASE WHEN tool NOT LIKE '%bench_one_batch%' OR tool IS NULL THEN max_concurrency END AS concurrency,
           CASE WHEN max_concurrency IS NULL AND isfinite(request_rate) THEN request_rate END AS rate
    FROM records
), swept AS (
    SELECT sweep, model_path FROM shaped
    GROUP BY sweep, model_path
    HAVING count(DISTINCT coalesce(CAST(batch_size AS DOUBLE), CAST(concurrency AS DOUBLE), rate)) >= 2
)
SELECT p.source_id, p.session_id, coalesce(p.phase || ' · ', '') || p.sweep AS sweep, p.phase, p.model, p.dataset, p.variant, p.is_baseline, p.batch_size, p.concurrency,
       CAST(NULL AS DOUBLE) AS request_rate, p.steps, p.topk, p.num_draft_tokens, p.accept_length, p.step_time_ms,
       p.throughput, p.throughput_kind, 'sweep file' AS accept_length_from, p.simulated, p.simulated_by,
       CAST(NULL AS INTEGER) AS tp_size, src.kind AS origin, src.path
FROM sweep_points p JOIN sources src USING (source_id)
UNION ALL
SELECT s.source_id, s.source_id || '-rec' || s.record_index, s.sweep, s.phase, s.model_path, s.dataset_name, s.variant,
       CASE WHEN s.variant ILIKE 'baseline%' THEN true
            WHEN s.has_config THEN s.speculative_algorithm IS NULL
            ELSE s.accept_length IS NULL END,
       s.batch_size, s.concurrency, s.rate, s.speculative_num_steps, s.speculative_eagle_topk,
       s.speculative_num_draft_tokens, s.accept_length, CAST(NULL AS DOUBLE), s.output_throughput,
       'measured wall-clock', 'server-reported', coalesce(s.extra ILIKE '%simulate_acc%' OR s.extra ILIKE '%synthetic%', false),
       CASE WHEN s.extra ILIKE '%simulate_acc%' THEN 'SGLANG_SIMULATE_ACC_LEN in the record'
            WHEN s.extra ILIKE '%synthetic%' THEN 'synthetic acceptance in the record' END,
       s.tp_size, 'bench_serving', src.path
FROM shaped s JOIN swept w ON w.sweep = s.sweep AND w.model_path IS NOT DISTINCT FROM s.model_path
JOIN sources src USING (source_id);
