-- Every view and macro of the store, one definition each, in the order they can be created.
-- Migrations create and alter tables; these are re-created after them whenever the store's copy
-- differs from this file (ingest/storage/store.py: migrate), so a store made by older migrations gets
-- the current views. docs/schema.md says what each one means; docs/current-schema.sql is generated.

-- The public breakdown, one row per (source, rank, cycle, phase, kernel class).
CREATE OR REPLACE VIEW cycle_breakdown AS
SELECT source_id, session_id, rank, cycle_idx, cycle_phase AS phase, kernel_class, duration_ms,
       cycle_kind, complete, cycle_ms, cycle_start_us, union_ms, kernels, attribution,
       phase AS experiment_phase, variant
FROM cycle_phase_times;

-- One row per complete decode/speculative cycle and rank, phases side by side.
CREATE OR REPLACE VIEW cycle_totals AS
SELECT source_id, any_value(session_id) AS session_id, phase AS experiment_phase, variant, rank, cycle_idx, cycle_kind,
       any_value(cycle_ms) AS cycle_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'draft'), 0) AS draft_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'verify'), 0) AS verify_ms,
       CASE WHEN bool_or(kernel_class = 'measured') THEN NULL  -- hand-timed phases carry no kernel classes
            ELSE coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'verify' AND kernel_class = 'communication'), 0)
       END AS verify_comm_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'draft_extend'), 0) AS draft_extend_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'decode'), 0) AS decode_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'unattributed'), 0) AS unattributed_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'idle'), 0) AS idle_ms
FROM cycle_phase_times
WHERE complete AND cycle_kind IN ('speculative', 'decode')
GROUP BY source_id, phase, variant, rank, cycle_idx, cycle_kind;

-- Per rank: medians over complete cycles (ingest.derive.breakdown.summarize_rank computes the same).
CREATE OR REPLACE VIEW cycle_rank_summary AS
SELECT source_id, experiment_phase, variant, rank,
       count(*) AS complete_cycles,
       median(cycle_ms) AS median_cycle_ms,
       max(cycle_ms) AS max_cycle_ms,
       CASE WHEN sum(verify_ms) > 0 THEN median(verify_ms) END AS median_verify_ms,
       CASE WHEN sum(verify_ms) > 0 THEN median(verify_comm_ms) END AS median_verify_comm_ms,
       sum(verify_comm_ms) / nullif(sum(verify_ms), 0) AS verify_comm_share
FROM cycle_totals
GROUP BY source_id, experiment_phase, variant, rank;

-- Per profile: the pace of its slowest rank. slowest_rank: when ranks tie on the longest median
-- cycle, the lowest of them, every time (arg_max alone returned any of the tied ranks, so the same
-- store could answer rank 0 once and rank 1 the next time).
CREATE OR REPLACE VIEW cycle_pace AS
WITH per_rank AS (
    SELECT s.*, coalesce(t.profile_id, s.source_id) AS profile_key
    FROM cycle_rank_summary s LEFT JOIN trace_ranks t USING (source_id, rank)
)
SELECT profile_key, experiment_phase, variant,
       count(*) AS ranks,
       median(median_cycle_ms) AS median_cycle_ms_median,
       max(median_cycle_ms) AS median_cycle_ms_max,
       arg_max(rank, (median_cycle_ms, -rank)) FILTER (WHERE median_cycle_ms IS NOT NULL) AS slowest_rank,
       median(median_verify_ms) AS median_verify_ms_median,
       max(median_verify_ms) AS median_verify_ms_max,
       median(median_verify_comm_ms) AS median_verify_comm_ms_median,
       max(median_verify_comm_ms) AS median_verify_comm_ms_max,
       median(verify_comm_share) AS verify_comm_share_median,
       max(verify_comm_share) AS verify_comm_share_max
FROM per_rank
GROUP BY profile_key, experiment_phase, variant;

-- The same cycle on every rank of a profile: the fastest rank's communication time
-- approximates the transfer, the rest of the slowest rank's is waiting.
CREATE OR REPLACE VIEW cycle_rank_spread AS
SELECT coalesce(t.profile_id, c.source_id) AS profile_key, c.experiment_phase, c.variant, c.cycle_idx,
       count(*) AS ranks,
       min(c.verify_comm_ms) AS verify_comm_ms_min,
       median(c.verify_comm_ms) AS verify_comm_ms_median,
       max(c.verify_comm_ms) AS verify_comm_ms_max,
       min(c.cycle_ms) AS cycle_ms_min,
       max(c.cycle_ms) AS cycle_ms_max
FROM cycle_totals c LEFT JOIN trace_ranks t USING (source_id, rank)
GROUP BY ALL;

-- Every server lifetime of every log, labelled: the config's labels, else the ingest-time labels. The config rows of
-- benchmark records (bench_serving's server_info, a run-per-line JSONL's speculative block) describe the record's
-- server, not a lifetime of their own.
CREATE OR REPLACE VIEW log_segments AS
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
WHERE src.kind NOT IN ('bench_serving_jsonl', 'nested_runs_jsonl');

-- Which log segments belong with a benchmark session:
--   'phase+variant labels': the labels match (files ingested separately);
--   'same ingest call': ingested together, and the labels match or the log's time range overlaps the runs;
--   'same ingest call, only log': ingested together, runs without times, and the call had one log segment.
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

-- Per run: the decode lines inside its time window, accept length weighted by #running-req, and
-- gen throughput without the window's first line (it spans the idle gap before the run).
-- A line within the clock-skew tolerance (store_meta clock_skew_s, default 2 s) of a window counts,
-- but each line goes to one run only: the one whose window is nearest (0 when inside it).
-- Runs without timestamps each get the whole linked segment ('grouping').
CREATE OR REPLACE VIEW run_log_stats AS SELECT * FROM run_log_stats_for(NULL::VARCHAR[]);

CREATE OR REPLACE MACRO clock_skew_us() AS (
    CAST(1e6 * coalesce((SELECT TRY_CAST(value AS DOUBLE) FROM store_meta WHERE key = 'clock_skew_s'), 2.0) AS BIGINT)
);

-- What the kept tables were computed from: the clock skew and the row counts of their inputs.
CREATE OR REPLACE MACRO run_windows_basis() AS (
    'clock_skew_us=' || clock_skew_us()
    || ' sources=' || (SELECT count(*) FROM sources)
    || ' sessions=' || (SELECT count(*) FROM sessions)
    || ' bench_runs=' || (SELECT count(*) FROM bench_runs)
    || ' server_configs=' || (SELECT count(*) FROM server_configs)
    || ' decode_stats=' || (SELECT count(*) FROM decode_stats)
);

-- session_logs for some sessions (NULL: all), from log_segment_spans instead of the decode lines.
CREATE OR REPLACE MACRO session_logs_for(session_ids) AS TABLE
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
CREATE OR REPLACE MACRO run_windows_for(session_ids) AS TABLE
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

-- A file's name without its folder, its extensions and a rank suffix: what a person calls the file.
-- 'runs/hta_sampled_rank-0.json.gz' -> 'hta_sampled'; '1759255878.90-TP-3-DECODE.trace.json.gz' -> '1759255878.90'.
CREATE OR REPLACE MACRO file_label(path) AS
    regexp_replace(
        regexp_replace(
            regexp_replace(path, '^.*[/\\]', ''),
            '(\.(gz|zst|json|jsonl|trace|pt|log|txt|csv|tsv|out|md))+$', ''),
        '([_-]rank[_-]?[0-9]+|-TP-[0-9]+.*)$', '');

-- What a person calls a model: the last part of its path or Hub id ('moonshotai/Kimi-K2.5' ->
-- 'Kimi-K2.5'); a Hugging Face cache snapshot is named after its model, not its hash.
CREATE OR REPLACE MACRO model_label(path) AS
    CASE WHEN regexp_matches(path, 'models--[^/\\]+?--[^/\\]+[/\\]snapshots')
         THEN regexp_extract(path, 'models--[^/\\]+?--([^/\\]+)[/\\]snapshots', 1)
         ELSE nullif(regexp_extract(rtrim(path, '/\\'), '([^/\\]+)$', 1), '') END;

-- A config's variant name: the drafter settings when they tell two configs of one drafter apart (migration
-- 012), and the target model when one name would cover configs of several models: runs of two models are
-- never one system.
CREATE OR REPLACE VIEW config_names AS
WITH named AS (
    SELECT c.source_id, c.segment,
           c.variant || CASE
               WHEN src.variant IS NULL AND c.speculative_algorithm IS NOT NULL
                    AND count(DISTINCT [c.speculative_num_steps, c.speculative_eagle_topk, c.speculative_num_draft_tokens])
                        OVER (PARTITION BY c.variant, src.variant IS NULL) > 1
               THEN ' (steps ' || coalesce(CAST(c.speculative_num_steps AS VARCHAR), '?')
                    || ', topk ' || coalesce(CAST(c.speculative_eagle_topk AS VARCHAR), '?')
                    || ', draft tokens ' || coalesce(CAST(c.speculative_num_draft_tokens AS VARCHAR), '?') || ')'
               ELSE '' END AS variant,
           c.model_path, src.variant IS NULL AS unlabelled
    FROM server_configs c JOIN sources src USING (source_id)
)
SELECT source_id, segment,
       variant || CASE
           WHEN unlabelled AND count(DISTINCT coalesce(model_path, '')) OVER (PARTITION BY variant, unlabelled) > 1
           THEN ' · ' || coalesce(model_label(model_path), 'model unknown')
           ELSE '' END AS variant,
       model_path
FROM named;

-- A file's path split at its folders: [-1] the file, [-2] its folder, [-3] the folder above.
CREATE OR REPLACE MACRO path_parts(path) AS regexp_split_to_array(coalesce(path, ''), '[/\\]');

-- The phase a folder layout names: the folder above the file's folder, when it is named like a phase
-- ('phase-1', 'phase_2', 'Phase 3', 'stage-0', 'round-4': the word, then a number). The pipeline
-- gives an unphased file this phase at ingest (ingest.storage.store.folder_phase).
CREATE OR REPLACE MACRO folder_phase(path) AS
    CASE WHEN len(path_parts(path)) >= 3
          AND regexp_full_match(path_parts(path)[-3], '(?i)(phase|stage|round)[-_ ]?[0-9]+([-_.][A-Za-z0-9._-]*)?')
         THEN path_parts(path)[-3] END;

-- The variant a file's folder gives it when nothing better names it: in a folder layout the folder's
-- name; an upload of the Ingest page, its upload batch; else one unlabelled group per folder.
CREATE OR REPLACE MACRO folder_variant(path) AS
    CASE WHEN folder_phase(path) IS NOT NULL THEN path_parts(path)[-2]
         WHEN len(path_parts(path)) >= 3 AND path_parts(path)[-3] LIKE '%.uploads'
         THEN 'unlabelled: upload ' || path_parts(path)[-2]
         WHEN len(path_parts(path)) >= 2 AND path_parts(path)[-2] <> '' THEN 'unlabelled: ' || path_parts(path)[-2]
         ELSE 'unlabelled' END;

-- Where folder_variant's name came from (the value of evidence_sessions.variant_from).
CREATE OR REPLACE MACRO folder_variant_from(path) AS
    CASE WHEN folder_phase(path) IS NOT NULL THEN 'folder layout' ELSE 'folder, no label' END;

-- Every server lifetime a log shows (evidence: decode lines, prefill lines only, or profiler messages
-- only), with the session it is evidence of: its own ('server_lifetime'; none for profiler messages,
-- which give no figures), or the benchmark session linked to it.
CREATE OR REPLACE VIEW server_lifetimes AS
WITH spans AS (
    SELECT log_source_id, segment, phase, first_ts, last_ts, ingest_group, 'decode lines' AS evidence FROM log_segment_spans
    UNION ALL  -- a lifetime that logged only prefill batches is a server lifetime too
    SELECT p.source_id, p.segment, src.phase, min(p.ts), max(p.ts), src.ingest_group, 'prefill lines'
    FROM prefill_stats p JOIN sources src USING (source_id)
    WHERE NOT EXISTS (SELECT 1 FROM log_segment_spans l
                      WHERE l.log_source_id = p.source_id AND l.segment IS NOT DISTINCT FROM p.segment)
    GROUP BY p.source_id, p.segment, src.phase, src.ingest_group
    UNION ALL  -- a log of profiler messages only: no figures, but its traces' server
    SELECT p.source_id, p.segment, src.phase, min(p.ts), max(p.ts), src.ingest_group, 'profiler messages'
    FROM log_profiles p JOIN sources src USING (source_id)
    WHERE NOT EXISTS (SELECT 1 FROM log_segment_spans l
                      WHERE l.log_source_id = p.source_id AND l.segment IS NOT DISTINCT FROM p.segment)
      AND NOT EXISTS (SELECT 1 FROM prefill_stats f
                      WHERE f.source_id = p.source_id AND f.segment IS NOT DISTINCT FROM p.segment)
    GROUP BY p.source_id, p.segment, src.phase, src.ingest_group
)
SELECT s.log_source_id, s.segment, s.evidence, s.ingest_group, s.first_ts, s.last_ts,
       s.log_source_id || '-seg' || coalesce(CAST(s.segment AS VARCHAR), '') AS own_session_id,
       b.session_id AS benchmark_session_id,
       coalesce(b.phase, s.phase) AS phase,
       coalesce(b.variant, src.variant, n.variant, folder_variant(src.path)) AS variant,
       CASE WHEN b.session_id IS NOT NULL THEN 'benchmark session' WHEN src.variant IS NOT NULL THEN '--variant'
            WHEN n.source_id IS NOT NULL THEN 'server config' ELSE folder_variant_from(src.path) END AS variant_from,
       n.model_path, src.path
FROM spans s JOIN sources src ON src.source_id = s.log_source_id
LEFT JOIN config_names n ON n.source_id = s.log_source_id AND n.segment IS NOT DISTINCT FROM s.segment
LEFT JOIN (SELECT k.log_source_id, k.segment, any_value(k.session_id) AS session_id,
                  any_value(x.phase) AS phase, any_value(coalesce(x.variant, folder_variant(xs.path))) AS variant
           FROM session_log_links k JOIN sessions x USING (session_id) JOIN sources xs ON xs.source_id = x.source_id GROUP BY ALL) b
    ON b.log_source_id = s.log_source_id AND b.segment IS NOT DISTINCT FROM s.segment;

-- The names a --link-to can give a lifetime: its session ids, and its log's path, file name or
-- file_label when that log has exactly one lifetime.
CREATE OR REPLACE VIEW lifetime_names AS
WITH lifetimes AS MATERIALIZED (
    SELECT log_source_id, segment, own_session_id, benchmark_session_id, path,
           count(*) OVER (PARTITION BY log_source_id) AS in_log
    FROM server_lifetimes
), names AS (
    SELECT log_source_id, segment, [own_session_id, benchmark_session_id] AS ids,
           CASE WHEN in_log = 1 THEN [path, regexp_replace(path, '^.*[/\\]', ''), file_label(path)] ELSE [] END AS files
    FROM lifetimes
)
SELECT DISTINCT name, log_source_id, segment
FROM (SELECT unnest(list_concat(ids, files)) AS name, log_source_id, segment FROM names)
WHERE name IS NOT NULL;

-- Per bench_serving record, the server lifetime it was measured against, by the first rule that finds one:
--   1 '--link-to'                                   the user named it ('none': no link at all);
--   2 'same ingest call and variant label'          a record with --variant, a log lifetime of the call with that variant;
--   3 'same ingest call, only log'                  a record without --variant or server_info, the call's only log lifetime;
--   4 'server_info equal to the lifetime''s config'  the record's server_info and exactly one log lifetime's
--     server_args agree on the model, tp size and every speculative setting.
CREATE OR REPLACE VIEW bench_record_links AS
WITH lifetimes AS MATERIALIZED (
    SELECT * FROM server_lifetimes WHERE evidence <> 'profiler messages'
), call_logs AS (
    SELECT ingest_group, variant, count(*) OVER (PARTITION BY ingest_group) AS in_call,
           log_source_id, segment, phase
    FROM log_segment_spans
    QUALIFY row_number() OVER (PARTITION BY ingest_group, variant ORDER BY first_ts DESC NULLS LAST, log_source_id, segment) = 1
), records AS (
    SELECT b.source_id, b.record_index, src.phase AS given_phase, src.variant AS given_variant, src.path,
           src.ingest_group, src.link_to, c.variant AS own_variant
    FROM bench_serving b JOIN sources src USING (source_id)
    LEFT JOIN config_names c ON c.source_id = b.source_id AND c.segment = b.record_index
), chosen AS (
    SELECT r.source_id, r.record_index, any_value(l.log_source_id) AS log_source_id, any_value(l.segment) AS segment,
           any_value(l.variant) AS log_variant, any_value(l.phase) AS log_phase
    FROM records r JOIN lifetime_names n ON n.name = r.link_to
    JOIN lifetimes l ON l.log_source_id = n.log_source_id AND l.segment IS NOT DISTINCT FROM n.segment
    GROUP BY ALL
), same_config AS (
    SELECT r.source_id, r.record_index, any_value(l.log_source_id) AS log_source_id, any_value(l.segment) AS segment,
           any_value(l.variant) AS log_variant, any_value(l.phase) AS log_phase
    FROM records r
    JOIN server_configs own ON own.source_id = r.source_id AND own.segment = r.record_index
    JOIN server_configs logged
        ON logged.model_path IS NOT DISTINCT FROM own.model_path AND logged.tp_size IS NOT DISTINCT FROM own.tp_size
       AND logged.speculative_algorithm IS NOT DISTINCT FROM own.speculative_algorithm
       AND logged.speculative_draft_model_path IS NOT DISTINCT FROM own.speculative_draft_model_path
       AND logged.speculative_num_steps IS NOT DISTINCT FROM own.speculative_num_steps
       AND logged.speculative_eagle_topk IS NOT DISTINCT FROM own.speculative_eagle_topk
       AND logged.speculative_num_draft_tokens IS NOT DISTINCT FROM own.speculative_num_draft_tokens
    JOIN lifetimes l ON l.log_source_id = logged.source_id AND l.segment IS NOT DISTINCT FROM logged.segment
    WHERE r.link_to IS NULL AND own.model_path IS NOT NULL
    GROUP BY r.source_id, r.record_index HAVING count(*) = 1
)
SELECT r.source_id, r.record_index, r.given_phase, r.given_variant, r.path, r.own_variant,
       coalesce(x.log_source_id, l.log_source_id, q.log_source_id) AS log_source_id,
       coalesce(x.segment, l.segment, q.segment) AS segment,
       coalesce(x.log_variant, l.variant, q.log_variant) AS log_variant,
       coalesce(x.log_phase, l.phase, q.log_phase) AS log_phase,
       CASE WHEN x.log_source_id IS NOT NULL THEN '--link-to'
            WHEN l.log_source_id IS NOT NULL AND r.given_variant IS NOT NULL THEN 'same ingest call and variant label'
            WHEN l.log_source_id IS NOT NULL THEN 'same ingest call, only log'
            WHEN q.log_source_id IS NOT NULL THEN 'server_info equal to the lifetime''s config' END AS link_method
FROM records r
LEFT JOIN chosen x USING (source_id, record_index)
LEFT JOIN call_logs l ON r.link_to IS NULL AND l.ingest_group = r.ingest_group
    AND ((r.given_variant IS NOT NULL AND l.variant = r.given_variant)
         OR (r.given_variant IS NULL AND r.own_variant IS NULL AND l.in_call = 1))
LEFT JOIN same_config q USING (source_id, record_index);

-- Benchmark sessions with the variant every page names them by: --variant or the file's own label, else their
-- folder's group (macro folder_variant), as evidence_sessions names them.
CREATE OR REPLACE VIEW benchmark_sessions AS
SELECT s.* REPLACE (coalesce(s.variant, folder_variant(src.path)) AS variant)
FROM sessions s JOIN sources src USING (source_id);

-- One row per session, whatever its evidence (record links from bench_record_links). A benchmark file
-- without a variant and an unlabelled bench record or trace set take their folder's group.
CREATE OR REPLACE VIEW evidence_sessions AS
WITH lifetimes AS MATERIALIZED (  -- read once: each expansion of the view costs memory
    SELECT * FROM server_lifetimes
), traces AS (
    SELECT coalesce(t.profile_id, t.source_id) AS profile_key, t.phase, t.variant,
           min(t.source_id) AS source_id, count(DISTINCT t.source_id) AS files,
           bool_or(src.variant IS NOT NULL) AS labelled, min(src.path) AS path,
           min(t.trace_start_at) AS started_at,
           max(t.trace_start_at + to_microseconds(CAST(1000 * t.span_ms AS BIGINT))) AS ended_at
    FROM trace_ranks t JOIN sources src USING (source_id)
    GROUP BY ALL
)
SELECT s.session_id, 'benchmark' AS origin, s.source_id, s.session_key AS part, s.phase,
       coalesce(s.variant, folder_variant(src.path)) AS variant,
       CASE WHEN src.variant IS NOT NULL THEN '--variant' WHEN s.variant IS NOT NULL THEN 'benchmark file' ELSE folder_variant_from(src.path) END
           AS variant_from,
       s.started_at, CAST(NULL AS TIMESTAMP) AS ended_at, s.model,
       CAST(NULL AS VARCHAR) AS log_source_id, CAST(NULL AS INTEGER) AS log_segment, CAST(NULL AS VARCHAR) AS link_method,
       1 AS files
FROM sessions s JOIN sources src USING (source_id)
UNION ALL
SELECT l.own_session_id, 'server_lifetime', l.log_source_id, l.segment, l.phase, l.variant, l.variant_from,
       l.first_ts, l.last_ts, l.model_path, l.log_source_id, l.segment, 'own log', 1
FROM lifetimes l
WHERE l.benchmark_session_id IS NULL AND l.evidence <> 'profiler messages'  -- figures, or no session
UNION ALL
SELECT r.source_id || '-rec' || r.record_index, 'bench_record', r.source_id, r.record_index,
       coalesce(r.given_phase, r.log_phase),
       coalesce(r.given_variant, r.own_variant, r.log_variant, folder_variant(r.path)),
       CASE WHEN r.given_variant IS NOT NULL THEN '--variant'
            WHEN r.own_variant IS NOT NULL THEN 'server_info in the record'
            WHEN r.log_variant IS NOT NULL AND r.link_method = '--link-to' THEN 'server log named by --link-to'
            WHEN r.log_variant IS NOT NULL THEN 'server log of the same ingest call'
            ELSE folder_variant_from(r.path) END,
       CAST(NULL AS TIMESTAMP), CAST(NULL AS TIMESTAMP), CAST(NULL AS VARCHAR),
       r.log_source_id, r.segment, r.link_method, 1
FROM bench_record_links r
UNION ALL
SELECT 'trace-' || t.profile_key, 'trace_set', t.source_id, CAST(NULL AS INTEGER), t.phase, t.variant,
       CASE WHEN t.labelled THEN '--variant' WHEN k.profile_key IS NOT NULL THEN 'linked server log' ELSE folder_variant_from(t.path) END,
       t.started_at, t.ended_at, CAST(NULL AS VARCHAR),
       k.log_source_id, k.segment, k.link_method, t.files
FROM traces t LEFT JOIN trace_links k USING (profile_key);

-- The lifetimes a --link-to value names.
CREATE OR REPLACE MACRO link_targets(wanted) AS TABLE
SELECT l.* FROM server_lifetimes l
WHERE EXISTS (SELECT 1 FROM lifetime_names n
              WHERE n.name = wanted AND n.log_source_id = l.log_source_id AND n.segment IS NOT DISTINCT FROM l.segment);

-- Per trace set (files sharing a profile id), the server lifetime it belongs to, the first way that finds one:
--   1 '--link-to'                           the user named it ('none': no link at all);
--   2 'profile id in the server log'        a log's profiler message names the trace's profile id;
--   3 'same ingest call and variant label'  a trace with --variant, a log lifetime of the call with that variant;
--   4 'same ingest call, only log'          an unlabelled trace, and its call loaded exactly one log lifetime;
--   5 'trace start inside the lifetime (UTC clock)'  the profile id's epoch seconds (else the trace's
--     start) fall within one lifetime's first..last line, ±60 s. Log times carry no zone: a log in
--     another local time links only by 1-4.
CREATE OR REPLACE VIEW trace_set_links AS
WITH lifetimes AS MATERIALIZED (  -- read once: each expansion of the view costs the writer memory
    SELECT * FROM server_lifetimes
), names AS MATERIALIZED (
    SELECT * FROM lifetime_names
), sets AS (
    SELECT coalesce(t.profile_id, t.source_id) AS profile_key, any_value(t.profile_id) AS profile_id,
           any_value(src.variant) AS given_variant, any_value(src.link_to) AS link_to,
           min(src.ingest_group) AS ingest_group,
           coalesce(to_timestamp(any_value(TRY_CAST(t.profile_id AS DOUBLE)))::TIMESTAMP, min(t.trace_start_at)) AS started_at
    FROM trace_ranks t JOIN sources src USING (source_id)
    GROUP BY 1
), call_lifetimes AS (
    SELECT *, count(*) OVER (PARTITION BY ingest_group) AS in_call FROM lifetimes
), candidates AS (
    SELECT s.profile_key, 1 AS rank, '--link-to' AS link_method, n.log_source_id, n.segment
    FROM sets s JOIN names n ON n.name = s.link_to
    UNION ALL
    SELECT s.profile_key, 2, 'profile id in the server log', p.source_id, p.segment
    FROM sets s JOIN log_profiles p
        ON p.profile_id = s.profile_id
        OR abs(TRY_CAST(p.profile_id AS DOUBLE) - TRY_CAST(s.profile_id AS DOUBLE)) < 0.001
    UNION ALL
    SELECT s.profile_key, 3, 'same ingest call and variant label', l.log_source_id, l.segment
    FROM sets s JOIN call_lifetimes l ON l.ingest_group = s.ingest_group AND l.variant = s.given_variant
    UNION ALL
    SELECT s.profile_key, 4, 'same ingest call, only log', l.log_source_id, l.segment
    FROM sets s JOIN call_lifetimes l ON l.ingest_group = s.ingest_group AND l.in_call = 1
    WHERE s.given_variant IS NULL
    UNION ALL
    SELECT s.profile_key, 5, 'trace start inside the lifetime (UTC clock)', any_value(l.log_source_id), any_value(l.segment)
    FROM sets s JOIN lifetimes l
        ON s.started_at BETWEEN l.first_ts - INTERVAL 60 SECOND AND l.last_ts + INTERVAL 60 SECOND
    GROUP BY s.profile_key HAVING count(*) = 1
)
SELECT c.profile_key, c.link_method, c.log_source_id, c.segment, l.own_session_id, l.benchmark_session_id,
       l.phase, l.variant
FROM candidates c
JOIN sets s USING (profile_key)
JOIN lifetimes l ON l.log_source_id = c.log_source_id AND l.segment IS NOT DISTINCT FROM c.segment
WHERE s.link_to IS DISTINCT FROM 'none'
QUALIFY row_number() OVER (PARTITION BY c.profile_key ORDER BY c.rank, c.log_source_id, c.segment) = 1;

-- What each trace file's rows should be labelled: --variant/--phase, else its linked lifetime's, else
-- its folder's (macro folder_variant) (store.relink_traces writes these into the trace tables after every load).
CREATE OR REPLACE VIEW trace_labels AS
SELECT DISTINCT t.source_id,
       coalesce(src.phase, k.phase) AS phase,
       coalesce(src.variant, k.variant, folder_variant(src.path)) AS variant
FROM trace_ranks t JOIN sources src USING (source_id)
LEFT JOIN trace_links k ON k.profile_key = coalesce(t.profile_id, t.source_id);

-- Per drafter and token-count file: the share of the generated tokens the draft vocabulary can
-- express at all, an upper bound on acceptance at every draft position. A drafter without d2t and
-- without a smaller draft vocabulary covers every id below its vocab_size.
CREATE OR REPLACE VIEW drafter_coverage AS
WITH totals AS (
    SELECT source_id, sum(count) AS tokens, count(*) AS distinct_tokens FROM token_counts GROUP BY source_id
), mapped AS (
    SELECT v.source_id AS drafter_source_id, tc.source_id AS tokens_source_id,
           sum(tc.count) AS covered, count(*) AS distinct_covered
    FROM token_counts tc JOIN drafter_vocab v ON v.target_id = tc.target_id
    GROUP BY ALL
), full_vocab AS (
    SELECT d.source_id AS drafter_source_id, tc.source_id AS tokens_source_id,
           sum(tc.count) AS covered, count(*) AS distinct_covered
    FROM drafters d JOIN token_counts tc ON tc.target_id < d.vocab_size
    WHERE d.mapping_form = 'full target vocabulary'
    GROUP BY ALL
), covered AS (
    SELECT * FROM mapped UNION ALL SELECT * FROM full_vocab
)
SELECT d.source_id AS drafter_source_id, d.name AS drafter, t.source_id AS tokens_source_id, s.path AS tokens_path,
       t.tokens, t.distinct_tokens, coalesce(c.covered, 0) AS covered_tokens,
       coalesce(c.distinct_covered, 0) AS covered_distinct, coalesce(c.covered, 0) / t.tokens AS coverage
FROM drafters d CROSS JOIN totals t
JOIN sources s ON s.source_id = t.source_id
LEFT JOIN covered c ON c.drafter_source_id = d.source_id AND c.tokens_source_id = t.source_id
WHERE d.weights_files > 0;

-- A speculative method as one vocabulary names it, from the word a file uses: SGLang's speculative_algorithm
-- (EAGLE3, NEXTN, STANDALONE, NGRAM), vLLM's speculative_config method (eagle3, deepseek_mtp, ngram, medusa),
-- llama.cpp's speculative types (draft, mtp, ngram-…), a results table's method column. A word outside the
-- vocabulary is kept as written; no speculation is NULL.
CREATE OR REPLACE MACRO spec_method(raw) AS
    CASE WHEN raw IS NULL OR lower(trim(raw)) IN ('', 'none', 'null', 'speculativealgorithm.none') THEN NULL
         WHEN regexp_matches(lower(raw), 'eagle[-_ ]?3') THEN 'EAGLE-3'
         WHEN regexp_matches(lower(raw), 'eagle') THEN 'EAGLE'
         WHEN regexp_matches(lower(raw), 'mtp|nextn') THEN 'MTP'
         WHEN regexp_matches(lower(raw), 'n-?gram|prompt[-_ ]?lookup|^pld$') THEN 'n-gram'
         WHEN regexp_matches(lower(raw), 'medusa') THEN 'Medusa'
         WHEN regexp_matches(lower(raw), 'lookahead') THEN 'lookahead'
         WHEN regexp_matches(lower(raw), 'hydra') THEN 'Hydra'
         WHEN regexp_matches(lower(raw), 'standalone|draft[-_ ]?model|^draft$|^sps$') THEN 'draft model'
         WHEN regexp_matches(lower(raw), 'dflash') THEN 'DFlash'
         WHEN regexp_matches(lower(raw), '^suffix$') THEN 'suffix decoding'
         WHEN regexp_matches(lower(raw), '^mlp[-_ ]?speculator$') THEN 'MLP speculator'
         ELSE trim(raw) END;

-- Each variant whose server configs all name one method (none: no speculation), for rows that name none themselves.
CREATE OR REPLACE VIEW variant_config_methods AS
SELECT variant, any_value(coalesce(spec_method(speculative_algorithm), 'none')) AS method
FROM server_configs WHERE variant IS NOT NULL
GROUP BY variant HAVING count(DISTINCT coalesce(spec_method(speculative_algorithm), 'none')) = 1;

-- Every sweep point the store holds (its sweep named with its --phase label, when it has one): the sweep files' points, and bench_serving / bench_one_batch records
-- grouped into a sweep by (tool, dataset, model) when the group has two or more batch sizes, concurrencies or
-- request rates. A record's variant is the one evidence_sessions gives it; it is the baseline when its server
-- config has no speculative algorithm (or, with no config, when it reports no accept length).
CREATE OR REPLACE VIEW sweep_series AS
WITH records AS (
    SELECT b.source_id, b.record_index, coalesce(l.given_phase, l.log_phase) AS phase, b.tool, b.dataset_name, b.request_rate, b.max_concurrency, b.output_throughput,
           b.accept_length, b.extra,
           coalesce(l.given_variant, l.own_variant, l.log_variant, folder_variant(l.path)) AS variant,
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
SELECT p.source_id, p.session_id,
       coalesce(p.phase || ' · ', '') || p.sweep || CASE WHEN t.sweep IS NOT NULL THEN ' · ' || coalesce(p.dataset, 'no task') ELSE '' END AS sweep,
       p.phase, p.model, p.dataset, p.variant, p.is_baseline, p.batch_size, p.concurrency,
       CAST(NULL AS DOUBLE) AS request_rate, p.steps, p.topk, p.num_draft_tokens, p.accept_length, p.step_time_ms,
       p.throughput, p.throughput_kind, 'sweep file' AS accept_length_from, p.simulated, p.simulated_by,
       CAST(NULL AS INTEGER) AS tp_size, src.kind AS origin, src.path,
       CASE WHEN p.is_baseline THEN 'none' ELSE coalesce(spec_method(json_extract_string(p.extra, '$.method')), m.method) END AS method,
       CASE WHEN NOT p.is_baseline  -- a table may print its row's speedup beside the baseline too
            THEN TRY_CAST(coalesce(json_extract_string(p.extra, '$.speedup'), json_extract_string(p.extra, '$.decode_speedup')) AS DOUBLE)
       END AS speedup_reported,
       TRY_CAST(json_extract_string(p.extra, '$.acceptance_rate') AS DOUBLE) AS acceptance_rate
FROM sweep_points p JOIN sources src USING (source_id) LEFT JOIN variant_config_methods m ON m.variant = p.variant
-- a table of several tasks (a leaderboard) with a batch or concurrency is a sweep per task: points of different
-- tasks are never pooled on one curve (a table without one is listed whole, as it is)
LEFT JOIN (SELECT source_id, sweep FROM sweep_points GROUP BY ALL
           HAVING count(DISTINCT coalesce(dataset, '')) > 1 AND count(batch_size) + count(concurrency) > 0) t
       ON t.source_id = p.source_id AND t.sweep = p.sweep
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
       s.tp_size, 'bench_serving', src.path,
       CASE WHEN s.has_config THEN coalesce(spec_method(s.speculative_algorithm), 'none') END, CAST(NULL AS DOUBLE),
       CAST(NULL AS DOUBLE)
FROM shaped s JOIN swept w ON w.sweep = s.sweep AND w.model_path IS NOT DISTINCT FROM s.model_path
JOIN sources src USING (source_id);

-- The variant of per-position, per-request and counter rows: --variant, else the file's folder's group.
CREATE OR REPLACE MACRO acceptance_variant(given, prefix, path) AS coalesce(given, folder_variant(path));

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

-- Acceptance per draft position, the view the Acceptance page reads: every source of per-position
-- rates, including the windows between two files (scope 'window', origin 'Prometheus counter delta
-- between files', window 'before.prom → after.prom').
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
       coalesce(l.phase, src.phase) AS phase, p.source_id, coalesce(p.origin, 'vLLM SpecDecoding metrics line') AS origin,
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

-- Per-request rows with their variant: a bench record's session's, else --variant, else the row's own (a llama.cpp
-- lifetime's speculative type), else its folder's group.
CREATE OR REPLACE VIEW acceptance_request_rows AS
SELECT coalesce(e.variant, src.variant, json_extract_string(r.extra, '$.variant'), folder_variant(src.path)) AS variant,
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
