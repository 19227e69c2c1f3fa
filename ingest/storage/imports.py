"""``specdash import OTHER.duckdb``: bring another store's files into this one, as if they had been ingested here.

A colleague's store (copied from another GPU host), or yesterday's, holds sources this one lacks. Every source of
OTHER whose content hash this store does not hold comes over with all its rows, and so do the decisions this store
does not hold (by id); a source already here stays as it is, whatever labels OTHER gave it. Source ids are derived
from the content hash (``store.source_id_for``), so a file has the same id in every store and its rows need no
renumbering. Afterwards the derived tables (run windows, trace links) are recomputed, as after a load.

OTHER is never written. A store made by an older specdash is read through a migrated copy in a temporary folder;
one made by a newer specdash (migrations this one does not know) is refused. The whole import is one transaction:
a failure leaves this store as it was.
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ingest.errors import NoStore, StoreBusy, StoreError
from ingest.storage import run_windows, store
from ingest.storage.sql import fetch_value

OTHER = "other_store"  # the name OTHER is attached under, inside this store's writer connection


@dataclass(frozen=True)
class ImportResult:
    sources: int  # sources brought over
    already_here: int  # sources of OTHER this store held already (same content hash)
    rows: int  # rows brought over, over every table
    decisions: int


def import_store(db_path: Path, other: Path) -> ImportResult:
    """Bring every source of the store ``other`` that the store at ``db_path`` lacks, with its rows and the decisions
    it lacks, in one transaction (the module's docstring says what comes over)."""
    if not other.is_file():
        raise NoStore(other, "no store to import", hint="give the path of another specdash store (.duckdb)")
    if other.resolve() == db_path.resolve():
        raise StoreError(other, "is the store itself", hint="give another store to import from")
    with readable_copy(other) as readable, store.writer(db_path) as con:
        con.execute(f"ATTACH ? AS {OTHER} (READ_ONLY)", [str(readable)])
        try:
            return copy_new_sources(con)
        finally:
            con.execute(f"DETACH {OTHER}")


def copy_new_sources(con: duckdb.DuckDBPyConnection) -> ImportResult:
    """The import's one transaction, on a writer connection with OTHER attached."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            f"CREATE TEMP TABLE imported AS SELECT source_id FROM {OTHER}.sources "
            "WHERE sha256 NOT IN (SELECT sha256 FROM main.sources)"
        )
        new = fetch_value(con, "SELECT count(*) FROM imported")
        total = fetch_value(con, f"SELECT count(*) FROM {OTHER}.sources")
        rows = copy_rows(con)
        con.execute(f"INSERT INTO main.sources BY NAME SELECT * FROM {OTHER}.sources "
                    "WHERE source_id IN (SELECT source_id FROM imported)")
        decisions = fetch_value(con, f"SELECT count(*) FROM {OTHER}.decisions "
                                           "WHERE decision_id NOT IN (SELECT decision_id FROM main.decisions)")
        con.execute(f"INSERT INTO main.decisions BY NAME SELECT * FROM {OTHER}.decisions "
                    "WHERE decision_id NOT IN (SELECT decision_id FROM main.decisions)")
        if new:
            run_windows.rebuild(con)  # links between files of both stores, as a load of each would find them
            store.relink_traces(con)
        if new or decisions:
            store.touch_last_change(con)
        con.execute("DROP TABLE imported")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return ImportResult(int(new), int(total) - int(new), rows, int(decisions))


def copy_rows(con: duckdb.DuckDBPyConnection) -> int:
    """The imported sources' rows of every table that holds rows of sources (by column name: OTHER's columns are
    this store's, migrated); returns how many."""
    copied = 0
    for table in store.data_tables(con):
        count = int(fetch_value(
            con, f'SELECT count(*) FROM {OTHER}."{table}" WHERE source_id IN (SELECT source_id FROM imported)'))
        if count:
            con.execute(f'INSERT INTO main."{table}" BY NAME SELECT * FROM {OTHER}."{table}" '
                        "WHERE source_id IN (SELECT source_id FROM imported)")
        copied += count
    return copied


@contextmanager
def readable_copy(other: Path) -> Iterator[Path]:
    """``other`` itself when it has exactly this version's migrations; a migrated copy of it when it is older."""
    known = [migration.name for migration in store.migration_files()]
    theirs = applied_migrations(other)
    unknown = sorted(set(theirs) - set(known))
    if unknown:
        raise StoreError(other, f"was made by a newer specdash (migrations {', '.join(unknown)} are unknown here)",
                         hint="upgrade specdash here (pip install -U specdash), then import again")
    if theirs == known:
        yield other
        return
    with tempfile.TemporaryDirectory(prefix="specdash-import-") as folder:
        copy = Path(folder) / other.name
        shutil.copyfile(other, copy)
        with store.writer(copy):  # migrates the copy; OTHER itself is never written
            pass
        yield copy


def applied_migrations(other: Path) -> list[str]:
    """The migrations ``other`` records, in order; a clear error when it is no specdash store."""
    try:
        with store.open_with_retry(other, read_only=True) as con:
            return [row[0] for row in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
    except StoreBusy:
        raise
    except (duckdb.Error, StoreError) as error:
        reason = error.__cause__ or error  # DuckDB's own words, not the store's hint about --db
        raise StoreError(other, f"is not a specdash store ({reason})",
                         hint="give a store made by `specdash ingest` (a .duckdb file)") from error
