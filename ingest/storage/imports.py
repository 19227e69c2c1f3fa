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
from ingest.storage.location import StoreRef

BATCH_ROWS = 100_000  # rows read from OTHER and written here at a time: a big store's decode lines stream through


@dataclass(frozen=True)
class ImportResult:
    sources: int  # sources brought over
    already_here: int  # sources of OTHER this store held already (same content hash)
    rows: int  # rows brought over, over every table
    decisions: int


def import_store(db_path: StoreRef, other: Path) -> ImportResult:
    """Bring every source of the store ``other`` that the store at ``db_path`` lacks, with its rows and the decisions
    it lacks, in one transaction (the module's docstring says what comes over)."""
    if not other.is_file():
        raise NoStore(other, "no store to import", hint="give the path of another specdash store (.duckdb)")
    if other.resolve() == db_path.resolve():
        raise StoreError(other, "is the store itself", hint="give another store to import from")
    # OTHER is read on a connection of its own and its rows stream over as Arrow batches: ATTACH would take its path
    # only as SQL text before DuckDB 2.0.
    with readable_copy(other) as readable, store.open_with_retry(readable, read_only=True) as theirs:
        return store.retried_on_conflict(db_path, lambda con: copy_new_sources(theirs, con, other))


def copy_new_sources(theirs: duckdb.DuckDBPyConnection, con: duckdb.DuckDBPyConnection, other: Path) -> ImportResult:
    """The import's one transaction: OTHER's sources this store lacks, their rows, the decisions it lacks."""
    with store.transaction(con, f"import {other}"):  # what this store holds is read inside it: another writer of a lake may add meanwhile
        ours = {sha for (sha,) in con.execute("SELECT sha256 FROM sources").fetchall()}
        listed = theirs.execute("SELECT source_id, sha256 FROM sources").fetchall()
        new = [source_id for source_id, sha in listed if sha not in ours]
        known = [decision_id for (decision_id,) in con.execute("SELECT decision_id FROM decisions").fetchall()]
        rows = copy_rows(theirs, con, new)
        for _ in incoming(con, theirs.sql("SELECT * FROM sources WHERE list_contains($ids, source_id)", params={"ids": new})):
            con.execute("INSERT INTO sources BY NAME SELECT * FROM incoming")
        decisions = 0
        for count in incoming(con, theirs.sql("SELECT * FROM decisions WHERE NOT list_contains($ids, decision_id)",
                                              params={"ids": known})):
            con.execute("INSERT INTO decisions BY NAME SELECT * FROM incoming")
            decisions += count
        if new:
            run_windows.rebuild(con)  # links between files of both stores, as a load of each would find them
            store.relink_traces(con)
        if new or decisions:
            store.touch_last_change(con)
    return ImportResult(len(new), len(listed) - len(new), rows, decisions)


def copy_rows(theirs: duckdb.DuckDBPyConnection, con: duckdb.DuckDBPyConnection, sources: list[str]) -> int:
    """OTHER's rows of ``sources`` in every table that holds rows of sources, inserted here by column name (OTHER's
    columns are this store's: same migrations); returns how many."""
    if not sources:
        return 0
    copied = 0
    for table in store.data_tables(con):
        for count in incoming(con, theirs.sql(f'SELECT * FROM "{table}" WHERE list_contains($ids, source_id)',
                                              params={"ids": sources})):
            con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM incoming')
            copied += count
    return copied


def incoming(con: duckdb.DuckDBPyConnection, rows: duckdb.DuckDBPyRelation) -> Iterator[int]:
    """``rows`` of OTHER in batches, each visible on ``con`` as the table ``incoming`` while the caller inserts it;
    yields each batch's row count."""
    for batch in rows.to_arrow_reader(BATCH_ROWS):
        con.register("incoming", batch)
        try:
            yield batch.num_rows
        finally:
            con.unregister("incoming")


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
