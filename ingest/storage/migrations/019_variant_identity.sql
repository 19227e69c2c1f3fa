-- 019_variant_identity: a variant is a claim that runs are the same system, so its name comes from
-- evidence, in this order: --variant (or `specdash label`), the server config's speculation settings
-- with the target model, the folder layout .../<phase>/<variant>/file, else one 'unlabelled: <folder>'
-- group per folder. Before, every unlabelled file was its own variant ('log:<file>', 'bench:<file>',
-- 'trace:<file>'): a folder of 48 files gave 39 variants, each compared against one baseline.
-- Documented in docs/schema.md (macros folder_phase, folder_variant, folder_variant_from, model_label;
-- table label_changes) and docs/dashboard.md (Variant identity).

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

-- What a person calls a model: the last part of its path or Hub id ('moonshotai/Kimi-K2.5' ->
-- 'Kimi-K2.5'); a Hugging Face cache snapshot is named after its model, not its hash.
CREATE OR REPLACE MACRO model_label(path) AS
    CASE WHEN regexp_matches(path, 'models--[^/\\]+?--[^/\\]+[/\\]snapshots')
         THEN regexp_extract(path, 'models--[^/\\]+?--([^/\\]+)[/\\]snapshots', 1)
         ELSE nullif(regexp_extract(rtrim(path, '/\\'), '([^/\\]+)$', 1), '') END;

-- What `specdash label` changed: one row per file and change, so a renamed, merged, re-phased or
-- deleted file can be traced (and its old labels given back by hand).
CREATE TABLE label_changes (
    change_id   VARCHAR NOT NULL,   -- one id per `specdash label` call
    changed_at  TIMESTAMP NOT NULL,
    action      VARCHAR NOT NULL,   -- 'variant', 'phase' or 'delete'
    source_id   VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    old_phase   VARCHAR,
    old_variant VARCHAR,            -- the variant(s) the file showed before, as pages named them
    new_phase   VARCHAR,
    new_variant VARCHAR
);

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

-- Migration 012's server_lifetimes, its fallback name now the folder's.
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

-- Migration 012's trace_labels, likewise.
-- What each trace file's rows should be labelled: --variant/--phase, else its linked lifetime's, else
-- its folder's (macro folder_variant) (store.relink_traces writes these into the trace tables after every load).
CREATE OR REPLACE VIEW trace_labels AS
SELECT DISTINCT t.source_id,
       coalesce(src.phase, k.phase) AS phase,
       coalesce(src.variant, k.variant, folder_variant(src.path)) AS variant
FROM trace_ranks t JOIN sources src USING (source_id)
LEFT JOIN trace_links k ON k.profile_key = coalesce(t.profile_id, t.source_id);

-- Migration 014's evidence_sessions, likewise: a benchmark file without a variant and an unlabelled
-- bench record or trace set take their folder's group, not '(unlabelled)' or their file's name.
-- One row per session, whatever its evidence (migrations 011 and 012; record links from bench_record_links).
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

-- Migration 016's sweep_series, likewise.
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
SELECT p.source_id, p.session_id, coalesce(p.phase || ' · ', '') || p.sweep AS sweep, p.phase, p.model, p.dataset, p.variant, p.is_baseline, p.batch_size, p.concurrency,
       CAST(NULL AS DOUBLE) AS request_rate, p.steps, p.topk, p.num_draft_tokens, p.accept_length, p.step_time_ms,
       p.throughput, p.throughput_kind, 'sweep file' AS accept_length_from, p.simulated, p.simulated_by,
       CAST(NULL AS INTEGER) AS tp_size, src.kind AS origin, src.path
FROM sweep_points p JOIN sources src USING (source_id)
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
       s.tp_size, 'bench_serving', src.path
FROM shaped s JOIN swept w ON w.sweep = s.sweep AND w.model_path IS NOT DISTINCT FROM s.model_path
JOIN sources src USING (source_id);

-- Migration 017's macro: per-position, per-request and counter rows of an unlabelled file take its folder's group.
CREATE OR REPLACE MACRO acceptance_variant(given, prefix, path) AS coalesce(given, folder_variant(path));

-- Stores that hold traces: label their rows as trace_labels now says (their folder's group, not their file).
UPDATE trace_ranks t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
UPDATE cycle_phase_times t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
UPDATE trace_kernels t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
