"""Small typed helpers over DuckDB calls, shared by the store and its readers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb


def fetch_value(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row; an aggregate query always returns one row."""
    row = con.execute(sql, list(params)).fetchone()
    if row is None:
        raise LookupError(f"no row from: {sql}")
    return row[0]


def put_meta(con: duckdb.DuckDBPyConnection, key: str, value: Any) -> None:
    """Set one ``store_meta`` entry. A delete and an insert, not INSERT OR REPLACE: a DuckLake table has no
    primary key. On a lake, two writers that both set an entry conflict, and one of them retries."""
    con.execute("DELETE FROM store_meta WHERE key = ?", [key])
    con.execute("INSERT INTO store_meta VALUES (?, ?)", [key, value])
