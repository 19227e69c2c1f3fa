-- 006_session_links: link sessions to log segments with hash-joinable rules, and by labels only
-- when the times agree. A store of 10,000 sessions and 10,000 logs made the OR-join of 005 pair
-- every session with every log of its labels (100 per label pair), so Compare took minutes.
-- Same contract as 005 (docs/schema.md, views session_logs and run_log_stats).

CREATE OR REPLACE VIEW session_logs AS
WITH skew AS (
    SELECT to_microseconds(CAST(1e6 * coalesce(
        (SELECT TRY_CAST(value AS DOUBLE) FROM store_meta WHERE key = 'clock_skew_s'), 2.0) AS BIGINT)) AS s
), session_spans AS (
    SELECT s.session_id, s.phase, s.variant, src.ingest_group,
           min(r.started_at) - any_value(skew.s) AS first_start, max(r.ended_at) + any_value(skew.s) AS last_end
    FROM sessions s JOIN sources src USING (source_id) LEFT JOIN bench_runs r USING (session_id), skew
    GROUP BY s.session_id, s.phase, s.variant, src.ingest_group
), segments AS (
    SELECT l.*, src.ingest_group, count(*) OVER (PARTITION BY src.ingest_group) AS segments_in_group
    FROM log_segments l JOIN sources src USING (source_id)
), same_call AS (
    SELECT s.session_id, l.source_id, l.segment,
           CASE WHEN l.variant = s.variant OR (s.first_start <= l.last_ts AND l.first_ts <= s.last_end)
                    THEN 'same ingest call'
                WHEN s.first_start IS NULL AND l.segments_in_group = 1
                    THEN 'same ingest call, only log'
           END AS link_method
    FROM session_spans s JOIN segments l USING (ingest_group)
), by_labels AS (
    SELECT s.session_id, l.source_id, l.segment, 'phase+variant labels' AS link_method
    FROM session_spans s
    JOIN segments l ON l.variant = s.variant AND l.phase IS NOT DISTINCT FROM s.phase
    WHERE s.ingest_group IS DISTINCT FROM l.ingest_group
      AND (s.first_start IS NULL OR l.first_ts IS NULL OR (s.first_start <= l.last_ts AND l.first_ts <= s.last_end))
)
SELECT session_id, source_id AS log_source_id, segment, link_method FROM same_call WHERE link_method IS NOT NULL
UNION ALL
SELECT session_id, source_id, segment, link_method FROM by_labels;

-- run_log_stats for chosen sessions only: the session filter applies before the window functions
-- (a filter on the view cannot pass them), so one page's sessions cost what they hold, not the store.
-- run_log_stats_for(NULL) is every session; the view run_log_stats keeps the 005 contract.
CREATE OR REPLACE MACRO run_log_stats_for(session_ids) AS TABLE
WITH skew AS (
    SELECT to_microseconds(CAST(1e6 * coalesce(
        (SELECT TRY_CAST(value AS DOUBLE) FROM store_meta WHERE key = 'clock_skew_s'), 2.0) AS BIGINT)) AS s
), windows AS (
    SELECT r.session_id, r.run_index, r.is_warmup, l.log_source_id, l.segment,
           CASE WHEN r.started_at IS NOT NULL AND r.ended_at IS NOT NULL THEN 'time_window' ELSE 'grouping' END
               AS join_method,
           r.started_at, r.ended_at,
           r.started_at - skew.s AS window_start,
           r.ended_at + skew.s AS window_end
    FROM bench_runs r JOIN session_logs l USING (session_id), skew
    WHERE session_ids IS NULL OR list_contains(session_ids, r.session_id)
), candidates AS (
    SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, d.line_no, d.ts,
           d.tokens_per_step AS tps, d.accepted_drafts_per_step AS adps,
           coalesce(d.running_req, 1) AS weight, d.gen_throughput,
           CASE WHEN w.join_method = 'grouping' THEN INTERVAL 0 SECOND
                WHEN d.ts < w.started_at THEN w.started_at - d.ts
                WHEN d.ts > w.ended_at THEN d.ts - w.ended_at
                ELSE INTERVAL 0 SECOND END AS distance
    FROM windows w
    JOIN decode_stats d ON d.source_id = w.log_source_id AND d.segment = w.segment
        AND (w.join_method = 'grouping' OR d.ts BETWEEN w.window_start AND w.window_end)
), assigned AS (
    SELECT * FROM candidates
    QUALIFY join_method = 'grouping' OR row_number() OVER (PARTITION BY session_id, log_source_id, segment, line_no
                               ORDER BY distance, is_warmup DESC, run_index) = 1
), lines AS (
    SELECT *, row_number() OVER (PARTITION BY session_id, run_index, is_warmup, log_source_id, segment
                                 ORDER BY ts, line_no) AS nth
    FROM assigned
)
SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method,
       count(l.line_no) AS decode_lines,
       min(l.line_no) AS first_line_no,
       max(l.line_no) AS last_line_no,
       w.window_start, w.window_end,
       sum(l.tps * l.weight) FILTER (WHERE l.tps IS NOT NULL)
           / sum(l.weight) FILTER (WHERE l.tps IS NOT NULL) AS tokens_per_step,
       sum(l.adps * l.weight) FILTER (WHERE l.adps IS NOT NULL)
           / sum(l.weight) FILTER (WHERE l.adps IS NOT NULL) AS accepted_drafts_per_step,
       avg(l.gen_throughput) FILTER (WHERE l.nth > 1) AS gen_throughput_mean,
       min(l.gen_throughput) FILTER (WHERE l.nth > 1) AS gen_throughput_min,
       max(l.gen_throughput) FILTER (WHERE l.nth > 1) AS gen_throughput_max
FROM windows w
LEFT JOIN lines l USING (session_id, run_index, is_warmup, log_source_id, segment)
GROUP BY w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method,
         w.window_start, w.window_end;

CREATE OR REPLACE VIEW run_log_stats AS SELECT * FROM run_log_stats_for(NULL::VARCHAR[]);
