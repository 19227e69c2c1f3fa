"""Stores older releases left, opened by this one: the migrations they miss are applied, then every view
is the current one (ingest/storage/views.sql). The old stores were made by the code of commit cf0d61f
(tests/fixtures/stores/make_old_stores.py says how), when views were still defined inside migrations."""
from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from ingest.storage import store
from tests.conftest import ROOT

OLD_STORES = ROOT / "tests" / "fixtures" / "stores"
EAGLE3 = "eagle3:Kimi-K2-Instruct-eagle3"
TRACE_TABLES = ("trace_ranks", "cycle_phase_times", "trace_kernels")
DEFINED = re.compile(r"^CREATE OR REPLACE (?:VIEW|MACRO) (\w+)", re.M)


def old_store(name: str, folder: Path) -> Path:
    db = folder / name.removesuffix(".gz")
    with gzip.open(OLD_STORES / name, "rb") as packed, open(db, "wb") as out:
        shutil.copyfileobj(packed, out)
    return db


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def definitions(db: Path) -> list[tuple]:
    """Every view's and macro's text, as DuckDB holds it."""
    views = query(db, "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1")
    macros = query(
        db,
        """SELECT function_name, macro_definition FROM duckdb_functions()
           WHERE function_type IN ('macro', 'table_macro') AND NOT internal AND schema_name = 'main' ORDER BY ALL""",
    )
    return views + macros


def applied(db: Path) -> list[str]:
    return [name for (name,) in query(db, "SELECT name FROM schema_migrations ORDER BY name")]


@pytest.fixture
def fresh_store(tmp_path: Path) -> Path:
    db = tmp_path / "fresh.duckdb"
    with store.writer(db):
        pass
    return db


def test_a_store_made_before_the_links_gets_the_current_views_and_relabels_its_traces(tmp_path: Path, fresh_store: Path) -> None:
    db = old_store("before-012-trace-labels.duckdb.gz", tmp_path)
    assert applied(db)[-1] == "011_evidence_sessions"
    assert {v for t in TRACE_TABLES for (v,) in query(db, f"SELECT DISTINCT variant FROM {t}")} == {"trace:1772460165.0712345"}
    with store.writer(db):  # opening the store for writing applies 012-019, then the views
        pass
    assert applied(db) == applied(fresh_store)
    assert definitions(db) == definitions(fresh_store)
    # 012's and 019's relabelling ran through the current views: the trace takes its server's variant
    assert {v for t in TRACE_TABLES for (v,) in query(db, f"SELECT DISTINCT variant FROM {t}")} == {EAGLE3}
    [row] = query(db, "SELECT variant, variant_from, link_method, log_segment FROM evidence_sessions WHERE origin = 'trace_set'")
    assert row == (EAGLE3, "linked server log", "trace start inside the lifetime (UTC clock)", 0)
    assert query(db, "SELECT count(*) FROM trace_links") == query(db, "SELECT count(*) FROM trace_set_links") == [(1,)]


def test_a_store_made_before_streaming_keeps_its_formulas(tmp_path: Path, fresh_store: Path) -> None:
    db = old_store("before-008-formulas.duckdb.gz", tmp_path)
    assert applied(db)[-1] == "007_kept_run_windows"
    with store.writer(db) as con:
        values = con.execute("SELECT segment, accept_rate_formulas FROM server_configs ORDER BY segment").fetchall()
    assert [(segment, value and json.loads(value)) for segment, value in values] == [(0, ["tau/num_draft_tokens"]), (1, None)]
    assert definitions(db) == definitions(fresh_store)


def test_views_are_re_created_when_their_file_changes_and_only_then(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.duckdb"
    with store.writer(db) as con:
        assert store.migrate(con) == []  # current: nothing to do
    shipped = store.views_sql()
    changed = shipped + "\nCREATE OR REPLACE VIEW store_views_probe AS SELECT 1 AS one;\n"
    monkeypatch.setattr(store, "views_sql", lambda: changed)
    with store.writer(db):
        pass
    assert query(db, "SELECT one FROM store_views_probe") == [(1,)]
    with store.writer(db) as con:  # a view dropped behind the store's back...
        con.execute("DROP VIEW store_views_probe")
    with store.writer(db):  # ...stays dropped: the views are not run again while views.sql is unchanged
        pass
    assert query(db, "SELECT count(*) FROM duckdb_views() WHERE view_name = 'store_views_probe'") == [(0,)]


def test_a_store_whose_views_are_an_older_versions_asks_for_its_upgrade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store no writer of this version has opened reads through the views it was made with (a view added since is
    missing): the app says so and how to upgrade it, instead of failing on the first query."""
    from dashboard.analysis import data
    from tests.test_app import run_page

    db = tmp_path / "store.duckdb"
    with store.writer(db) as con:
        con.execute("UPDATE store_meta SET value = 'an older views.sql' WHERE key = ?", [store.VIEWS_META_KEY])
    assert data.store_state(db)["pending_migrations"] == ["views.sql"]
    app = run_page("views/compare.py", db, monkeypatch, check=False)
    assert [w.value for w in app.warning] == [
        f"This store predates the current schema (missing: views.sql). Upgrade it once with `specdash status --db {db}`, then refresh."]
    with store.writer(db):  # what `specdash status` does
        pass
    assert data.store_state(db)["pending_migrations"] == []


def test_no_migration_defines_a_view_or_a_macro() -> None:
    """Views and macros have one definition each, in views.sql; migrations create and alter tables."""
    for path in sorted((ROOT / "ingest" / "storage" / "migrations").glob("*.sql")):
        statements = [s.query.lstrip() for s in duckdb.extract_statements(path.read_text(encoding="utf-8"))]
        code = ["\n".join(line for line in s.splitlines() if not line.lstrip().startswith("--")) for s in statements]
        assert not [c for c in code if c.lstrip().upper().startswith(("CREATE VIEW", "CREATE OR REPLACE VIEW", "CREATE MACRO", "CREATE OR REPLACE MACRO"))], path.name


def test_every_view_and_macro_is_defined_once() -> None:
    statements = duckdb.extract_statements(store.views_sql())
    names = [found.group(1) for s in statements if (found := DEFINED.search(s.query))]
    assert len(names) == len(statements) == len(set(names)) >= 30
