"""The store's current schema as one SQL file a reader can open: ``docs/current-schema.sql``.

The migrations in ``ingest/storage/migrations/`` move an existing store forward; this is what they add up to,
read back from a store migrated from scratch (DuckDB's own text of each table, view and macro).
``python -m ingest.storage.schema > docs/current-schema.sql`` writes it; a test fails when the file is stale.
"""
from __future__ import annotations

import duckdb

from ingest.storage import store

HEADER = (
    "-- The specdash store's schema after every migration (generated: python -m ingest.storage.schema).\n"
    "-- Edit the migrations, not this file; docs/schema.md says what each column means.\n"
)


def current_schema_sql() -> str:
    con = duckdb.connect()
    try:
        store.migrate(con)
        tables = con.execute(
            "SELECT table_name, sql FROM duckdb_tables() WHERE NOT internal AND table_name <> 'schema_migrations' ORDER BY 1"
        ).fetchall()
        views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()
        macros = con.execute(
            """SELECT function_name, function_type, parameters, macro_definition FROM duckdb_functions()
               WHERE function_type IN ('macro', 'table_macro') AND NOT internal AND schema_name = 'main' ORDER BY 1"""
        ).fetchall()
    finally:
        con.close()
    parts = [HEADER, "\n-- Tables\n"]
    parts += [f"\n{one_column_per_line(sql)}\n" for _, sql in tables]
    parts.append("\n-- Macros\n")
    for name, kind, parameters, definition in macros:
        table = " TABLE" if kind == "table_macro" else ""
        parts.append(f"\nCREATE MACRO {name}({', '.join(parameters)}) AS{table} {definition};\n")
    parts.append("\n-- Views\n")
    parts += [f"\n{sql}\n" for _, sql in views]
    return "".join(parts)


def one_column_per_line(create_table: str) -> str:
    """``CREATE TABLE t(a INT, b VARCHAR);`` with each column on a line of its own."""
    head, _, body = create_table.partition("(")
    lines, depth, current = [], 1, ""
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            break
        if char == "," and depth == 1:
            lines.append(current.strip())
            current = ""
        else:
            current += char
    lines.append(current.strip())
    return head + "(\n    " + ",\n    ".join(lines) + "\n);"


if __name__ == "__main__":
    print(current_schema_sql(), end="")
