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

-- Per drafter and token-count file: the share of the generated tokens the draft vocabulary can
-- express at all, an upper bound on acceptance at every draft position. A drafter without d2t and
-- without a smaller draft vocabulary covers every id below its vocab_size.
CREATE VIEW drafter_coverage AS
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
