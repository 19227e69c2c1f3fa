"""Benchmark 8 — every dashboard page on a team store (DuckLake on PostgreSQL) against the same demo in a DuckDB file.

The demo store (``specdash demo``) is imported into a DuckLake whose catalog is a database of a real PostgreSQL
(``tests/postgres.py``: Debian's server, a cluster of its own on a Unix socket) and whose Parquet files sit in a
local folder; its ``store_meta`` (demo flag, start phase) is copied over, so both stores open every page on the
same selection. Two ``specdash serve`` processes, one per store, file watcher off (bench_pages.NO_WATCHER). One
Debian Chromium at 1280 × 900; every load is a new tab (a new Streamlit session), timed until fully rendered
(bench_pages.timed_load: bench_dashboard's READY).

Two kinds of load, each page in turn on the file and on the lake, ``repeats`` times:
- **after a change**: one ``store_meta`` write to both stores first (what any ingest does to the cache key), so
  the page runs every query afresh: on the lake through the catalog and the Parquet files;
- **warm**, right after: the store has not changed since the server last read it (its caches hold the page's
  queries); the lake still asks its catalog for the newest snapshot on every rerun.
Per page and kind: the lake's median over the file's; target ≤ 1.5× (issue #33).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench import bench_dashboard, bench_pages
from bench.bench_dashboard import RenderError, StepTimeout
from bench.harness import (
    PYTHON,
    ROOT,
    SPECDASH,
    Row,
    Section,
    checked,
    log,
    median,
    run_child,
    scratch_dir,
    spread,
)

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

TARGET_RATIO = 1.5
KINDS = ("warm", "after a change")
COPIED_META = ("demo", "start_phase")  # what makes the demo's pages open on phase-0 (ui.opening_phase)


@dataclass
class Pair:
    """One page's loads on the file and on the lake, per kind of load."""

    title: str
    path: str
    file: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    lake: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    problem: str = ""


# --- the stores and their servers -----------------------------------------------------------------

def lake_of_demo(demo: Path, conninfo: str, data_path: Path) -> tuple[str, float]:
    """The demo imported into a new lake (``specdash import``), with the demo's meta; its URL and the import's seconds."""
    from ingest.storage import store
    from ingest.storage.location import parse_store

    url = f"ducklake:postgres:{conninfo}"
    imported = checked(run_child([SPECDASH, "import", demo, "--db", url, "--data-path", data_path]), "specdash import into the lake")
    lake = parse_store(url, str(data_path))
    with store.read_connection(demo, wait_s=10) as con:
        meta = dict(con.execute("SELECT key, value FROM store_meta").fetchall())
    for key in COPIED_META:
        if key in meta:
            store.set_meta(lake, key, meta[key])
    return url, imported.wall_s


@contextmanager
def lake_served(url: str, data_path: Path, folder: Path) -> Iterator[str]:
    """``specdash serve`` on the lake, file watcher off; stopped afterwards with whatever it started."""
    from tests import browser as helpers

    port = helpers.free_port()
    command = [str(PYTHON), "-m", "dashboard", "serve", "--db", url, "--data-path", str(data_path), "--port", str(port)]
    env = {**os.environ, **bench_pages.NO_WATCHER}
    env.pop("SPECDASH_STORE", None)
    base = f"http://127.0.0.1:{port}"
    output = folder / f"serve-lake-{port}.log"
    with open(output, "w") as log_file:
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            bench_pages.wait_until_up(process, base, output)
            yield base
        finally:
            pids = bench_dashboard.server_pids(port)
            helpers.stop(process)
            bench_dashboard.end_leftovers(pids, port)


def bump(stores: list[str], data_path: Path) -> None:
    """One write to each store, as an ingest makes: every cache keyed on the store misses on the next load."""
    from ingest.storage import store
    from ingest.storage.location import parse_store

    for given in stores:
        store.set_meta(parse_store(given, str(data_path)), "last_change", uuid.uuid4().hex)


# --- the run ----------------------------------------------------------------------------------------

def measure(context: BrowserContext, servers: dict[str, str], stores: list[str], data_path: Path, session_id: str,
            repeats: int) -> list[Pair]:
    pairs = [Pair(title, path) for title, path in bench_pages.PAGES]
    for pair in pairs:  # first contact: imports, static files, the lake's extensions and catalog
        for base in servers.values():
            try:
                bench_pages.load_twice(context, base + pair.path.format(session=session_id))
            except (StepTimeout, RenderError) as error:
                pair.problem = f"first load: {error}"
    for repeat in range(repeats):
        log(f"lake pages {repeat + 1}/{repeats}")
        for pair in pairs:
            if pair.problem:
                continue
            bump(stores, data_path)
            try:  # after the change on both stores, then again on both: the first loads filled the caches
                for kind in KINDS[::-1]:
                    for name, base in servers.items():
                        seconds = bench_pages.load_twice(context, base + pair.path.format(session=session_id)).seconds
                        (pair.file if name == "file" else pair.lake)[kind].append(seconds)
            except (StepTimeout, RenderError) as error:
                pair.problem = str(error)
    return pairs


def rows(pairs: list[Pair]) -> list[Row]:
    found = []
    for kind in KINDS:
        for pair in pairs:
            figure = f"{pair.title} (`{pair.path.split('?')[0]}`) on the lake, {kind} (s)"
            lake, file = pair.lake[kind], pair.file[kind]
            if not lake or len(file) < len(lake):
                found.append(Row(figure, "not measured", pair.problem[:300], "", "n/a", f"≤ {TARGET_RATIO}× file", False))
                continue
            ratio = median(lake) / median(file)
            found.append(Row(figure, f"{median(lake):.2f}", spread(lake), f"{median(file):.2f} file ({spread(file)})",
                             f"{ratio:.2f}×", f"≤ {TARGET_RATIO}× file", ratio <= TARGET_RATIO and not pair.problem))
    return found


def run(scale: float, repeats: int) -> Section:
    section = Section("8. Team store — every page on DuckLake/PostgreSQL vs the same demo in a DuckDB file, Chromium at 1280 px")
    from tests.postgres import new_database, running_postgres, server_binaries

    missing = [what for what, found in (("Debian's chromium (`make browser`)", Path("/usr/bin/chromium").exists()),
                                         ("PostgreSQL's server (`make postgres`)", server_binaries() is not None)) if not found]
    if missing:
        section.notes.append(f"not measured: {' and '.join(missing)} not installed")
        return section
    from playwright.sync_api import sync_playwright

    from tests import browser as helpers

    folder = scratch_dir("lake")
    demo = bench_dashboard.demo_store(folder)
    data_path = folder / "lake-data"
    load_before = os.getloadavg()
    with running_postgres() as server:
        url, import_s = lake_of_demo(demo.db, new_database(server), data_path)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=helpers.CHROMIUM, args=helpers.CHROMIUM_ARGS, headless=True)
            try:
                context = browser.new_context(viewport=bench_pages.VIEWPORT)
                with bench_pages.dashboard_served(demo.db) as file_base, lake_served(url, data_path, folder) as lake_base:
                    pairs = measure(context, {"file": file_base, "lake": lake_base}, [str(demo.db), url], data_path,
                                    demo.session_id, repeats)
            finally:
                browser.close()
    section.rows += rows(pairs)
    section.notes += [
        "stores: the demo (`specdash demo`) as a DuckDB file, and imported into a DuckLake (`specdash import`, "
        f"{import_s:.1f} s) whose catalog is a database of a PostgreSQL {server_binaries().parent.name} started for this run "  # type: ignore[union-attr]
        "(Unix socket, fsync off) and whose Parquet files are in a local folder; the lake gets the demo's "
        f"{', '.join(COPIED_META)} meta, so pages open on the same selection; `--scale` does not apply",
        "two `specdash serve` processes (file watcher off, as bench 6); Debian Chromium (Playwright), viewport "
        f"{bench_pages.VIEWPORT['width']}×{bench_pages.VIEWPORT['height']}, every load a new tab, timed from `page.goto` "
        "until fully rendered (bench 6's test); each page loaded once on both first, unmeasured",
        "per repeat and page: one `store_meta` write to both stores (as an ingest makes), then the page on the file and "
        "on the lake after that change (every query runs afresh), then on both again, warm (the server's caches hold "
        "its queries; the lake still asks its catalog for the newest snapshot each rerun)",
        f"Run: `/run?session={demo.session_id}`",
        f"load average (1 min / 15 min) before this benchmark {load_before[0]:.1f} / {load_before[2]:.1f}, after it "
        f"{os.getloadavg()[0]:.1f} / {os.getloadavg()[2]:.1f} ({os.cpu_count()} CPUs)",
    ]
    shutil.rmtree(folder, ignore_errors=True)
    return section
