"""The store: migrations, one transaction per file, idempotent re-ingest, atomic replace. The tests that say what any
store does run on each kind (``any_store``): a DuckDB file, and DuckLake on SQLite and on a real PostgreSQL."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

from ingest.model import ParsedSource
from ingest.pipeline import ingest_paths
from ingest.storage import store
from ingest.storage.location import StoreRef
from ingest.tables import table_from_rows
from tests.conftest import ROOT
from tests.postgres import any_store, postgres  # noqa: F401 (fixtures)

DEMO_K2 = ROOT / "data" / "demo" / "phase-0" / "k2-drafter"


def counts(db: StoreRef) -> dict[str, int]:
    return store.status(db)["rows"]


def test_migrations_are_recorded_and_applied_once(any_store: StoreRef) -> None:
    with store.writer(any_store) as con:
        names = [row[0] for row in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
        assert names[0] == "001_initial"
        assert store.migrate(con) == []


def test_decode_rows_carry_no_index_for_a_load_to_build(isolated_store: Path) -> None:
    # An ART index on decode_stats cost each big log's commit a single-threaded pass (~1 s per 4 M rows)
    # and no dashboard read used it (migration 009); zone maps serve the per-source reads.
    with store.writer(isolated_store) as con:
        indexed = con.execute("SELECT index_name FROM duckdb_indexes() WHERE table_name = 'decode_stats'").fetchall()
    assert indexed == []


def test_reingesting_the_same_bytes_is_a_noop(any_store: StoreRef, tmp_path: Path) -> None:
    first = ingest_paths([DEMO_K2], any_store, phase="phase-0", variant="k2-drafter")
    # bench.json, 2 traces, server.log, the sweep and its rerun, requests.jsonl
    assert [r.status for r in first] == ["loaded"] * 7
    before = counts(any_store)
    copy = tmp_path / "copy-of-bench.json"
    shutil.copy(DEMO_K2 / "bench.json", copy)
    again = ingest_paths([DEMO_K2, copy], any_store, phase="phase-0", variant="k2-drafter")
    assert [r.status for r in again] == ["already ingested"] * 8
    assert "already ingested" in again[0].summary()
    assert counts(any_store) == before


def test_replace_swaps_rows_atomically(any_store: StoreRef) -> None:
    ingest_paths([DEMO_K2 / "bench.json"], any_store, phase="phase-0", variant="old-label")
    ingest_paths([DEMO_K2 / "bench.json"], any_store, phase="phase-0", variant="k2-drafter", replace=True)
    with store.writer(any_store) as con:
        assert con.execute("SELECT DISTINCT variant FROM sessions").fetchall() == [("k2-drafter",)]
        assert con.execute("SELECT count(*) FROM bench_runs").fetchone()[0] == 7
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 1


def test_overrides_label_sessions_and_configs(any_store: StoreRef) -> None:
    ingest_paths([DEMO_K2 / "bench.json", DEMO_K2 / "server.log"], any_store, phase="p", variant="v")
    with store.writer(any_store) as con:
        assert con.execute("SELECT DISTINCT phase, variant FROM sessions").fetchall() == [("p", "v")]
        assert con.execute("SELECT DISTINCT phase, variant FROM server_configs").fetchall() == [("p", "v")]
        session_ids = con.execute("SELECT DISTINCT session_id FROM bench_runs").fetchall()
        assert len(session_ids) == 1 and session_ids[0][0].endswith("-0")


def test_a_failing_load_leaves_the_store_exactly_as_it_was(any_store: StoreRef, tmp_path: Path) -> None:
    ingest_paths([DEMO_K2 / "bench.json"], any_store)
    before = counts(any_store)
    good_sessions = table_from_rows("sessions", [{"session_key": 0, "variant": "x"}])
    # A second table whose rows break a NOT NULL constraint: the failure comes after rows were inserted.
    bad_runs = table_from_rows("bench_runs", [{"session_key": 0, "run_index": None, "is_warmup": False}])
    parsed = ParsedSource(kind="bench_json", tables={"sessions": good_sessions, "bench_runs": bad_runs})
    source = tmp_path / "other.json"
    source.write_text("{}")
    with pytest.raises(duckdb.Error):
        store.load_source(any_store, source, parsed, sha256=store.file_sha256(source))
    assert counts(any_store) == before


def test_a_bad_file_fails_alone_and_others_still_load(any_store: StoreRef, tmp_path: Path) -> None:
    bad = tmp_path / "truncated.json"
    bad.write_text('{"runs": [{"tokens": 2048, "time": 4')
    reports = ingest_paths([bad, DEMO_K2 / "bench.json"], any_store)
    assert [r.failed for r in reports] == [True, False]
    assert str(bad) in str(reports[0].error)
    assert counts(any_store)["sessions"] == 1


# --- a page's reads share one connection (store.shared_reads) ------------------------------------------

def test_reads_in_a_shared_block_open_the_store_once(isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard.analysis import data

    ingest_paths([DEMO_K2], isolated_store, phase="phase-0", variant="k2-drafter")
    opened: list[bool] = []
    real_open = store.open_with_retry
    monkeypatch.setattr(store, "open_with_retry", lambda path, **kw: opened.append(kw["read_only"]) or real_open(path, **kw))
    with store.shared_reads(), store.shared_reads():  # an inner block joins the outer one
        runs = [len(data.frame(isolated_store, "SELECT * FROM bench_runs")) for _ in range(3)]
    assert opened == [True] and runs[0] > 0 and len(set(runs)) == 1
    data.frame(isolated_store, "SELECT 1")
    assert opened == [True, True]  # outside the block each read opens (and closes) its own


def test_a_write_inside_a_shared_block_closes_the_read_connection_first(isolated_store: Path, tmp_path: Path) -> None:
    from dashboard.analysis import data

    ingest_paths([DEMO_K2 / "bench.json"], isolated_store, phase="phase-0", variant="k2-drafter")
    with store.shared_reads():
        before = data.frame(isolated_store, "SELECT count(*) AS n FROM sources")["n"].iloc[0]
        as_written_elsewhere = Path(os.path.relpath(isolated_store))  # the same file, however its path is written
        ingest_paths([DEMO_K2 / "server.log"], as_written_elsewhere, phase="phase-0", variant="k2-drafter")  # no lock wait
        after = data.frame(isolated_store, "SELECT count(*) AS n FROM sources")["n"].iloc[0]
    assert (before, after) == (1, 2)
    with duckdb.connect(str(isolated_store)) as con:  # the block's end closed it: a writer opens at once
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (2,)


def test_consecutive_writes_share_one_connection_until_the_hold_ends(isolated_store: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[bool] = []
    real_open = store.open_with_retry
    monkeypatch.setattr(store, "open_with_retry", lambda path, **kw: opened.append(kw["read_only"]) or real_open(path, **kw))
    clock = [0.0]
    monkeypatch.setattr(store.time, "monotonic", lambda: clock[0])
    with store.consecutive_writes():
        for _ in range(3):
            with store.writer(isolated_store) as con, store.writer(isolated_store) as inner:  # one inside another shares
                assert inner is con
                con.execute("SELECT count(*) FROM sources").fetchone()
        assert opened == [False]
        clock[0] = store.WRITER_HOLD_S  # the hold ends when the next writer block does
        with store.writer(isolated_store):
            pass
        with store.writer(isolated_store):
            pass
        assert opened == [False, False]
        with pytest.raises(ZeroDivisionError), store.writer(isolated_store):
            raise ZeroDivisionError  # an error drops the connection: its state is unknown
        with store.writer(isolated_store):
            pass
        assert opened == [False, False, False]
    with duckdb.connect(str(isolated_store), read_only=True) as con:  # the block's end closed it: a reader opens at once
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (0,)


def test_a_read_between_consecutive_writes_releases_the_writer(isolated_store: Path) -> None:
    from dashboard.analysis import data

    with store.consecutive_writes():
        ingest_paths([DEMO_K2 / "bench.json"], isolated_store, phase="phase-0", variant="k2-drafter")
        assert data.frame(isolated_store, "SELECT count(*) AS n FROM sources")["n"].iloc[0] == 1  # no lock wait
        ingest_paths([DEMO_K2 / "server.log"], isolated_store, phase="phase-0", variant="k2-drafter")
    assert data.frame(isolated_store, "SELECT count(*) AS n FROM sources")["n"].iloc[0] == 2
