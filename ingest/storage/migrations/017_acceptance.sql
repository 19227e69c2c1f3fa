-- 017_acceptance: acceptance in depth (issue #19): per draft position, per request, per dataset, and the
-- Prometheus /metrics snapshots some of it comes from. Documented in docs/schema.md; the definitions are
-- docs/metrics.md's "Acceptance in depth" section.

-- Per-position acceptance as an engine printed it (vLLM SpecDecoding metrics lines): rate = drafts whose
-- position `position` (1-based) was accepted / drafts = P(at least `position` drafts accepted).
CREATE TABLE acceptance_positions (
    source_id VARCHAR NOT NULL,
    segment INTEGER,
    line_no BIGINT,
    ts TIMESTAMP,
    engine_index INTEGER,
    position INTEGER NOT NULL,
    rate DOUBLE NOT NULL,
    drafts BIGINT,
    origin VARCHAR NOT NULL,
    extra VARCHAR
);

-- One request's spec-decode statistics (vLLM metrics.speculative_decoding, SGLang meta_info spec_*,
-- AIPerf spec_decode_acceptance, bench_serving --output-details spec arrays).
CREATE TABLE acceptance_requests (
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

CREATE TABLE metric_samples (
    source_id VARCHAR NOT NULL,
    snapshot INTEGER NOT NULL,
    line_no BIGINT,
    ts TIMESTAMP,
    metric VARCHAR NOT NULL,
    family VARCHAR,
    kind VARCHAR NOT NULL,
    labels VARCHAR,
    engine_index INTEGER,
    position INTEGER,
    value DOUBLE
);

CREATE TABLE counter_deltas (
    source_id VARCHAR NOT NULL,
    "window" INTEGER NOT NULL,
    line_no BIGINT,
    metric VARCHAR NOT NULL,
    labels VARCHAR,
    engine_index INTEGER,
    position INTEGER,
    value_before DOUBLE,
    value_after DOUBLE,
    delta DOUBLE,
    reset BOOLEAN NOT NULL
);

-- Which variant a row of a file belongs to: the --variant label, else the file's name.
CREATE OR REPLACE MACRO acceptance_variant(given, prefix, path) AS coalesce(given, prefix || file_label(path));

-- Every per-position rate the store holds, with the variant it belongs to and where it came from.
--   scope 'window': a log interval or a counter delta between two snapshots;
--   scope 'run': one benchmark run's summary; scope 'lifetime': counters since the server started.
CREATE OR REPLACE VIEW acceptance_position_rates AS
WITH bench AS (
    SELECT b.source_id, b.record_index, b.line_no, b.tool, b.extra,
           e.variant, e.phase
    FROM bench_serving b
    LEFT JOIN evidence_sessions e ON e.origin = 'bench_record' AND e.source_id = b.source_id AND e.part = b.record_index
    WHERE b.extra IS NOT NULL
), bench_lists AS (
    SELECT source_id, record_index, line_no, tool, variant, phase, 1.0 AS scale,
           CAST(json_extract(extra, '$.spec_decode_per_position_acceptance_rates') AS DOUBLE[]) AS rates,
           TRY_CAST(json_extract(extra, '$.spec_decode_num_drafts') AS BIGINT) AS drafts
    FROM bench WHERE json_exists(extra, '$.spec_decode_per_position_acceptance_rates')
    UNION ALL
    SELECT source_id, record_index, line_no, tool, variant, phase, 1.0,
           CAST(json_extract(extra, '$.acceptance_at_token') AS DOUBLE[]),
           TRY_CAST(json_extract(extra, '$.num_drafts') AS BIGINT)
    FROM bench WHERE json_exists(extra, '$.acceptance_at_token')
    UNION ALL
    SELECT source_id, record_index, line_no, tool, variant, phase, 0.01,
           CAST(json_extract(extra, '$.per_position_acceptance_pct') AS DOUBLE[]), NULL
    FROM bench WHERE json_exists(extra, '$.per_position_acceptance_pct')
), drafts_per_window AS (
    SELECT source_id, "window", engine_index, sum(delta) AS drafts, bool_or(reset) AS reset
    FROM counter_deltas WHERE metric = 'vllm:spec_decode_num_drafts_total' GROUP BY ALL
), lifetime_drafts AS (
    SELECT source_id, snapshot, engine_index, sum(value) AS drafts
    FROM metric_samples WHERE metric = 'vllm:spec_decode_num_drafts_total' GROUP BY ALL
)
SELECT coalesce(l.variant, acceptance_variant(src.variant, 'log:', src.path)) AS variant,
       coalesce(l.phase, src.phase) AS phase, p.source_id, 'vLLM SpecDecoding metrics line' AS origin,
       'window' AS scope, 'line ' || p.line_no AS "window", p.ts, p.engine_index,
       p.position, p.rate, p.drafts
FROM acceptance_positions p JOIN sources src USING (source_id)
LEFT JOIN server_lifetimes l ON l.log_source_id = p.source_id AND l.segment IS NOT DISTINCT FROM p.segment
UNION ALL
SELECT coalesce(x.variant, acceptance_variant(src.variant, 'bench:', src.path)), coalesce(x.phase, src.phase),
       x.source_id, x.tool || ' summary', 'run', 'record ' || x.record_index, CAST(NULL AS TIMESTAMP), NULL,
       CAST(g.i AS INTEGER), x.rates[g.i] * x.scale, x.drafts
FROM bench_lists x JOIN sources src USING (source_id), LATERAL (SELECT unnest(range(1, len(x.rates) + 1)) AS i) g
WHERE x.rates[g.i] IS NOT NULL
UNION ALL
SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, c.source_id,
       'Prometheus counter delta', 'window', 'snapshots ' || (c."window" - 1) || '→' || c."window", CAST(NULL AS TIMESTAMP),
       c.engine_index, c.position + 1, c.delta / d.drafts, CAST(d.drafts AS BIGINT)
FROM counter_deltas c JOIN sources src USING (source_id)
JOIN drafts_per_window d ON d.source_id = c.source_id AND d."window" = c."window"
     AND d.engine_index IS NOT DISTINCT FROM c.engine_index
WHERE c.metric = 'vllm:spec_decode_num_accepted_tokens_per_pos_total' AND c.position IS NOT NULL AND d.drafts > 0
UNION ALL
SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, m.source_id,
       'Prometheus counters since server start', 'lifetime', 'snapshot ' || m.snapshot, m.ts,
       m.engine_index, m.position + 1, m.value / d.drafts, CAST(d.drafts AS BIGINT)
FROM metric_samples m JOIN sources src USING (source_id)
JOIN lifetime_drafts d ON d.source_id = m.source_id AND d.snapshot = m.snapshot
     AND d.engine_index IS NOT DISTINCT FROM m.engine_index
WHERE m.metric = 'vllm:spec_decode_num_accepted_tokens_per_pos_total' AND m.position IS NOT NULL AND d.drafts > 0
  AND NOT EXISTS (SELECT 1 FROM counter_deltas c WHERE c.source_id = m.source_id);

-- Per-request rows with their variant (a bench record's own, else --variant, else the file name).
CREATE OR REPLACE VIEW acceptance_request_rows AS
SELECT coalesce(e.variant, acceptance_variant(src.variant, 'requests:', src.path)) AS variant,
       coalesce(e.phase, src.phase) AS phase, src.path, r.*
FROM acceptance_requests r JOIN sources src USING (source_id)
LEFT JOIN evidence_sessions e ON e.origin = 'bench_record' AND e.source_id = r.source_id AND e.part = r.record_index
     AND src.kind = 'bench_serving_jsonl';

-- Accept length per window from Prometheus: counter deltas (a window), counters since start (lifetime),
-- and the engines' own gauges (SGLang's averaging; never differenced).
CREATE OR REPLACE VIEW acceptance_metric_windows AS
WITH deltas AS (
    SELECT source_id, "window", bool_or(reset) AS reset,
           sum(delta) FILTER (WHERE metric = 'vllm:spec_decode_num_drafts_total') AS drafts,
           sum(delta) FILTER (WHERE metric = 'vllm:spec_decode_num_draft_tokens_total') AS draft_tokens,
           sum(delta) FILTER (WHERE metric = 'vllm:spec_decode_num_accepted_tokens_total') AS accepted,
           count(DISTINCT engine_index) AS engines
    FROM counter_deltas GROUP BY ALL
), lifetime AS (
    SELECT source_id, snapshot, any_value(ts) AS ts,
           sum(value) FILTER (WHERE metric = 'vllm:spec_decode_num_drafts_total') AS drafts,
           sum(value) FILTER (WHERE metric = 'vllm:spec_decode_num_draft_tokens_total') AS draft_tokens,
           sum(value) FILTER (WHERE metric = 'vllm:spec_decode_num_accepted_tokens_total') AS accepted,
           count(DISTINCT engine_index) AS engines
    FROM metric_samples WHERE kind = 'counter' GROUP BY ALL
)
SELECT acceptance_variant(src.variant, 'metrics:', src.path) AS variant, src.phase, d.source_id,
       'counter delta' AS scope, 'snapshots ' || (d."window" - 1) || '→' || d."window" AS "window",
       d.reset, d.engines, d.drafts, d.draft_tokens, d.accepted,
       CASE WHEN d.drafts > 0 THEN 1 + d.accepted / d.drafts END AS accept_length,
       CASE WHEN d.draft_tokens > 0 THEN d.accepted / d.draft_tokens END AS accept_rate
FROM deltas d JOIN sources src USING (source_id)
WHERE d.drafts IS NOT NULL OR d.accepted IS NOT NULL
UNION ALL
SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, l.source_id, 'counters since start',
       'snapshot ' || l.snapshot, false, l.engines, l.drafts, l.draft_tokens, l.accepted,
       CASE WHEN l.drafts > 0 THEN 1 + l.accepted / l.drafts END,
       CASE WHEN l.draft_tokens > 0 THEN l.accepted / l.draft_tokens END
FROM lifetime l JOIN sources src USING (source_id)
WHERE l.drafts IS NOT NULL OR l.accepted IS NOT NULL
UNION ALL
SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, m.source_id, 'gauge (as exported)',
       'snapshot ' || m.snapshot, false, count(DISTINCT m.engine_index), NULL, NULL, NULL,
       avg(m.value) FILTER (WHERE m.metric = 'sglang:spec_accept_length'),
       avg(m.value) FILTER (WHERE m.metric = 'sglang:spec_accept_rate')
FROM metric_samples m JOIN sources src USING (source_id)
WHERE m.kind = 'gauge' AND m.metric IN ('sglang:spec_accept_length', 'sglang:spec_accept_rate')
GROUP BY ALL;

-- Accept length per dataset (benchmark name) and variant: benchmark records that name their dataset
-- (bench_serving's dataset_name, an EAGLE bench summary's task) and per-request rows that carry one.
CREATE OR REPLACE VIEW acceptance_datasets AS
SELECT coalesce(e.variant, acceptance_variant(src.variant, 'bench:', src.path)) AS variant,
       coalesce(e.phase, src.phase) AS phase, b.dataset_name AS dataset, b.source_id,
       b.tool || ' record' AS origin,
       CASE WHEN b.tool IN ('sglang_eagle_bench', 'vllm spec_decode.py') THEN 'run' ELSE 'server lifetime' END AS scope,
       b.accept_length, b.output_throughput, b.completed AS requests, 1 AS records
FROM bench_serving b JOIN sources src USING (source_id)
LEFT JOIN evidence_sessions e ON e.origin = 'bench_record' AND e.source_id = b.source_id AND e.part = b.record_index
WHERE b.dataset_name IS NOT NULL AND b.accept_length IS NOT NULL
UNION ALL
SELECT variant, phase, dataset, source_id, 'per-request ' || origin, 'requests',
       sum(accept_length * coalesce(spec_steps, 1)) / sum(coalesce(spec_steps, 1)), NULL, count(*), count(DISTINCT record_index)
FROM acceptance_request_rows
WHERE dataset IS NOT NULL AND accept_length IS NOT NULL
GROUP BY variant, phase, dataset, source_id, origin;
