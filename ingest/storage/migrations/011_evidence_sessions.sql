-- 011_evidence_sessions: a session from any evidence, not only from a benchmark JSON.
-- Most teams keep a server log and bench_serving output, no benchmark JSON: before this, such a store
-- had no sessions, so no variants, and every analysis page was empty. Documented in docs/schema.md
-- (macro file_label, view evidence_sessions).

-- A file's name without its folder, its extensions and a rank suffix: what a person calls the file.
-- 'runs/hta_sampled_rank-0.json.gz' -> 'hta_sampled'; '1759255878.90-TP-3-DECODE.trace.json.gz' -> '1759255878.90'.
CREATE OR REPLACE MACRO file_label(path) AS
    regexp_replace(
        regexp_replace(
            regexp_replace(path, '^.*[/\\]', ''),
            '(\.(gz|zst|json|jsonl|trace|pt|log|txt|csv|tsv|out|md))+$', ''),
        '([_-]rank[_-]?[0-9]+|-TP-[0-9]+.*)$', '');

-- Traces loaded without --variant had no label and so reached no page: name them after their file.
UPDATE trace_ranks SET variant = 'trace:' || file_label(file_name) WHERE variant IS NULL;
UPDATE cycle_phase_times p SET variant = 'trace:' || file_label(s.path)
    FROM sources s WHERE s.source_id = p.source_id AND p.variant IS NULL AND s.kind = 'kineto_trace';
UPDATE trace_kernels p SET variant = 'trace:' || file_label(s.path)
    FROM sources s WHERE s.source_id = p.source_id AND p.variant IS NULL;

-- One row per session, whatever its evidence:
--   'benchmark'       a session of a benchmark file (table sessions);
--   'server_lifetime' one server lifetime of a log (a log_segment_spans row) that no benchmark session links to;
--   'bench_record'    one record of bench_serving / vllm bench / bench_one_batch / send_one output;
--   'trace_set'       the profiler trace files of one profile (sharing trace_ranks.profile_id).
-- variant: --variant, else the session's own label or server config, else the log of the same ingest call,
-- else the file's name; variant_from says which.
CREATE OR REPLACE VIEW evidence_sessions AS
WITH config_names AS (  -- a name derived from a config gains the drafter settings when they tell two configs apart
    SELECT c.source_id, c.segment,
           c.variant || CASE
               WHEN src.variant IS NULL AND c.speculative_algorithm IS NOT NULL
                    AND count(DISTINCT [c.speculative_num_steps, c.speculative_eagle_topk, c.speculative_num_draft_tokens])
                        OVER (PARTITION BY c.variant, src.variant IS NULL) > 1
               THEN ' (steps ' || coalesce(CAST(c.speculative_num_steps AS VARCHAR), '?')
                    || ', topk ' || coalesce(CAST(c.speculative_eagle_topk AS VARCHAR), '?')
                    || ', draft tokens ' || coalesce(CAST(c.speculative_num_draft_tokens AS VARCHAR), '?') || ')'
               ELSE '' END AS variant
    FROM server_configs c JOIN sources src USING (source_id)
), lifetimes AS (
    SELECT l.* FROM log_segment_spans l
    WHERE NOT EXISTS (SELECT 1 FROM session_log_links k
                      WHERE k.log_source_id = l.log_source_id AND k.segment IS NOT DISTINCT FROM l.segment)
    UNION ALL  -- a lifetime that logged only prefill batches is a server lifetime too
    SELECT p.source_id, p.segment, src.phase, src.variant, min(p.ts), max(p.ts), 0, src.ingest_group
    FROM prefill_stats p JOIN sources src USING (source_id)
    WHERE NOT EXISTS (SELECT 1 FROM log_segment_spans l
                      WHERE l.log_source_id = p.source_id AND l.segment IS NOT DISTINCT FROM p.segment)
    GROUP BY p.source_id, p.segment, src.phase, src.variant, src.ingest_group
), call_logs AS (  -- per ingest call, its log lifetimes: a bench record of the same call is linked to them
    SELECT ingest_group, variant, count(*) OVER (PARTITION BY ingest_group) AS in_call,
           log_source_id, segment, phase
    FROM log_segment_spans
    QUALIFY row_number() OVER (PARTITION BY ingest_group, variant ORDER BY first_ts DESC NULLS LAST, log_source_id, segment) = 1
), records AS (
    SELECT b.source_id, b.record_index, src.phase AS given_phase, src.variant AS given_variant, src.path,
           src.ingest_group, c.variant AS own_variant, c.segment AS own_config
    FROM bench_serving b JOIN sources src USING (source_id)
    LEFT JOIN config_names c ON c.source_id = b.source_id AND c.segment = b.record_index
), record_links AS (
    SELECT r.*, l.log_source_id, l.segment, l.variant AS log_variant, l.phase AS log_phase,
           CASE WHEN r.given_variant IS NOT NULL THEN 'same ingest call and variant label'
                ELSE 'same ingest call, only log' END AS link_method
    FROM records r LEFT JOIN call_logs l ON l.ingest_group = r.ingest_group
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
SELECT l.log_source_id || '-seg' || coalesce(CAST(l.segment AS VARCHAR), ''), 'server_lifetime', l.log_source_id,
       l.segment, l.phase,
       coalesce(src.variant, n.variant, l.variant, 'log:' || file_label(src.path)),
       CASE WHEN src.variant IS NOT NULL THEN '--variant' WHEN c.source_id IS NOT NULL THEN 'server config'
            ELSE 'file name' END,
       l.first_ts, l.last_ts, c.model_path, l.log_source_id, l.segment, 'own log', 1
FROM lifetimes l JOIN sources src ON src.source_id = l.log_source_id
LEFT JOIN server_configs c ON c.source_id = l.log_source_id AND c.segment IS NOT DISTINCT FROM l.segment
LEFT JOIN config_names n ON n.source_id = l.log_source_id AND n.segment IS NOT DISTINCT FROM l.segment
UNION ALL
SELECT r.source_id || '-rec' || r.record_index, 'bench_record', r.source_id, r.record_index,
       coalesce(r.given_phase, r.log_phase),
       coalesce(r.given_variant, r.own_variant, r.log_variant, 'bench:' || file_label(r.path)),
       CASE WHEN r.given_variant IS NOT NULL THEN '--variant'
            WHEN r.own_variant IS NOT NULL THEN 'server_info in the record'
            WHEN r.log_variant IS NOT NULL THEN 'server log of the same ingest call'
            ELSE 'file name' END,
       CAST(NULL AS TIMESTAMP), CAST(NULL AS TIMESTAMP), CAST(NULL AS VARCHAR),
       r.log_source_id, r.segment, CASE WHEN r.log_source_id IS NOT NULL THEN r.link_method END, 1
FROM record_links r
UNION ALL
SELECT 'trace-' || t.profile_key, 'trace_set', t.source_id, CAST(NULL AS INTEGER), t.phase,
       t.variant, CASE WHEN t.labelled THEN '--variant' ELSE 'file name' END,
       t.started_at, t.ended_at, CAST(NULL AS VARCHAR),
       CAST(NULL AS VARCHAR), CAST(NULL AS INTEGER), CAST(NULL AS VARCHAR), t.files
FROM traces t;
