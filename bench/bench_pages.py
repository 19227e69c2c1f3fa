"""Benchmark 6 — every dashboard page against a minimal Streamlit page, on the demo store.

Two servers on the same demo store (``specdash demo``): the dashboard (``tests/browser.py``'s
``served()``, a real ``specdash serve``) and ``bench/minimal_page.py`` (one query, a title, a metric,
a dataframe, a plotly scatter) started with the Streamlit flags ``specdash serve`` uses; both with
the file watcher off (see NO_WATCHER). One Debian Chromium, one browser profile at 1280 × 900; every
load is a new tab, so a new Streamlit session.

Each page of ``dashboard/app.py`` and the minimal page is loaded once unmeasured first (imports,
static files, the server's query caches: the usual case is a user opening a page on a store that
has not changed since the server last read it). Then, ``repeats`` times, every page is loaded
followed by the minimal page, so the machine's noise falls on both alike. A load is timed from
``page.goto`` until fully rendered (``bench_dashboard.READY``: the script has stopped, nothing
stale, no skeleton or status widget, the heading and every plotly chart drawn). Per page: the median,
the median of the minimal-page loads interleaved with it, and their ratio; target ≤ 1.3×.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench import bench_dashboard
from bench.bench_dashboard import (
    TIMEOUT_MS,
    PlaywrightTimeout,
    RenderError,
    StepTimeout,
    diagnose,
)
from bench.harness import (
    BENCH,
    PYTHON,
    ROOT,
    Row,
    Section,
    log,
    median,
    scratch_dir,
    spread,
)

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, ViewportSize

TARGET_RATIO = 1.3
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
REFERENCE_APP = BENCH / "minimal_page.py"
# (title, path) of every page in dashboard/app.py's navigation; {session} is a demo session id.
PAGES: tuple[tuple[str, str], ...] = (
    ("Compare", "/"),
    ("Break-even", "/breakeven"),
    ("Sweeps", "/sweeps"),
    ("Drafters", "/drafters"),
    ("Breakdown", "/breakdown"),
    ("Acceptance", "/acceptance"),
    ("Run", "/run?session={session}"),
    ("Phases", "/phases"),
    ("Decisions", "/decisions"),
    ("Ingest", "/ingest"),
)
# The Streamlit options `specdash serve` passes (dashboard/cli.py, cmd_serve), given to the minimal
# page too so the two servers differ only in their script. Checked against that file by serve_flags_note().
SERVE_FLAGS = {
    "--server.headless": "true",
    "--browser.gatherUsageStats": "false",
    "--server.maxUploadSize": "200",
    "--client.toolbarMode": "viewer",
    "--server.disconnectedSessionTTL": "10",
}
SERVE_ENV = {"MALLOC_ARENA_MAX": "2"}  # cmd_serve's environment default, same reason: same server, other script
# Not from `specdash serve`, which leaves Streamlit's file watcher on: an edit to the checkout during a run
# would re-import the edited modules mid-measurement and leave a "File change · Rerun" prompt in the open tab,
# which READY (no status widget) never passes. Off in both servers, so both run the code they started with.
# What it costs a load with it on was not measurable: Compare + Run + Acceptance, alternated, 6 times each:
# medians 20.1 s on, 19.5 s off, spreads 16–22 and 17–25 s.
NO_WATCHER = {"STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none"}

# bench_dashboard.READY requires at least one chart, as every page it times draws one; the Ingest page
# draws none, so here "every chart drawn" may be zero charts (the heading and a stopped script still
# say the page's script has run).
CHART_GUARD = "charts.length === 0 || "
READY_ANY_CHARTS = bench_dashboard.READY.replace(CHART_GUARD, "")
# Only splits a load's time (see Load.script_s); whether the page is done is READY's call.
SCRIPT_STOPPED = "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"


@dataclass
class Load:
    seconds: float
    heading_s: float  # until the page's h1 showed: the session is up and the script has started
    script_s: float  # until the script first stopped after that: the server's part is done, the browser's may not be
    url: str  # where the page landed (pages write their selection into the URL)
    charts: int


@dataclass
class Samples:
    """One page's measured loads and the minimal-page loads interleaved with them."""

    title: str
    path: str
    loads: list[Load] = field(default_factory=list)
    references: list[Load] = field(default_factory=list)
    problem: str = ""  # why the page stopped being measured (timeout twice, a Streamlit exception)


# --- the servers ------------------------------------------------------------------------------------

@contextmanager
def dashboard_served(db: Path) -> Iterator[str]:
    """``specdash serve`` on ``db`` via tests/browser.py's served(), file watcher off; its whole process tree ended afterwards."""
    from tests import browser as helpers

    pids: list[int] = []
    with helpers.served(db, env={**os.environ, **NO_WATCHER, "SPECDASH_DB": str(db)}) as base:
        port = port_of(base)
        try:
            yield base
        finally:
            pids = bench_dashboard.server_pids(port)  # before served() stops it: afterwards they are no longer its children
    bench_dashboard.end_leftovers(pids, port)  # served() ends the process it started; this ends anything it left


@contextmanager
def reference_served(db: Path, folder: Path) -> Iterator[str]:
    """The minimal page served by Streamlit with `specdash serve`'s flags, file watcher off; stopped afterwards."""
    from tests import browser as helpers

    port = helpers.free_port()
    command = [str(PYTHON), "-m", "streamlit", "run", str(REFERENCE_APP), "--server.address", "127.0.0.1",
               "--server.port", str(port), *[part for flag in SERVE_FLAGS.items() for part in flag]]
    env = {**SERVE_ENV, **os.environ, **NO_WATCHER, "SPECDASH_DB": str(db)}
    base = f"http://127.0.0.1:{port}"
    with open(folder / f"reference-{port}.log", "w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            wait_until_up(process, base, folder / f"reference-{port}.log")
            yield base
        finally:
            helpers.stop(process)


def wait_until_up(process: subprocess.Popen[bytes], base: str, output: Path, startup_s: float = 60.0) -> None:
    from tests import browser as helpers

    deadline = time.monotonic() + startup_s
    while not helpers.app_is_up(base):
        if process.poll() is not None:
            raise RuntimeError(f"the minimal page's server exited: {output.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the minimal page's server did not come up in {startup_s:.0f} s")
        time.sleep(0.3)


def port_of(base: str) -> int:
    port = urllib.parse.urlsplit(base).port
    if port is None:
        raise RuntimeError(f"no port in {base}")
    return port


def serve_flags_note() -> str:
    """Say whether SERVE_FLAGS still are the Streamlit options dashboard/cli.py passes (a new one there would skew the comparison)."""
    source = (ROOT / "dashboard" / "cli.py").read_text()
    theirs = set(re.findall(r'"(--(?:server|browser|client|global|runner|theme)\.\w+)"', source)) - {"--server.address", "--server.port"}
    if theirs == set(SERVE_FLAGS):
        return "both servers get `specdash serve`'s Streamlit options: " + ", ".join(f"`{k} {v}`" for k, v in SERVE_FLAGS.items()) + ", MALLOC_ARENA_MAX=2"
    return f"**the minimal page's Streamlit options differ from `specdash serve`'s**: it has {sorted(theirs)}, this benchmark {sorted(SERVE_FLAGS)}"


# --- one load ---------------------------------------------------------------------------------------

def wait_rendered(page: Page, timeout_ms: float = TIMEOUT_MS) -> None:
    """bench_dashboard.wait_ready, with a page that draws no chart allowed."""
    try:
        handle = page.wait_for_function(READY_ANY_CHARTS, arg=[None, None], timeout=timeout_ms, polling=50)
    except PlaywrightTimeout as error:
        raise StepTimeout(f"{urllib.parse.urlsplit(page.url).path or '/'} after {TIMEOUT_MS / 1000:.0f} s: {diagnose(page)}") from error
    value = handle.json_value()
    if isinstance(value, str):
        raise RenderError(f"{page.url}: {value}")


def timed_load(context: BrowserContext, url: str) -> Load:
    """A new tab (a new Streamlit session) opening ``url``; seconds until its heading, until its script
    stopped, and until fully rendered, all within one TIMEOUT_MS. The intermediate waits only split the
    time; a timeout in them is left for wait_rendered to report with what is still missing."""
    page = context.new_page()
    try:
        started = time.perf_counter()

        def left_ms() -> float:
            return max(1.0, TIMEOUT_MS - (time.perf_counter() - started) * 1000)

        page.goto(url, timeout=TIMEOUT_MS)
        heading_s = seconds_until(started, lambda: page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=left_ms()))
        script_s = seconds_until(started, lambda: page.wait_for_function(SCRIPT_STOPPED, timeout=left_ms(), polling=50))
        wait_rendered(page, left_ms())
        seconds = time.perf_counter() - started
        charts = int(page.locator('[data-testid="stPlotlyChart"]').count())
        return Load(seconds, heading_s, script_s, page.url, charts)
    finally:
        page.close()


def seconds_until(started: float, wait: Callable[[], object]) -> float:
    try:
        wait()
    except PlaywrightTimeout:
        pass
    return time.perf_counter() - started


def load_twice(context: BrowserContext, url: str) -> Load:
    """One load, tried again once after a timeout (one stuck load on a shared machine is not yet a verdict)."""
    try:
        return timed_load(context, url)
    except StepTimeout as error:
        log(f"pages: {error}; trying once more")
        return timed_load(context, url)


# --- the run ----------------------------------------------------------------------------------------

def measure(context: BrowserContext, app: str, reference: str, session_id: str, repeats: int) -> list[Samples]:
    pages = [Samples(title, path) for title, path in PAGES]
    urls = {sample.path: app + sample.path.format(session=urllib.parse.quote(session_id)) for sample in pages}
    load_twice(context, reference + "/")  # first contact: Streamlit's start-up, plotly.js into the browser cache
    for sample in pages:
        warm_up(context, sample, urls[sample.path])
    for repeat in range(repeats):
        log(f"pages {repeat + 1}/{repeats}")
        for sample in pages:
            if sample.problem:
                continue
            try:
                sample.loads.append(load_twice(context, urls[sample.path]))
            except (StepTimeout, RenderError) as error:
                sample.problem = str(error)
                continue
            # The reference right after its page: the same moment's machine for both.
            sample.references.append(load_twice(context, reference + "/"))
    return pages


def warm_up(context: BrowserContext, sample: Samples, url: str) -> None:
    """The page's first load (its imports, its queries into the server's caches): not measured."""
    try:
        load_twice(context, url)
    except (StepTimeout, RenderError) as error:
        sample.problem = f"first load: {error}"


def page_row(sample: Samples) -> Row:
    figure = f"{sample.title} (`{sample.path.split('?')[0]}`) load, warm caches (s)"
    if not sample.loads or len(sample.references) < len(sample.loads):
        return Row(figure, "not measured", sample.problem[:300], "", "n/a", f"≤ {TARGET_RATIO}× minimal", False)
    page_s = median([load.seconds for load in sample.loads])
    reference_s = median([load.seconds for load in sample.references])
    ratio = page_s / reference_s
    samples = spread([load.seconds for load in sample.loads]) + (f"; then stopped: {sample.problem[:200]}" if sample.problem else "")
    return Row(figure, f"{page_s:.2f}", samples, f"{reference_s:.2f} minimal ({spread([load.seconds for load in sample.references])})",
               f"{ratio:.2f}×", f"≤ {TARGET_RATIO}× minimal", ratio <= TARGET_RATIO and not sample.problem)


def reference_row(pages: list[Samples]) -> Row:
    every = [load.seconds for sample in pages for load in sample.references]
    return Row("Minimal page (reference), every interleaved load (s)", f"{median(every):.2f}", spread(every), f"{len(every)} loads")


def split_note(pages: list[Samples]) -> str:
    """Where each page's time goes: until its heading (session up, script started), until its script stopped
    (the server's part), until fully rendered (the browser drawing what the script sent, charts above all)."""
    parts = [f"{sample.title} {milestones(sample.loads)}" for sample in pages if sample.loads]
    references = [load for sample in pages for load in sample.references]
    if references:
        parts.append(f"minimal {milestones(references)}")
    return "median seconds until the heading showed → the script stopped → fully rendered: " + "; ".join(parts)


def milestones(loads: list[Load]) -> str:
    return " → ".join(f"{median(values):.2f}" for values in (
        [load.heading_s for load in loads], [load.script_s for load in loads], [load.seconds for load in loads]))


def landing_note(pages: list[Samples]) -> str:
    """What each page opened with (its own default selection, written into the URL) and how many charts it drew."""
    parts = []
    for sample in pages:
        if sample.loads:
            landed = urllib.parse.urlsplit(sample.loads[-1].url)
            parts.append(f"{sample.title} `{landed.path}{'?' + urllib.parse.unquote_plus(landed.query) if landed.query else ''}` "
                         f"({sample.loads[-1].charts} chart{'' if sample.loads[-1].charts == 1 else 's'})")
    return "pages opened at (their own default selection) and charts drawn: " + "; ".join(parts)


def run(scale: float, repeats: int) -> Section:
    section = Section("6. Page speed — every dashboard page vs a minimal Streamlit page, demo store, Chromium at 1280 px")
    if not Path("/usr/bin/chromium").exists():
        section.notes.append("Debian's chromium is not installed (`make browser` installs it): nothing measured")
        return section
    if CHART_GUARD not in bench_dashboard.READY:
        raise RuntimeError("bench_dashboard.READY changed: update READY_ANY_CHARTS's chart guard")
    from playwright.sync_api import sync_playwright

    from tests import browser as helpers

    folder = scratch_dir("pages")
    demo = bench_dashboard.demo_store(folder)
    load_before = os.getloadavg()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=helpers.CHROMIUM, args=helpers.CHROMIUM_ARGS, headless=True)
        try:
            # One profile for both servers, as one user's browser: static files are cached after the warm-up.
            context = browser.new_context(viewport=VIEWPORT)
            with dashboard_served(demo.db) as app, reference_served(demo.db, folder) as reference:
                pages = measure(context, app, reference, demo.session_id, repeats)
        finally:
            browser.close()
    section.rows += [page_row(sample) for sample in pages]
    section.rows.append(reference_row(pages))
    section.notes += notes(pages, demo.session_id, scale, load_before)
    shutil.rmtree(folder, ignore_errors=True)
    return section


def notes(pages: list[Samples], session_id: str, scale: float, load_before: tuple[float, float, float]) -> list[str]:
    found = [
        "store: the demo (`specdash demo`), read-only by both servers; `--scale` does not apply (it is the demo's size)"
        + ("" if scale == 1 else f", so scale {scale:g} changed nothing here"),
        "reference: `bench/minimal_page.py` — one uncached query (measured runs joined to sessions: variant, tok/s), "
        "`st.title`, one `st.metric`, one `st.dataframe`, one `st.plotly_chart` scatter; `layout=\"wide\"` as the dashboard",
        serve_flags_note(),
        "unlike `specdash serve`, both run with Streamlit's file watcher off (STREAMLIT_SERVER_FILE_WATCHER_TYPE=none): an edit to the "
        "checkout during the run would re-import modules mid-measurement and leave a \"File change\" prompt that never lets a page count "
        "as rendered; with it on, loads were not measurably slower (Compare + Run + Acceptance alternated 6×: medians 20.1 s on, 19.5 s off)",
        f"Debian Chromium (Playwright), viewport {VIEWPORT['width']}×{VIEWPORT['height']}, one browser profile; every load a new tab "
        "(a new Streamlit session), timed from `page.goto` until fully rendered (bench_dashboard's READY: script not running, no "
        "status widget/stale element/skeleton, the heading and every plotly chart's SVG; a page without charts may be ready)",
        "warm caches: every page and the minimal page loaded once unmeasured first; then per repeat each page followed by a "
        "minimal-page load; a page's ratio is against the minimal loads interleaved with it",
        f"Run: `/run?session={session_id}` (a k2-drafter session, as bench_dashboard's Run figure; Compare's links carry a session id too)",
        landing_note(pages),
        split_note(pages),
        f"a load that does not finish within {TIMEOUT_MS / 1000:.0f} s is tried once more; a second timeout or a Streamlit exception "
        "stops that page's measurement (shown in its row)",
        f"load average (1 min / 15 min) before this benchmark {load_before[0]:.1f} / {load_before[2]:.1f}, after it "
        f"{os.getloadavg()[0]:.1f} / {os.getloadavg()[2]:.1f} ({os.cpu_count()} CPUs)",
    ]
    slowest = max((sample for sample in pages if sample.loads), key=lambda s: median([load.seconds for load in s.loads]), default=None)
    if slowest is not None:
        found.append(f"slowest page: {slowest.title}, {median([load.seconds for load in slowest.loads]):.2f} s")
    return found
