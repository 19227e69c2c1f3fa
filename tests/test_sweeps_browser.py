"""The Sweeps page in real headless Chromium (Debian's /usr/bin/chromium), on the demo store and on a corpus-only store:
screenshots at 1280 and 1920 px (each page loaded once, then resized) to tests/artifacts/sweeps-*.png, and no table cut
off, no overlapping chart labels."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from tests.browser import CHROMIUM, look_at_each_width, served, served_copy
from tests.conftest import CORPUS

pytestmark = [pytest.mark.browser]

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402


@pytest.fixture(scope="module")
def demo_url(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_copy(demo_db, tmp_path_factory.mktemp("sweeps-browser")) as url:
        yield url


@pytest.fixture(scope="module")
def corpus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    db = tmp_path_factory.mktemp("sweeps-corpus-browser") / "corpus.duckdb"
    ingest_paths(sorted(p for p in (CORPUS / "new" / "specforge_bench").iterdir() if p.suffix != ".source"), db)
    with served(db) as url:
        yield url




def check(page: Page, name: str, expected: str) -> None:
    """The page as it opens, then each tab below the headline opened in turn (only the open tab runs), each at
    every width, shot as NAME-WIDTH.png and NAME-tabN-WIDTH.png."""
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text(expected).first).to_be_visible(timeout=60_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)  # drawn after the text: 5 s was flaky on a busy machine
    problems = look_at_each_width(page, name)
    bodies = [main.inner_text()]
    for index, tab in enumerate(main.get_by_role("tab").all()[1:], 1):
        tab.click()
        problems += look_at_each_width(page, f"{name}-tab{index}")
        bodies.append(main.inner_text())
    for body in bodies:
        assert "Traceback" not in body and "None" not in body and "nan" not in body.split()
    assert problems == [], "\n".join(problems)


def test_demo_sweep_page(demo_url: str, page: Page) -> None:
    page.goto(f"{demo_url}/sweeps")
    check(page, "sweeps-demo", "crossover at batch size")


def test_demo_concurrency_sweep(demo_url: str, page: Page) -> None:
    page.goto(f"{demo_url}/sweeps?sweep=phase-1+%C2%B7+sglang.bench_serving+%C2%B7+random")
    check(page, "sweeps-demo-concurrency", "crossover at max concurrency")


@pytest.mark.corpus
def test_corpus_kimi_k2_sweep(corpus_url: str, page: Page) -> None:
    page.goto(f"{corpus_url}/sweeps?sweep=Kimi-K2-Instruct+%C2%B7+gsm8k")
    check(page, "sweeps-corpus-kimi-k2", "one batch size measured")
