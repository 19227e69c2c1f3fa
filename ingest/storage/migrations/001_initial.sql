-- 001_initial: sources, benchmark sessions and runs, server configs, decode/prefill stats,
-- bench_serving records, decisions. Public names are documented in docs/schema.md.
CREATE TABLE sources (
    source_id      VARCHAR PRIMARY KEY,  -- first 16 hex digits of sha256
    path           VARCHAR NOT NULL,     -- as given to ingest, made absolute
    sha256         VARCHAR NOT NULL UNIQUE,
    kind           VARCHAR NOT NULL,     -- detected format, e.g. sglang_log
    engine         VARCHAR,
    size_bytes     BIGINT,
    phase          VARCHAR,              -- --phase given at ingest, if any
    variant        VARCHAR,              -- --variant given at ingest, if any
    ingest_group   VARCHAR,              -- files ingested in one call share it
    ingested_at    TIMESTAMP NOT NULL,
    rows_loaded    BIGINT NOT NULL,
    lines_skipped  BIGINT NOT NULL,
    skipped_detail VARCHAR,              -- JSON object: reason -> count
    warnings       VARCHAR               -- JSON list of "file:line: message" (first 100)
);

CREATE TABLE sessions (
    session_id  VARCHAR PRIMARY KEY,
    source_id   VARCHAR NOT NULL,
    session_key INTEGER NOT NULL,
    phase       VARCHAR,
    variant     VARCHAR,
    engine      VARCHAR,
    endpoint    VARCHAR,
    model       VARCHAR,
    max_tokens  BIGINT,
    warmup      INTEGER,
    started_at  TIMESTAMP,
    extra       VARCHAR
);

CREATE TABLE bench_runs (
    source_id      VARCHAR NOT NULL,
    session_id     VARCHAR NOT NULL,
    session_key    INTEGER NOT NULL,
    run_index      INTEGER NOT NULL,
    is_warmup      BOOLEAN NOT NULL,
    prompt_tokens  BIGINT,
    output_tokens  BIGINT,
    duration_s     DOUBLE,
    tok_per_s      DOUBLE,
    max_tokens     BIGINT,
    hit_max_tokens BOOLEAN,
    started_at     TIMESTAMP,
    ended_at       TIMESTAMP,
    finish_reason  VARCHAR,
    extra          VARCHAR
);

CREATE TABLE server_configs (
    source_id                    VARCHAR NOT NULL,
    segment                      INTEGER NOT NULL,
    line_no                      BIGINT,
    ts                           TIMESTAMP,
    phase                        VARCHAR,
    variant                      VARCHAR,
    model_path                   VARCHAR,
    tp_size                      INTEGER,
    dp_size                      INTEGER,
    speculative_algorithm        VARCHAR,
    speculative_draft_model_path VARCHAR,
    speculative_num_steps        INTEGER,
    speculative_eagle_topk       INTEGER,
    speculative_num_draft_tokens INTEGER,
    args                         VARCHAR
);

CREATE TABLE decode_stats (
    source_id                VARCHAR NOT NULL,
    segment                  INTEGER,
    line_no                  BIGINT NOT NULL,
    ts                       TIMESTAMP,
    dp_rank                  INTEGER,
    tp_rank                  INTEGER,
    running_req              BIGINT,
    num_tokens               BIGINT,
    token_usage              DOUBLE,
    accept_len_raw           DOUBLE,
    tokens_per_step          DOUBLE,
    accepted_drafts_per_step DOUBLE,
    accept_rate_raw          DOUBLE,
    accept_rate_drafts       DOUBLE,
    cuda_graph               BOOLEAN,
    gen_throughput           DOUBLE,
    queue_req                BIGINT,
    extra                    VARCHAR
);

CREATE TABLE prefill_stats (
    source_id        VARCHAR NOT NULL,
    segment          INTEGER,
    line_no          BIGINT NOT NULL,
    ts               TIMESTAMP,
    dp_rank          INTEGER,
    tp_rank          INTEGER,
    new_seq          BIGINT,
    new_token        BIGINT,
    cached_token     BIGINT,
    token_usage      DOUBLE,
    running_req      BIGINT,
    queue_req        BIGINT,
    input_throughput DOUBLE,
    cuda_graph       BOOLEAN,
    extra            VARCHAR
);

CREATE TABLE bench_serving (
    source_id           VARCHAR NOT NULL,
    record_index        INTEGER NOT NULL,
    line_no             BIGINT,
    tool                VARCHAR,
    backend             VARCHAR,
    dataset_name        VARCHAR,
    tag                 VARCHAR,
    request_rate        DOUBLE,
    max_concurrency     BIGINT,
    duration_s          DOUBLE,
    completed           BIGINT,
    total_input_tokens  BIGINT,
    total_output_tokens BIGINT,
    request_throughput  DOUBLE,
    input_throughput    DOUBLE,
    output_throughput   DOUBLE,
    mean_ttft_ms        DOUBLE,
    median_ttft_ms      DOUBLE,
    p99_ttft_ms         DOUBLE,
    mean_tpot_ms        DOUBLE,
    median_tpot_ms      DOUBLE,
    mean_itl_ms         DOUBLE,
    median_itl_ms       DOUBLE,
    p99_itl_ms          DOUBLE,
    mean_e2e_latency_ms DOUBLE,
    accept_length       DOUBLE,
    extra               VARCHAR
);

CREATE TABLE decisions (
    decision_id    VARCHAR PRIMARY KEY,
    created_at     TIMESTAMP NOT NULL,
    title          VARCHAR NOT NULL,
    phase          VARCHAR,
    verdict        VARCHAR NOT NULL,     -- accepted / rejected / inconclusive
    note_md        VARCHAR,
    session_ids    VARCHAR NOT NULL,     -- JSON list of evidence session ids
    evidence       VARCHAR NOT NULL,     -- JSON: the numbers frozen at creation
    evidence_hash  VARCHAR NOT NULL
);

CREATE TABLE store_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);

CREATE INDEX decode_stats_source ON decode_stats (source_id, ts);

CREATE INDEX bench_runs_session ON bench_runs (session_id);
