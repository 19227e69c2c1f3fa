"""The Acceptance page through Streamlit's AppTest: on the demo store and on a store of corpus files only."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis.definitions import ACCEPT
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS
from tests.stores import ingested_store
from tests.test_app import every_tab, open_sections, run_page, texts
from tests.test_app_every_page import table_defects
from tests.test_every_file import corpus_paths

PAGE = "views/acceptance.py"
ACCEPTANCE_DIRS = ("new/vllm_request_metrics", "new/sglang_meta_info", "new/aiperf", "new/prometheus", "new/specforge_bench")


def acceptance_corpus_paths() -> list[Path]:
    """The corpus files the other every-file tests ingest, plus the acceptance formats' samples."""
    extra = sorted(p for sub in ACCEPTANCE_DIRS for p in (CORPUS / sub).glob("*")
                   if p.is_file() and not p.name.endswith(".source"))
    return [*corpus_paths(), *extra]


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return ingested_store("corpus-acceptance", acceptance_corpus_paths(), tmp_path_factory)


def frames(app) -> list:  # type: ignore[no-untyped-def]
    return [df.value for df in app.dataframe]


def every_reading(app: AppTest) -> tuple[list[pd.DataFrame], str, list[str]]:
    """The tables and texts of every tab (a reading each), every closed section opened; and the tables' defects."""
    tables: list[pd.DataFrame] = []
    shown: list[str] = []
    defects: list[str] = []
    for tab, view in every_tab(open_sections(app)):
        tables += frames(view)
        shown.append(texts(view))
        defects += table_defects(view, f"acceptance {tab}")
    return tables, "\n".join(shown), defects


def test_demo_shows_the_k2_drafters_curve_the_steps_model_requests_and_datasets(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tables, text, defects = every_reading(run_page(PAGE, demo_db, monkeypatch))
    summary = tables[0]
    k2 = summary[summary["variant"] == "k2-drafter"].iloc[0]
    assert ACCEPT.number(k2["τ from positions"]) == "1.58"  # the K2 drafter's logged accept length comes out of its per-position rates
    assert k2["first below threshold"] == 1
    positions = tables[1]  # "Every position", under the summary
    assert [f"{v:.0f}" for v in positions[positions["variant"] == "k2-drafter"]["P(≥ k)"]] == ["46", "12"]
    assert "models best" in text and "assumed" in text and "measured" in text
    distribution = next(t for t in tables if "request spread" in t.columns)
    assert set(distribution["variant"]) == {"from-scratch", "k2-drafter", "k2-drafter-ft"}
    worst = next(t for t in tables if "request id" in t.columns and "accept length" in t.columns)
    assert worst["accept length"].iloc[0] <= worst["accept length"].iloc[-1] and pd.notna(worst["dataset"].iloc[0])
    matrix = next(t for t in tables if "Δ accept length" in t.columns)
    assert {"gsm8k", "humaneval", "mt-bench"} <= set(matrix["dataset"])
    assert "against **from-scratch**" in text
    assert defects == []  # labels, helps and formats from definitions.COLUMNS; no None cell


def test_the_threshold_moves_the_mark(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page(PAGE, demo_db, monkeypatch)
    app.slider(key="acceptance_threshold").set_value(0.3).run()
    summary = frames(app)[0].set_index("variant")["first below threshold"]
    assert summary["k2-drafter"] == 2 and pd.isna(summary["k2-drafter-ft"])  # shown as "—"
    assert "below 30% (the threshold above)" in texts(app)


def test_corpus_only_store_shows_every_kind_it_holds(corpus_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tables, text, defects = every_reading(run_page(PAGE, corpus_db, monkeypatch))
    sources = set(tables[0]["acceptance source"])
    assert {"vllm spec_decode.py summary", "per-request histograms"} <= sources  # no corpus log prints per-position rates
    assert any("request id" in t.columns for t in tables)
    matrix = next(t for t in tables if "Δ accept length" in t.columns)
    assert "mtbench" in set(matrix["dataset"])
    assert "Not like-for-like" in text
    assert defects == []


def test_empty_of_acceptance_data_says_what_to_ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "bench-only.duckdb"
    ingest_paths([Path(__file__).parent / "fixtures" / "bench" / "sglang-2024-07-old-keys.jsonl"], db)
    app = run_page(PAGE, db, monkeypatch)
    assert "SpecDecoding metrics" in texts(app) and not app.dataframe


def test_task_benchmarks_show_their_accept_length_per_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SpecForge's MMStar results, printed (issue #310) and as bench_eagle3.py's JSON (sglang PR #14063), on "Per dataset"."""
    fixtures = Path(__file__).parent / "fixtures"
    db = tmp_path / "tasks.duckdb"
    ingest_paths([fixtures / "bench" / "specforge-mmstar-evaluation-results-issue310.txt",
                  fixtures / "sweeps" / "sglang-pr14063-mmstar-bench-eagle3.json"], db)
    tables, _, defects = every_reading(run_page(PAGE, db, monkeypatch))
    matrix = next(t for t in tables if "Δ accept length" in t.columns)
    cells = {(row["dataset"], round(row["accept length"], 3), round(row["output throughput"], 3))
             for _, row in matrix.iterrows()}
    assert cells == {
        ("mmstar", 2.195, 147.304),  # "Average Accept length: 2.195", "Average Output throughput: 147.304 token/s"
        ("mmstar", 3.180, 198.133),  # "accept_length": 3.1803588290840414, "output_throughput": 198.132860357858
    }
    assert set(matrix["acceptance scope"]) == {"run"}  # both measured over the benchmark's own requests
    assert defects == []
