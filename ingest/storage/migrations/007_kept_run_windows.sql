-- 007_kept_run_windows: the views of 005/006 (log_segments, session_logs, run_log_stats) kept as
-- tables, so the dashboard reads rows instead of re-deriving them from 10 million decode lines on
-- every page. Each table holds exactly its view's rows (tests/test_kept_windows.py compares them);
-- ingest/storage/run_windows.py refreshes them inside load_source's transaction, for the sessions the
-- loaded file can change. The views stay the definition: readers use the tables only while
-- run_windows_basis() equals the value stored at the last refresh (a clock skew set without a
-- load, or rows changed behind the store's back, sends them back to the views).
-- A later migration that changes what these views return must rebuild the tables.
-- Documented in docs/schema.md.

CREATE MACRO clock_skew_us() AS (
    CAST(1e6 * coalesce((SELECT TRY_CAST(value AS DOUBLE) FROM store_meta WHERE key = 'clock_skew_s'), 2.0) AS BIGINT)
);

-- What the kept tables were computed from: the clock skew and the row counts of their inputs.
CREATE MACRO run_windows_basis() AS (
    'clock_skew_us=' || clock_skew_us()
    || ' sources=' || (SELECT count(*) FROM sources)
    || ' sessions=' || (SELECT count(*) FROM sessions)
    || ' bench_runs=' || (SELECT count(*) FROM bench_runs)
    || ' server_configs=' || (SELECT count(*) FROM server_configs)
    || ' decode_stats=' || (SELECT count(*) FROM decode_stats)
);

-- The columns are named log_source_id, not source_id: these rows belong to no single source file
-- (store.data_tables and the per-source row counts leave them out).
CREATE TABLE log_segment_spans (
    log_source_id VARCHAR NOT NULL,
    segment       INTEGER,
    phase         VARCHAR,
    variant       VARCHAR,
    first_ts      TIMESTAMP,
    last_ts       TIMESTAMP,
    decode_lines  BIGINT,
    ingest_group  VARCHAR
);

CREATE TABLE session_log_links (
    session_id    VARCHAR NOT NULL,
    log_source_id VARCHAR NOT NULL,
    segment       INTEGER,
    link_method   VARCHAR NOT NULL
);

CREATE TABLE run_windows (
    session_id               VARCHAR NOT NULL,
    run_index                INTEGER,
    is_warmup                BOOLEAN,
    log_source_id            VARCHAR NOT NULL,
    segment                  INTEGER,
    join_method              VARCHAR,
    decode_lines             BIGINT,
    first_line_no            BIGINT,
    last_line_no             BIGINT,
    window_start             TIMESTAMP,
    window_end               TIMESTAMP,
    tokens_per_step          DOUBLE,
    accepted_drafts_per_step DOUBLE,
    gen_throughput_mean      DOUBLE,
    gen_throughput_min       DOUBLE,
    gen_throughput_max       DOUBLE,
    -- every decode line numbered first_line_no..last_line_no (what accept length pools), summed
    range_lines              BIGINT,
    range_accept_lines       BIGINT,
    range_tokens_weighted    DOUBLE,
    range_tokens_weight      HUGEINT,
    range_drafts_weighted    DOUBLE,
    range_drafts_weight      HUGEINT,
    range_cuda_graph_off     BOOLEAN,
    range_cuda_graph_on      BOOLEAN
);

-- session_logs for some sessions (NULL: all), from log_segment_spans instead of the decode lines.
CREATE MACRO session_logs_for(session_ids) AS TABLE
WITH skew AS (
    SELECT to_microseconds(clock_skew_us()) AS s
), session_spans AS (
    SELECT s.session_id, s.phase, s.variant, src.ingest_group,
           min(r.started_at) - any_value(skew.s) AS first_start, max(r.ended_at) + any_value(skew.s) AS last_end
    FROM sessions s JOIN sources src USING (source_id) LEFT JOIN bench_runs r USING (session_id), skew
    WHERE session_ids IS NULL OR s.session_id IN (SELECT unnest(session_ids))
    GROUP BY s.session_id, s.phase, s.variant, src.ingest_group
), segments AS (
    SELECT log_source_id AS source_id, segment, phase, variant, first_ts, last_ts, decode_lines, ingest_group,
           count(*) OVER (PARTITION BY ingest_group) AS segments_in_group
    FROM log_segment_spans
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

-- run_log_stats for some sessions (NULL: all), from session_log_links, plus the range sums.
-- The same steps as run_log_stats_for (006); a time window that does not overlap its segment's
-- lines (log_segment_spans) skips the join with decode_stats, where it could match nothing.
CREATE MACRO run_windows_for(session_ids) AS TABLE
WITH skew AS (
    SELECT to_microseconds(clock_skew_us()) AS s
), windows AS (
    SELECT r.session_id, r.run_index, r.is_warmup, l.log_source_id, l.segment,
           CASE WHEN r.started_at IS NOT NULL AND r.ended_at IS NOT NULL THEN 'time_window' ELSE 'grouping' END
               AS join_method,
           r.started_at, r.ended_at,
           r.started_at - skew.s AS window_start,
           r.ended_at + skew.s AS window_end
    FROM bench_runs r JOIN session_log_links l USING (session_id), skew
    WHERE session_ids IS NULL OR r.session_id IN (SELECT unnest(session_ids))
), reachable AS (
    SELECT * FROM windows w
    WHERE w.join_method = 'grouping' OR EXISTS (
        SELECT 1 FROM log_segment_spans g
        WHERE g.log_source_id = w.log_source_id AND g.segment = w.segment
          AND g.first_ts <= w.window_end AND w.window_start <= g.last_ts)
), candidates AS (
    SELECT w.session_id, w.run_index, w.is_warmup, w.log_source_id, w.segment, w.join_method, d.line_no, d.ts,
           d.tokens_per_step AS tps, d.accepted_drafts_per_step AS adps,
           coalesce(d.running_req, 1) AS weight, d.gen_throughput,
           CASE WHEN w.join_method = 'grouping' THEN INTERVAL 0 SECOND
                WHEN d.ts < w.started_at THEN w.started_at - d.ts
                WHEN d.ts > w.ended_at THEN d.ts - w.ended_at
                ELSE INTERVAL 0 SECOND END AS distance
    FROM reachable w
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
), stats AS (
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
             w.window_start, w.window_end
), ranges AS (
    SELECT s.session_id, s.run_index, s.is_warmup, s.log_source_id, s.segment,
           count(*) AS range_lines,
           count(*) FILTER (WHERE d.tokens_per_step IS NOT NULL) AS range_accept_lines,
           sum(d.tokens_per_step * coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL)
               AS range_tokens_weighted,
           sum(coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL) AS range_tokens_weight,
           sum(d.accepted_drafts_per_step * coalesce(d.running_req, 1)) FILTER (WHERE d.accepted_drafts_per_step IS NOT NULL)
               AS range_drafts_weighted,
           sum(coalesce(d.running_req, 1)) FILTER (WHERE d.accepted_drafts_per_step IS NOT NULL) AS range_drafts_weight,
           bool_or(NOT d.cuda_graph) AS range_cuda_graph_off,
           bool_or(d.cuda_graph) AS range_cuda_graph_on
    FROM stats s
    JOIN decode_stats d ON d.source_id = s.log_source_id AND d.segment IS NOT DISTINCT FROM s.segment
        AND d.line_no BETWEEN s.first_line_no AND s.last_line_no
    GROUP BY s.session_id, s.run_index, s.is_warmup, s.log_source_id, s.segment
)
SELECT s.*, r.range_lines, r.range_accept_lines, r.range_tokens_weighted, r.range_tokens_weight,
       r.range_drafts_weighted, r.range_drafts_weight, r.range_cuda_graph_off, r.range_cuda_graph_on
FROM stats s
LEFT JOIN ranges r ON r.session_id = s.session_id AND r.run_index = s.run_index AND r.is_warmup = s.is_warmup
    AND r.log_source_id = s.log_source_id AND r.segment IS NOT DISTINCT FROM s.segment;

-- Fill them for the store as it is: a one-off cost; later loads refresh only what they touch.
INSERT INTO log_segment_spans
SELECT l.source_id, l.segment, l.phase, l.variant, l.first_ts, l.last_ts, l.decode_lines, src.ingest_group
FROM log_segments l JOIN sources src USING (source_id);
INSERT INTO session_log_links SELECT * FROM session_logs_for(NULL::VARCHAR[]);
INSERT INTO run_windows SELECT * FROM run_windows_for(NULL::VARCHAR[]);
INSERT OR REPLACE INTO store_meta VALUES ('run_windows_basis', run_windows_basis());
