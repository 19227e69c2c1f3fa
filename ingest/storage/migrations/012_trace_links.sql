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

-- after views: run once the views are current (storage/views.sql), in this migration's order

INSERT INTO trace_links SELECT * FROM trace_set_links;

-- A store that already holds traces and their logs: label the traces as their links say.
UPDATE trace_ranks t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);

UPDATE cycle_phase_times t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);

UPDATE trace_kernels t SET phase = l.phase, variant = l.variant FROM trace_labels l
    WHERE t.source_id = l.source_id AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant);
