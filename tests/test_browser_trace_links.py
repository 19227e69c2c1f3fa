"""A trace set linked to its server lifetime, in real headless Chromium: the Run page says how it was
linked and shows the lifetime's log; Breakdown lists it under the lifetime's variant.

Screenshots at 1280 and 1920 px (each page loaded once, then resized): tests/artifacts/trace-link-*.png.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from tests.browser import CHROMIUM, at_each_width, open_section, screenshot, served
from tests.test_trace_links import EAGLE3, PROFILE_ID, PROFILED_LOG, trace_named

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("trace-links")
    db = folder / "store.duckdb"
    reports = ingest_paths([trace_named(folder, PROFILE_ID), PROFILED_LOG], db)
    assert not [r.summary() for r in reports if r.failed]
    with served(db) as url:
        yield url


def test_run_says_how_a_trace_set_was_linked_and_shows_its_lifetime(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/run?session=trace-{PROFILE_ID}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text(f"Profiler traces · {EAGLE3}").first).to_be_visible(timeout=30_000)
    expect(main.get_by_text("linked to its server log by profile id in the server log").first).to_be_visible()
    open_section(page, "Raw lines")  # the lines show when their section is opened
    expect(main.get_by_text("Decode batch").first).to_be_visible()  # the linked lifetime's raw lines
    expect(main.get_by_text("Traceback")).to_have_count(0)
    for width in at_each_width(page):
        screenshot(page, f"trace-link-run-{width}")


def test_breakdown_lists_the_trace_under_the_lifetimes_variant(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/breakdown?variant={EAGLE3}")
    main = page.locator('[data-testid="stMain"]')
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    expect(main.get_by_text(f"trace:{PROFILE_ID}")).to_have_count(0)
    expect(main.get_by_text("Traceback")).to_have_count(0)
    for width in at_each_width(page):
        screenshot(page, f"trace-link-breakdown-{width}")
