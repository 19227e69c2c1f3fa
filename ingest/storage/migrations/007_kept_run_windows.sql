-- 007_kept_run_windows: the views of 005/006 (log_segments, session_logs, run_log_stats) kept as
-- tables, so the dashboard reads rows instead of re-deriving them from 10 million decode lines on
-- every page. Each table holds exactly its view's rows (tests/test_kept_windows.py compares them);
-- ingest/storage/run_windows.py refreshes them inside load_source's transaction, for the sessions the
-- loaded file can change. The views stay the definition: readers use the tables only while
-- run_windows_basis() equals the value stored at the last refresh (a clock skew set without a
-- load, or rows changed behind the store's back, sends them back to the views).
-- A later migration that changes what these views return must rebuild the tables.
-- Documented in docs/schema.md.

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

-- after views: run once the views are current (storage/views.sql), in this migration's order

-- Fill them for the store as it is: a one-off cost; later loads refresh only what they touch.
INSERT INTO log_segment_spans
SELECT l.source_id, l.segment, l.phase, l.variant, l.first_ts, l.last_ts, l.decode_lines, src.ingest_group
FROM log_segments l JOIN sources src USING (source_id);

INSERT INTO session_log_links SELECT * FROM session_logs_for(NULL::VARCHAR[]);

INSERT INTO run_windows SELECT * FROM run_windows_for(NULL::VARCHAR[]);

DELETE FROM store_meta WHERE key = 'run_windows_basis';
INSERT INTO store_meta VALUES ('run_windows_basis', run_windows_basis());
