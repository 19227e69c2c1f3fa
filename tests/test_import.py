"""`specdash import OTHER`: another store's files come over as if they had been ingested here (ingest/storage/imports.py)."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import duckdb
import pytest

from dashboard.cli import main
from ingest.errors import NoStore, StoreError
from ingest.pipeline import ingest_paths
from ingest.storage import imports, run_windows
from ingest.storage.decisions import record_decision
from tests.conftest import ROOT
from tests.test_export import store_tables

DEMO = ROOT / "data" / "demo" / "phase-0"
# Columns that say when or in which call a row was written, not what it holds.
WHEN_WRITTEN = {"ingested_at", "ingest_group", "change_id", "changed_at", "applied_at"}
NOT_COMPARED = {"store_meta", "schema_migrations", "decisions"}


def ingest_variants(db: Path, *variants: str) -> None:
    """Each variant's benchmark and server log, one ingest call per variant (as a team ingests after each run)."""
    for variant in variants:
        reports = ingest_paths([DEMO / variant / "bench.json", DEMO / variant / "server.log"], db,
                               phase="phase-0", variant=variant)
        assert not [report.summary() for report in reports if report.failed]


def table_contents(db: Path) -> dict[str, list[tuple]]:
    """Every table's rows, sorted, without the columns that record when they were written (floats: ``same_sum``)."""
    contents = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for table in store_tables(db):
            if table in NOT_COMPARED:
                continue
            columns = [name for (name,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [table]).fetchall()
                if name not in WHEN_WRITTEN]
            listed = ", ".join(f'"{name}"' for name in columns)
            rows = con.execute(f'SELECT {listed} FROM "{table}"').fetchall()
            contents[table] = sorted((tuple(same_sum(value) for value in row) for row in rows), key=repr)
    return contents


def same_sum(value: object) -> object:
    """A float to 12 significant digits: DuckDB may add a window's values in another order (82.6208 and
    82.62080000000002 are one sum)."""
    return float(f"{value:.12g}") if isinstance(value, float) else value


@pytest.fixture
def ours_and_theirs(tmp_path: Path) -> tuple[Path, Path]:
    """Our store holds the baseline and from-scratch; theirs holds from-scratch (the same files) and the K2 drafter."""
    ours, theirs = tmp_path / "ours.duckdb", tmp_path / "theirs" / "theirs.duckdb"
    ingest_variants(ours, "baseline", "from-scratch")
    ingest_variants(theirs, "from-scratch", "k2-drafter")
    return ours, theirs


def test_an_import_leaves_the_store_an_ingest_of_every_file_would_have(ours_and_theirs: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    ours, theirs = ours_and_theirs
    result = imports.import_store(ours, theirs)
    assert (result.sources, result.already_here, result.decisions) == (2, 2, 0)  # k2's two files; from-scratch's were here
    everything = tmp_path / "everything.duckdb"
    ingest_variants(everything, "baseline", "from-scratch", "k2-drafter")
    imported, ingested = table_contents(ours), table_contents(everything)
    assert imported.keys() == ingested.keys()
    different = [table for table in ingested if imported[table] != ingested[table]]
    assert different == [], different  # derived tables too: run windows and links recomputed as after a load
    assert store_tables(ours)["bench_runs"] == 21  # 3 variants × 7 runs in their bench.json (2 of them warm-ups)


def test_importing_again_brings_nothing_and_decisions_come_once(ours_and_theirs: tuple[Path, Path]) -> None:
    ours, theirs = ours_and_theirs
    with duckdb.connect(str(theirs), read_only=True) as con:
        [session] = con.execute("SELECT session_id FROM sessions WHERE variant = 'k2-drafter'").fetchone() or []
    record_decision(theirs, title="K2 drafter as-is", verdict="rejected", session_ids=[session], evidence={"tok_s": 51.8})
    first = imports.import_store(ours, theirs)
    before = store_tables(ours)
    second = imports.import_store(ours, theirs)
    assert (first.sources, first.decisions) == (2, 1)
    assert (second.sources, second.already_here, second.rows, second.decisions) == (0, 4, 0, 0)
    assert store_tables(ours) == before


def test_a_failed_import_leaves_the_store_as_it_was(ours_and_theirs: tuple[Path, Path],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ours, theirs = ours_and_theirs
    before = table_contents(ours)

    def fail(con: duckdb.DuckDBPyConnection) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(run_windows, "rebuild", fail)  # after every row was copied, before the commit
    with pytest.raises(RuntimeError, match="disk full"):
        imports.import_store(ours, theirs)
    assert table_contents(ours) == before


def test_an_older_store_is_read_through_a_migrated_copy_and_never_written(tmp_path: Path) -> None:
    old = tmp_path / "old.duckdb"  # made by the code of cf0d61f (tests/fixtures/stores/make_old_stores.py)
    with gzip.open(ROOT / "tests" / "fixtures" / "stores" / "before-012-trace-labels.duckdb.gz", "rb") as packed, \
            open(old, "wb") as out:
        shutil.copyfileobj(packed, out)
    untouched = old.read_bytes()
    ours = tmp_path / "ours.duckdb"
    result = imports.import_store(ours, old)
    assert result.sources > 0 and result.rows > 0
    assert old.read_bytes() == untouched
    with duckdb.connect(str(old), read_only=True) as con:
        old_sources = con.execute("SELECT count(*) FROM sources").fetchone()
    assert store_tables(ours)["sources"] == (old_sources or [0])[0] == result.sources


def test_a_newer_store_a_non_store_and_the_store_itself_are_refused(ours_and_theirs: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    ours, theirs = ours_and_theirs
    with duckdb.connect(str(theirs)) as con:
        con.execute("INSERT INTO schema_migrations VALUES ('999_from_the_future', now())")
    before = table_contents(ours)
    with pytest.raises(StoreError, match="newer specdash.*999_from_the_future") as newer:
        imports.import_store(ours, theirs)
    assert "upgrade specdash here" in str(newer.value.hint)
    text = tmp_path / "notes.duckdb"
    text.write_text("not a database\n")
    with pytest.raises(StoreError, match="is not a specdash store"):
        imports.import_store(ours, text)
    with pytest.raises(StoreError, match="is the store itself"):
        imports.import_store(ours, ours)
    with pytest.raises(NoStore):
        imports.import_store(ours, tmp_path / "missing.duckdb")
    assert table_contents(ours) == before


def test_the_command_says_what_came_over(ours_and_theirs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    ours, theirs = ours_and_theirs
    assert main(["import", str(theirs), "--db", str(ours)]) == 0
    out = capsys.readouterr().out
    assert "imported 2 files (" in out and "0 decisions" in out and "2 of its files were here already" in out
