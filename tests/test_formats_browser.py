"""The formats of issue #31 in Debian's Chromium against `specdash serve`: a store of llama.cpp server logs (an
EAGLE-3 draft, an MTP draft, n-gram and MTP in one server), a completion's timings, Spec-Bench's method
leaderboard and an MTP depth sweep posted in llama.cpp PR #22673, each ingested in a call of its own, unlabelled but
for the MTP run log. Compare names each variant's method, Acceptance draws the EAGLE-3 variant's per-position rates
and lists the rate-only request apart, Sweeps draws the leaderboard's own speedups and the depth sweep against its
depth.
Each page is loaded once and looked at at 1280 and 1920 px: no table cut off, no chart label overlapping.
Screenshots: tests/artifacts/formats-<page>-<width>.png."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from ingest.pipeline import ingest_paths
from tests.browser import CHROMIUM, look_at_each_width, served, table_cells
from tests.conftest import FIXTURES

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

expect.set_options(timeout=30_000)

# (file, its --variant): the MTP run log prints no speculative type, so its team labels it as the server's
# draft-mtp lifetime, whose statistics name the type
FILES = [
    (FIXTURES / "llamacpp" / "server-2026-06-eagle3-per-position.log", None),
    (FIXTURES / "llamacpp" / "server-2026-05-pid-prefix-ngram-mod-and-draft-mtp.log", None),
    (FIXTURES / "llamacpp" / "server-2026-05-elapsed-prefix-multiline-mtp.log", "draft-mtp"),
    (FIXTURES / "llamacpp" / "completion-timings-pr12603.json", None),
    (FIXTURES / "tables" / "spec-bench-leaderboard.md", None),
    (FIXTURES / "tables" / "llamacpp-mtp-n-max-sweep.md", None),
]
LEADERBOARD = "Leaderboard on 3090 · Overall"
DEPTH_SWEEP = "llamacpp-mtp-n-max-sweep · table 1"  # no heading above the table: the file's name and its number


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("formats-browser") / "store.duckdb"
    # one call per file, as files arrive one by one
    failed = [report.summary() for path, variant in FILES for report in ingest_paths([path], db, variant=variant)
              if report.failed]
    assert not failed, failed
    with served(db) as url:
        yield url


def test_compare_names_each_llama_cpp_variants_method(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/?variant=draft-eagle3&variant=draft-mtp")
    main = page.locator('[data-testid="stMain"]')
    expect(page.locator('[data-testid="stMetric"]')).to_have_count(2)  # 111.5 and 6.9 tok/s
    assert all("tok/s" in text for text in page.locator('[data-testid="stMetric"]').all_inner_texts())
    problems = look_at_each_width(page, "formats-compare")
    assert not problems, problems
    cells = table_cells(page)
    assert {"EAGLE-3", "MTP"} <= set(cells) and "None" not in cells
    expect(main.get_by_text("Traceback")).to_have_count(0)


def test_acceptance_draws_the_eagle3_positions_and_lists_the_rate_only_request(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/acceptance")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_role("heading", name="Acceptance", exact=True)).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    problems = look_at_each_width(page, "formats-acceptance-positions")
    page.get_by_role("tab", name="Per request").click()
    expect(main.get_by_text("Requests with an acceptance rate only")).to_be_visible()
    problems += look_at_each_width(page, "formats-acceptance-requests")
    assert not problems, problems
    assert "None" not in table_cells(page)


def test_sweeps_draws_the_leaderboards_own_speedups(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/sweeps?sweep={quote_plus(LEADERBOARD)}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("file's own figures")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    problems = look_at_each_width(page, "formats-sweeps-leaderboard")
    assert not problems, problems
    cells = table_cells(page)
    assert "EAGLE2" in cells and "None" not in cells


def test_sweeps_draws_the_mtp_depth_sweep_against_its_depth(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/sweeps?sweep={quote_plus(DEPTH_SWEEP)}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("draft depth: 1, 2, 3, 4")).to_be_visible()  # the file's --spec-draft-n-max values
    expect(main.get_by_text("A depth sweep")).to_be_visible()
    expect(main.get_by_text("pays at every draft depth measured")).to_be_visible()  # 1.14x still at depth 4
    # the speedup curve, and the one tab a depth sweep has (no τ for a (τ, r) path, no config grid), open
    expect(main.get_by_role("tab", name="Acceptance and tok/s per depth")).to_be_visible()
    expect(page.locator(".js-plotly-plot")).to_have_count(2)
    problems = look_at_each_width(page, "formats-sweeps-mtp-depth")
    assert not problems, problems
    cells = table_cells(page)
    assert "None" not in cells and cells.count("MTP") == 4  # one row per depth, each of method MTP
    # a row per depth: variant, depth, method, tok/s, speedup, acceptance rate (%) — the grid's cells hold the values
    # at full precision (the canvas draws them at the column's decimals: 29.4 tok/s, 1.28x, 82%)
    rows = [cells[i:i + 6] for i in range(0, len(cells), 6)]
    assert [(row[1], row[2], row[3], row[5]) for row in rows] == [  # the file's | n | tk\s | accept_rate |
        ("1", "MTP", "27.58", "88.35"), ("2", "MTP", "29.39", "81.5"), ("3", "MTP", "27.78", "71.27"),
        ("4", "MTP", "26.09", "64.21")]
    speedups = [float(row[4]) for row in rows]  # each ÷ the "n/a - no mtp" row's 22.92 tok/s
    assert speedups == pytest.approx([27.58 / 22.92, 29.39 / 22.92, 27.78 / 22.92, 26.09 / 22.92])
    expect(main.get_by_text("Traceback")).to_have_count(0)
