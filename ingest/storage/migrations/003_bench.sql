-- 003_bench: per-request rows of benchmark records saved with --output-details
-- (sglang.bench_serving / vllm bench serve). Documented in docs/bench-formats.md.
CREATE TABLE bench_requests (
    source_id      VARCHAR NOT NULL,
    record_index   INTEGER NOT NULL,  -- the bench_serving record the request belongs to
    request_index  INTEGER NOT NULL,  -- position in the record's arrays (0-based)
    input_len      BIGINT,
    output_len     BIGINT,
    ttft_ms        DOUBLE,
    tpot_ms        DOUBLE,            -- sum(itls) / (output_len - 1), streaming runs only
    itls_ms        DOUBLE[],          -- inter-token (inter-chunk) latencies, ms
    start_time_s   DOUBLE,            -- vLLM only: request start, benchmark clock
    error          VARCHAR,           -- null when the request succeeded
    generated_text VARCHAR,
    extra          VARCHAR
);

CREATE INDEX bench_requests_record ON bench_requests (source_id, record_index);
