-- 018_metric_file_pairs: two /metrics snapshots saved as two files (`curl …/metrics > before.prom`, run,
-- `curl …/metrics > after.prom`) give per-window counter deltas, as two snapshots inside one file do
-- (issue #19). The parser reads one file only (one transaction per source): it records each snapshot's
-- scrape time and the file's modification time (metric_snapshots); the pairing of consecutive files is
-- these views. Documented in docs/schema.md; the rules in docs/formats.md and docs/metrics.md.

CREATE TABLE metric_snapshots (
    source_id VARCHAR NOT NULL,
    snapshot INTEGER NOT NULL,
    first_line BIGINT,
    last_line BIGINT,
    samples BIGINT NOT NULL,
    scraped_at TIMESTAMP,
    file_mtime TIMESTAMP
);

-- Files loaded before this migration: their snapshots as stored (no modification time was recorded).
INSERT INTO metric_snapshots
SELECT source_id, snapshot, min(line_no), max(line_no), count(*), max(ts), NULL
FROM metric_samples GROUP BY source_id, snapshot;

-- The Prometheus text files in the order they were scraped, per (folder, --variant): by the samples' own
-- timestamps when every file of the group prints them, else by the files' modification times recorded at
-- ingest, else by name; ties by name.
CREATE OR REPLACE VIEW metric_file_order AS
WITH files AS (
    SELECT s.source_id, src.path, src.variant, src.phase,
           regexp_replace(src.path, '[/\\][^/\\]*$', '') AS folder,
           min(s.snapshot) AS first_snapshot, max(s.snapshot) AS last_snapshot,
           min(s.scraped_at) AS scraped_at, max(s.file_mtime) AS file_mtime
    FROM metric_snapshots s JOIN sources src USING (source_id)
    GROUP BY ALL
), counted AS (
    SELECT *,
           CASE WHEN count(scraped_at) OVER g = count(*) OVER g THEN 'scrape time'
                WHEN count(file_mtime) OVER g = count(*) OVER g THEN 'file modification time'
                ELSE 'file name' END AS ordered_by
    FROM files
    WINDOW g AS (PARTITION BY folder, variant)
)
SELECT source_id, path, variant, phase, folder, first_snapshot, last_snapshot, scraped_at, file_mtime, ordered_by,
       CAST(row_number() OVER (
           PARTITION BY folder, variant
           ORDER BY CASE ordered_by WHEN 'scrape time' THEN scraped_at WHEN 'file modification time' THEN file_mtime END
                    NULLS FIRST, path, source_id) AS INTEGER) AS file_order
FROM counted;

-- Consecutive files of one group: the earlier file's last snapshot against the later file's first.
CREATE OR REPLACE VIEW metric_file_pairs AS
SELECT * FROM (
    SELECT folder, variant, phase, ordered_by,
           lag(source_id) OVER w AS before_source_id, lag(path) OVER w AS before_path,
           lag(last_snapshot) OVER w AS before_snapshot,
           source_id AS after_source_id, path AS after_path, first_snapshot AS after_snapshot
    FROM metric_file_order
    WINDOW w AS (PARTITION BY folder, variant ORDER BY file_order)
) WHERE before_source_id IS NOT NULL;

-- Each counter series' change between the two files of a pair (gauges are never differenced). A counter
-- that went down is a server restart between the snapshots (or files not of one server, or not in this
-- order): the window counts from zero, `reset` is true and `warning` names both files.
CREATE OR REPLACE VIEW metric_file_deltas AS
SELECT p.folder, p.variant, p.phase, p.ordered_by, p.before_source_id, p.before_path, p.after_source_id, p.after_path,
       a.line_no, a.metric, a.labels, a.engine_index, a.position,
       b.value AS value_before, a.value AS value_after,
       CASE WHEN a.value < b.value THEN a.value ELSE a.value - b.value END AS delta,
       a.value < b.value AS reset,
       CASE WHEN a.value < b.value THEN
           'server restarted between snapshots: ' || a.metric || ' ' || a.labels || ' went down from '
           || CAST(b.value AS VARCHAR) || ' in ' || p.before_path || ' to ' || CAST(a.value AS VARCHAR) || ' in '
           || p.after_path || ' (files ordered by ' || p.ordered_by || '); this window counts from zero'
       END AS warning
FROM metric_file_pairs p
JOIN metric_samples b ON b.source_id = p.before_source_id AND b.snapshot = p.before_snapshot AND b.kind = 'counter'
JOIN metric_samples a ON a.source_id = p.after_source_id AND a.snapshot = p.after_snapshot AND a.kind = 'counter'
     AND a.metric = b.metric AND a.labels = b.labels;

-- The views the Acceptance page reads, as in 017, plus the windows between two files (scope 'window',
-- origin 'Prometheus counter delta between files', window 'before.prom → after.prom').
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
), file_drafts AS (
    SELECT before_source_id, after_source_id, engine_index, sum(delta) AS drafts
    FROM metric_file_deltas WHERE metric = 'vllm:spec_decode_num_drafts_total' GROUP BY ALL
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
  AND NOT EXISTS (SELECT 1 FROM counter_deltas c WHERE c.source_id = m.source_id)
UNION ALL
SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, f.after_source_id,
       'Prometheus counter delta between files', 'window', file_label(f.before_path) || ' → ' || file_label(f.after_path),
       CAST(NULL AS TIMESTAMP), f.engine_index, f.position + 1, f.delta / d.drafts, CAST(d.drafts AS BIGINT)
FROM metric_file_deltas f JOIN sources src ON src.source_id = f.after_source_id
JOIN file_drafts d ON d.before_source_id = f.before_source_id AND d.after_source_id = f.after_source_id
     AND d.engine_index IS NOT DISTINCT FROM f.engine_index
WHERE f.metric = 'vllm:spec_decode_num_accepted_tokens_per_pos_total' AND f.position IS NOT NULL AND d.drafts > 0;

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
), file_deltas AS (
    SELECT before_source_id, before_path, after_source_id, after_path, bool_or(reset) AS reset,
           sum(delta) FILTER (WHERE metric = 'vllm:spec_decode_num_drafts_total') AS drafts,
           sum(delta) FILTER (WHERE metric = 'vllm:spec_decode_num_draft_tokens_total') AS draft_tokens,
           sum(delta) FILTER (WHERE metric = 'vllm:spec_decode_num_accepted_tokens_total') AS accepted,
           count(DISTINCT engine_index) AS engines
    FROM metric_file_deltas GROUP BY ALL
)
SELECT acceptance_variant(src.variant, 'metrics:', src.path) AS variant, src.phase, d.source_id,
       'counter delta' AS scope, 'snapshots ' || (d."window" - 1) || '→' || d."window" AS "window",
       d.reset, d.engines, d.drafts, d.draft_tokens, d.accepted,
       CASE WHEN d.drafts > 0 THEN 1 + d.accepted / d.drafts END AS accept_length,
       CASE WHEN d.draft_tokens > 0 THEN d.accepted / d.draft_tokens END AS accept_rate
FROM deltas d JOIN sources src USING (source_id)
WHERE d.drafts IS NOT NULL OR d.accepted IS NOT NULL
UNION ALL
SELECT acceptance_variant(src.variant, 'metrics:', src.path), src.phase, f.after_source_id, 'counter delta',
       file_label(f.before_path) || ' → ' || file_label(f.after_path),
       f.reset, f.engines, f.drafts, f.draft_tokens, f.accepted,
       CASE WHEN f.drafts > 0 THEN 1 + f.accepted / f.drafts END,
       CASE WHEN f.draft_tokens > 0 THEN f.accepted / f.draft_tokens END
FROM file_deltas f JOIN sources src ON src.source_id = f.after_source_id
WHERE f.drafts IS NOT NULL OR f.accepted IS NOT NULL
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
