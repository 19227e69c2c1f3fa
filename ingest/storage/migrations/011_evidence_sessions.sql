-- 011_evidence_sessions: a session from any evidence, not only from a benchmark JSON.
-- Most teams keep a server log and bench_serving output, no benchmark JSON: before this, such a store
-- had no sessions, so no variants, and every analysis page was empty. Documented in docs/schema.md
-- (macro file_label, view evidence_sessions).

-- after views: run once the views are current (storage/views.sql), in this migration's order

-- Traces loaded without --variant had no label and so reached no page: name them after their file.
UPDATE trace_ranks SET variant = 'trace:' || file_label(file_name) WHERE variant IS NULL;

UPDATE cycle_phase_times p SET variant = 'trace:' || file_label(s.path)
    FROM sources s WHERE s.source_id = p.source_id AND p.variant IS NULL AND s.kind = 'kineto_trace';

UPDATE trace_kernels p SET variant = 'trace:' || file_label(s.path)
    FROM sources s WHERE s.source_id = p.source_id AND p.variant IS NULL;
