"""The schema is declared once and checked: the parsers' Arrow schemas (ingest/tables.py) against the
DDL the migrations add up to, the generated docs/current-schema.sql against the migrations, and the
insert that refuses rows whose columns differ from the store's (issue #17)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from ingest.model import ParsedSource
from ingest.storage import store
from ingest.storage.schema import current_schema_sql
from ingest.tables import SCHEMAS
from tests.conftest import ROOT

DUCKDB_TYPE = {
    pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN", pa.timestamp("us"): "TIMESTAMP", pa.list_(pa.float64()): "DOUBLE[]",
}


def stored_columns(name: str) -> dict[str, str]:
    with duckdb.connect() as con:
        store.migrate(con)
        return dict(con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [name]
        ).fetchall())


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_parser_table_has_exactly_the_stores_columns_and_types(name: str) -> None:
    stored = stored_columns(name)
    declared = {field.name: DUCKDB_TYPE.get(field.type, str(field.type)) for field in SCHEMAS[name]}
    assert {column: kind for column, kind in stored.items() if column not in declared} == {
        column: kind for column, kind in stored.items() if column in store.STORE_FILLED and column not in declared
    }, "a store column the parser tables do not declare"
    assert {column: stored.get(column) for column in declared} == declared


def test_the_current_schema_file_is_what_the_migrations_add_up_to() -> None:
    committed = (ROOT / "docs" / "current-schema.sql").read_text(encoding="utf-8")
    assert committed == current_schema_sql(), "stale: run `python -m ingest.storage.schema > docs/current-schema.sql`"


def parsed_with(table: pa.Table) -> ParsedSource:
    parsed = ParsedSource(kind="sglang_log", engine="sglang")
    parsed.tables = {"log_profiles": table}
    return parsed


def test_rows_with_a_column_the_store_lacks_are_refused_by_name_and_nothing_is_stored(tmp_path: Path) -> None:
    db, source = tmp_path / "store.duckdb", tmp_path / "server.log"
    source.write_text("x\n")
    rows = SCHEMAS["log_profiles"].empty_table().append_column("profile_label", pa.array([], pa.string()))
    rows = pa.concat_tables([rows, pa.table({**{n: pa.nulls(1, rows.schema.field(n).type) for n in rows.schema.names}},
                                            schema=rows.schema)])
    with pytest.raises(store.SchemaMismatch, match="column profile_label is not in the store; add it in a migration"):
        store.load_source(db, source, parsed_with(rows), sha256="a" * 64)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (0,)


def test_rows_lacking_a_column_the_store_requires_are_refused_by_name(tmp_path: Path) -> None:
    db, source = tmp_path / "store.duckdb", tmp_path / "server.log"
    source.write_text("x\n")
    full = pa.table({n: pa.nulls(1, SCHEMAS["log_profiles"].field(n).type) for n in SCHEMAS["log_profiles"].names})
    with pytest.raises(store.SchemaMismatch, match="the store requires column output_dir"):
        store.load_source(db, source, parsed_with(full.drop_columns(["output_dir"])), sha256="b" * 64)


def test_bench_runs_carry_their_sessions_labels_as_documented(tmp_path: Path) -> None:
    from ingest.pipeline import ingest_paths

    db = tmp_path / "store.duckdb"
    ingest_paths([ROOT / "data" / "demo" / "phase-0" / "k2-drafter" / "bench.json"], db, phase="phase-0")
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT phase, variant, count(*) FROM bench_runs GROUP BY ALL").fetchall()
    [(phase, variant, runs)] = rows
    assert phase == "phase-0" and variant and runs >= 5
