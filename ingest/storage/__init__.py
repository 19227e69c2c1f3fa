"""The DuckDB store: the only writer, its migrations and views, labels, decisions and kept tables."""
