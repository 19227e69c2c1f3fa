"""A real PostgreSQL for the team-store tests: Debian's server binaries, a cluster of its own in a temporary
folder, reached only through a Unix socket in that folder, stopped and removed afterwards.

PostgreSQL refuses to run as root, so as root (CI) the cluster runs as the ``postgres`` user the Debian
package creates. Without the binaries the tests that need it skip, except in CI (``$CI`` set), where
``.ci/run`` installs them and a skip would hide a failure.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

from ingest.storage.location import LakeStore, StoreRef, parse_store

SERVER_USER = "postgres"


def server_binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding the server (Debian's layout)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda path: int(path.parts[-3]))
    return found[-1].parent if found else None


def unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is needed in CI: {reason} (.ci/run installs Debian's postgresql)")
    pytest.skip(reason)
    raise AssertionError  # pytest.skip raises


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_postgres() -> Iterator[str]:
    """Start a cluster; yields the connection options every database on it shares (``host=... port=... user=...``)."""
    binaries = server_binaries()
    if binaries is None:
        unavailable("no PostgreSQL server in /usr/lib/postgresql")
    as_server_user = ["runuser", "-u", SERVER_USER, "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="specdash-pg-"))
    if as_server_user:
        shutil.chown(folder, SERVER_USER)
    data, port = folder / "data", free_port()
    try:
        run([*as_server_user, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", SERVER_USER,
             "--no-sync", "-E", "UTF8"])
        run([*as_server_user, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-w",
             "-o", f"-p {port} -k {folder} -c listen_addresses='' -c fsync=off", "start"])
        try:
            yield f"host={folder} port={port} user={SERVER_USER}"
        finally:
            run([*as_server_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def new_database(server: str) -> str:
    """A new, empty database on ``server``; returns its full connection string."""
    name = f"lake_{uuid.uuid4().hex[:12]}"
    options = dict(option.split("=", 1) for option in server.split())
    run(["psql", "-h", options["host"], "-p", options["port"], "-U", options["user"], "-d", "postgres",
         "-q", "-c", f"CREATE DATABASE {name}"])
    return f"dbname={name} {server}"


def run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(command)}: {done.stderr or done.stdout}"


# --- the three kinds of store, as fixtures (imported by the test modules that use them) ------------------------------

@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A PostgreSQL server for the module's lakes, each in a database of its own (``new_database``)."""
    with running_postgres() as server:
        yield server


def new_lake(kind: str, folder: Path, request: pytest.FixtureRequest) -> LakeStore:
    """An empty lake in ``folder``: its catalog in a SQLite file, or in a new database of the module's PostgreSQL."""
    if kind == "sqlite":
        found = parse_store(f"ducklake:sqlite:{folder / 'team.sqlite'}")
    else:
        found = parse_store(f"ducklake:postgres:{new_database(request.getfixturevalue('postgres'))}", str(folder / "lake-data"))
    assert isinstance(found, LakeStore)
    return found


@pytest.fixture(params=["sqlite", "postgres"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> LakeStore:
    """An empty lake, on each catalog."""
    return new_lake(request.param, tmp_path, request)


@pytest.fixture(params=["file", "sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreRef:
    """An empty store of each kind: a DuckDB file, and a lake on each catalog."""
    return tmp_path / "store.duckdb" if request.param == "file" else new_lake(request.param, tmp_path, request)
