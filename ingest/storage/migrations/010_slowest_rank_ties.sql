-- cycle_pace.slowest_rank: when ranks tie on the longest median cycle, the lowest of them, every
-- time. arg_max(rank, median_cycle_ms) returned any of the tied ranks, so the same store could
-- answer rank 0 once and rank 1 the next time (seen with identical per-rank traces). The view is
-- otherwise unchanged (004_traces).
CREATE OR REPLACE VIEW cycle_pace AS
WITH per_rank AS (
    SELECT s.*, coalesce(t.profile_id, s.source_id) AS profile_key
    FROM cycle_rank_summary s LEFT JOIN trace_ranks t USING (source_id, rank)
)
SELECT profile_key, experiment_phase, variant,
       count(*) AS ranks,
       median(median_cycle_ms) AS median_cycle_ms_median,
       max(median_cycle_ms) AS median_cycle_ms_max,
       arg_max(rank, (median_cycle_ms, -rank)) FILTER (WHERE median_cycle_ms IS NOT NULL) AS slowest_rank,
       median(median_verify_ms) AS median_verify_ms_median,
       max(median_verify_ms) AS median_verify_ms_max,
       median(median_verify_comm_ms) AS median_verify_comm_ms_median,
       max(median_verify_comm_ms) AS median_verify_comm_ms_max,
       median(verify_comm_share) AS verify_comm_share_median,
       max(verify_comm_share) AS verify_comm_share_max
FROM per_rank
GROUP BY profile_key, experiment_phase, variant;
