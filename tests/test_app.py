"""Every page runs without an exception on the demo store, an empty store and a one-variant store."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest.pipeline import ingest_paths
from tests.conftest import ROOT

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ["views/compare.py", "views/run.py"]


def run_page(page: str, db: Path, monkeypatch: pytest.MonkeyPatch, query: dict[str, str] | None = None) -> AppTest:
    monkeypatch.setenv("SPECDASH_DB", str(db))
    app = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.run()
    if page != PAGES[0]:
        app.switch_page(page)
        app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    return app


def texts(app: AppTest) -> str:
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption] + [i.value for i in app.info]
    parts += [w.value for w in app.warning] + [f"{m.label} {m.value} {m.delta}" for m in app.metric]
    return "\n".join(str(p) for p in parts)


def test_compare_tells_the_phase0_story(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch)
    metrics = {m.label: (m.value, m.delta) for m in app.metric}
    assert metrics["baseline (baseline)"][0] == "82.0 tok/s"
    assert metrics["from-scratch"][0] == "60.0 tok/s"
    assert metrics["k2-drafter"][0] == "51.8 tok/s"
    assert "slower" in metrics["k2-drafter"][1]
    assert app.selectbox(key="w_baseline").value == "baseline"
    shown = texts(app)
    assert "k2-drafter run 4 stopped early: 1963 of 2048" in shown
    assert "Demo data" in shown
    table = app.dataframe[0].value.set_index("variant")
    assert table.loc["k2-drafter", "mean of runs (tok/s)"] == pytest.approx(51.88)
    assert table.loc["k2-drafter", "Σtok/Σtime (tok/s)"] == pytest.approx(51.78)
    assert table.loc["k2-drafter", "tokens/step"] == pytest.approx(1.58)
    assert table.loc["k2-drafter", "accepted drafts/step"] == pytest.approx(0.58)
    assert table.loc["k2-drafter", "verdict"] == "slower"


def test_compare_reads_its_state_from_the_url(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch,
                   {"variant": ["from-scratch", "k2-drafter"], "baseline": "from-scratch", "metric": "mean_of_runs"})
    assert app.multiselect(key="w_variants").value == ["from-scratch", "k2-drafter"]
    assert app.selectbox(key="w_baseline").value == "from-scratch"
    assert {m.label for m in app.metric} == {"from-scratch (baseline)", "k2-drafter"}
    assert [m.value for m in app.metric if m.label == "k2-drafter"] == ["51.9 tok/s"]


def test_run_page_shows_a_session(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/run.py", demo_db, monkeypatch)
    runs = app.dataframe[0].value
    assert len(runs) == 7 and runs["is_warmup"].sum() == 2
    assert "Run 4 stopped at 1963 of 2048 tokens" in texts(app)


@pytest.mark.parametrize("page", PAGES)
def test_empty_store_shows_how_to_ingest(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page(page, tmp_path / "missing.duckdb", monkeypatch)
    assert "specdash ingest" in texts(app)


@pytest.mark.parametrize("page", PAGES)
def test_one_variant_without_baseline_gives_guidance(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "one.duckdb"
    ingest_paths([ROOT / "data" / "demo" / "phase-0" / "k2-drafter"], db, phase="phase-0", variant="k2-drafter")
    app = run_page(page, db, monkeypatch)
    if page == "views/compare.py":
        assert "No baseline in this selection" in texts(app)
        assert [m.value for m in app.metric] == ["51.8 tok/s"]
