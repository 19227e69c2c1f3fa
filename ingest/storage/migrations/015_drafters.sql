-- 015_drafters: EAGLE-3 drafter checkpoints and their vocabulary mappings (issue #20), read by
-- ingest/parsers/drafters/eagle3_drafter.py from config.json, the safetensors headers and the d2t/t2d
-- tensors only. Documented in docs/schema.md.

-- One row per drafter: its config and the verdicts on its mapping (ingest/parsers/drafters/drafter_checks.py).
CREATE TABLE drafters (
    source_id        VARCHAR NOT NULL,
    path             VARCHAR NOT NULL,  -- the folder (or file) read, as given
    name             VARCHAR NOT NULL,  -- the folder's name (a file's stem): what a server's speculative_draft_model_path ends with
    architecture     VARCHAR,           -- config.json architectures, joined by ', '
    hidden_size      BIGINT,
    vocab_size       BIGINT,            -- the target's vocabulary, from config.json
    draft_vocab_size BIGINT,            -- from config.json; null: the full target vocabulary
    mapping_form     VARCHAR NOT NULL,  -- offsets / absolute ids / identity (all offsets 0) / invalid / full target vocabulary / t2d only / missing (...) / not checked (no weights)
    status           VARCHAR NOT NULL,  -- the worst verdict: wrong / suspicious / not checked / ok
    headline         VARCHAR NOT NULL,  -- the worst verdict's check and reason, or 'all checks pass'
    verdicts         VARCHAR NOT NULL,  -- JSON list of {check, status, reason, todo}
    config           VARCHAR,           -- config.json as read (JSON text); null without one
    weights_files    INTEGER NOT NULL,  -- safetensors files read (0: config.json alone)
    tensors          INTEGER NOT NULL,  -- tensors their headers list
    has_d2t          BOOLEAN NOT NULL,
    has_t2d          BOOLEAN NOT NULL,
    bytes_read       BIGINT NOT NULL    -- bytes read to inspect it (config, headers, mapping tensors, sampled blocks)
);

-- The mapping as the engines load it: target id = draft id + d2t[draft id]; no rows without d2t.
CREATE TABLE drafter_vocab (
    source_id VARCHAR NOT NULL,
    draft_id  INTEGER NOT NULL,
    target_id BIGINT NOT NULL
);

-- What the target generated (format token_counts): one row per target token id, counts summed.
CREATE TABLE token_counts (
    source_id VARCHAR NOT NULL,
    target_id BIGINT NOT NULL,
    count     BIGINT NOT NULL
);
