"""A store with no benchmark JSON in real headless Chromium: Compare, Run and Breakdown show its files.

The store holds the real logs, bench outputs and traces of ../shared/corpus (skipped without it).
Every page it opens is screenshotted at 1280 and 1920 px (loaded once, then resized) to
tests/artifacts/every-file-*.png; then every page is shot again as corpus-PAGE-WIDTH.png and checked for
tables cut off at the right and chart labels that overlap or stick out.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.analysis import data
from tests.browser import CHROMIUM, at_each_width, open_section, screenshot, served
from tests.conftest import CORPUS
from tests.stores import ingested_store
from tests.test_every_file import corpus_paths

pytestmark = [pytest.mark.browser, pytest.mark.corpus]

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

from tests.test_browser import look_at_every_page  # noqa: E402

LIFETIME_FILE = "sglang-issue-11948-eagle3-decode-acceptrate.log"
TRACES = "unlabelled: traces"  # the corpus's traces/ folder: one unlabelled group, as every unlabelled folder is


def lifetime_session(db: Path) -> str:
    sessions = data.sessions(db)
    return str(sessions[sessions["path"].str.endswith(LIFETIME_FILE)]["session_id"].iloc[0])


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return ingested_store("corpus", corpus_paths(), tmp_path_factory)


@pytest.fixture(scope="module")
def base_url(corpus_db: Path) -> Iterator[str]:
    with served(corpus_db) as url:
        yield url




def screenshot_each_width(page: Page, stem: str) -> None:
    for width in at_each_width(page):
        screenshot(page, f"{stem}-{width}")


def test_compare_names_variants_with_their_sources(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/?variant=unlabelled%3A+logs&variant=unlabelled%3A+bench")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Unlabelled groups pool files").first).to_be_visible(timeout=30_000)
    metrics = page.locator('[data-testid="stMetric"]')
    expect(metrics).to_have_count(2)
    assert all("tok/s" in text for text in metrics.all_inner_texts())
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    expect(main.get_by_text("Traceback")).to_have_count(0)
    screenshot_each_width(page, "every-file-compare")


def test_run_opens_a_server_lifetime(base_url: str, page: Page, corpus_db: Path) -> None:
    page.goto(f"{base_url}/run?session={lifetime_session(corpus_db)}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Server lifetime ·").first).to_be_visible(timeout=30_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    open_section(page, "Raw lines")  # the lines show when their section is opened
    expect(main.get_by_text("Decode batch").first).to_be_visible()
    screenshot_each_width(page, "every-file-run-lifetime")


def test_breakdown_shows_a_labelled_trace_set(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/breakdown?variant=unlabelled%3A+traces")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("GPU time by kernel class, whole trace")).to_be_visible(timeout=30_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    labels = [tick.text_content() for tick in page.locator(".js-plotly-plot .ytick text").all()]
    assert f"{TRACES} · rank 1" in labels, labels
    screenshot_each_width(page, "every-file-breakdown")


def test_phases_shows_the_evidence(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/phases")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("(no phase)").first).to_be_visible(timeout=30_000)
    expect(main.get_by_text("No data yet")).to_have_count(0)
    screenshot_each_width(page, "every-file-phases")


def test_every_page_fits_at_both_widths(page: Page, base_url: str, corpus_db: Path) -> None:
    extra = (("run-lifetime", f"run?session={lifetime_session(corpus_db)}"), ("breakdown-traces", "breakdown?variant=unlabelled%3A+traces"))
    problems = look_at_every_page(page, base_url, "corpus", extra)
    assert problems == [], "\n".join(problems)
