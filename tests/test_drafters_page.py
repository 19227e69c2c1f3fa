"""The Drafters page (AppTest): on the demo store it shows the seed's finding; on a store of the real
corpus it lists the drafter configs, unchecked; on a store without drafters it says how to add one."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis import definitions
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS, FIXTURES
from tests.stores import ingested_store
from tests.test_app import run_page, texts
from tests.test_every_file import corpus_paths

PAGE = "views/drafters.py"


def shown_cells(app: AppTest) -> list[str]:
    """The text cells (an empty number is drawn as the table's placeholder "—": tests/test_app_every_page.py checks it)."""
    return [cell for table in app.dataframe for cell in table.value.to_numpy().ravel() if isinstance(cell, str)]


def test_the_demo_store_shows_the_seeds_finding(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page(PAGE, demo_db, monkeypatch)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics == {"Draft ids that differ": "31,748", "Draft ids that agree": "252",
                       "Target tokens shared": "29,689", "Jaccard (shared ÷ union)": "0.865"}
    shown = texts(app)
    assert "differ at 31,748 of 32,000 draft ids and agree at 252" in shown
    assert "One token added to a sorted mapping shifts every later position" in shown
    assert [s.value for s in app.selectbox] == ["Kimi-K2-Instruct-eagle3"] * 2 + ["kimi-k25-reference-mapping"]  # a drafter vs its reference
    drafters, coverage, comparison = (t.value for t in app.dataframe)
    assert sorted(drafters["drafter"]) == ["Kimi-K2-Instruct-eagle3", "kimi-k25-reference-mapping"]
    assert set(drafters["status"]) == {"ok"} and set(drafters["target vocab"]) == {163_840}
    assert set(drafters["draft vocab"]) == {32_000} and drafters["checkpoint size"].between(480, 490).all()  # KB, as shown
    checks = [line.split("**")[1] for line in shown.splitlines() if line.startswith("- **")]
    assert checks == ["mapping form", "in range", "injective", "t2d consistent", "identity", "config sizes"]
    shown_as = definitions.COLUMNS["coverage"].quantity.printf()  # the values arrive ×100, the column prints "%.1f%%"
    assert shown_as == "%,.1f%%" and dict(zip(coverage["drafter"], coverage["coverage"].round(1), strict=True)) == {
        "Kimi-K2-Instruct-eagle3": 77.6, "kimi-k25-reference-mapping": 98.0}
    assert comparison["comparison value"].tolist()[:3] == ["31,748 of 32,000", "252 of 32,000", "29,689"]
    assert app.get("plotly_chart")
    assert not [c for c in shown_cells(app) if c in ("None", "nan", "NaN", "<NA>")]


def test_the_fixture_drafters_show_their_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "fixtures.duckdb"
    ingest_paths([FIXTURES / "drafters"], db)
    app = run_page(PAGE, db, monkeypatch)
    table = app.dataframe[0].value.set_index("drafter")
    assert table.loc["absolute-ids", "status"] == "WRONG" and table.loc["identity", "status"] == "SUSPICIOUS"
    assert pd.isna(table.loc["full-vocab", "draft vocab"])  # shown as "—": its help says none set = full vocabulary
    assert table.loc["out-of-range", "worst finding"].startswith("in range: 3 of 256 draft ids map outside")
    app.selectbox[0].set_value("t2d-inconsistent").run()
    assert ("- **t2d consistent** · WRONG: t2d marks 256 target ids, d2t maps to 256; 248 in both. "
            "*What to do:* regenerate d2t and t2d together") in texts(app)
    assert not [c for c in shown_cells(app) if c in ("None", "nan", "NaN", "<NA>")]


@pytest.mark.corpus
def test_a_store_of_the_corpus_lists_its_drafter_configs_unchecked(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    configs = sorted((CORPUS / "new" / "drafter_config").glob("*.config.json"))
    db = ingested_store("corpus-drafter-configs", [*corpus_paths(), *configs], tmp_path_factory)
    app = run_page(PAGE, db, monkeypatch)
    table = app.dataframe[0].value
    assert sorted(table["drafter"]) == sorted(p.name.removesuffix(".config.json") for p in configs)
    assert set(table["status"]) == {"not checked"}
    assert sorted(table["checkpoint size"]) == pytest.approx(sorted(p.stat().st_size / 1000 for p in configs))  # the config.json alone
    assert set(table["worst finding"]) == {"weights: no weights: mapping not checked (config.json alone)"}
    assert "Comparing needs two drafters with a d2t mapping" in texts(app)
    assert not [c for c in shown_cells(app) if c in ("None", "nan", "NaN", "<NA>")]


def test_a_store_without_drafters_says_how_to_add_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "logs.duckdb"
    ingest_paths([FIXTURES / "logs" / "sglang-eagle3-basic.log"], db)
    app = run_page(PAGE, db, monkeypatch)
    assert "but no drafter checkpoint" in texts(app) and "specdash ingest path/to/drafter/" in texts(app)


def compare_note_script() -> None:
    """What Compare runs (the lines the report asks to add to views/compare.py), on the demo's Phase 0 configs."""
    from dashboard import drafter_ui, queries

    configs = queries.configs_by_variant(["phase-0"], ["baseline", "from-scratch", "k2-drafter"])
    drafter_ui.variant_drafters(configs)


def test_compare_shows_the_verdict_of_a_variants_drafter(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDASH_DB", str(demo_db))
    app = AppTest.from_function(compare_note_script, default_timeout=60).run()
    assert not app.exception, [e.value for e in app.exception]
    assert [c.value for c in app.caption] == [
        ":material/key: k2-drafter: drafter Kimi-K2-Instruct-eagle3 — all checks pass; mapping differs from "
        "kimi-k25-reference-mapping at 31,748 of 32,000 draft ids; the vocabularies share 29,689 target tokens "
        "(Jaccard 0.865) — see the [Drafters](drafters) page."]
