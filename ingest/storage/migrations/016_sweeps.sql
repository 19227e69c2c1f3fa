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
