-- 004_traces: where a speculative cycle's time goes, from profiler traces (kineto_trace) and
-- hand-timed cycles (cycle_timing). How the numbers are made: docs/breakdown.md.
-- `phase`/`variant` in the tables are the experiment labels (--phase/--variant, e.g. phase-0);
-- the speculative phase of a cycle is `cycle_phase`. The public view `cycle_breakdown` below
-- names it `phase`, as the issue does, and the experiment phase `experiment_phase`.
CREATE TABLE cycle_phase_times (
    source_id      VARCHAR NOT NULL,
    session_id     VARCHAR,            -- null for traces until the store links them to a session
    session_key    INTEGER,
    phase          VARCHAR,            -- experiment phase label
    variant        VARCHAR,
    rank           INTEGER NOT NULL,
    cycle_idx      INTEGER NOT NULL,   -- -1: GPU time before the first cycle
    cycle_kind     VARCHAR NOT NULL,   -- speculative / decode / prefill / other / outside / whole_trace
    complete       BOOLEAN NOT NULL,   -- speculative: has every phase the trace shows (draft, verify, draft_extend)
    cycle_start_us DOUBLE,             -- from the rank's first GPU activity
    cycle_ms       DOUBLE,             -- wall time of the cycle (= sum of duration_ms over its rows)
    cycle_phase    VARCHAR NOT NULL,   -- draft / verify / draft_extend / target_prefill / decode / other / unattributed / idle
    kernel_class   VARCHAR NOT NULL,   -- communication / attention / moe / gemm / memcpy / elementwise/other / idle / measured
    duration_ms    DOUBLE NOT NULL,    -- exclusive GPU time: overlaps resolved by priority, so rows add up
    union_ms       DOUBLE,             -- this class's own union of intervals in this phase, overlap included
    kernels        BIGINT,             -- kernels starting in this cycle with this phase and class
    attribution    VARCHAR,            -- launch_marker / gpu_annotation / position / none / measured, joined by +
    extra          VARCHAR             -- cycle_timing: the file's other columns, as a JSON object
);

CREATE TABLE trace_kernels (
    source_id    VARCHAR NOT NULL,
    phase        VARCHAR,
    variant      VARCHAR,
    rank         INTEGER NOT NULL,
    name         VARCHAR NOT NULL,
    kernel_class VARCHAR NOT NULL,
    cycle_phase  VARCHAR NOT NULL,
    count        BIGINT NOT NULL,
    total_ms     DOUBLE NOT NULL,      -- sum of durations (overlaps not merged)
    mean_ms      DOUBLE,
    p50_ms       DOUBLE,
    p99_ms       DOUBLE,
    max_ms       DOUBLE
);

CREATE TABLE trace_ranks (
    source_id             VARCHAR NOT NULL,
    phase                 VARCHAR,
    variant               VARCHAR,
    rank                  INTEGER NOT NULL,
    world_size            INTEGER,
    tp_rank               INTEGER,
    dp_rank               INTEGER,
    pp_rank               INTEGER,
    ep_rank               INTEGER,
    stage                 VARCHAR,     -- prefill / decode when SGLang profiled by stage
    profile_id            VARCHAR,     -- from the file name: ranks of one profile share it
    merged                BOOLEAN,
    file_name             VARCHAR,
    gpu_name              VARCHAR,
    time_base             VARCHAR,     -- relative to baseTimeNanoseconds / absolute epoch µs / relative, origin unknown
    time_unit_note        VARCHAR,
    trace_start_at        TIMESTAMP,   -- UTC, first GPU activity of the rank
    span_ms               DOUBLE,
    events_read           BIGINT,
    kernels               BIGINT,
    memory_ops            BIGINT,
    launches_matched      BIGINT,
    attributed_share      DOUBLE,      -- share of kernels with a phase
    phase_source          VARCHAR,     -- step_annotation / python_stack / user_rule / none, joined by +
    busy_ms               DOUBLE,      -- union of all GPU activity
    idle_ms               DOUBLE,
    communication_ms      DOUBLE,      -- union per class over the whole trace
    attention_ms          DOUBLE,
    gemm_ms               DOUBLE,
    moe_ms                DOUBLE,
    memcpy_ms             DOUBLE,
    other_kernel_ms       DOUBLE,
    cycles                INTEGER,
    complete_cycles       INTEGER,
    median_cycle_ms       DOUBLE,
    max_cycle_ms          DOUBLE,
    median_verify_ms      DOUBLE,
    median_verify_comm_ms DOUBLE,
    verify_comm_share     DOUBLE,
    extra                 VARCHAR
);

CREATE INDEX cycle_phase_times_source ON cycle_phase_times (source_id, rank, cycle_idx);
