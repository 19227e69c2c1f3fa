"""The Acceptance page in real headless Chromium (Debian's), on a copy of the demo store and on a corpus-only store,
and the Run page's per-position curve of a session's window.

Each page is settled, its expanders opened, checked for tables wider than their frame (cut off at the right) and
chart labels that overlap or stick out (tests/browser.py: look_at), and shot whole at 1280 and 1920 px (loaded
once, then resized) to tests/artifacts/acceptance-{demo,corpus}-tabN-WIDTH.png (the Acceptance page a tab at a
time: only the open tab runs) and acceptance-run-positions-WIDTH.png.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.analysis import data
from ingest.pipeline import ingest_paths
from tests import browser as browser_helpers
from tests.browser import CHROMIUM, look_at_each_width, served, served_copy
from tests.conftest import CORPUS
from tests.stores import ingested_store

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402


@pytest.fixture(scope="module")
def demo_url(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_copy(demo_db, tmp_path_factory.mktemp("acceptance-browser")) as url:
        yield url


@pytest.fixture(scope="module")
def corpus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    from tests.test_acceptance_page import acceptance_corpus_paths

    with served(ingested_store("corpus-acceptance", acceptance_corpus_paths(), tmp_path_factory)) as url:
        yield url




def open_page(page: Page, url: str) -> None:
    page.goto(f"{url}/acceptance")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_role("tab", name="Per draft position: where the drafts die")).to_be_visible(timeout=60_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    expect(main.get_by_role("tab", name="Per dataset", exact=True)).to_be_visible()


def look_at_every_tab(page: Page, name: str) -> tuple[list[str], int, str]:
    """Each reading's tab opened in turn (only the open one runs) and looked at at each width, shot as
    NAME-tabN-WIDTH.png: the problems found, the charts drawn over all tabs, and every tab's text."""
    problems: list[str] = []
    charts, texts = 0, []
    tabs = page.locator('[data-testid="stMain"] [role="tab"]')
    for index in range(tabs.count()):
        tabs.nth(index).click()
        problems += look_at_each_width(page, f"{name}-tab{index + 1}")
        charts += page.locator(".js-plotly-plot").count()
        texts.append(page.locator('[data-testid="stMain"]').inner_text())
    return problems, charts, "\n".join(texts)


def test_demo_acceptance_page(demo_url: str, page: Page) -> None:
    open_page(page, demo_url)
    problems, charts, texts = look_at_every_tab(page, "acceptance-demo")
    assert "models best" in texts and "Lowest-acceptance requests" in texts
    assert charts >= 4  # positions, steps model, requests, datasets
    assert problems == [], "\n".join(problems)


def test_corpus_acceptance_page(corpus_url: str, page: Page, monkeypatch: pytest.MonkeyPatch) -> None:
    # With its expanders open the corpus page is taller than the helper's 7000 px cap: a shot that tall would
    # start below the page's top (Streamlit's main scrolled), so it is shot whole.
    monkeypatch.setattr(browser_helpers, "MAX_SHOT_HEIGHT", 12_000)
    open_page(page, corpus_url)
    expect(page.locator('[data-testid="stMain"]').get_by_text("Not like-for-like").first).to_be_visible()
    problems, _, _ = look_at_every_tab(page, "acceptance-corpus")
    assert problems == [], "\n".join(problems)


@pytest.fixture(scope="module")
def positions_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    from tests.test_run_positions import write_session

    folder = tmp_path_factory.mktemp("run-positions-browser")
    db = folder / "store.duckdb"
    ingest_paths(write_session(folder), db, phase="p", variant="eagle3")
    sessions = data.sessions(db)
    with served(db) as url:
        yield url, str(sessions[sessions["origin"] == "benchmark"]["session_id"].iloc[0])


def test_run_page_shows_its_windows_per_position_curve(positions_url: tuple[str, str], page: Page) -> None:
    url, session = positions_url
    page.goto(f"{url}/run?session={session}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Acceptance per draft position")).to_be_visible(timeout=60_000)
    expect(main.get_by_text("on the Acceptance page")).to_be_visible()
    problems = look_at_each_width(page, "acceptance-run-positions")
    assert problems == [], "\n".join(problems)
