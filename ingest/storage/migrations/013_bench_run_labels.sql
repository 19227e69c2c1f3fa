-- 013_bench_run_labels: bench_runs carries its session's phase and variant again, as first documented,
-- so `SELECT variant, avg(tok_per_s) FROM bench_runs GROUP BY variant` works without a join.
-- store.load_source fills them from the file's sessions in the load's transaction. Documented in
-- docs/schema.md.
ALTER TABLE bench_runs ADD COLUMN phase VARCHAR;

ALTER TABLE bench_runs ADD COLUMN variant VARCHAR;

UPDATE bench_runs r SET phase = s.phase, variant = s.variant FROM sessions s WHERE s.session_id = r.session_id;
