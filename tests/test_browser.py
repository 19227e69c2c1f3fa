"""The dashboard in a real headless Chromium (Debian's), against `specdash serve` on the demo store."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, screenshot, served

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def base_url(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("browser") / "demo.duckdb"
    shutil.copy(demo_db, db)
    with served(db) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    yield tab
    context.close()


def test_compare_shows_k2_and_a_chart_then_opens_a_run(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/")
    expect(page.get_by_text("51.8 tok/s").first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    screenshot(page, "compare")
    page.get_by_role("link", name="k2-drafter · phase-0").first.click()
    page.wait_for_url("**/run?**")
    assert "session=" in page.url
    expect(page.get_by_role("heading", name="Run drill-down")).to_be_visible()
    expect(page.get_by_text("Run 4 stopped at 1963 of 2048 tokens")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    screenshot(page, "run")
