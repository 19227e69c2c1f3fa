-- 018_metric_file_pairs: two /metrics snapshots saved as two files (`curl …/metrics > before.prom`, run,
-- `curl …/metrics > after.prom`) give per-window counter deltas, as two snapshots inside one file do
-- (issue #19). The parser reads one file only (one transaction per source): it records each snapshot's
-- scrape time and the file's modification time (metric_snapshots); the pairing of consecutive files is
-- these views. Documented in docs/schema.md; the rules in docs/formats.md and docs/metrics.md.
CREATE TABLE metric_snapshots (
    source_id VARCHAR NOT NULL,
    snapshot INTEGER NOT NULL,
    first_line BIGINT,
    last_line BIGINT,
    samples BIGINT NOT NULL,
    scraped_at TIMESTAMP,
    file_mtime TIMESTAMP
);

-- Files loaded before this migration: their snapshots as stored (no modification time was recorded).
INSERT INTO metric_snapshots
SELECT source_id, snapshot, min(line_no), max(line_no), count(*), max(ts), NULL
FROM metric_samples GROUP BY source_id, snapshot;
