"""Where a store lives: a DuckDB file (the default), or a DuckLake shared by a team.

A DuckLake keeps its catalog in SQLite (one machine, several processes) or PostgreSQL (many hosts) and its
tables as Parquet files under a data path (a folder, or an object-store URL). specdash writes and reads both
kinds through the same SQL: a connection to a lake is an in-memory DuckDB with the lake attached and made
current, so every unqualified table, view and macro name resolves in the lake.

The extensions come from the ``[team]`` extra's wheels (``duckdb-extension-ducklake``, the scanner of the
catalog's engine, and ``httpfs`` for an ``s3://`` data path), loaded from their files: DuckDB never downloads an
extension here.
"""
from __future__ import annotations

import importlib.util
import os
import sqlite3
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from ingest.errors import StoreError

LAKE_PREFIX = "ducklake:"
LAKE_ALIAS = "store"  # the name a lake is attached under
# How a store's text names one of its past snapshots (time travel): after the URL, which the dashboard passes on as
# text. A libpq connection string or a file name holding it is not a store anyone has.
SNAPSHOT_MARK = "#snapshot="
# Past snapshots a process keeps attached at once: each holds a catalog connection (PostgreSQL allows 100 by default).
PAST_SNAPSHOTS_KEPT = 4
DATA_PATH_ENV = "SPECDASH_DATA_PATH"
STORE_FORMS = "a .duckdb file, ducklake:sqlite:FILE or ducklake:postgres:CONNINFO"
# The wheel of each extension a lake needs, by catalog engine; the files sit in extensions/v<duckdb>/.
EXTENSION_WHEELS = {
    "ducklake": ("duckdb_extension_ducklake", "ducklake"),
    "sqlite": ("duckdb_extension_sqlite_scanner", "sqlite_scanner"),
    "postgres": ("duckdb_extension_postgres_scanner", "postgres_scanner"),
    "s3": ("duckdb_extension_httpfs", "httpfs"),
}
# An object-store data path's credentials, from the variables every AWS SDK reads (AWS_ENDPOINT_URL names an
# S3-compatible server: MinIO, Ceph, R2), as the options of DuckDB's S3 secret.
S3_ENVIRONMENT = {"KEY_ID": "AWS_ACCESS_KEY_ID", "SECRET": "AWS_SECRET_ACCESS_KEY", "SESSION_TOKEN": "AWS_SESSION_TOKEN"}
REGION_ENVIRONMENT = ("AWS_REGION", "AWS_DEFAULT_REGION")
ENDPOINT_ENVIRONMENT = "AWS_ENDPOINT_URL"
TEAM_HINT = ("install the team extra: pip install -e '.[team]' (it pins DuckDB to the version its extension "
             "wheels are built for)")


@dataclass(frozen=True)
class LakeStore:
    """A DuckLake store. ``engine`` is ``sqlite`` or ``postgres``; ``catalog`` what follows ``engine:`` in the URL
    (an absolute file for SQLite, a libpq connection string for PostgreSQL). With ``snapshot``, the store as it was
    at that snapshot (DuckLake's time travel): read-only."""

    engine: str
    catalog: str
    data_path: str
    snapshot: int | None = None

    @property
    def url(self) -> str:
        """What ATTACH takes (without the snapshot, which is an ATTACH option)."""
        return f"{LAKE_PREFIX}{self.engine}:{self.catalog}"

    def __str__(self) -> str:
        return self.url if self.snapshot is None else f"{self.url}{SNAPSHOT_MARK}{self.snapshot}"

    def at(self, snapshot: int | None) -> LakeStore:
        """This store as of ``snapshot`` (None: as it is now)."""
        return replace(self, snapshot=snapshot)

    @property
    def name(self) -> str:
        return Path(self.catalog).name if self.engine == "sqlite" else "ducklake"

    @property
    def parent(self) -> Path:
        """A local folder for the store's working files (spooled rows, uploads): the one holding the data
        folder when that is local, else the system's temporary folder."""
        if "://" in self.data_path:
            return Path(tempfile.gettempdir())
        return Path(self.data_path).parent

    def exists(self) -> bool:
        """Whether the catalog is there to read. A PostgreSQL catalog is only known by connecting, which
        every reader does next: it is taken to exist, and a missing one fails there with PostgreSQL's words."""
        return Path(self.catalog).exists() if self.engine == "sqlite" else True

    def resolve(self) -> LakeStore:
        return self


StoreRef = Path | LakeStore


def parse_store(given: str | Path, data_path: str | None = None) -> StoreRef:
    """A store as given to ``--db``/``--store`` or ``$SPECDASH_STORE``: a path, or a ``ducklake:`` URL.

    ``data_path`` (``--data-path``, else ``$SPECDASH_DATA_PATH``) is where a lake keeps its Parquet files;
    a SQLite catalog keeps them beside itself by default, a PostgreSQL one needs it said."""
    if isinstance(given, Path) or not given.startswith(LAKE_PREFIX):
        return Path(given)
    url, marked, snapshot = given.rpartition(SNAPSHOT_MARK)
    if marked:
        if not snapshot.isdigit():
            raise StoreError(given, f"names no snapshot after {SNAPSHOT_MARK!r}", hint="give a snapshot number, e.g. #snapshot=12")
        lake = parse_store(url, data_path)
        if isinstance(lake, LakeStore):
            return lake.at(int(snapshot))
    engine, _, catalog = given.removeprefix(LAKE_PREFIX).partition(":")
    data_path = data_path or os.environ.get(DATA_PATH_ENV) or None
    if engine == "sqlite" and catalog:
        file = Path(catalog).expanduser().resolve()
        return LakeStore("sqlite", str(file), data_path or f"{file}.files")
    if engine == "postgres" and catalog:
        if not data_path:
            raise StoreError(given, "a PostgreSQL catalog needs a data path for its Parquet files",
                             hint=f"pass --data-path DIR_OR_S3_URL (or set ${DATA_PATH_ENV})")
        return LakeStore("postgres", catalog, data_path)
    raise StoreError(given, "is not a store this version opens", hint=f"give {STORE_FORMS}")


def sql_literal(text: str) -> str:
    """A quoted SQL string. ATTACH takes its target and options as literals, not bound parameters."""
    return "'" + text.replace("'", "''") + "'"


def extension_file(wheel: str, extension: str) -> Path | None:
    spec = importlib.util.find_spec(wheel)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{duckdb.__version__}"
    found = folder / f"{extension}.duckdb_extension"
    return found if found.exists() else None


# One in-memory DuckDB per lake (and per past snapshot shown) per process, with the extensions loaded and the lake
# attached; every connection is a cursor of it. Loading the two extensions measured 0.3-0.8 s per connection, a
# cursor ~5 ms, and a page opens several. Most recently used last.
_lakes: OrderedDict[LakeStore, duckdb.DuckDBPyConnection] = OrderedDict()
_lakes_lock = threading.Lock()


def connect_lake(store: LakeStore) -> duckdb.DuckDBPyConnection:
    """A connection to ``store`` with the lake current. Raises ``duckdb.Error`` as DuckDB does, and
    ``StoreError`` when an extension's wheel is missing.

    It reads and writes: a lake attached read-only in one cursor would be read-only in all of them. The
    store's readers only run SELECTs."""
    with _lakes_lock:
        database = _lakes.get(store)
        if database is None:
            database = _lakes[store] = _attach(store)
            _forget_past_snapshots(keep=PAST_SNAPSHOTS_KEPT)
        _lakes.move_to_end(store)
        con = database.cursor()
    try:
        con.execute(f"USE {LAKE_ALIAS}")
    except BaseException:
        con.close()
        raise
    return con


def _attach(store: LakeStore) -> duckdb.DuckDBPyConnection:
    if store.engine == "sqlite" and not Path(store.catalog).exists():
        start_sqlite_catalog(Path(store.catalog))
    database = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        in_s3 = store.data_path.startswith("s3://")
        for key in ("ducklake", store.engine, *(["s3"] if in_s3 else [])):
            wheel, extension = EXTENSION_WHEELS[key]
            file = extension_file(wheel, extension)
            if file is None:
                raise StoreError(store, f"needs DuckDB's {extension} extension {duckdb.__version__}, "
                                        f"which is not installed", hint=TEAM_HINT)
            database.execute(f"LOAD {sql_literal(str(file))}")
        if in_s3:
            database.execute(s3_secret(os.environ))
        as_of = "" if store.snapshot is None else f", SNAPSHOT_VERSION {int(store.snapshot)}"
        database.execute(f"ATTACH {sql_literal(store.url)} AS {LAKE_ALIAS} (DATA_PATH {sql_literal(store.data_path)}{as_of})")
    except BaseException:
        database.close()
        raise
    return database


def s3_secret(environment: Mapping[str, str]) -> str:
    """DuckDB's S3 secret from the AWS variables in ``environment`` (those not set are left to DuckDB's defaults);
    an ``http://`` endpoint is an S3-compatible server without TLS, addressed by path (MinIO's way)."""
    options = {option: environment[name] for option, name in S3_ENVIRONMENT.items() if environment.get(name)}
    region = next((environment[name] for name in REGION_ENVIRONMENT if environment.get(name)), None)
    if region:
        options["REGION"] = region
    endpoint = environment.get(ENDPOINT_ENVIRONMENT, "")
    if endpoint:
        scheme, _, address = endpoint.rpartition("://")
        options["ENDPOINT"] = address.rstrip("/")
        options["URL_STYLE"] = "path"
        options["USE_SSL"] = "false" if scheme == "http" else "true"
    listed = "".join(f", {option} {value if option == 'USE_SSL' else sql_literal(value)}" for option, value in options.items())
    return f"CREATE OR REPLACE SECRET specdash_s3 (TYPE s3{listed})"


def _forget_past_snapshots(keep: int) -> None:
    """Close the least recently used past-snapshot databases beyond ``keep`` (called holding the lock). A reader
    still inside one would fail, which takes ``keep`` other snapshots opened by this server during its query."""
    past = [store for store in _lakes if store.snapshot is not None]
    for store in past[:max(0, len(past) - keep)]:
        _lakes.pop(store).close()


def start_sqlite_catalog(file: Path) -> None:
    """Create an empty SQLite catalog in write-ahead-log mode, which DuckLake then fills. In SQLite's default
    mode a reader holds off every writer's commit; with the log, readers and one writer go on together (a
    second writer's commit still fails, and the store retries it)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(file)) as catalog:
        catalog.execute("PRAGMA journal_mode = WAL")


def detach_lakes() -> None:
    """Close every lake this process attached (a test removing a catalog; a process about to exit)."""
    with _lakes_lock:
        for database in _lakes.values():
            database.close()
        _lakes.clear()


def as_store(given: str | StoreRef) -> StoreRef:
    """A store given as text (the dashboard passes ``$SPECDASH_DB`` on as a string) or already parsed."""
    return given if isinstance(given, LakeStore | Path) else parse_store(given)
