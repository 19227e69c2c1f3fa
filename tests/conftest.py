"""Shared test fixtures.

The store always lives under ``tmp_path`` (SPECDASH_DB is pointed there for every
test) so a developer's own data never leaks into a test. The shared corpus of real
files is read from ``../shared/corpus`` when it exists; tests that need it skip
otherwise, so a lone clone still runs its own fixtures.
"""
from __future__ import annotations

import functools
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import local_script_runner

from ingest.storage import store
from ingest.storage.location import StoreRef

# The browser fixtures (tests/browser.py), for every test module that takes them; a module may define its own.
from tests.browser import browser, kept_tabs, page  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = Path(os.environ.get("SPECDASH_CORPUS", ROOT.parent / "shared" / "corpus"))

# Every AppTest run scans the metadata of every installed distribution for Streamlit components (0.8 s
# of a 1.3 s page run here); a served app does it once at start. The installed packages do not change
# during a test session, so once per test process is enough: the scan's result is kept.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


def require_widgets_deltas(runner: local_script_runner.LocalScriptRunner, timeout: float = 3) -> None:
    """AppTest's wait for a page run, polling every 10 ms instead of every 1 ms: each poll takes the GIL from the page's
    thread to scan every event the run has sent, which cost ~4% of an AppTest walk's CPU (measured on two random
    stores, 19.4 -> 18.7 CPU-s). A run is still seen as finished within 10 ms; a timeout still stops it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.01)
        if runner.script_stopped():
            return
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


local_script_runner.require_widgets_deltas = require_widgets_deltas


@pytest.fixture(scope="session", autouse=True)
def new_stores_from_a_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A new store's migrations and views cost ~0.4 CPU-s, and the tests open ~250 new stores. Each test process
    migrates one empty store once, and a writer that would create a store file starts from a copy of it: the file
    the migrations would have left (a store that exists, as the upgrade tests make, is opened as it is). Processes
    the tests start (`specdash ingest`, `specdash serve`) migrate their new stores themselves."""
    template = tmp_path_factory.mktemp("template") / "empty.duckdb"
    with store.writer(template):
        pass
    open_writer = store._open_writer

    def open_from_template(db_path: StoreRef) -> object:
        if isinstance(db_path, Path) and not db_path.exists():  # a lake (tests/test_team_store.py) migrates itself
            db_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(template, db_path)
        return open_writer(db_path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_open_writer", open_from_template)
        yield


@pytest.fixture(autouse=True)
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "store.duckdb"
    monkeypatch.setenv("SPECDASH_DB", str(db))
    return db


@pytest.fixture
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS


def corpus_files(subdir: str, pattern: str = "*") -> list[Path]:
    """Corpus files for parametrizing; empty when the corpus is absent (the tests then skip)."""
    folder = CORPUS / subdir
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(pattern) if not p.name.endswith(".source"))


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store, built once per test run from data/demo (a copy per worker: tests must not write to it)."""
    from dashboard.demo import build_demo_store
    from tests.stores import shared_store

    def build(db: Path) -> None:
        failed = [report.summary() for report in build_demo_store(db) if report.failed]
        assert not failed, failed

    return shared_store("demo", build, tmp_path_factory)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files that drive Chromium first, each file's tests in their own order. They are the longest files and
    partly wait on the browser: started first they overlap the CPU-bound files on the other workers, instead
    of running alone at the end of a parallel run (make test: one file per worker at a time)."""
    in_browser = {item.path for item in items if item.get_closest_marker("browser") is not None}
    items.sort(key=lambda item: item.path not in in_browser)
