"""docs/schema.md documents every table, view and column users can query."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from ingest.storage import store
from tests.conftest import ROOT


def documented() -> dict[str, set[str]]:
    sections: dict[str, set[str]] = {}
    current = None
    for line in (ROOT / "docs" / "schema.md").read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## (\w+)", line)
        if heading:
            current = sections.setdefault(heading.group(1), set())
            continue
        cell = re.match(r"^\| (\w+) \|", line)
        if current is not None and cell and cell.group(1) != "column":
            current.add(cell.group(1))
    return sections


def test_every_table_and_column_is_documented(isolated_store: Path) -> None:
    docs = documented()
    with store.writer(isolated_store) as con:
        rows = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
        ).fetchall()
    missing = sorted(f"{table}.{column}" for table, column in rows if column not in docs.get(table, set()))
    assert not missing, f"undocumented in docs/schema.md: {missing}"


def test_the_documented_example_queries_run_on_the_demo_store(demo_db: Path) -> None:
    """The queries docs/schema.md shows a user (``duckdb specdash.duckdb "…"``) answer on a real store."""
    queries = re.findall(r'^duckdb specdash\.duckdb "(.+)"$', (ROOT / "docs" / "schema.md").read_text(encoding="utf-8"), re.M)
    assert queries
    with duckdb.connect(str(demo_db), read_only=True) as connection:
        for query in queries:
            assert connection.sql(query).fetchall(), query
