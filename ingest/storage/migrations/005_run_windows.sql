-- 005_run_windows: tie benchmark runs to the server-log lines they caused.
-- Documented in docs/schema.md (views log_segments, session_logs, run_log_stats).

-- Every server lifetime of every log, labelled: the config's labels, else the ingest-time labels.
CREATE VIEW log_segments AS
WITH segs AS (
    SELECT source_id, segment, min(ts) AS first_ts, max(ts) AS last_ts, count(*) AS decode_lines
    FROM decode_stats GROUP BY source_id, segment
    UNION ALL
    SELECT c.source_id, c.segment, c.ts, c.ts, 0
    FROM server_configs c
    WHERE NOT EXISTS (SELECT 1 FROM decode_stats d WHERE d.source_id = c.source_id AND d.segment = c.segment)
)
SELECT s.source_id, s.segment,
       coalesce(c.phase, src.phase) AS phase,
       coalesce(c.variant, src.variant) AS variant,
       s.first_ts, s.last_ts, s.decode_lines
FROM segs s
JOIN sources src USING (source_id)
LEFT JOIN server_configs c ON c.source_id = s.source_id AND c.segment = s.segment
WHERE src.kind <> 'bench_serving_jsonl';

-- Which log segments belong with a benchmark session:
--   'phase+variant labels': the labels match (files ingested separately);
--   'same ingest call': ingested together, and the labels match or the log's time range overlaps the runs;
--   'same ingest call, only log': ingested together, runs without times, and the call had one log segment.
CREATE VIEW session_logs AS
WITH session_spans AS (
    SELECT s.session_id, s.phase, s.variant, src.ingest_group,
           min(r.started_at) AS first_start, max(r.ended_at) AS last_end
    FROM sessions s JOIN sources src USING (source_id) LEFT JOIN bench_runs r USING (session_id)
    GROUP BY ALL
), segments AS (
    SELECT l.*, src.ingest_group,
           count(*) OVER (PARTITION BY src.ingest_group) AS segments_in_group
    FROM log_segments l JOIN sources src USING (source_id)
), links AS (
    SELECT s.session_id, l.source_id, l.segment,
           CASE
               WHEN s.ingest_group = l.ingest_group
                    AND (l.variant = s.variant OR (s.first_start <= l.last_ts AND l.first_ts <= s.last_end))
                   THEN 'same ingest call'
               WHEN s.ingest_group = l.ingest_group AND s.first_start IS NULL AND l.segments_in_group = 1
                   THEN 'same ingest call, only log'
               WHEN l.variant = s.variant AND l.phase IS NOT DISTINCT FROM s.phase
                   THEN 'phase+variant labels'
           END AS link_method
    FROM session_spans s JOIN segments l
        ON s.ingest_group = l.ingest_group OR (l.variant = s.variant AND l.phase IS NOT DISTINCT FROM s.phase)
)
SELECT session_id, source_id AS log_source_id, segment, link_method FROM links WHERE link_method IS NOT NULL;

-- Per run: the decode lines inside its time window, accept length weighted by #running-req, and
-- gen throughput without the window's first line (it spans the idle gap before the run).
-- A line within the clock-skew tolerance (store_meta clock_skew_s, default 2 s) of a window counts,
-- but each line goes to one run only: the one whose window is nearest (0 when inside it).
-- Runs without timestamps each get the whole linked segment ('grouping').
CREATE VIEW run_log_stats AS
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
