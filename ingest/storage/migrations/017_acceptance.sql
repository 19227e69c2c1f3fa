-- 017_acceptance: acceptance in depth (issue #19): per draft position, per request, per dataset, and the
-- Prometheus /metrics snapshots some of it comes from. Documented in docs/schema.md; the definitions are
-- docs/metrics.md's "Acceptance in depth" section.

-- Per-position acceptance as an engine printed it (vLLM SpecDecoding metrics lines): rate = drafts whose
-- position `position` (1-based) was accepted / drafts = P(at least `position` drafts accepted).
CREATE TABLE acceptance_positions (
    source_id VARCHAR NOT NULL,
    segment INTEGER,
    line_no BIGINT,
    ts TIMESTAMP,
    engine_index INTEGER,
    position INTEGER NOT NULL,
    rate DOUBLE NOT NULL,
    drafts BIGINT,
    origin VARCHAR NOT NULL,
    extra VARCHAR
);

-- One request's spec-decode statistics (vLLM metrics.speculative_decoding, SGLang meta_info spec_*,
-- AIPerf spec_decode_acceptance, bench_serving --output-details spec arrays).
CREATE TABLE acceptance_requests (
    source_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    request_index INTEGER NOT NULL,
    line_no BIGINT,
    request_id VARCHAR,
    engine VARCHAR,
    origin VARCHAR NOT NULL,
    dataset VARCHAR,
    accept_length DOUBLE,
    accepted_drafts BIGINT,
    draft_tokens BIGINT,
    spec_steps BIGINT,
    num_spec_tokens INTEGER,
    accept_rate DOUBLE,
    histogram DOUBLE[],
    input_tokens BIGINT,
    output_tokens BIGINT,
    extra VARCHAR
);

CREATE TABLE metric_samples (
    source_id VARCHAR NOT NULL,
    snapshot INTEGER NOT NULL,
    line_no BIGINT,
    ts TIMESTAMP,
    metric VARCHAR NOT NULL,
    family VARCHAR,
    kind VARCHAR NOT NULL,
    labels VARCHAR,
    engine_index INTEGER,
    position INTEGER,
    value DOUBLE
);

CREATE TABLE counter_deltas (
    source_id VARCHAR NOT NULL,
    "window" INTEGER NOT NULL,
    line_no BIGINT,
    metric VARCHAR NOT NULL,
    labels VARCHAR,
    engine_index INTEGER,
    position INTEGER,
    value_before DOUBLE,
    value_after DOUBLE,
    delta DOUBLE,
    reset BOOLEAN NOT NULL
);
