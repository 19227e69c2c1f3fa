"""Helpers for browser tests: a real `specdash serve` and Debian's Chromium driven by Playwright.

The fixtures ``browser`` (one Chromium per test module), ``kept_tabs`` and ``page`` (a tab at 1280 px) reach
every test module through tests/conftest.py; playwright is imported only when they run, so a machine without it
can still import this module (the test modules skip themselves without Chromium).

A test loads its page once and looks at it at each of ``WIDTHS`` by resizing that tab (``at_each_width``,
``look_at_each_width``): on the demo store a load costs ~1.9 core-seconds (Chromium and the server's script
run), a resize ~0.2.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ingest.storage.location import StoreRef

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
WIDTHS = (1280, 1920)  # every page is looked at at both; a tab starts at the first
TAB_HEIGHT = 1000
TAB_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, for one test module (never a downloaded browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def kept_tabs(browser: Any) -> Iterator[Callable[..., Any]]:
    """``kept_tabs(width, **context_options)``: one tab per width and options for the whole module, reused test
    after test. A fresh browser context per test made Chromium parse and compile Streamlit's bundle anew each
    time, about 3 core-seconds a test; a kept tab reloads it from its warm cache."""
    kept: dict[tuple[int, str], Any] = {}

    def kept_tab(width: int, **context_options: Any) -> Any:
        key = (width, repr(sorted(context_options.items())))
        if key not in kept:
            context = browser.new_context(viewport={"width": width, "height": TAB_HEIGHT}, **context_options)
            kept[key] = context.new_page()
            kept[key].set_default_timeout(TAB_TIMEOUT_MS)
        return kept[key]

    yield kept_tab
    for opened in kept.values():
        opened.context.close()


@contextmanager
def reused(opened: Any) -> Iterator[Any]:
    """A kept tab for one test; left on a blank page afterwards, so that test's Streamlit session ends with it,
    and at the size it had before (a test that resized it leaves the next one its first width)."""
    viewport = dict(opened.viewport_size)
    try:
        yield opened
    finally:
        opened.goto("about:blank")
        opened.set_viewport_size(viewport)


@pytest.fixture
def page(kept_tabs: Callable[..., Any]) -> Iterator[Any]:
    """A tab at the first of ``WIDTHS``; a test looks at its page at each width with ``at_each_width``."""
    with reused(kept_tabs(WIDTHS[0])) as opened:
        yield opened


# Every chart on show drawn anew, as a page loaded at this width draws it. Plotly re-lays a chart out at its
# new width by itself, but leaves its legend where it was: a horizontal legend that takes three rows at 1280 px
# and one at 1920 px stayed 57 px too high after the resize, over the x axis's tick labels (plotly.js as
# bundled by Streamlit 1.67; a full redraw puts it where a fresh load does).
REDRAW_CHARTS = """() => Promise.all([...document.querySelectorAll('.js-plotly-plot')]
  .filter(plot => plot.getBoundingClientRect().width > 0).map(plot => window.Plotly.redraw(plot)))"""


def resize(page, width: int) -> None:  # type: ignore[no-untyped-def]
    """Make the loaded page ``width`` px wide, as a person drags a window, wait until it has re-laid out
    (``settle``: plotly redraws its charts at their new width a moment after the resize), then draw its
    charts anew so that they look as on a page loaded at ``width``."""
    if page.viewport_size["width"] != width:
        page.set_viewport_size({"width": width, "height": page.viewport_size["height"]})
        settle(page)
        page.evaluate(REDRAW_CHARTS)
    settle(page)


def at_each_width(page) -> Iterator[int]:  # type: ignore[no-untyped-def]
    """The loaded page resized to each of ``WIDTHS`` in turn (settled in each); yields the width. A resized
    page lays out as one loaded at that width (the app never learns the viewport: Streamlit's columns,
    sidebar, tables and plotly's charts follow it in the browser; the charts are drawn anew), for much less
    than a load."""
    for width in WIDTHS:
        resize(page, width)
        yield width


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(db: StoreRef, *extra: str, env: dict[str, str] | None = None, startup_s: float = 60.0) -> Iterator[str]:
    """`specdash serve` (with ``extra`` arguments) on a free port, of a store file or a lake; yields its base URL and
    stops it afterwards.

    The server's output goes to ``serve-PORT.log`` beside the store (a lake's: beside its data folder).
    """
    port = free_port()
    log_path = db.parent / f"serve-{port}.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "dashboard", "serve", "--db", str(db), "--port", str(port), *extra],
            stdout=log, stderr=subprocess.STDOUT, env=env or {**os.environ, "SPECDASH_DB": str(db)},
            cwd=Path(__file__).resolve().parents[1],
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + startup_s
            while not app_is_up(base):
                if process.poll() is not None:
                    raise RuntimeError(f"specdash serve exited: {log_path.read_text()}")
                if time.monotonic() > deadline:
                    raise RuntimeError("specdash serve did not come up in time")
                time.sleep(0.3)
            yield base
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a server: asked first, killed after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextmanager
def served_copy(db: Path, folder: Path) -> Iterator[str]:
    """`specdash serve` on a copy of ``db`` in ``folder``, so a test that writes (a decision) leaves ``db`` as it was."""
    copy = folder / db.name
    shutil.copy(db, copy)
    with served(copy) as url:
        yield url


def app_is_up(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


MAX_SHOT_HEIGHT = 7000


def screenshot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """The whole page: Streamlit scrolls inside its main element, so the viewport is stretched to its height first."""
    ARTIFACTS.mkdir(exist_ok=True)
    viewport = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], [data-testid=\"stMainBlockContainer\"]')]"
        ".map(e => e.scrollHeight), document.body.scrollHeight)"
    )
    page.set_viewport_size({"width": viewport["width"], "height": min(int(height) + 80, MAX_SHOT_HEIGHT)})
    page.wait_for_timeout(300)  # let plotly re-layout at the new size
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(viewport)


# --- what a person would see wrong on a page --------------------------------------------------------

# The app is done: Streamlit says its script is not running and the connection is up, nothing is stale or
# still a skeleton, no status widget, and every plotly chart has drawn its SVG (the bench's READY, without
# its metric conditions) at its frame's width. A resized chart's frame follows the window at once, its
# drawing ~0.1 s later (plotly re-lays out asynchronously); a chart in a closed tab (0 px wide) is not drawn.
SETTLED = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED') return false;
  if (document.querySelector('[data-testid="stStatusWidget"], [data-stale="true"], [data-testid="stSkeleton"]')) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  if (![...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(chart => chart.querySelector('.main-svg'))) return false;
  return [...document.querySelectorAll('.js-plotly-plot')].every(plot => {
    const width = plot.getBoundingClientRect().width;
    return width === 0 || (plot._fullLayout && Math.abs(plot._fullLayout.width - width) < 1.5);
  });
}"""


def settle(page, quiet_ms: int = 300, timeout_ms: int = 60_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app is done (``SETTLED``), and still is ``quiet_ms`` later: a rerun a widget or a
    fragment starts right after the first run would otherwise be missed."""
    page.wait_for_function(SETTLED, timeout=timeout_ms, polling=50)
    page.wait_for_timeout(quiet_ms)
    page.wait_for_function(SETTLED, timeout=timeout_ms, polling=50)


def open_section(page, heading: str) -> None:  # type: ignore[no-untyped-def]
    """Open the collapsed expander whose heading holds ``heading`` (its content runs only once open) and settle."""
    page.locator('[data-testid="stExpander"] summary').filter(has_text=heading).first.click()
    settle(page)


def open_expanders(page) -> None:  # type: ignore[no-untyped-def]
    """Open every collapsed expander, so the tables inside them are checked and shot too."""
    closed = [s for s in page.locator('[data-testid="stExpander"] summary').all() if not s.evaluate("s => s.parentElement.open")]
    for summary in closed:
        summary.click()
    if closed:
        page.wait_for_timeout(150)
        settle(page)


def table_cells(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The text of every table cell on the page: Streamlit draws tables on a canvas, and keeps each cell's text
    in the grid's accessible cells (their innerText is empty)."""
    return list(page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"] [role="gridcell"]')].map(c => c.textContent)"""))


def overflowing_tables(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Visible tables wider than their frame (cut off at the right: a horizontal scroll hides columns)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].flatMap((table, index) => {
            const scroller = table.querySelector('.dvn-scroller');
            if (!scroller || scroller.clientWidth === 0) return [];  // in a closed tab
            const over = scroller.scrollWidth - scroller.clientWidth;
            return over > 1 ? [`table ${index}: ${over}px wider than its ${scroller.clientWidth}px frame`] : [];
        })"""
    )


def colliding_labels(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Chart texts that overlap one another (annotations, titles, legend entries, tick labels of different
    axes) or stick out of their chart, as the browser laid them out."""
    return page.evaluate(
        """() => {
            const found = [];
            const box = el => el.getBoundingClientRect();
            const hits = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
            document.querySelectorAll('.js-plotly-plot').forEach((plot, index) => {
                if (plot.getBoundingClientRect().width === 0) return;  // in a closed tab
                const frame = plot.querySelector('.main-svg').getBoundingClientRect();
                const texts = [];
                const add = (selector, group) => plot.querySelectorAll(selector).forEach(el => {
                    const text = (el.textContent || '').trim();
                    const r = box(el);
                    if (text && r.width > 0) texts.push({group, text, r});
                });
                add('.infolayer .annotation-text-g', 'annotation');
                add('.infolayer .gtitle', 'title');
                add('.infolayer .g-xtitle, .infolayer [class^="g-x"][class$="title"]', 'axis title');
                add('.infolayer .g-ytitle, .infolayer [class^="g-y"][class$="title"]', 'axis title');
                add('.legend .traces', 'legend');
                plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach((axis, n) => {
                    axis.querySelectorAll('.xtick text, .ytick text').forEach(el => {
                        const r = box(el);
                        if ((el.textContent || '').trim() && r.width > 0) texts.push({group: `ticks ${n}`, text: el.textContent.trim(), r});
                    });
                });
                for (const t of texts) {
                    if (t.r.left < frame.left - 1 || t.r.right > frame.right + 1 || t.r.top < frame.top - 1 || t.r.bottom > frame.bottom + 1)
                        found.push(`chart ${index}: "${t.text}" (${t.group}) sticks out of the chart`);
                }
                for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
                    const a = texts[i], b = texts[j];
                    if (a.group === b.group && a.group !== 'annotation') continue;  // plotly spaces its own ticks and legend
                    if (hits(a.r, b.r)) found.push(`chart ${index}: "${a.text}" (${a.group}) overlaps "${b.text}" (${b.group})`);
                }
            });
            return found;
        }"""
    )


def look_at(page, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Settle the page, open its expanders, shoot it whole; what is wrong with its tables and charts."""
    settle(page)
    open_expanders(page)
    page.mouse.move(0, 0)  # no hover: plotly's toolbar and tooltips stay hidden
    page.wait_for_timeout(300)
    problems = [f"{name}: {p}" for p in overflowing_tables(page) + colliding_labels(page)]
    screenshot(page, name)
    return problems


def look_at_each_width(page, stem: str) -> list[str]:  # type: ignore[no-untyped-def]
    """``look_at`` the loaded page at each of ``WIDTHS`` (``STEM-WIDTH.png``); the problems found at any."""
    problems: list[str] = []
    for width in at_each_width(page):
        problems += look_at(page, f"{stem}-{width}")
    return problems
