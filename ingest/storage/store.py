"""The DuckDB store: the only writer.

Every source file is loaded in one transaction together with its row in
``sources`` (keyed by the file's sha256), so a file is either fully in the store
or not at all, and loading the same bytes again is a no-op. Connections are
short-lived: the dashboard's read-only connections and the CLI's writes take
turns on the file lock, with a bounded retry instead of an error.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import os
import random
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import duckdb
import pyarrow as pa

from ingest.errors import IngestError, StoreBusy, StoreError
from ingest.model import ParsedSource
from ingest.storage import run_windows
from ingest.storage.location import (
    LakeStore,
    StoreRef,
    connect_lake,
    parse_store,
)
from ingest.storage.spool import Pieces, spooled
from ingest.storage.sql import fetch_value, put_meta
from ingest.tables import SCHEMAS

if TYPE_CHECKING:  # pandas is imported by DuckDB's .df() when a reader asks; an ingest never loads it
    import pandas as pd

DEFAULT_DB = Path("specdash.duckdb")
LOCK_WAIT_S = 30.0
# How long a lake writer starts its file over while other writers keep committing first. Losing means another writer
# committed, so the lake is moving; but a large file's transaction can lose to the small files of other hosts for as
# long as they keep ingesting (measured: 4 writers of 8 files on a loaded 2-core machine, one lost for 30 s).
LAKE_CONFLICT_WAIT_S = 600.0
WARNINGS_KEPT = 100


def resolve_db_path(db: str | Path | None = None, data_path: str | None = None) -> StoreRef:
    """``--db``/``--store`` if given, else ``$SPECDASH_STORE``, else ``$SPECDASH_DB``, else ``./specdash.duckdb``:
    a DuckDB file, or a ``ducklake:`` URL (ingest.storage.location)."""
    given = db or os.environ.get("SPECDASH_STORE") or os.environ.get("SPECDASH_DB")
    return parse_store(given, data_path) if given else DEFAULT_DB


def is_lock_error(error: Exception) -> bool:
    text = str(error).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


def lock_holder(error: Exception) -> str:
    """`` (PID 4722: /usr/bin/python3)`` from DuckDB's lock message, so the user knows whom to wait for."""
    found = re.search(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)", str(error))
    return f" (PID {found['pid']}: {found['program']})" if found else ""


# DuckDB caches the pages it writes up to 80 % of RAM by default; a writer loading a big log
# in one transaction would grow with the file. Beyond this it writes pages out (or spills).
WRITER_MEMORY_LIMIT = "96MB"


def is_open_here_in_the_other_mode(error: Exception) -> bool:
    """DuckDB shares one database per file within a process: a read-write connection cannot open while
    a read-only one is open, nor the other way round (the dashboard's server reads on some threads
    while it records a decision on another). Both kinds are short-lived, so this is waited out too."""
    return "different configuration than existing connections" in str(error)


def is_catalog_busy(error: Exception) -> bool:
    """A lake's SQLite catalog is being written by another process (SQLite locks the whole file)."""
    return "database is locked" in str(error).lower()


# specdash pins DuckDB to the version its DuckLake extension is built for (pyproject.toml); earlier releases
# took any DuckDB, and a store DuckDB 2.x wrote stays unreadable here.
NEWER_DUCKDB_HINT = ("ingest its files again into a new store (`specdash ingest FILES --db NEW.duckdb`), or `specdash "
                     "export --parquet DIR` it with the specdash that wrote it; a demo store: delete it, `make run` rebuilds it")


def is_written_by_a_newer_duckdb(error: Exception) -> bool:
    return re.search(r"created with an? newer version of duckdb", str(error), re.IGNORECASE) is not None


def connect(db_path: StoreRef, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    if isinstance(db_path, LakeStore):
        return connect_lake(db_path)
    # Never a download: a path DuckDB reads as an extension's (``ducklake:…`` given as a Path) fails instead.
    return duckdb.connect(str(db_path), read_only=read_only, config={"autoinstall_known_extensions": False})


def open_with_retry(db_path: StoreRef, *, read_only: bool, wait_s: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open the store, waiting with backoff while another process holds the lock, or this process has it
    open in the other mode (``LOCK_WAIT_S`` by default)."""
    wait_s = LOCK_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    delay = 0.02
    while True:
        try:
            return connect(db_path, read_only=read_only)
        except duckdb.Error as error:
            here = is_open_here_in_the_other_mode(error)
            if is_written_by_a_newer_duckdb(error):
                raise StoreError(db_path, f"was written by a newer DuckDB than specdash's {duckdb.__version__}, "
                                          "which cannot read it", hint=NEWER_DUCKDB_HINT) from error
            if not (here or is_lock_error(error) or is_catalog_busy(error)):
                raise StoreError(db_path, f"cannot open the store ({error})",
                                 hint="check --db / --store / SPECDASH_STORE") from error
            if time.monotonic() >= deadline:
                holder = " (this process, in the other mode)" if here else f" by another process{lock_holder(error)}"
                raise StoreBusy(
                    db_path,
                    f"the store stayed locked{holder} for {wait_s:g} s",
                    hint="try again once its other queries have finished" if here
                    else "wait for the other ingest to finish, or stop the process holding it",
                ) from error
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


# --- reads that share one connection -------------------------------------------------------------

_this_thread = threading.local()


@contextmanager
def shared_reads() -> Iterator[None]:
    """Inside this block, this thread's reads of a store share one read-only connection, opened at the first
    read and closed when the block ends (a block inside another joins it). Opening a connection costs ~20 ms
    and a dashboard page reads 10-30 times; the page also reads one version of the store throughout. A
    writer opened on this thread closes the shared connection first: DuckDB cannot hold one file open
    read-only and read-write in one process."""
    if _shared_connections() is not None:
        yield
        return
    _this_thread.shared = {}
    try:
        yield
    finally:
        shared, _this_thread.shared = _this_thread.shared, None
        for con in shared.values():
            con.close()


@contextmanager
def read_connection(db_path: StoreRef, wait_s: float) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the store: inside ``shared_reads``, this thread's shared one; else one of its
    own, closed on exit. Waits up to ``wait_s`` while a writer holds the store."""
    release_held_writer(db_path)
    shared = _shared_connections()
    if shared is None:
        con = open_with_retry(db_path, read_only=True, wait_s=wait_s)
        try:
            yield con
        finally:
            con.close()
        return
    key = str(db_path.resolve())  # one key per file, however its path was written
    if key not in shared:
        shared[key] = open_with_retry(db_path, read_only=True, wait_s=wait_s)
        if isinstance(db_path, LakeStore):  # one snapshot for the whole block, while others commit new ones
            shared[key].execute("BEGIN TRANSACTION")
    yield shared[key]


def close_shared_read(db_path: StoreRef) -> None:
    shared = _shared_connections()
    con = shared.pop(str(db_path.resolve()), None) if shared else None
    if con is not None:
        con.close()


def _shared_connections() -> dict[str, duckdb.DuckDBPyConnection] | None:
    return getattr(_this_thread, "shared", None)


# --- writes that share one connection -------------------------------------------------------------

# How long consecutive loads keep one read-write connection before giving other processes their turn.
WRITER_HOLD_S = 0.5


@dataclass
class _HeldWriter:
    con: duckdb.DuckDBPyConnection
    opened_at: float
    users: int = 0  # writer blocks using it now (one inside another shares it)


@contextmanager
def consecutive_writes() -> Iterator[None]:
    """Inside this block, this thread's writers of a store reuse one read-write connection for up to
    ``WRITER_HOLD_S`` after it opened, then close it so that readers and other writers take their turn.
    Opening, migrating and closing a store costs ~50 ms, more than loading a small file does; each load is
    still its own transaction. A block inside another joins it."""
    if _held_writers() is not None:
        yield
        return
    _this_thread.held = {}
    try:
        yield
    finally:
        held, _this_thread.held = _this_thread.held, None
        for entry in held.values():
            entry.con.close()


def release_held_writer(db_path: StoreRef) -> None:
    """Close this thread's held writer of ``db_path`` unless a writer block is using it (a read-only connection
    cannot open beside it)."""
    held = _held_writers()
    key = str(db_path.resolve())
    entry = held.get(key) if held else None
    if held and entry is not None and entry.users == 0:
        _drop_held(held, key, entry)


def _held_writers() -> dict[str, _HeldWriter] | None:
    return getattr(_this_thread, "held", None)


@contextmanager
def writer(db_path: StoreRef) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection with the schema migrated, closed on exit (inside ``consecutive_writes``, kept
    for the next writer until ``WRITER_HOLD_S`` has passed, or an error left it in an unknown state)."""
    held = _held_writers()
    if held is None:
        con = _open_writer(db_path)
        try:
            yield con
        finally:
            con.close()
        return
    key = str(db_path.resolve())
    entry = held.get(key)
    if entry is None:
        entry = held[key] = _HeldWriter(_open_writer(db_path), time.monotonic())
    entry.users += 1
    try:
        yield entry.con
    except BaseException:
        _drop_held(held, key, entry)  # its transaction state is unknown: the next writer opens afresh
        raise
    finally:
        entry.users -= 1
    if entry.users == 0 and time.monotonic() - entry.opened_at >= WRITER_HOLD_S:
        _drop_held(held, key, entry)


def _drop_held(held: dict[str, _HeldWriter], key: str, entry: _HeldWriter) -> None:
    if held.get(key) is entry:
        del held[key]
    entry.con.close()


# Lakes this process has migrated: asking a lake's catalog whether it is current costs ~170 ms a writer.
_migrated_lakes: set[LakeStore] = set()


def _open_writer(db_path: StoreRef) -> duckdb.DuckDBPyConnection:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(db_path, Path):  # a lake's readers and writers are cursors of one database, side by side
        close_shared_read(db_path)
    # A store left with a write-ahead log (a process killed mid-ingest) is checkpointed first: DuckDB 1.5.5 replays
    # the log's index entries lazily, and a later DELETE on an indexed table then fails ("Failed to delete all rows
    # from index") and invalidates the database (tests/test_crash_safety.py, --replace after a SIGKILL).
    replayed = isinstance(db_path, Path) and Path(f"{db_path}.wal").exists()
    con = open_with_retry(db_path, read_only=False)
    try:
        if replayed:
            con.execute("CHECKPOINT")
        if isinstance(db_path, Path):
            tune_file_writer(con)
            migrate(con)
        elif db_path not in _migrated_lakes:
            until_no_conflict(db_path, lambda: migrate(con), lost=is_migration_race)
            _migrated_lakes.add(db_path)
    except BaseException:
        con.close()
        raise
    return con


def tune_file_writer(con: duckdb.DuckDBPyConnection) -> None:
    """A file store's writer settings. These settings are the database's, not the connection's, and a lake's writer
    is a cursor of the database its process's readers use: there, the 96 MB limit failed Compare's queries ("failed
    to pin block", measured) after any write by the same process, such as a decision recorded in the server. A lake
    keeps DuckDB's defaults."""
    con.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")
    # Pages the writer's buffers were given are kept for its next buffers instead of being
    # returned to the system and faulted in again (measured on a 4 M-row insert: 185 k → 80 k
    # page faults, 1.12 → 0.97 s). DuckDB gives the memory back when the store is closed.
    con.execute(f"SET block_allocator_memory = '{WRITER_MEMORY_LIMIT}'")
    # Rows carry line_no / run_index; nothing reads them in storage order. Without the
    # ordering constraint DuckDB inserts a big log's rows twice as fast (measured 2.1 → 1.0 s
    # for 4.5 M rows).
    con.execute("SET preserve_insertion_order = false")


# --- migrations -------------------------------------------------------------------------------

# A migration's statements after this line read views or macros: they run once every view is current.
AFTER_VIEWS = "-- after views:"
VIEWS_META_KEY = "views_sha256"


class Migration(NamedTuple):
    name: str
    tables: str  # creates and alters tables
    after_views: str  # fills or relabels rows through the current views ('' for most)


def migration_files() -> list[Migration]:
    """Every migration shipped with the package, in order."""
    folder = resources.files("ingest.storage") / "migrations"
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    found = []
    for name in names:
        tables, _, after_views = (folder / name).read_text(encoding="utf-8").partition(AFTER_VIEWS)
        found.append(Migration(name.removesuffix(".sql"), tables, after_views.partition("\n")[2]))
    return found


def views_sql() -> str:
    """Every view and macro, one definition each (``ingest/storage/views.sql``)."""
    return (resources.files("ingest.storage") / "views.sql").read_text(encoding="utf-8")


MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply the migrations not yet recorded in ``schema_migrations``, then make the views current;
    returns the migrations' names. One transaction: a store is upgraded whole or not at all.

    Views are re-created whenever the store's copy differs from ``views.sql`` (its hash is kept in
    ``store_meta``), so a store made by older migrations reads through the current definitions."""
    lake = is_lake(con)
    con.execute(lake_ddl(MIGRATIONS_TABLE) if lake else MIGRATIONS_TABLE)
    done = {row[0] for row in con.execute("SELECT name FROM schema_migrations").fetchall()}
    pending = [migration for migration in migration_files() if migration.name not in done]
    views = views_sql()
    views_hash = current_views_hash()
    if not pending and stored_views_hash(con) == views_hash:
        return []
    con.execute("BEGIN TRANSACTION")
    try:
        describe_commit(con, f"migrate: {', '.join(m.name for m in pending) or 'views'}")
        for _, tables, _ in pending:
            if duckdb.extract_statements(tables):  # comments only: a migration whose views moved to views.sql
                con.execute(lake_ddl(tables) if lake else tables)
        con.execute(views)
        for name, _, after_views in pending:
            if duckdb.extract_statements(after_views):
                con.execute(after_views)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?)", [name, utc_now()])
        put_meta(con, VIEWS_META_KEY, views_hash)
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise
    return [migration.name for migration in pending]


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` works in a DuckLake (ingest.storage.location) rather than a DuckDB file."""
    return fetch_value(con, "SELECT type FROM duckdb_databases() WHERE database_name = current_database()") == "ducklake"


# DuckLake has neither indexes nor key constraints. specdash needs neither to be right: a file's sha256 is
# looked up before its rows are written, and the store's meta entries are deleted before they are set.
_INDEX_STATEMENT = re.compile(r"^[ \t]*(?:CREATE|DROP)\s+INDEX\b[^;]*;", re.IGNORECASE | re.MULTILINE)
_KEY_CONSTRAINT = re.compile(r"[ \t]+(?:PRIMARY\s+KEY|UNIQUE)\b", re.IGNORECASE)


def lake_ddl(tables: str) -> str:
    """A migration's table statements as a DuckLake takes them: without indexes and key constraints."""
    return _KEY_CONSTRAINT.sub("", _INDEX_STATEMENT.sub("", tables))


def current_views_hash() -> str:
    """The hash of ``views.sql`` as this version ships it; a store holding another reads through stale views."""
    return hashlib.sha256(views_sql().encode()).hexdigest()


def stored_views_hash(con: duckdb.DuckDBPyConnection) -> str | None:
    """The hash of the views the store holds (store_meta exists: migration 001 made it)."""
    row = con.execute("SELECT value FROM store_meta WHERE key = ?", [VIEWS_META_KEY]).fetchone()
    return None if row is None else str(row[0])


# --- loading sources --------------------------------------------------------------------------

@dataclass(frozen=True)
class LoadResult:
    source_id: str
    already_present: bool
    rows_loaded: int
    lines_skipped: int


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    except OSError as error:
        raise IngestError(path, f"cannot be read ({error.strerror})", hint="check the path and its permissions") from error
    return digest.hexdigest()


def source_id_for(sha256: str) -> str:
    return sha256[:16]


def find_source(con: duckdb.DuckDBPyConnection, sha256: str) -> str | None:
    row = con.execute("SELECT source_id FROM sources WHERE sha256 = ?", [sha256]).fetchone()
    return row[0] if row else None


def is_ingested(db_path: StoreRef, sha256: str) -> bool:
    if not db_path.exists():
        return False
    with writer(db_path) as con:
        return find_source(con, sha256) is not None


def stored_hashes(db_path: StoreRef) -> set[str]:
    """The sha256 of every stored file. Read once for a whole ingest call: opening the store costs ~30 ms, and
    asking per file doubled the opens. A file another process stores meanwhile is still found by ``load_source``."""
    if not db_path.exists():
        return set()
    with writer(db_path) as con:
        return {row[0] for row in con.execute("SELECT sha256 FROM sources").fetchall()}


def load_source(
    db_path: StoreRef,
    path: Path,
    parsed: ParsedSource,
    *,
    sha256: str | Callable[[], str],
    phase: str | None = None,
    variant: str | None = None,
    group: str | None = None,
    replace: bool = False,
    link_to: str | None = None,
) -> LoadResult:
    """Write one parsed file in a single transaction; a no-op if its sha256 is already stored.

    With ``replace`` the file's earlier rows are swapped for the new ones in the same transaction.
    ``sha256`` may be a callable, asked once a streaming parser has read the whole file (the
    pipeline hashes the file while it is parsed). ``link_to`` (--link-to / --no-link) overrides the
    links found for the file's evidence (view trace_set_links, migration 012).
    """
    with spooled(parsed, beside=db_path.parent) as pieces:  # a streaming parser has read the whole file here
        digest = sha256 if isinstance(sha256, str) else sha256()
        labels = Labels(phase, variant, group, link_to)
        return retried_on_conflict(db_path, lambda con: _load(con, path, parsed, pieces, digest, labels, replace))


class Labels(NamedTuple):
    phase: str | None
    variant: str | None
    group: str | None
    link_to: str | None


def _load(
    con: duckdb.DuckDBPyConnection, path: Path, parsed: ParsedSource, pieces: Pieces, sha256: str, labels: Labels,
    replace: bool,
) -> LoadResult:
    source_id = source_id_for(sha256)
    con.execute("BEGIN TRANSACTION")
    try:
        describe_commit(con, f"ingest {path} ({parsed.kind}){' --replace' if replace else ''}")
        if find_source(con, sha256) is not None:
            if not replace:
                con.execute("ROLLBACK")
                return LoadResult(source_id, True, 0, 0)
            delete_source_rows(con, source_id)
        phase = folder_phase(con, path) if labels.phase is None else labels.phase
        fallback = file_variant(con, parsed.kind, path) if labels.variant is None else None
        loaded = set()
        for name, rows in pieces():
            insert_table(con, name, rows, source_id, phase, labels.variant, fallback)
            loaded.add(name)
        insert_source_row(con, source_id, path, sha256, parsed, phase, labels.variant, labels.group, labels.link_to)
        con.execute(RUN_LABELS_FROM_SESSIONS, [source_id])
        if replace or not loaded <= UNLINKED_TABLES:
            run_windows.refresh(con, source_id)  # the tables kept for the dashboard (migration 007)
            relink_traces(con)
        else:
            run_windows.record_basis(con)  # the basis counts the sources
        touch_last_change(con)
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise
    return LoadResult(source_id, False, parsed.rows_loaded, parsed.lines_skipped)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection, message: str) -> Iterator[None]:
    """The block as one transaction: committed at its end, rolled back if it raises. ``message`` says what it
    changes (``describe_commit``)."""
    con.execute("BEGIN TRANSACTION")
    try:
        describe_commit(con, message)
        yield
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise


def describe_commit(con: duckdb.DuckDBPyConnection, message: str) -> None:
    """In a lake, name who made the open transaction's snapshot and what it changes: ``ducklake_snapshots()``'s author
    and commit_message, by which the Run page offers the store's past versions. A DuckDB file keeps no history."""
    if is_lake(con):
        con.execute("CALL set_commit_message(?, ?)", [committer(), message])  # the current (attached) lake's


def committer() -> str:
    """``user@host`` of this process: which of a team's machines wrote a snapshot."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name and no password entry (some containers)
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction; a COMMIT that failed has ended it already."""
    try:
        con.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass


T = TypeVar("T")


# How a commit that lost to another writer of a lake fails: DuckLake refuses a change that overlaps another's, SQLite
# a stale writer's commit, and a lake whose tables another process was creating failed to load (DuckLake 1.5.5,
# measured with four processes opening a new lake at once).
WRITE_CONFLICTS = ("conflict", "database is locked", "failed to load ducklake")


def is_write_conflict(error: Exception) -> bool:
    """Another writer of the same lake committed first (``WRITE_CONFLICTS``): the write may start over."""
    text = str(error).lower()
    return isinstance(error, duckdb.TransactionException) and any(marker in text for marker in WRITE_CONFLICTS)


def retried_on_conflict(db_path: StoreRef, write: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    """Run ``write`` (one transaction) on a writer of the store; start it over while it loses to another writer
    of a lake. A DuckDB file has one writer at a time and never conflicts.

    Every write sets ``store_meta.last_change``, so two writes of one lake always overlap and one retries: it
    then sees the other's rows, and a file both stored is stored once."""
    def attempt() -> T:
        with writer(db_path) as con:
            return write(con)
    return until_no_conflict(db_path, attempt)


def is_migration_race(error: Exception) -> bool:
    """Processes that open a new lake at once each migrate it; one that began before another committed finds the
    tables it creates already there ("Table with name ... already exists"), and starts over to find nothing to do."""
    return is_write_conflict(error) or (isinstance(error, duckdb.CatalogException) and "already exists" in str(error))


def until_no_conflict(
    db_path: StoreRef, attempt: Callable[[], T], lost: Callable[[Exception], bool] = is_write_conflict
) -> T:
    """``attempt()``, again after a backoff while it ``lost`` to another writer, for up to ``LAKE_CONFLICT_WAIT_S``
    (only a lake's writers conflict)."""
    deadline = time.monotonic() + LAKE_CONFLICT_WAIT_S
    delay = 0.02
    while True:
        try:
            return attempt()
        except duckdb.Error as error:
            if not lost(error):
                raise
            if time.monotonic() >= deadline:
                raise StoreBusy(db_path, f"other writers kept committing first for {LAKE_CONFLICT_WAIT_S:g} s",
                                hint="try again once the other ingests have finished") from error
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.5)


def insert_source_row(
    con: duckdb.DuckDBPyConnection,
    source_id: str,
    path: Path,
    sha256: str,
    parsed: ParsedSource,
    phase: str | None,
    variant: str | None,
    group: str | None,
    link_to: str | None = None,
) -> None:
    con.execute(
        """
        INSERT INTO sources (source_id, path, sha256, kind, engine, size_bytes, phase, variant, ingest_group,
                             ingested_at, rows_loaded, lines_skipped, skipped_detail, warnings, link_to)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [
            source_id,
            str(path.resolve()),
            sha256,
            parsed.kind,
            parsed.engine,
            parsed.size_bytes if parsed.size_bytes is not None else path.stat().st_size,
            phase,
            variant,
            group,
            utc_now(),
            parsed.rows_loaded,
            parsed.lines_skipped,
            json.dumps(dict(parsed.skipped), sort_keys=True),
            json.dumps(parsed.warnings[:WARNINGS_KEPT]),
            link_to,
        ],
    )


def table_columns(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    # An empty result's description: asked per table and load, it costs ~6 ms where duckdb_columns() costs
    # ~10 ms on a file and ~250 ms on a lake (which lists every table's columns from its catalog).
    return [column[0] for column in con.execute("SELECT * FROM query_table(?) LIMIT 0", [name]).description]


def insert_table(
    con: duckdb.DuckDBPyConnection,
    name: str,
    table: pa.Table | pa.RecordBatchReader,
    source_id: str,
    phase: str | None,
    variant: str | None,
    fallback_variant: str | None = None,
) -> None:
    """Insert a parser table, adding ``source_id``/``session_id`` and applying --phase/--variant.

    ``fallback_variant`` labels the rows of FILE_LABELLED tables that carry no variant of their own.
    """
    if name not in SCHEMAS:
        raise ValueError(f"parser produced unknown table {name!r}")  # a bug, not bad input
    if isinstance(table, pa.Table) and table.num_rows == 0:
        return
    target = table_columns(con, name)
    check_columns(name, table.schema.names, target)
    overrides = {"phase": phase, "variant": variant}
    select = ["$source_id AS source_id"]
    if "session_id" in target:
        select.append("$source_id || '-' || CAST(session_key AS VARCHAR) AS session_id")
    for column in target:
        if column in ("source_id", "session_id"):
            continue
        if column in overrides and overrides[column] is not None:
            select.append(f"${column} AS {column}")
        elif column == "variant" and fallback_variant is not None and name in FILE_LABELLED:
            own = '"variant"' if "variant" in table.schema.names else "NULL"
            select.append(f"coalesce({own}, $fallback_variant) AS variant")
        elif column in table.schema.names:
            select.append(f'"{column}"')
    params: dict[str, Any] = {"source_id": source_id}
    params.update({key: value for key, value in overrides.items() if value is not None and key in target})
    if fallback_variant is not None and name in FILE_LABELLED and overrides["variant"] is None:
        params["fallback_variant"] = fallback_variant
    con.register("incoming_rows", table)
    try:
        con.execute(f"INSERT INTO {name} BY NAME SELECT {', '.join(select)} FROM incoming_rows", params)
    finally:
        con.unregister("incoming_rows")


# Tables that neither the run windows kept for the dashboard (run_windows.refresh) nor the trace links
# (relink_traces) are derived from: a load whose rows all land here (a drafter, a training log, a results
# table, metrics) changes neither, and skips both (~70 ms a file). tests/test_kept_windows.py checks the
# set against the query plans of both.
UNLINKED_TABLES = frozenset({
    "acceptance_positions", "acceptance_requests", "bench_requests", "counter_deltas", "cycle_phase_times",
    "drafter_vocab", "drafters", "metric_samples", "metric_snapshots", "sweep_points", "token_counts",
    "trace_kernels", "training_steps",
})

# A run carries its session's labels (migration 013), whichever way the session got them.
RUN_LABELS_FROM_SESSIONS = """
    UPDATE bench_runs r SET phase = s.phase, variant = s.variant
    FROM sessions s WHERE s.session_id = r.session_id AND r.source_id = ?
"""

# Columns the store fills itself: the file's id, a session's id, and the --phase/--variant labels.
STORE_FILLED = frozenset({"source_id", "session_id", "phase", "variant"})


class SchemaMismatch(ValueError):
    """A parser's table and the store's disagree on a column: a bug in specdash (a field added to
    ``ingest/tables.py`` without a migration, or the reverse), never bad input."""


def check_columns(name: str, incoming: list[str], stored: list[str]) -> None:
    """Refuse rows whose columns differ from the store's table, naming the column: before, a field
    missing from the DDL was reported as loaded and stored nowhere."""
    unknown = [column for column in incoming if column not in stored]
    if unknown:
        raise SchemaMismatch(f"table {name}: column {', '.join(unknown)} is not in the store; add it in a migration")
    missing = [column for column in stored if column not in incoming and column not in STORE_FILLED]
    if missing:
        raise SchemaMismatch(f"table {name}: the store requires column {', '.join(missing)}, which the rows lack; "
                             "declare it in ingest/tables.py")


# Tables of profiler traces and cycle timings: a file loaded without --variant whose rows name none takes
# its folder's variant (macro folder_variant), so that it reaches the Breakdown and Acceptance pages.
FILE_LABELLED = frozenset({"cycle_phase_times", "trace_kernels", "trace_ranks"})
TRACE_KINDS = frozenset({"kineto_trace", "cycle_timing"})


def file_variant(con: duckdb.DuckDBPyConnection, kind: str, path: Path) -> str | None:
    if kind not in TRACE_KINDS:
        return None
    return fetch_value(con, "SELECT folder_variant(?)", [str(path.resolve())])


def folder_phase(con: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """The phase a ``.../<phase>/<variant>/file`` layout names (macro folder_phase), for a file given no --phase."""
    return fetch_value(con, "SELECT folder_phase(?)", [str(path.resolve())])


RELABEL_TRACE_ROWS = tuple(  # one per FILE_LABELLED table
    f"UPDATE {table} SET phase = ?, variant = ? WHERE source_id = ?"
    for table in ("cycle_phase_times", "trace_kernels", "trace_ranks")
)
# The link views join the server lifetimes many times over; DuckDB gives each join its own buffers,
# so deriving the links takes more than the writer's page cache limit even on a small store.
LINKS_MEMORY_LIMIT = "512MB"


@contextmanager
def link_memory(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The writer's memory limit raised for a query over the link views (they join the lifetimes many times over).
    A lake's writer has DuckDB's default limit (``tune_file_writer``), which is higher: nothing to raise."""
    if is_lake(con):
        yield
        return
    con.execute(f"SET memory_limit = '{LINKS_MEMORY_LIMIT}'")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{WRITER_MEMORY_LIMIT}'")


def relink_traces(con: duckdb.DuckDBPyConnection) -> int:
    """Refresh table trace_links from view trace_set_links and label each trace file's rows as view
    ``trace_labels`` says (its linked lifetime's variant and phase, else its own), in the caller's
    transaction; returns how many trace files changed label.

    Any load can change a link (the log of a trace loaded earlier, a lifetime renamed by a new config),
    so this runs after every load; a store without traces skips it.
    """
    if fetch_value(con, "SELECT count(*) FROM trace_ranks") == 0:
        return 0
    with link_memory(con):
        links = con.execute("SELECT * FROM trace_set_links ORDER BY ALL").fetchall()
    if links != con.execute("SELECT * FROM trace_links ORDER BY ALL").fetchall():
        con.execute("DELETE FROM trace_links")
        if links:
            con.executemany("INSERT INTO trace_links VALUES (?, ?, ?, ?, ?, ?, ?, ?)", links)
    changed = con.execute(
        """
        SELECT l.source_id, l.phase, l.variant FROM trace_labels l
        WHERE EXISTS (SELECT 1 FROM trace_ranks t WHERE t.source_id = l.source_id
                      AND (t.phase IS DISTINCT FROM l.phase OR t.variant IS DISTINCT FROM l.variant))
        """
    ).fetchall()
    for relabel in RELABEL_TRACE_ROWS:
        for source_id, phase, variant in changed:
            con.execute(relabel, [phase, variant, source_id])
    return len(changed)


def link_target_count(db_path: StoreRef, wanted: str) -> int:
    """How many server lifetimes a --link-to value names in the store (macro link_targets)."""
    if not db_path.exists():
        return 0
    with writer(db_path) as con:
        return fetch_value(con, "SELECT count(*) FROM link_targets(?)", [wanted])


def lifetimes_of_log(db_path: StoreRef, name: str) -> list[str]:
    """Session ids of the server lifetimes of stored logs whose path, file name or label is ``name``."""
    if not db_path.exists():
        return []
    with writer(db_path) as con:
        rows = con.execute(
            r"""
            SELECT coalesce(benchmark_session_id, own_session_id) FROM server_lifetimes
            WHERE path = $name OR regexp_replace(path, '^.*[/\\]', '') = $name OR file_label(path) = $name
            ORDER BY log_source_id, segment
            """,
            {"name": name},
        ).fetchall()
    return [row[0] for row in rows]


def data_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Tables that hold rows of sources (they have a ``source_id`` column), other than ``sources``."""
    rows = con.execute(
        """
        SELECT DISTINCT c.table_name FROM information_schema.columns c
        JOIN information_schema.tables t USING (table_name)
        WHERE c.column_name = 'source_id' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'sources'
        ORDER BY 1
        """
    ).fetchall()
    return [row[0] for row in rows]


def delete_source_rows(con: duckdb.DuckDBPyConnection, source_id: str) -> None:
    for name in data_tables(con):
        con.execute(f"DELETE FROM {name} WHERE source_id = ?", [source_id])
    con.execute("DELETE FROM sources WHERE source_id = ?", [source_id])


def touch_last_change(con: duckdb.DuckDBPyConnection) -> None:
    """Bump the id the dashboard keys its caches on, so new data shows after a refresh."""
    put_meta(con, "last_change", uuid.uuid4().hex)


def set_meta(db_path: StoreRef, key: str, value: str) -> None:
    def write(con: duckdb.DuckDBPyConnection) -> None:
        with transaction(con, f"set {key}"):
            put_meta(con, key, value)
    retried_on_conflict(db_path, write)


# --- status -----------------------------------------------------------------------------------

def status(db_path: StoreRef) -> dict[str, Any]:
    """What the store holds: row counts per table, sources by kind, migrations applied."""
    if not db_path.exists():
        return {"db": str(db_path), "exists": False}
    with writer(db_path) as con:
        counts = {name: fetch_value(con, f"SELECT count(*) FROM {name}") for name in ["sources", *data_tables(con), "decisions"]}
        kinds = dict(con.execute("SELECT kind, count(*) FROM sources GROUP BY kind ORDER BY kind").fetchall())
        migrations = [row[0] for row in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
        meta = dict(con.execute("SELECT key, value FROM store_meta").fetchall())
        found = {"db": str(db_path), "exists": True, "rows": counts, "sources_by_kind": kinds, "migrations": migrations, "meta": meta}
        if isinstance(db_path, LakeStore):
            found["snapshots"] = recent_snapshots(con)
            found["orphaned_files"] = [row[0] for row in con.execute(ORPHANED_FILES).fetchall()]
    return found


# Data files in a lake's data path that no snapshot lists: a writer stopped before its commit (killed, its host lost)
# wrote them, and nothing reads them. A file younger than ORPHAN_MIN_AGE may be a write still running, so only older
# ones are deleted. DuckLake compares the files' modification times, in the data folder or the S3 prefix.
ORPHAN_MIN_AGE = "1 hour"
ORPHANED_FILES = "CALL ducklake_delete_orphaned_files(current_database(), dry_run => true, cleanup_all => true)"
_OLD_ORPHANS = f"CALL ducklake_delete_orphaned_files(current_database(), older_than => now() - INTERVAL '{ORPHAN_MIN_AGE}'"
OLD_ORPHANED_FILES = f"{_OLD_ORPHANS}, dry_run => true)"
DELETE_OLD_ORPHANED_FILES = f"{_OLD_ORPHANS})"
# How DuckLake names the data and delete files it writes. DuckLake counts every other Parquet file in the data path as
# an orphan too, so a data path shared with other files (an export, a bucket's root) would lose them.
DUCKLAKE_FILE_NAME = re.compile(r"^ducklake-[0-9a-f-]+(?:-delete)?\.parquet$")


def is_ducklake_file(path: str) -> bool:
    return DUCKLAKE_FILE_NAME.match(path.rsplit("/", 1)[-1]) is not None


def delete_orphaned_files(db_path: LakeStore) -> list[str]:
    """Delete the lake's data files that no snapshot lists and that are older than ``ORPHAN_MIN_AGE``; returns them.
    Deletes nothing, and says why, when the data path also holds files DuckLake did not write."""
    with writer(db_path) as con:
        foreign = [path for (path,) in con.execute(OLD_ORPHANED_FILES).fetchall() if not is_ducklake_file(path)]
        if foreign:
            raise StoreError(db_path, f"its data path {db_path.data_path} holds {len(foreign)} file(s) DuckLake did not "
                                      f"write, such as {foreign[0]}: nothing was deleted",
                             hint="keep a lake's data path for the lake alone, and move the other files out of it")
        return [row[0] for row in con.execute(DELETE_OLD_ORPHANED_FILES).fetchall()]


STATUS_SNAPSHOTS = 5
# A lake's snapshots, newest first: when (UTC), by whom, what (describe_commit's message), how many in all, and whether
# today's tables and views are the ones it has (no migration since). The Run page's picker and `status` read it.
LAKE_SNAPSHOTS = """
    SELECT snapshot_id, timezone('UTC', snapshot_time) AS snapshot_time, author, commit_message,
           count(*) OVER () AS snapshots, schema_version = max(schema_version) OVER () AS same_schema
    FROM ducklake_snapshots(current_database())
    ORDER BY snapshot_id DESC
"""


def lake_snapshots(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every snapshot of the lake ``con`` works in (``LAKE_SNAPSHOTS``)."""
    snapshots = con.execute(LAKE_SNAPSHOTS).df()
    for column in ("author", "commit_message"):  # NULL for a snapshot made outside specdash (the lake's creation, SQL)
        snapshots[column] = snapshots[column].astype(object).where(snapshots[column].notna(), None)  # None, not NaN
    return snapshots


def recent_snapshots(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """A lake's newest snapshots (``STATUS_SNAPSHOTS`` of them), their times as text."""
    newest = lake_snapshots(con).head(STATUS_SNAPSHOTS)
    newest["snapshot_time"] = newest["snapshot_time"].dt.strftime("%Y-%m-%d %H:%M:%S")
    return newest.to_dict("records")


def session_list(db_path: StoreRef) -> list[dict[str, Any]]:
    """Every session (view evidence_sessions) with its file, by phase, variant and start."""
    if not db_path.exists():
        return []
    with writer(db_path) as con:
        cursor = con.execute(
            r"""
            SELECT s.session_id, s.origin, s.phase, s.variant, s.variant_from,
                   regexp_replace(src.path, '^.*[/\\]', '') AS file
            FROM evidence_sessions s JOIN sources src USING (source_id)
            ORDER BY s.phase NULLS FIRST, s.variant, s.started_at NULLS LAST, s.session_id
            """
        )
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

