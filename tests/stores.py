"""Stores built once per test run and shared by every pytest-xdist worker.

Building a store is the suite's most repeated cost (the corpus store took 15 s, and eight modules built
it). ``shared_store`` builds a named store once under the run's shared temporary folder, the first
worker to ask holding a file lock while the others wait, and gives each caller its own copy, so a test
may write to its store without touching another's.
"""
from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every worker of this run sees (a worker's own base folder is inside it)."""
    own = factory.getbasetemp()
    return own.parent if os.environ.get("PYTEST_XDIST_WORKER") else own


def shared_store(name: str, build: Callable[[Path], None], factory: pytest.TempPathFactory) -> Path:
    """A copy of the store ``build`` writes, built once per run under ``name`` (a name stands for one content)."""
    folder = run_folder(factory) / "shared-stores"
    folder.mkdir(exist_ok=True)
    built = folder / f"{name}.duckdb"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait here while the first builds
        if not built.exists():
            partial = folder / f"{name}.partial.duckdb"
            partial.unlink(missing_ok=True)
            build(partial)
            assert not Path(f"{partial}.wal").exists(), "the store was left open: a copy would miss its last writes"
            partial.rename(built)  # only a finished store is ever found under its name
    copy = factory.mktemp(name) / built.name
    shutil.copyfile(built, copy)
    return copy


def ingested_store(name: str, paths: Iterable[Path], factory: pytest.TempPathFactory) -> Path:
    """``shared_store`` of the files ``paths``, ingested in one call as a user would."""
    files = list(paths)
    return shared_store(name, lambda db: ingest_paths(files, db), factory)
