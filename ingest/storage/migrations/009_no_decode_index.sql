-- The ART index on decode_stats (source_id, ts) cost each log load a single-threaded pass at
-- commit (about 1 s per 4 M decode rows, a quarter of a 1 GB log's load) and served no query:
-- the dashboard reads decode rows through joins and list filters, which DuckDB answers with
-- hash joins and the per-row-group min/max it keeps anyway (rows of one file sit together).
DROP INDEX IF EXISTS decode_stats_source;
