-- 012_trace_links: a trace set joins the server lifetime that wrote it, and a user can override any link.
-- Before, a trace loaded without --variant stayed 'trace:<file>' beside its own server's lifetime, so
-- Compare and Breakdown showed one experiment under two names. Documented in docs/schema.md
-- (table log_profiles, column sources.link_to, views config_names, server_lifetimes, trace_set_links,
-- evidence_sessions).

-- A server log's profiler start messages: each names the profile id its trace files are named after.
CREATE TABLE log_profiles (
    source_id  VARCHAR NOT NULL,
    segment    INTEGER,
    line_no    BIGINT,
    ts         TIMESTAMP,
    tp_rank    INTEGER,
    profile_id VARCHAR,
    stage      VARCHAR,
    output_dir VARCHAR
);

-- --link-to given at ingest: a session id, or a log's path or file name, to link this file's evidence
-- to; 'none' (--no-link) links it to nothing. NULL: links are found as below.
ALTER TABLE sources ADD COLUMN link_to VARCHAR;

-- A config's variant name, with the drafter settings when they tell two configs of one drafter apart.
CREATE OR REPLACE VIEW config_names AS
SELECT c.source_id, c.segment,
       c.variant || CASE
           WHEN src.variant IS NULL AND c.speculative_algorithm IS NOT NULL
                AND count(DISTINCT [c.speculative_num_steps, c.speculative_eagle_topk, c.speculative_num_draft_tokens])
                    OVER (PARTITION BY c.variant, src.variant IS NULL) > 1
           THEN ' (steps ' || coalesce(CAST(c.speculative_num_steps AS VARCHAR), '?')
                || ', topk ' || coalesce(CAST(c.speculative_eagle_topk AS VARCHAR), '?')
                || ', draft tokens ' || coalesce(CAST(c.speculative_num_draft_tokens AS VARCHAR), '?') || ')'
           ELSE '' END AS variant,
       c.model_path
FROM server_configs c JOIN sources src USING (source_id);

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
       coalesce(b.variant, src.variant, n.variant, 'log:' || file_label(src.path)) AS variant,
       CASE WHEN b.session_id IS NOT NULL THEN 'benchmark session' WHEN src.variant IS NOT NULL THEN '--variant'
            WHEN n.source_id IS NOT NULL THEN 'server config' ELSE 'file name' END AS variant_from,
       n.model_path, src.path
FROM spans s JOIN sources src ON src.source_id = s.log_source_id
LEFT JOIN config_names n ON n.source_id = s.log_source_id AND n.segment IS NOT DISTINCT FROM s.segment
LEFT JOIN (SELECT k.log_source_id, k.segment, any_value(k.session_id) AS session_id,
                  any_value(x.phase) AS phase, any_value(coalesce(x.variant, '(unlabelled)')) AS variant
           FROM session_log_links k JOIN sessions x USING (session_id) GROUP BY ALL) b
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

-- trace_set_links kept as a table: store.relink_traces refreshes it in every load's transaction, so
-- pages read rows instead of re-deriving every link (the view joins the lifetimes many times over).
CREATE TABLE trace_links (
    profile_key          VARCHAR NOT NULL,
    link_method          VARCHAR NOT NULL,
    log_source_id        VARCHAR NOT NULL,
    segment              INTEGER,
    own_session_id       VARCHAR,
    benchmark_session_id VARCHAR,
    phase                VARCHAR,
    variant              VARCHAR
);
INSERT INTO trace_links SELECT * FROM trace_set_links;

-- What each trace file's rows should be labelled: --variant/--phase, else its linked lifetime's, else
-- its file's name (store.relink_traces writes these into the trace tables after every load).
CREATE OR REPLACE VIEW trace_labels AS
SELECT DISTINCT t.source_id,
       coalesce(src.phase, k.phase) AS phase,
       coalesce(src.variant, k.variant, 'trace:' || file_label(src.path)) AS variant
FROM trace_ranks t JOIN sources src USING (source_id)
LEFT JOIN trace_links k ON k.profile_key = coalesce(t.profile_id, t.source_id);

-- A store that already holds traces and their logs: label the traces as their links say.
UPDATE trace_ranks t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
UPDATE cycle_phase_times t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
UPDATE trace_kernels t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);

-- One row per session, whatever its evidence (migration 011, now with trace links and --link-to):
--   'benchmark'       a session of a benchmark file (table sessions);
--   'server_lifetime' one server lifetime of a log that no benchmark session links to;
--   'bench_record'    one record of bench_serving / vllm bench / bench_one_batch / send_one output;
--   'trace_set'       the profiler trace files of one profile (sharing trace_ranks.profile_id).
CREATE OR REPLACE VIEW evidence_sessions AS
WITH lifetimes AS MATERIALIZED (  -- read once: each expansion of the view costs memory
    SELECT * FROM server_lifetimes
), call_logs AS (  -- per ingest call, its log lifetimes: a bench record of the same call is linked to them
    SELECT ingest_group, variant, count(*) OVER (PARTITION BY ingest_group) AS in_call,
           log_source_id, segment, phase
    FROM log_segment_spans
    QUALIFY row_number() OVER (PARTITION BY ingest_group, variant ORDER BY first_ts DESC NULLS LAST, log_source_id, segment) = 1
), records AS (
    SELECT b.source_id, b.record_index, src.phase AS given_phase, src.variant AS given_variant, src.path,
           src.ingest_group, src.link_to, c.variant AS own_variant
    FROM bench_serving b JOIN sources src USING (source_id)
    LEFT JOIN config_names c ON c.source_id = b.source_id AND c.segment = b.record_index
), chosen AS (  -- a record's --link-to
    SELECT r.source_id, r.record_index, any_value(l.log_source_id) AS log_source_id, any_value(l.segment) AS segment,
           any_value(l.variant) AS log_variant, any_value(l.phase) AS log_phase
    FROM records r JOIN lifetime_names n ON n.name = r.link_to
    JOIN lifetimes l ON l.log_source_id = n.log_source_id AND l.segment IS NOT DISTINCT FROM n.segment
    GROUP BY ALL
), record_links AS (
    SELECT r.*,
           coalesce(x.log_source_id, l.log_source_id) AS log_source_id, coalesce(x.segment, l.segment) AS segment,
           coalesce(x.log_variant, l.variant) AS log_variant, coalesce(x.log_phase, l.phase) AS log_phase,
           CASE WHEN x.log_source_id IS NOT NULL THEN '--link-to'
                WHEN r.given_variant IS NOT NULL THEN 'same ingest call and variant label'
                ELSE 'same ingest call, only log' END AS link_method
    FROM records r
    LEFT JOIN chosen x USING (source_id, record_index)
    LEFT JOIN call_logs l ON r.link_to IS NULL AND l.ingest_group = r.ingest_group
        AND ((r.given_variant IS NOT NULL AND l.variant = r.given_variant)
             OR (r.given_variant IS NULL AND r.own_variant IS NULL AND l.in_call = 1))
), traces AS (
    SELECT coalesce(t.profile_id, t.source_id) AS profile_key, t.phase, t.variant,
           min(t.source_id) AS source_id, count(DISTINCT t.source_id) AS files,
           bool_or(src.variant IS NOT NULL) AS labelled,
           min(t.trace_start_at) AS started_at,
           max(t.trace_start_at + to_microseconds(CAST(1000 * t.span_ms AS BIGINT))) AS ended_at
    FROM trace_ranks t JOIN sources src USING (source_id)
    GROUP BY ALL
)
SELECT s.session_id, 'benchmark' AS origin, s.source_id, s.session_key AS part, s.phase,
       coalesce(s.variant, '(unlabelled)') AS variant,
       CASE WHEN src.variant IS NOT NULL THEN '--variant' WHEN s.variant IS NOT NULL THEN 'benchmark file' END
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
       coalesce(r.given_variant, r.own_variant, r.log_variant, 'bench:' || file_label(r.path)),
       CASE WHEN r.given_variant IS NOT NULL THEN '--variant'
            WHEN r.own_variant IS NOT NULL THEN 'server_info in the record'
            WHEN r.log_variant IS NOT NULL AND r.link_method = '--link-to' THEN 'server log named by --link-to'
            WHEN r.log_variant IS NOT NULL THEN 'server log of the same ingest call'
            ELSE 'file name' END,
       CAST(NULL AS TIMESTAMP), CAST(NULL AS TIMESTAMP), CAST(NULL AS VARCHAR),
       r.log_source_id, r.segment, CASE WHEN r.log_source_id IS NOT NULL THEN r.link_method END, 1
FROM record_links r
UNION ALL
SELECT 'trace-' || t.profile_key, 'trace_set', t.source_id, CAST(NULL AS INTEGER), t.phase, t.variant,
       CASE WHEN t.labelled THEN '--variant' WHEN k.profile_key IS NOT NULL THEN 'linked server log' ELSE 'file name' END,
       t.started_at, t.ended_at, CAST(NULL AS VARCHAR),
       k.log_source_id, k.segment, k.link_method, t.files
FROM traces t LEFT JOIN trace_links k USING (profile_key);
