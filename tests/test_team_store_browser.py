"""A team store in real headless Chromium: the Run page read as of an earlier snapshot, and a decision's evidence
link opening on the snapshot that recorded it (a SQLite-catalog lake written in four calls); four tabs loading pages
of a lake on PostgreSQL while four processes ingest into it.

Screenshots at 1280 and 1920 px: tests/artifacts/lake-run-as-of-*.png, lake-decision-*.png.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dashboard.analysis import data, history, ledger
from ingest.pipeline import ingest_paths
from ingest.storage import location, store
from ingest.storage.location import LakeStore, parse_store
from tests.browser import CHROMIUM, look_at_each_width, served
from tests.postgres import new_database, running_postgres
from tests.reliability_helpers import write_bench_json, write_server_log
from tests.test_team_store import failures, ingest_in_a_process

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "phase-2"
FIRST, SECOND = DEMO / "baseline" / "bench.json", DEMO / "k2-drafter-ft" / "bench.json"


@dataclass(frozen=True)
class Served:
    url: str
    lake: LakeStore
    after_first: int  # the snapshot that stored FIRST alone
    decision_id: str
    recorded: int  # the snapshot that recorded the decision


@pytest.fixture(scope="module")
def served_lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    lake = parse_store(f"ducklake:sqlite:{tmp_path_factory.mktemp('lake-browser') / 'team.sqlite'}")
    assert isinstance(lake, LakeStore)
    ingest_paths([FIRST], lake, phase="phase-2")
    ingest_paths([SECOND], lake, phase="phase-2")
    decision_id, _ = ledger.record(lake, title="ft against baseline", verdict="accepted", phase="phase-2", baseline="baseline")
    ingest_paths([DEMO / "baseline" / "server.log"], lake, phase="phase-2")  # a change after the decision
    snapshots = data.lake_history(lake)
    after_first = int(snapshots.loc[snapshots["commit_message"] == f"ingest {FIRST} (bench_json)", "snapshot_id"].iloc[0])
    recorded = history.decision_snapshot(snapshots, decision_id)
    assert recorded is not None
    location.detach_lakes()  # the server reads the lake; this process is done with it
    with served(lake) as url:
        yield Served(url, lake, after_first, decision_id, recorded)


def test_the_run_page_shows_the_store_as_of_an_earlier_snapshot(served_lake: Served, page: Page) -> None:
    page.goto(f"{served_lake.url}/run?as_of={served_lake.after_first}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text(f"The store as it was at snapshot #{served_lake.after_first}")).to_be_visible(timeout=60_000)
    expect(main.get_by_text("Runs · baseline · phase-2")).to_be_visible()
    expect(main.get_by_text("Traceback")).to_have_count(0)
    assert look_at_each_width(page, "lake-run-as-of") == []


def test_a_decisions_evidence_opens_on_the_snapshot_that_recorded_it(served_lake: Served, page: Page) -> None:
    page.goto(f"{served_lake.url}/decisions?decision={served_lake.decision_id}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text(f"at snapshot #{served_lake.recorded}, which recorded this decision")).to_be_visible(timeout=60_000)
    assert look_at_each_width(page, "lake-decision") == []
    main.get_by_role("link", name="baseline · phase-2").first.click()
    expect(main.get_by_text(f"The store as it was at snapshot #{served_lake.recorded}")).to_be_visible(timeout=60_000)
    assert f"as_of={served_lake.recorded}" in page.url


def test_a_file_uploaded_on_the_ingest_page_lands_in_the_lake(served_lake: Served, page: Page) -> None:
    """It once went to a new DuckDB file named after the lake's URL, in the server's working folder, and the page
    reported it loaded."""
    upload = Path(__file__).resolve().parent / "fixtures" / "dashboard" / "phase-1-two-variants.bench.json"
    page.goto(f"{served_lake.url}/ingest")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(upload))
    page.get_by_role("button", name="Ingest 1 file(s)").click()
    expect(page.get_by_text(f"{upload.name}: bench_json, 8 rows loaded")).to_be_visible(timeout=60_000)
    assert "phase-1" in data.phases(served_lake.lake)
    assert not list(Path(__file__).resolve().parents[1].glob("ducklake:*"))  # the server's working folder


@pytest.fixture(scope="module")
def postgres_lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LakeStore]:
    """An empty lake on a real PostgreSQL (tests/postgres.py), its Parquet files in a temporary folder."""
    with running_postgres() as server:
        lake = parse_store(f"ducklake:postgres:{new_database(server)}", str(tmp_path_factory.mktemp("pg-lake") / "data"))
        assert isinstance(lake, LakeStore)
        yield lake


PAGES_READ = ("/", "/run", "/acceptance", "/breakdown")
# A page is done when its script has stopped and its heading shows; what it then shows is checked for errors.
SCRIPT_STOPPED = "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"


def test_four_browsers_read_pages_while_four_hosts_ingest(postgres_lake: LakeStore, browser: Any, tmp_path: Path) -> None:
    """Issue #33's concurrency test with real readers: 4 Chromium tabs load pages of a served lake on PostgreSQL,
    again and again, while 4 writer processes ingest overlapping halves of 8 files. No page shows an error or a
    traceback, and every file is in the lake once."""
    files = sorted(path for path in DEMO.rglob("*") if path.is_file() and ".trace." not in path.name)
    for seed in range(2):  # logs big enough to keep the writers busy while the pages load
        write_server_log(tmp_path / f"server-{seed}.log", megabytes=3, seed=seed)
    files += [tmp_path / f"server-{seed}.log" for seed in range(2)]
    files += [write_bench_json(tmp_path / f"bench-{seed}.json", variant=f"v{seed}", phase="phase-9", seed=seed)
              for seed in range(8 - len(files))]
    shares = [[files[(start + step) % len(files)] for step in range(len(files) // 2 + 1)] for start in range(0, 8, 2)]
    ingest_paths(files[:1], postgres_lake)  # something to show before the writers start
    location.detach_lakes()
    tabs = [browser.new_context(viewport={"width": 1280, "height": 900}).new_page() for _ in range(4)]
    with served(postgres_lake, "--data-path", postgres_lake.data_path) as url:
        problems = load_pages(tabs, url)  # the server up and the tabs warm before the writers start
        writers = [ingest_in_a_process(postgres_lake, share) for share in shares]
        loads = 0  # page loads begun while a writer was running
        while any(writer.poll() is None for writer in writers):
            problems += load_pages(tabs, url)
            loads += len(tabs)
        outcomes = [writer.communicate(timeout=600) for writer in writers]
    for tab in tabs:
        tab.context.close()
    assert [writer.returncode for writer in writers] == [0] * 4, [failures(out) for out, _ in outcomes]
    assert problems == [] and loads >= len(tabs), (problems, loads)  # at least one round of 4 while they wrote
    with store.writer(postgres_lake) as con:
        stored = con.execute("SELECT sha256, count(*) FROM sources GROUP BY sha256").fetchall()
    assert len(stored) == len(files) and {count for _, count in stored} == {1}


def load_pages(tabs: list[Any], url: str) -> list[str]:
    """Each tab opens one of PAGES_READ at once (their sessions run side by side); the errors the pages show."""
    for tab, path in zip(tabs, PAGES_READ, strict=True):
        tab.goto(url + path)
    problems = []
    for tab in tabs:
        tab.wait_for_function(SCRIPT_STOPPED, timeout=120_000, polling=100)
        tab.locator('[data-testid="stMain"] h1').first.wait_for(timeout=60_000)
        shown = tab.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
        problems += [f"{tab.url}: {text[:300]}" for text in shown.all_inner_texts()]
    return problems
