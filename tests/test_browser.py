"""The dashboard in a real headless Chromium (Debian's), against `specdash serve` on a copy of the demo store.

Tests run in file order against one server: the decision made in the ledger test is the one whose
Markdown and HTML are downloaded after it. Every page is screenshotted to tests/artifacts/, and at the end
every page again at 1280 and 1920 px (demo-PAGE-WIDTH.png, Breakdown's tabs too; each page loaded once and
resized), checked for tables cut off at the right and chart labels that overlap or stick out.
"""
from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from dashboard.analysis import data
from tests.browser import (
    CHROMIUM,
    WIDTHS,
    look_at_each_width,
    reused,
    screenshot,
    served,
)
from tests.conftest import FIXTURES

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

TIMEOUT_MS = 60_000
expect.set_options(timeout=20_000)  # the first view of a cold server computes every query once
DECISION_TITLE = "Browser check: K2 drafter as-is"


@pytest.fixture(scope="module")
def store_copy(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("browser") / "demo.duckdb"
    shutil.copy(demo_db, db)
    return db


@pytest.fixture(scope="module")
def base_url(store_copy: Path) -> Iterator[str]:
    with served(store_copy) as url:
        yield url




@pytest.fixture
def page(kept_tabs: Callable[..., Page]) -> Iterator[Page]:  # one wide tab that takes downloads: the ledger test saves reports
    with reused(kept_tabs(1400, accept_downloads=True)) as opened:
        opened.set_default_timeout(TIMEOUT_MS)
        yield opened


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def chips(page: Page, label: str) -> list[str]:
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text=label)
    return [tag.get_attribute("aria-label") or "" for tag in box.locator(".react-aria-ComboBox [data-tag]").all()]


def test_a_permalink_reopens_the_same_view(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/?phase=phase-0&variant=from-scratch&variant=k2-drafter&baseline=from-scratch&metric=mean_of_runs")
    expect(page.get_by_text("51.9 tok/s").first).to_be_visible()  # mean of runs, as the link asked
    assert chips(page, "Variants") == ["from-scratch", "k2-drafter"]
    expect(page.get_by_role("combobox", name="Baseline")).to_have_value("from-scratch")
    expect(page.get_by_role("radio", name="mean of per-run tok/s")).to_be_checked()
    expect(page.get_by_text("from-scratch (baseline)")).to_be_visible()
    assert query(page)["variant"] == ["from-scratch", "k2-drafter"] and query(page)["baseline"] == ["from-scratch"]
    # the selection follows through the sidebar to another page, whose URL carries it too
    page.get_by_role("link", name="Break-even").click()
    page.wait_for_url("**/breakeven**")
    expect(page.get_by_text("Break-even is relative").or_(page.get_by_text("accepted drafts per step")).first).to_be_visible()
    expect(page.get_by_role("combobox", name="Baseline")).to_have_value("from-scratch")


def test_compare_then_click_a_run_to_open_it(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/")
    expect(page.get_by_text("51.8 tok/s").first).to_be_visible()
    chart = page.locator(".js-plotly-plot").first
    expect(chart).to_be_visible()
    expect(page.get_by_text("k2-drafter: 1 run(s) stopped early — run 4 (1963 of 2048 tokens")).to_be_visible()
    screenshot(page, "compare")
    k2_runs = chart.locator(".scatterlayer .trace").nth(2).locator("path.point")
    expect(k2_runs).to_have_count(5)
    box = k2_runs.nth(3).bounding_box()  # run 4, the short one
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_url("**/run?**")
    assert query(page)["run"] == ["4"] and query(page)["baseline"] == ["baseline"]
    expect(page.get_by_role("heading", name="Run drill-down")).to_be_visible()
    expect(page.get_by_text("Run 4 stopped at 1963 of 2048 tokens")).to_be_visible()
    expect(page.get_by_text("Raw lines 130–164")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    screenshot(page, "run")
    page.get_by_role("link", name="← Compare").click()  # back, with the selection carried; the old click is forgotten
    expect(page.get_by_role("heading", name="Compare variants")).to_be_visible()
    page.wait_for_timeout(1500)
    assert urlparse(page.url).path == "/" and query(page)["baseline"] == ["baseline"]


def test_break_even_reads_the_k2_story(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/breakeven")
    k2 = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=re.compile(r"^k2-drafter: r = 2\.50"))
    expect(k2).to_contain_text("1.50 accepted drafts per step")
    expect(k2).to_contain_text("cycle ≈ 30.51 ms")  # ms at its one declared precision (2 decimals)
    expect(page.get_by_text("one decode step ≈ 12.20 ms")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    # Phase 0's sweeps drawn as paths in the plane, with the legend naming their batch range (issue #21)
    expect(page.get_by_text("Dotted paths").first).to_be_visible()
    expect(page.locator(".js-plotly-plot .legend").first).to_contain_text("k2-drafter: sweep, batch size 1 → 32")
    screenshot(page, "breakeven")


def test_breakdown_shows_the_k2_verify_step(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/breakdown")
    k2 = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=re.compile(r"k2-drafter's cycle"))
    expect(k2).to_contain_text("verify takes 30.00 ms, 97% of it communication")
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    expect(page.get_by_text("verify: communication (all-reduce)").first).to_be_visible()
    screenshot(page, "breakdown")


def test_create_a_decision_and_find_it_in_the_ledger(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/decisions?phase=phase-0")  # the K2 probe's phase: its sessions become the evidence
    expect(page.get_by_role("heading", name="Custom all-reduce for verify")).to_be_visible()  # the demo's newest (phase 2)
    page.get_by_label("Title").fill(DECISION_TITLE)
    page.locator('[data-testid="stRadio"]').filter(has_text="Verdict").get_by_text("rejected", exact=True).click()
    page.get_by_label("Note (Markdown)").fill("Made by the browser test. <b>not bold</b>")
    page.get_by_role("button", name="Record decision").click()
    expect(page.get_by_text(f"Recorded “{DECISION_TITLE}”")).to_be_visible()
    expect(page.get_by_role("heading", name=DECISION_TITLE)).to_be_visible()
    note = page.locator('[data-testid="stMarkdownContainer"] p').filter(has_text="Made by the browser test.")
    expect(note).to_contain_text("<b>not bold</b>")  # user HTML is shown as text, never rendered
    expect(note.locator("b")).to_have_count(0)
    expect(page.get_by_role("textbox", name="Title")).to_have_value("")  # the form is cleared for the next decision
    assert "decision" in query(page)
    screenshot(page, "decisions")


def test_download_the_decision_markdown(base_url: str, page: Page, tmp_path: Path) -> None:
    page.goto(f"{base_url}/decisions")
    page.get_by_role("combobox", name="Decision").click()
    page.get_by_role("option", name=re.compile(DECISION_TITLE)).click()
    expect(page.get_by_role("heading", name=DECISION_TITLE)).to_be_visible()
    with page.expect_download() as download:
        page.get_by_role("button", name="Markdown summary").click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# {DECISION_TITLE}: rejected")
    assert "51.8" in text and "82" in text and "**Verdict: rejected**" in text
    assert "/decisions?decision=" in text


def test_download_the_html_report_and_open_it_offline(base_url: str, page: Page, tmp_path: Path) -> None:
    page.goto(f"{base_url}/decisions")
    expect(page.get_by_role("heading", name=DECISION_TITLE)).to_be_visible()  # the URL-less visit opens the newest
    with page.expect_download() as download:
        page.get_by_role("button", name="HTML report").click()
    path = tmp_path / "report.html"
    download.value.save_as(path)
    page.goto(path.as_uri())  # no server involved: plotly.js is inside the file
    expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible()
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    expect(page.get_by_role("heading", name=DECISION_TITLE)).to_be_visible()
    expect(page.get_by_text("&lt;b&gt;", exact=False)).to_have_count(0)
    screenshot(page, "decision-report")


def test_upload_a_file_then_see_two_phases(base_url: str, page: Page, store_copy: Path) -> None:
    page.goto(f"{base_url}/ingest")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        str(FIXTURES / "dashboard" / "phase-1-two-variants.bench.json"))
    page.get_by_role("button", name="Ingest 1 file(s)").click()
    expect(page.get_by_text("phase-1-two-variants.bench.json: bench_json, 8 rows loaded")).to_be_visible()
    screenshot(page, "ingest")
    assert "phase-1" in data.phases(store_copy)
    page.goto(f"{base_url}/phases")
    expect(page.get_by_role("heading", name="Trends across phases")).to_be_visible()
    expect(page.get_by_text("Only one phase")).to_have_count(0)
    expect(page.locator(".js-plotly-plot")).to_have_count(2)
    screenshot(page, "phases")


# --- every page at both widths: nothing cut off, nothing overlapping (issue #18) ------------------------

PAGES = ["compare", "breakeven", "breakdown", "run", "phases", "decisions", "ingest"]


def look_at_every_page(page: Page, base_url: str, prefix: str, extra: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """Every page (and each tab of a page with tabs) at each of ``WIDTHS``, opened once and resized: screenshots
    ``PREFIX-PAGE-WIDTH.png``, the problems seen. Pages are opened from the sidebar, as a person moves between
    them; ``extra`` views by URL."""
    page.goto(f"{base_url}/")
    problems: list[str] = []
    for name in PAGES:
        if name != "compare":
            open_from_sidebar(page, name)
        problems += look_at_with_tabs(page, f"{prefix}-{name}")
    for name, path in extra:
        page.goto(f"{base_url}/{path}")
        problems += look_at_with_tabs(page, f"{prefix}-{name}")
    return problems


def open_from_sidebar(page: Page, path: str) -> None:
    """Click the sidebar's link to ``path``: Streamlit switches pages in the same session, without a reload."""
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
    page.wait_for_url(lambda url: urlparse(url).path == f"/{path}")


def look_at_with_tabs(page: Page, stem: str) -> list[str]:
    """The page and each of its other tabs, each at every width, shot as ``STEM-WIDTH.png`` and
    ``STEM-tabN-WIDTH.png``."""
    problems = look_at_each_width(page, stem)
    for index, tab in enumerate(page.get_by_role("tab").all()[1:], 1):
        tab.click()
        problems += look_at_each_width(page, f"{stem}-tab{index}")
    return problems


def test_every_page_fits_at_both_widths(kept_tabs: Callable[..., Page], base_url: str, store_copy: Path) -> None:
    k2 = data.sessions(store_copy, ["phase-0"], ["k2-drafter"])["session_id"].iloc[0]
    with reused(kept_tabs(WIDTHS[0])) as page:
        problems = look_at_every_page(page, base_url, "demo", (("run-k2-run4", f"run?session={k2}&run=4"),))
    assert problems == [], "\n".join(problems)
