-- 020_cycle_timing_labels: a cycle-timing file loaded without --variant, whose rows name no variant, takes
-- its folder's variant as a profiler trace does (ingest.storage.store.file_variant). Before, its rows kept a
-- NULL variant: no page could name them, and the Acceptance page's cycle model failed on them.

-- after views: run once the views are current (storage/views.sql), in this migration's order

UPDATE cycle_phase_times t SET variant = folder_variant(s.path)
FROM sources s
WHERE s.source_id = t.source_id AND s.kind = 'cycle_timing' AND t.variant IS NULL AND s.variant IS NULL;
