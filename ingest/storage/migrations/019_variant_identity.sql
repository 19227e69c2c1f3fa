-- 019_variant_identity: a variant is a claim that runs are the same system, so its name comes from
-- evidence, in this order: --variant (or `specdash label`), the server config's speculation settings
-- with the target model, the folder layout .../<phase>/<variant>/file, else one 'unlabelled: <folder>'
-- group per folder. Before, every unlabelled file was its own variant ('log:<file>', 'bench:<file>',
-- 'trace:<file>'): a folder of 48 files gave 39 variants, each compared against one baseline.
-- Documented in docs/schema.md (macros folder_phase, folder_variant, folder_variant_from, model_label;
-- table label_changes) and docs/dashboard.md (Variant identity).

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

-- after views: run once the views are current (storage/views.sql), in this migration's order

-- Stores that hold traces: label their rows as trace_labels now says (their folder's group, not their file).
UPDATE trace_ranks t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);

UPDATE cycle_phase_times t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);

UPDATE trace_kernels t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
