"""A team store's past, in real headless Chromium: the Run page read as of an earlier snapshot, and a decision's
evidence link opening on the snapshot that recorded it (a SQLite-catalog lake written in three calls).

Screenshots at 1280 and 1920 px: tests/artifacts/lake-run-as-of-*.png, lake-decision-*.png.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dashboard.analysis import data, history, ledger
from ingest.pipeline import ingest_paths
from ingest.storage import location
from ingest.storage.location import LakeStore, parse_store
from tests.browser import CHROMIUM, look_at_each_width, served

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "phase-2"
FIRST, SECOND = DEMO / "baseline" / "bench.json", DEMO / "k2-drafter-ft" / "bench.json"


@dataclass(frozen=True)
class Served:
    url: str
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
        yield Served(url, after_first, decision_id, recorded)


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
