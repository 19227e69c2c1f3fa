"""The Sweeps page through AppTest: on the demo store, on a corpus-only store, and with no sweep at all."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis import sweeps
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS, FIXTURES
from tests.stores import ingested_store
from tests.test_app import every_tab
from tests.test_every_file import corpus_paths

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
PAGE = "views/sweeps.py"


def open_page(db: Path, monkeypatch: pytest.MonkeyPatch, query: dict[str, str] | None = None) -> AppTest:
    monkeypatch.setenv("SPECDASH_DB", str(db))
    app = AppTest.from_file(APP, default_timeout=90)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.switch_page(PAGE)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    return app


def text(app: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "subheader") for e in getattr(app, kind))


def table_problems(app: AppTest) -> list[str]:
    """Each table shows the labels, help and formats definitions.COLUMNS declares (the check every page gets in
    tests/test_app_every_page.py); no cell reads None/nan; gaps read "—"."""
    from tests.test_app_every_page import table_defects

    return table_defects(app, PAGE)


def every_tab_of(app: AppTest) -> tuple[str, list[str], list[str]]:
    """Each tab opened in turn (only the open one runs): every tab's text, the plotly charts drawn, table problems."""
    shown, charts, problems = [], [], []
    for tab, view in every_tab(app):
        shown.append(text(view))
        charts += [f"{tab}: {chart.proto.id}" for chart in view.get("plotly_chart")] if tab else []
        problems += table_problems(view)
    return "\n".join(shown), charts, problems


def test_demo_store_shows_both_drafters_the_crossover_and_the_grid(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_page(demo_db, monkeypatch)
    assert len(app.get("plotly_chart")) == 2  # speedup, and the first tab's: cause
    best = app.dataframe[0].value
    assert set(best["variant"]) == {"from-scratch", "k2-drafter"} and sorted(set(best["batch size"])) == [1, 2, 4, 8, 16, 32]
    # bench_speculative.py's lines name no method: each variant's server configs (EAGLE3) do
    assert list(best.columns[:3]) == ["variant", "batch size", "method"] and set(best["method"]) == {"EAGLE-3"}
    page, charts, problems = every_tab_of(app)
    assert "**from-scratch**: crossover at batch size **6.1** (range 5.2 – 7.4 from the spread)" in page
    assert "**k2-drafter**: pays at no batch size measured" in page
    assert "modelled" in page  # bench_speculative's speed is labelled as modelled
    assert len(charts) == 6  # the speedup on every tab, and the tab's own: cause, (τ, r) path, grid
    assert problems == []


def test_demo_store_phase1_concurrency_sweep(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page, _, problems = every_tab_of(open_page(demo_db, monkeypatch, {"sweep": "phase-1 · sglang.bench_serving · random"}))
    assert "**k2-drafter-ft**: crossover at max concurrency **8.9**" in page
    assert "estimated from tok/s and accept length" in page  # no step times in bench records
    assert problems == []


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    specforge = sorted(p for p in (CORPUS / "new" / "specforge_bench").iterdir() if p.suffix != ".source")
    return ingested_store("corpus-specforge", corpus_paths() + specforge, tmp_path_factory)


@pytest.mark.corpus
def test_corpus_only_store_shows_the_kimi_k2_specbundle_sweep(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_page(corpus_store, monkeypatch, {"sweep": "Kimi-K2-Instruct · gsm8k"})
    page = text(app)
    assert "**AQ-MedAI/Kimi-K2-Instruct-eagle3**: one batch size measured (8): speedup 1.61×" in page
    assert "specforge-specbundle-raw-data.json" in page  # the source is named
    assert every_tab_of(app)[2] == []


@pytest.mark.corpus
def test_corpus_only_store_opens_on_a_sweep_by_default(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_page(corpus_store, monkeypatch)
    assert app.selectbox[0].value in sweeps.sweep_overview(sweeps.points(corpus_store))["sweep"].tolist()
    assert len(app.get("plotly_chart")) >= 2 and every_tab_of(app)[2] == []


@pytest.mark.corpus
def test_corpus_issue_339_table_never_pays(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_page(corpus_store, monkeypatch, {"sweep": "specforge-issue-339-user-sweep-tables"})
    assert "**EAGLE3 combined**: pays at no batch size measured" in text(app)


def test_a_store_without_sweeps_says_what_to_ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "runs.duckdb"
    ingest_paths([FIXTURES / "sweeps" / "user-sweep-table.md"], db)  # a store with a sweep ...
    empty = tmp_path / "none.duckdb"
    run_table = tmp_path / "runs.md"
    run_table.write_text("| Run | Tokens | Time (s) | Throughput (tok/s) |\n|---|---|---|---|\n| 1 | 2048 | 40.5 | 50.6 |\n")
    ingest_paths([run_table], empty)  # ... and one with benchmark runs only
    app = open_page(empty, monkeypatch)
    [info] = [i.value for i in app.info]
    assert "No sweep in the store yet" in info and "bench_speculative.py" in info and "specdash ingest" in info
    app = open_page(db, monkeypatch)
    assert "**EAGLE3**: crossover at batch size **7.0**, between 1 (pays) and 8 (does not)" in text(app)


def test_a_leaderboard_is_a_sweep_per_task_drawn_with_its_own_speedups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spec-Bench's leaderboard (speedups and mean accepted tokens per method and task, batch size 1, no tok/s):
    one sweep per task, each method's speedup as the file prints it, said to be the file's own."""
    db = tmp_path / "store.duckdb"
    assert not [r for r in ingest_paths([FIXTURES / "tables" / "spec-bench-leaderboard.md"], db) if r.failed]
    names = set(sweeps.overview(db)["sweep"])
    assert {"Leaderboard on 3090 · Overall", "Leaderboard on 3090 · Translation"} <= names
    app = open_page(db, monkeypatch, {"sweep": "Leaderboard on 3090 · Overall"})
    page, charts, problems = every_tab_of(app)
    assert "file's own figures" in page and "No baseline in this sweep" not in page
    best = app.dataframe[0].value.set_index("variant")
    # read off the file's "Leaderboard on 3090" table: EAGLE2 2.19x overall, 4.35 mean accepted tokens; PLD 1.64x
    assert best.loc["EAGLE2", "sweep speedup"] == pytest.approx(2.19) and best.loc["EAGLE2", "sweep τ"] == pytest.approx(4.35)
    assert best.loc["PLD", "sweep speedup"] == pytest.approx(1.64) and best.loc["PLD", "method"] == "n-gram"
    assert problems == []


def test_a_table_without_a_batch_axis_lists_its_points_with_their_speedup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp's SPEED-Bench comparison: base and speculative tok/s per category, no batch size or concurrency."""
    db = tmp_path / "store.duckdb"
    assert not [r for r in ingest_paths([FIXTURES / "llamacpp" / "speed-bench-compare-constructed.txt"], db) if r.failed]
    app = open_page(db, monkeypatch, {"sweep": "SPEED-Bench"})
    assert "no curve to draw" in text(app) and "holds baseline points only" not in text(app)
    points = app.dataframe[0].value
    coding = points[(points["variant"] == "speculative") & (points["dataset"] == "coding")].iloc[0]
    assert coding["sweep speedup"] == pytest.approx(118.62 / 62.41)  # the file's spec ÷ base tok/s for coding
    assert points.loc[points["variant"] == "baseline", "reported speedup"].isna().all()
    assert table_problems(app) == []


def test_an_mtp_depth_sweep_is_drawn_against_its_depth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "depth.duckdb"
    assert not [r.summary() for r in ingest_paths([FIXTURES / "tables" / "llamacpp-mtp-n-max-sweep.md"], db) if r.failed]
    app = open_page(db, monkeypatch)
    shown, charts, problems = every_tab_of(app)
    # the speedup curve and the one tab's chart (acceptance and tok/s per depth): no (τ, r) path, no config grid
    assert problems == [] and len(charts) == 2 and all("per depth" in chart for chart in charts)
    assert "draft depth: 1, 2, 3, 4" in shown and "pays at every draft depth measured" in shown
    assert len(app.selectbox) == 1  # the sweep only: the depth is the config
    best = app.dataframe[0].value
    # | spec-draft-n-max | average tk\s | ... | aggregate_accept_rate | over the "n/a - no mtp" row's 22.92 tok/s
    assert best["draft depth"].tolist() == [1, 2, 3, 4] and set(best["method"]) == {"MTP"}
    speedup = json.loads(app.get("plotly_chart")[0].proto.spec)["layout"]["xaxis"]
    assert (speedup["type"], speedup["ticktext"]) == ("linear", ["1", "2", "3", "4"])  # depths step by one, not double
    assert best["sweep tok/s"].tolist() == [27.58, 29.39, 27.78, 26.09]
    assert best["sweep speedup"].tolist() == pytest.approx([27.58 / 22.92, 29.39 / 22.92, 27.78 / 22.92, 26.09 / 22.92])
