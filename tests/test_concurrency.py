"""Concurrency: ingests and the dashboard take turns on the store's file lock, and nobody sees a lock error.

DuckDB lets one process write or several read. Every specdash connection is short-lived
and opened through ``store.open_with_retry``, which waits with backoff while another process
holds the lock and, past its deadline, raises ``StoreBusy`` naming the holder.
"""
from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pytest

from ingest.errors import StoreBusy
from ingest.pipeline import ingest_paths
from ingest.storage import store
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.reliability_helpers import (
    click_page,
    hold_write_lock,
    nav_links,
    page_problems,
    release_lock,
    serving,
    settle,
    sources_summary,
    start_ingest,
    store_inconsistencies,
    write_bench_json,
    write_server_log,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return write_bench_json(tmp_path / "bench.json", variant="waiting", phase="phase-9", seed=11)


def test_a_lock_held_too_long_gives_store_busy_naming_the_holder(
    isolated_store: Path, bench: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "LOCK_WAIT_S", 1.0)
    with duckdb.connect(str(isolated_store)):  # create the store, then let the holder take it
        pass
    holder = hold_write_lock(isolated_store)
    try:
        started = time.monotonic()
        [report] = ingest_paths([bench], isolated_store)
        waited = time.monotonic() - started
    finally:
        release_lock(holder)
    assert isinstance(report.error, StoreBusy)
    message = str(report.error)
    assert message.startswith(f"{isolated_store}: the store stayed locked by another process (PID {holder.pid}: ")
    assert "for 1 s — wait for the other ingest to finish, or stop the process holding it" in message
    assert 1.0 <= waited < 5.0  # it waited the whole bounded time, and no longer
    [again] = ingest_paths([bench], isolated_store)  # once the holder is gone the same ingest works
    assert again.status == "loaded" and again.rows_loaded == 8


def held_on_a_thread(db: Path, *, read_only: bool, seconds: float) -> threading.Thread:
    """A connection of this process, in ``read_only`` mode, held open on a thread for ``seconds``."""
    opened = threading.Event()

    def hold() -> None:
        with duckdb.connect(str(db), read_only=read_only):
            opened.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    opened.wait(10)
    return thread


@pytest.mark.parametrize("held_read_only", [True, False], ids=["writer waits for a reader", "reader waits for a writer"])
def test_a_connection_in_the_other_mode_in_this_process_is_waited_out(isolated_store: Path, held_read_only: bool) -> None:
    """The dashboard's server records decisions while other threads read: DuckDB refuses a read-write
    connection beside a read-only one in one process (and the other way round)."""
    with store.writer(isolated_store):
        pass
    holder = held_on_a_thread(isolated_store, read_only=held_read_only, seconds=0.5)
    started = time.monotonic()
    con = store.open_with_retry(isolated_store, read_only=not held_read_only, wait_s=10)
    waited = time.monotonic() - started
    con.close()
    holder.join()
    assert 0.3 <= waited < 5.0


def test_a_connection_in_the_other_mode_held_too_long_gives_store_busy(isolated_store: Path) -> None:
    with store.writer(isolated_store):
        pass
    holder = held_on_a_thread(isolated_store, read_only=True, seconds=2.0)
    with pytest.raises(StoreBusy, match=r"stayed locked \(this process, in the other mode\) for 0.5 s — try again once"):
        store.open_with_retry(isolated_store, read_only=False, wait_s=0.5)
    holder.join()


def test_an_ingest_waits_out_a_briefly_held_lock(isolated_store: Path, bench: Path) -> None:
    with duckdb.connect(str(isolated_store)):
        pass
    holder = hold_write_lock(isolated_store)
    ingest = start_ingest(isolated_store, [bench])
    time.sleep(2.0)
    still_waiting = ingest.poll() is None
    release_lock(holder)
    out, err = ingest.communicate(timeout=60)
    assert still_waiting, f"the ingest did not wait for the lock: {out} {err}"
    assert ingest.returncode == 0, err
    assert "bench_json, 8 rows loaded" in out


def test_two_ingests_at_once_one_waits_and_both_succeed(isolated_store: Path, tmp_path: Path) -> None:
    log_a = tmp_path / "a.log"
    log_b = tmp_path / "b.log"
    write_server_log(log_a, megabytes=4, seed=21)
    write_server_log(log_b, megabytes=4, seed=22)
    with duckdb.connect(str(isolated_store)):
        pass
    holder = hold_write_lock(isolated_store)  # both start while the store is busy, so both must wait
    first = start_ingest(isolated_store, [log_a])
    second = start_ingest(isolated_store, [log_b])
    time.sleep(1.5)
    both_waiting = first.poll() is None and second.poll() is None
    release_lock(holder)
    results = [process.communicate(timeout=60) for process in (first, second)]
    assert both_waiting
    assert [first.returncode, second.returncode] == [0, 0], results
    assert len(sources_summary(isolated_store)) == 2
    assert store_inconsistencies(isolated_store) == []


def test_the_same_file_ingested_twice_at_once_is_loaded_once(isolated_store: Path, tmp_path: Path) -> None:
    log = tmp_path / "same.log"
    write_server_log(log, megabytes=4, seed=23)
    processes = [start_ingest(isolated_store, [log]) for _ in range(2)]
    outputs = [process.communicate(timeout=60)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0]
    assert sorted("already ingested" in out for out in outputs) == [False, True], outputs
    assert len(sources_summary(isolated_store)) == 1
    assert store_inconsistencies(isolated_store) == []


# --- the dashboard while ingests run --------------------------------------------------------------

LIVE_VARIANTS = [f"live-{n}" for n in range(1, 5)]
# Each step starts its files' ingests at the same moment (one process per file) and waits for them.
INGEST_PLAN = [["live-1"], ["live-2", "log-1"], ["live-3", "live-4"]]
MIN_PAGE_VIEWS = 6  # every page at least once, most of them while ingests run


@pytest.fixture
def browser_page() -> Iterator[Page]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        yield page
        chromium.close()


def run_plan(db: Path, files: dict[str, Path], outcomes: list[tuple[str, int, str]]) -> None:
    for step in INGEST_PLAN:
        processes = [(name, start_ingest(db, [files[name]])) for name in step]
        for name, process in processes:
            _, err = process.communicate(timeout=120)
            outcomes.append((name, process.returncode, err))
        time.sleep(0.3)


@pytest.mark.browser
def test_the_app_shows_no_lock_error_while_ingests_run(demo_db: Path, tmp_path: Path, browser_page: Page) -> None:
    page = browser_page
    db = tmp_path / "live.duckdb"
    shutil.copy(demo_db, db)
    files = {name: write_bench_json(tmp_path / f"{name}.json", variant=name, phase="phase-0", seed=100 + n)
             for n, name in enumerate(LIVE_VARIANTS)}
    files["log-1"] = tmp_path / "log-1.log"
    write_server_log(files["log-1"], megabytes=6, seed=200)

    problems: list[str] = []
    views = 0
    views_while_ingesting = 0
    outcomes: list[tuple[str, int, str]] = []
    with serving(db) as base:
        page.goto(f"{base}/")
        settle(page)
        titles = nav_links(page)
        assert {"Compare", "Run"} <= set(titles), titles
        ingests = threading.Thread(target=run_plan, args=(db, files, outcomes))
        ingests.start()
        while ingests.is_alive() or views < MIN_PAGE_VIEWS:
            for title in titles:
                ingesting = ingests.is_alive()
                click_page(page, title)
                views += 1
                views_while_ingesting += ingesting
                problems += [f"{title}: {problem}" for problem in page_problems(page)]
        ingests.join()

        # New data shows after the sidebar's "Refresh data" (same session) and after a reload (new session).
        click_page(page, "Compare")
        page.get_by_role("button", name="Refresh data").click()
        settle(page)
        page.locator('[data-testid="stMultiSelect"]').filter(has_text="Variants").locator("input").click()
        page.locator('[role="option"]').first.wait_for()  # the list opens a moment after the click
        offered = page.locator('[role="option"]').all_inner_texts()
        page.keyboard.press("Escape")
        page.goto(f"{base}/")
        settle(page)
        shown_after_reload = page.locator("body").inner_text()
        problems += [f"after reload: {problem}" for problem in page_problems(page)]

    print(f"\nlock errors seen by the app: {len(problems)} in {views} page views, {views_while_ingesting} of them "
          f"started while {len(outcomes)} ingests ran ({len(INGEST_PLAN)} steps, some at once)")
    assert problems == []
    assert [(name, code) for name, code, _ in outcomes if code != 0] == [], outcomes
    assert len(outcomes) == sum(len(step) for step in INGEST_PLAN)
    assert views >= MIN_PAGE_VIEWS and views_while_ingesting >= 2
    # variants already selected stay selected; the new ones are offered after the refresh
    assert LIVE_VARIANTS[-1] in offered, offered
    assert all(name in shown_after_reload for name in LIVE_VARIANTS)
    assert store_inconsistencies(db) == []
