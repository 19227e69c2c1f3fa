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

-- The public breakdown, one row per (source, rank, cycle, phase, kernel class).
CREATE VIEW cycle_breakdown AS
SELECT source_id, session_id, rank, cycle_idx, cycle_phase AS phase, kernel_class, duration_ms,
       cycle_kind, complete, cycle_ms, cycle_start_us, union_ms, kernels, attribution,
       phase AS experiment_phase, variant
FROM cycle_phase_times;

-- One row per complete decode/speculative cycle and rank, phases side by side.
CREATE VIEW cycle_totals AS
SELECT source_id, any_value(session_id) AS session_id, phase AS experiment_phase, variant, rank, cycle_idx, cycle_kind,
       any_value(cycle_ms) AS cycle_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'draft'), 0) AS draft_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'verify'), 0) AS verify_ms,
       CASE WHEN bool_or(kernel_class = 'measured') THEN NULL  -- hand-timed phases carry no kernel classes
            ELSE coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'verify' AND kernel_class = 'communication'), 0)
       END AS verify_comm_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'draft_extend'), 0) AS draft_extend_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'decode'), 0) AS decode_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'unattributed'), 0) AS unattributed_ms,
       coalesce(sum(duration_ms) FILTER (WHERE cycle_phase = 'idle'), 0) AS idle_ms
FROM cycle_phase_times
WHERE complete AND cycle_kind IN ('speculative', 'decode')
GROUP BY source_id, phase, variant, rank, cycle_idx, cycle_kind;

-- Per rank: medians over complete cycles (ingest.derive.breakdown.summarize_rank computes the same).
CREATE VIEW cycle_rank_summary AS
SELECT source_id, experiment_phase, variant, rank,
       count(*) AS complete_cycles,
       median(cycle_ms) AS median_cycle_ms,
       max(cycle_ms) AS max_cycle_ms,
       CASE WHEN sum(verify_ms) > 0 THEN median(verify_ms) END AS median_verify_ms,
       CASE WHEN sum(verify_ms) > 0 THEN median(verify_comm_ms) END AS median_verify_comm_ms,
       sum(verify_comm_ms) / nullif(sum(verify_ms), 0) AS verify_comm_share
FROM cycle_totals
GROUP BY source_id, experiment_phase, variant, rank;

-- Across the ranks of one profile (trace files sharing a profile_id; else one source):
-- the slowest rank sets the pace.
CREATE VIEW cycle_pace AS
WITH per_rank AS (
    SELECT s.*, coalesce(t.profile_id, s.source_id) AS profile_key
    FROM cycle_rank_summary s LEFT JOIN trace_ranks t USING (source_id, rank)
)
SELECT profile_key, experiment_phase, variant,
       count(*) AS ranks,
       median(median_cycle_ms) AS median_cycle_ms_median,
       max(median_cycle_ms) AS median_cycle_ms_max,
       arg_max(rank, median_cycle_ms) AS slowest_rank,
       median(median_verify_ms) AS median_verify_ms_median,
       max(median_verify_ms) AS median_verify_ms_max,
       median(median_verify_comm_ms) AS median_verify_comm_ms_median,
       max(median_verify_comm_ms) AS median_verify_comm_ms_max,
       median(verify_comm_share) AS verify_comm_share_median,
       max(verify_comm_share) AS verify_comm_share_max
FROM per_rank
GROUP BY profile_key, experiment_phase, variant;

-- The same cycle on every rank of a profile: the fastest rank's communication time
-- approximates the transfer, the rest of the slowest rank's is waiting.
CREATE VIEW cycle_rank_spread AS
SELECT coalesce(t.profile_id, c.source_id) AS profile_key, c.experiment_phase, c.variant, c.cycle_idx,
       count(*) AS ranks,
       min(c.verify_comm_ms) AS verify_comm_ms_min,
       median(c.verify_comm_ms) AS verify_comm_ms_median,
       max(c.verify_comm_ms) AS verify_comm_ms_max,
       min(c.cycle_ms) AS cycle_ms_min,
       max(c.cycle_ms) AS cycle_ms_max
FROM cycle_totals c LEFT JOIN trace_ranks t USING (source_id, rank)
GROUP BY ALL;
