"""Benchmark 3 — the dashboard at scale, in Debian's Chromium through Playwright.

Two stores are served with ``tests/browser.py``'s ``served()`` (a real ``specdash
serve``): the demo store (``specdash demo``) and a generated store of 10,000
sessions, 50,000 runs and 10 million decode lines (``bench/gen_store.py``). On
each, in fresh browser sessions:

* **page loads**: the Compare page (``/``) and the Run page (``/run?session=ID``),
  *cold* (the store's change id bumped first, as a new ingest does, so every cached
  query runs again) and *warm* (a new browser session, caches filled);
* **control changes** on the Compare page (cold caches, like a user's first look
  at that selection): a variant added to a two-variant selection, then the
  baseline switched to it; timed from the click to updated charts.

"Fully rendered" (``READY`` below): Streamlit's app root says the script is not
running and the connection is up, no status widget, no stale element and no
skeleton is left, the page's heading is there and every plotly chart has drawn
its SVG, plus what the step must show (the added variant's metric, the new
baseline's label). A Streamlit exception on the page stops the benchmark with its
text instead of waiting for a timeout. The server's memory is the VmRSS (and
VmHWM, the peak) of its whole process tree, read from ``/proc``.
"""
from __future__ import annotations

import os
import shutil
import signal
import time
import urllib.parse
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from bench import gen_store
from bench.harness import (
    MB,
    SPECDASH,
    Row,
    Section,
    checked,
    log,
    median,
    run_child,
    scratch_dir,
    spread,
)
from ingest.errors import StoreBusy
from ingest.storage import store

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # reported by run(): the test extras are not installed
    PlaywrightTimeout = TimeoutError  # type: ignore[misc,assignment]

TARGET_SCALE_RATIO = 1.5
TARGET_SERVER_RSS_MB = 400.0
TIMEOUT_MS = 60_000  # a page slower than this fails its target by far; it is recorded as a timeout
VIEWPORT = {"width": 1400, "height": 1000}

# Returns true when rendered, an error text when Streamlit shows an exception, false while waiting.
READY = """
([mustShow, mustNotShow]) => {
  const error = document.querySelector('[data-testid="stException"]');
  if (error) return 'streamlit exception: ' + error.innerText.slice(0, 800);
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  if (charts.length === 0 || charts.some(chart => !chart.querySelector('.main-svg'))) return false;
  const labels = [...document.querySelectorAll('[data-testid="stMetricLabel"]')].map(e => e.innerText.trim());
  if (mustShow && !labels.some(text => text === mustShow)) return false;
  if (mustNotShow && labels.some(text => text === mustNotShow)) return false;
  return true;
}
"""


DIAGNOSIS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return `script ${app ? app.dataset.testScriptState : 'no app'}, status widget ${!!document.querySelector('[data-testid="stStatusWidget"]')}, `
    + `stale ${document.querySelectorAll('[data-stale="true"]').length}, skeletons ${document.querySelectorAll('[data-testid="stSkeleton"]').length}, `
    + `heading ${!!document.querySelector('[data-testid="stMain"] h1')}, charts drawn ${charts.filter(c => c.querySelector('.main-svg')).length}/${charts.length}, `
    + `metrics [${[...document.querySelectorAll('[data-testid="stMetricLabel"]')].map(e => e.innerText.trim()).join('; ')}]`;
}
"""


class RenderError(RuntimeError):
    """The page showed a Streamlit exception."""


class StepTimeout(RuntimeError):
    """The page did not finish rendering in time; the message says which condition was still unmet."""


@dataclass
class Store:
    label: str
    db: Path
    session_id: str
    first: str  # the two variants the control-change scenario starts with (first is the baseline)
    second: str
    to_add: list[str]  # variants added, one per repeat (different ones, so each is a first look)
    phases: list[str]  # every phase in the store, for the "everything selected" Compare load


@dataclass
class Timings:
    compare_cold: list[float] = field(default_factory=list)
    compare_warm: list[float] = field(default_factory=list)
    compare_all_cold: list[float] = field(default_factory=list)
    run_cold: list[float] = field(default_factory=list)
    run_warm: list[float] = field(default_factory=list)
    add_variant: list[float] = field(default_factory=list)
    switch_baseline: list[float] = field(default_factory=list)
    rss_mb: float = 0.0
    peak_rss_mb: float = 0.0
    timed_out: set[str] = field(default_factory=set)
    diagnoses: dict[str, str] = field(default_factory=dict)  # figure → what was unmet when it first timed out
    restarts: int = 0
    store_busy: int = 0
    default_query: str = ""  # what the Compare page selected by itself (its URL after the first load)


FIGURES = (
    ("compare_cold", "Compare page load, cold caches (s)"),
    ("compare_warm", "Compare page load, warm caches (s)"),
    ("compare_all_cold", "Compare, every phase selected, cold caches (s)"),
    ("run_cold", "Run page load, cold caches (s)"),
    ("run_warm", "Run page load, warm caches (s)"),
    ("add_variant", "Compare: add a variant → charts updated (s)"),
    ("switch_baseline", "Compare: switch the baseline → charts updated (s)"),
)


# --- the stores ----------------------------------------------------------------------------------

def demo_store(folder: Path) -> Store:
    db = folder / "demo.duckdb"
    checked(run_child([SPECDASH, "demo", "--db", db]), "specdash demo")
    with duckdb.connect(str(db), read_only=True) as con:
        session = con.execute("SELECT session_id FROM sessions WHERE variant = 'k2-drafter' ORDER BY started_at LIMIT 1").fetchone()
        # The variants of phase-0, where the demo's pages open (store_meta start_phase): the Variants box offers only these.
        variants = [row[0] for row in con.execute(
            "SELECT DISTINCT variant FROM sessions WHERE phase = 'phase-0' ORDER BY 1").fetchall()]
        phases = [row[0] for row in con.execute("SELECT DISTINCT phase FROM sessions WHERE phase IS NOT NULL ORDER BY 1").fetchall()]
    others = [v for v in variants if v not in ("baseline", "k2-drafter")]
    return Store("demo", db, session[0], "baseline", "k2-drafter", others, phases)


def scale_store(folder: Path, scale: float) -> tuple[Store, dict[str, int], float]:
    db = folder / "scale.duckdb"
    started = time.perf_counter()
    counts = gen_store.build(db, scale)
    built_s = time.perf_counter() - started
    with duckdb.connect(str(db), read_only=True) as con:
        sessions = con.execute(
            "SELECT session_id FROM sessions WHERE variant = 'k2-drafter' AND phase = 'phase-0' ORDER BY started_at"
        ).fetchall()
    others = [v for v in gen_store.VARIANTS if v not in ("baseline", "k2-drafter")]
    return Store("scale", db, sessions[len(sessions) // 2][0], "baseline", "k2-drafter", others, list(gen_store.PHASES)), counts, built_s


# --- the server's memory -------------------------------------------------------------------------

def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def tree(pid: int) -> list[int]:
    pids = [pid]
    for child in children(pid):
        pids += tree(child)
    return pids


def status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def server_pids(port: int) -> list[int]:
    """The `specdash serve` process this benchmark started on ``port`` and all its descendants."""
    # `specdash serve` execs Streamlit: the same pid then carries Streamlit's own `--server.port` flag.
    flags = (f"--port\x00{port}\x00", f"--server.port\x00{port}\x00")
    roots = [pid for pid in children(os.getpid()) if any(flag in cmdline(pid) + "\x00" for flag in flags)]
    return [p for root in roots for p in tree(root)]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:
        return ""


def server_memory(port: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB summed over the `specdash serve` process tree listening on ``port``."""
    pids = server_pids(port)
    return sum(status_kb(p, "VmRSS") for p in pids) / 1024, sum(status_kb(p, "VmHWM") for p in pids) / 1024


def end_leftovers(pids: list[int], port: int) -> None:
    """End what `served()` left running: terminating `specdash serve` does not stop its streamlit child.

    Only these pids (this benchmark's own server tree), and only while they still serve ``port``.
    """
    alive = [pid for pid in pids if f"{port}" in cmdline(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(f"{port}" in cmdline(pid) for pid in alive):
        time.sleep(0.2)
    for pid in alive:
        if f"{port}" in cmdline(pid):
            os.kill(pid, signal.SIGKILL)


# --- driving the browser -------------------------------------------------------------------------

def wait_ready(page: Page, must_show: str | None = None, must_not_show: str | None = None) -> None:
    try:
        handle = page.wait_for_function(READY, arg=[must_show, must_not_show], timeout=TIMEOUT_MS, polling=50)
    except PlaywrightTimeout as error:
        raise StepTimeout(f"{urllib.parse.urlsplit(page.url).path or '/'} after {TIMEOUT_MS / 1000:.0f} s: {diagnose(page)}") from error
    value = handle.json_value()
    if isinstance(value, str):
        raise RenderError(f"{page.url}: {value}")


def diagnose(page: Page) -> str:
    try:
        return str(page.evaluate(DIAGNOSIS))
    except Exception as error:  # a hung or closed page: say so rather than lose the timeout itself
        return f"no diagnosis ({type(error).__name__})"


def timed_load(context: BrowserContext, url: str, landed: list[str] | None = None) -> float:
    """A new tab (a new Streamlit session) opening ``url``; seconds until fully rendered.

    ``landed`` receives the page's URL once rendered (pages write their selection into it).
    """
    page = context.new_page()
    try:
        started = time.perf_counter()
        page.goto(url)
        wait_ready(page)
        seconds = time.perf_counter() - started
        if landed is not None:
            landed.append(page.url)
        return seconds
    finally:
        page.close()


def bump_change_id(db: Path) -> None:
    """What an ingest does to the dashboard's caches: a new change id, so every cached query misses."""
    with store.writer(db) as con:
        store.touch_last_change(con)


def compare_url(base: str, variants: list[str], baseline: str) -> str:
    query = urllib.parse.urlencode([*(("variant", v) for v in variants), ("baseline", baseline)])
    return f"{base}/?{query}"


def add_then_switch(context: BrowserContext, base: str, target: Store, added: str) -> tuple[float, float]:
    """Open Compare with two variants; time adding ``added``, then making it the baseline."""
    page = context.new_page()
    try:
        page.goto(compare_url(base, [target.first, target.second], target.first))
        wait_ready(page)
        variants_box = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text("Variants", exact=True))
        variants_box.locator("input").click()
        option = page.get_by_role("option", name=added, exact=True)
        option.wait_for()
        started = time.perf_counter()
        option.click()
        page.keyboard.press("Escape")
        wait_ready(page, must_show=added)
        added_s = time.perf_counter() - started
        baseline_box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Baseline", exact=True))
        baseline_box.click()
        choice = page.get_by_role("option", name=added, exact=True)
        choice.wait_for()
        started = time.perf_counter()
        choice.click()
        wait_ready(page, must_show=f"{added} (baseline)", must_not_show=f"{target.first} (baseline)")
        return added_s, time.perf_counter() - started
    finally:
        page.close()


class Server:
    """`specdash serve` on one store plus one browser profile, restartable on the same port.

    A page that never finishes leaves its queries running in the server; restarting
    (on the same port, so the browser's cached static files stay valid) keeps that
    from slowing the next measurement down.
    """

    def __init__(self, target: Store, playwright: Playwright) -> None:
        from tests import browser as helpers

        self.target = target
        self.helpers = helpers
        self.port = helpers.free_port()
        self.browser = playwright.chromium.launch(executable_path=helpers.CHROMIUM, args=helpers.CHROMIUM_ARGS, headless=True)
        # One browser profile per store, as one user's browser: static files (plotly.js) are cached after
        # the first contact; every measurement opens a new tab, which is a new Streamlit session.
        self.context = self.browser.new_context(viewport=VIEWPORT)
        self.stack: ExitStack | None = None
        self.base = ""
        self.peak_rss_mb = 0.0
        self.restarts = 0
        self.store_busy = 0  # times the store stayed locked by the server's reads for LOCK_WAIT_S

    def start(self, warm_up: bool = True) -> None:
        self.stack = ExitStack()
        original = self.helpers.free_port
        self.helpers.free_port = lambda: self.port  # served() picks its port with free_port(): keep ours
        try:
            self.base = self.stack.enter_context(self.helpers.served(self.target.db))
        finally:
            self.helpers.free_port = original
        if not warm_up:
            return
        for url in (self.compare_url(), self.run_url()):  # first contact: imports, start-up, browser cache; not measured
            try:
                timed_load(self.context, url)
            except StepTimeout:
                self.restart()  # leave no abandoned query behind
                return

    def bump_change_id(self) -> None:
        """What an ingest does to the dashboard's caches: a new change id, so every cached query misses.

        A server still busy with an abandoned query holds its read lock; restart it rather than wait.
        """
        try:
            bump_change_id(self.target.db)
        except StoreBusy:
            self.store_busy += 1
            self.restart()
            bump_change_id(self.target.db)

    def stop(self) -> None:
        self.peak_rss_mb = max(self.peak_rss_mb, server_memory(self.port)[1])
        pids = server_pids(self.port)
        if self.stack is not None:
            self.stack.close()
            self.stack = None
        end_leftovers(pids, self.port)

    def restart(self, warm_up: bool = False) -> None:
        """A fresh server on the same port; the browser keeps its cached static files, so no warm-up by default."""
        self.restarts += 1
        log(f"dashboard {self.target.label}: restarting the server (a step timed out or the store stayed locked)")
        self.stop()
        self.start(warm_up)

    def close(self) -> None:
        self.stop()
        self.browser.close()

    def compare_url(self) -> str:
        return f"{self.base}/"

    def compare_all_url(self) -> str:
        return f"{self.base}/?" + urllib.parse.urlencode([("phase", phase) for phase in self.target.phases])

    def run_url(self) -> str:
        return f"{self.base}/run?session={urllib.parse.quote(self.target.session_id)}"


def measure(target: Store, repeats: int) -> Timings:
    from playwright.sync_api import sync_playwright

    timings = Timings()
    landed: list[str] = []
    with sync_playwright() as playwright:
        server = Server(target, playwright)
        try:
            server.start()

            def attempt(figure: str, step: Callable[[], float | tuple[float, float]]) -> bool:
                """Run one timed step unless its figure already timed out; False when it times out now."""
                if figure in timings.timed_out:
                    return False
                for tries in (1, 2):  # a second chance on a fresh server: one stuck load is not yet a verdict
                    try:
                        seconds = step()
                        break
                    except (StepTimeout, PlaywrightTimeout) as error:  # PlaywrightTimeout: a control never appeared
                        log(f"dashboard {target.label}: {figure} timed out (try {tries}): {error}")
                        timings.diagnoses.setdefault(figure, str(error))
                        server.restart()
                else:
                    timings.timed_out.add(figure)
                    return False
                for name, value in zip(figure.split("+"), seconds if isinstance(seconds, tuple) else (seconds,)):
                    getattr(timings, name).append(value)
                return True

            for repeat in range(repeats):
                log(f"dashboard {target.label} {repeat + 1}/{repeats}")
                for page in ("compare", "run"):
                    server.bump_change_id()
                    url = server.compare_url() if page == "compare" else server.run_url()
                    if attempt(f"{page}_cold", lambda url=url: timed_load(server.context, url, landed)):
                        attempt(f"{page}_warm", lambda url=url: timed_load(server.context, url))
                server.bump_change_id()
                attempt("compare_all_cold", lambda: timed_load(server.context, server.compare_all_url()))
                server.bump_change_id()
                added = target.to_add[repeat % len(target.to_add)]
                attempt("add_variant+switch_baseline", lambda added=added: add_then_switch(server.context, server.base, target, added))
            timings.rss_mb, peak = server_memory(server.port)
            timings.peak_rss_mb = max(peak, server.peak_rss_mb)
            timings.restarts = server.restarts
            timings.store_busy = server.store_busy
        finally:
            server.close()
    for figure in list(timings.timed_out):
        timings.timed_out.update(figure.split("+"))
    compare_landings = [url for url in landed if urllib.parse.urlsplit(url).path in ("", "/", "/compare")]
    timings.default_query = describe_selection(urllib.parse.urlsplit(compare_landings[0]).query) if compare_landings else ""
    return timings


def describe_selection(query: str) -> str:
    """``phase=a&variant=x&variant=y&baseline=x`` → ``phase a · 2 variants · baseline x``."""
    values: dict[str, list[str]] = {}
    for key, value in urllib.parse.parse_qsl(query):
        values.setdefault(key, []).append(value)
    phases = values.get("phase", [])
    parts = [f"phase {', '.join(phases)}" if phases else "no phase filter", f"{len(values.get('variant', []))} variants"]
    parts += [f"{key} {', '.join(found)}" for key, found in values.items() if key not in ("phase", "variant")]
    return " · ".join(parts)


def shown(samples: list[float], timed_out: bool) -> tuple[str, str]:
    """(median, spread) of the samples, or the timeout when a run never finished."""
    if timed_out:
        done = f"; {len(samples)} finished before ({spread(samples)})" if samples else ""
        return f"> {TIMEOUT_MS / 1000:.0f} (timeout)", f"stopped after a timeout{done}"
    if not samples:
        return "not measured", "its cold load timed out"
    return f"{median(samples):.2f}", spread(samples)


def figure_row(label: str, small: list[float], large: list[float], small_timeout: bool, large_timeout: bool) -> Row:
    value, samples = shown(large, large_timeout)
    reference, reference_spread = shown(small, small_timeout)
    if large_timeout or small_timeout or not small or not large:
        ratio, met = "n/a", (False if large_timeout else None)
    else:
        ratio_value = median(large) / median(small)
        ratio, met = f"{ratio_value:.2f}×", ratio_value <= TARGET_SCALE_RATIO
    return Row(label, value, samples, f"{reference} demo ({reference_spread})", ratio, f"≤ {TARGET_SCALE_RATIO}× demo", met)


def run(scale: float, repeats: int) -> Section:
    chromium = Path("/usr/bin/chromium")
    section = Section("3. Dashboard at scale — Debian Chromium via Playwright, demo store vs generated store")
    if not chromium.exists():
        section.notes.append("Debian's chromium is not installed (`make browser` installs it): nothing measured")
        return section
    folder = scratch_dir("dashboard")
    demo = demo_store(folder)
    big, counts, built_s = scale_store(folder, scale)
    log(f"scale store: {counts} in {built_s:.0f} s, {big.db.stat().st_size / MB:,.0f} MB")
    small_t = measure(demo, repeats)
    big_t = measure(big, repeats)
    for key, label in FIGURES:
        section.rows.append(figure_row(label, getattr(small_t, key), getattr(big_t, key), key in small_t.timed_out, key in big_t.timed_out))
    section.rows.append(
        Row("Streamlit server peak RSS at scale (MB, VmHWM)", f"{big_t.peak_rss_mb:,.0f}", f"after the runs: {big_t.rss_mb:,.0f}",
            f"{small_t.peak_rss_mb:,.0f} demo (after: {small_t.rss_mb:,.0f})", f"{big_t.peak_rss_mb / small_t.peak_rss_mb:.2f}×",
            f"≤ {TARGET_SERVER_RSS_MB:.0f}", big_t.peak_rss_mb <= TARGET_SERVER_RSS_MB)
    )
    section.notes += [
        f"scale store: {counts['sessions']:,} sessions, {counts['bench_runs']:,} runs, {counts['decode_stats']:,} decode lines, "
        f"{counts['server_configs']:,} server configs, {counts['sources']:,} sources; {big.db.stat().st_size / MB:,.0f} MB, built in {built_s:.0f} s "
        "(`bench/gen_store.py`)",
        f"Compare (`/`) opens with the page's own default selection — at scale {big_t.default_query or '(unknown)'}; on the demo "
        f"{small_t.default_query or '(unknown)'}; \"every phase selected\" opens `/?phase=…` with all of them; the control changes start from "
        f"`?variant={big.first}&variant={big.second}&baseline={big.first}`, add one more variant (a different one each repeat), then make it the baseline",
        f"Run page: `/run?session=<a {big.second} session>`; cold = store change id bumped before the load, warm = new browser session after a cold load",
        "server RSS: VmHWM (peak) and VmRSS of the `specdash serve` process (it execs Streamlit) and any children, read from /proc after all the runs on that store (peak kept across restarts)",
        f"a step that does not finish within {TIMEOUT_MS / 1000:.0f} s is tried once more on a fresh server, then recorded as a timeout "
        f"and not repeated; the server is restarted after each timeout (restarts: demo {small_t.restarts}, scale {big_t.restarts}) so its abandoned queries do not slow the next step",
    ]
    for label, timings in (("demo", small_t), ("scale", big_t)):
        for figure, diagnosis in timings.diagnoses.items():
            section.notes.append(f"{label}, {figure.replace('+', ' + ')} timed out; unmet then: {diagnosis}")
    if small_t.store_busy or big_t.store_busy:
        section.notes.append(
            f"**the server's reads kept the store locked** for more than {store.LOCK_WAIT_S:.0f} s, so bumping the change id "
            f"(what an ingest does) failed with StoreBusy: demo {small_t.store_busy}×, scale {big_t.store_busy}× — an ingest "
            "during such a page load would have failed the same way"
        )
    shutil.rmtree(folder, ignore_errors=True)
    return section
