-- Logs are loaded in batches while they are read, so what is known only at the end of a file
-- belongs to a row written at the end: the accept-rate formulas a server lifetime's lines agree
-- with move from each decode row's extra to that lifetime's server_configs row.
ALTER TABLE server_configs ADD COLUMN accept_rate_formulas VARCHAR;

UPDATE server_configs AS c
SET accept_rate_formulas = CAST(f.formulas AS VARCHAR)
FROM (
    SELECT source_id, segment, any_value(json_extract(extra, '$.accept_rate_formulas')) AS formulas
    FROM decode_stats
    WHERE json_extract(extra, '$.accept_rate_formulas') IS NOT NULL
    GROUP BY source_id, segment
) AS f
WHERE c.source_id = f.source_id AND c.segment = f.segment;
