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
