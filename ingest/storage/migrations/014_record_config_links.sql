-- 014_record_config_links: a bench record whose server_info matches one server lifetime's config is
-- linked to that lifetime, even from another ingest call; the record links move into view
-- bench_record_links, so evidence_sessions reads them instead of deriving them inline. Documented in
-- docs/schema.md.

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

-- One row per session, whatever its evidence (migrations 011 and 012; record links from bench_record_links).
CREATE OR REPLACE VIEW evidence_sessions AS
WITH lifetimes AS MATERIALIZED (  -- read once: each expansion of the view costs memory
    SELECT * FROM server_lifetimes
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
       r.log_source_id, r.segment, r.link_method, 1
FROM bench_record_links r
UNION ALL
SELECT 'trace-' || t.profile_key, 'trace_set', t.source_id, CAST(NULL AS INTEGER), t.phase, t.variant,
       CASE WHEN t.labelled THEN '--variant' WHEN k.profile_key IS NOT NULL THEN 'linked server log' ELSE 'file name' END,
       t.started_at, t.ended_at, CAST(NULL AS VARCHAR),
       k.log_source_id, k.segment, k.link_method, t.files
FROM traces t LEFT JOIN trace_links k USING (profile_key);
