"""The Drafters page in Debian's Chromium against `specdash serve` on a copy of the demo store, at 1280 and
1920 px (loaded once, then resized): the seed's finding shows, no table is cut off, no chart label overlaps
another, no cell reads None. Screenshots: tests/artifacts/drafters-<width>.png."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, look_at_each_width, served, served_copy, table_cells

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it)", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

expect.set_options(timeout=30_000)


@pytest.fixture(scope="module")
def base_url(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_copy(demo_db, tmp_path_factory.mktemp("drafters-browser")) as url:
        yield url






def test_the_drafters_page_shows_the_seeds_finding(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/drafters")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_role("heading", name="Drafters", exact=True)).to_be_visible()
    metrics = page.locator('[data-testid="stMetric"]')
    expect(metrics.first).to_contain_text("Draft ids that differ31,748")
    expect(metrics.nth(1)).to_contain_text("252")
    expect(metrics.nth(2)).to_contain_text("29,689")
    expect(metrics.nth(3)).to_contain_text("0.865")
    expect(main.get_by_text("differ at 31,748 of 32,000 draft ids and agree at 252").first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    problems = look_at_each_width(page, "drafters")
    assert not problems, problems
    text = main.inner_text()
    assert "None" not in text.split() and "nan" not in text.split()
    cells = table_cells(page)  # a table's innerText is empty (drawn on a canvas): its accessible cells hold the text
    assert cells and "None" not in cells and "nan" not in cells


@pytest.fixture(scope="module")
def corpus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store of the shared corpus only (the every-file store, plus the corpus' real drafter configs)."""
    from tests.conftest import CORPUS
    from tests.stores import ingested_store
    from tests.test_every_file import corpus_paths

    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    configs = sorted((CORPUS / "new" / "drafter_config").glob("*.config.json"))
    with served(ingested_store("corpus-drafter-configs", [*corpus_paths(), *configs], tmp_path_factory)) as url:
        yield url


@pytest.mark.corpus
def test_the_drafters_page_on_a_corpus_only_store(corpus_url: str, page: Page) -> None:
    page.goto(f"{corpus_url}/drafters")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Comparing needs two drafters with a d2t mapping")).to_be_visible()
    problems = look_at_each_width(page, "drafters-corpus")
    assert not problems, problems
    text = main.inner_text()
    assert "None" not in text.split() and "nan" not in text.split()
