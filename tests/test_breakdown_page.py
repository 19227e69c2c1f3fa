"""The Breakdown page: the K2 drafter's verify step as in the story, and an honest estimate without a trace."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dashboard import charts
from dashboard.analysis import compare, data, summary
from ingest.pipeline import ingest_paths
from tests.conftest import ROOT
from tests.test_app import run_page, texts

DEMO = ROOT / "data" / "demo" / "phase-0"


def test_demo_composition_retells_the_verify_bottleneck(demo_db: Path) -> None:
    composition = data.cycle_composition(demo_db, ["phase-0"], [])
    headlines = compare.cycle_headlines(composition).set_index("variant")
    k2 = headlines.loc["k2-drafter"]
    assert k2["cycle_kind"] == "speculative"
    assert k2["cycle_ms"] == pytest.approx(30.5, abs=0.1)
    assert k2["verify_ms"] == pytest.approx(30.0, abs=0.1)
    assert k2["verify_comm_share"] == pytest.approx(0.97, abs=0.005)
    assert k2["ranks"] == 2 and k2["cycles"] == 20
    baseline = headlines.loc["baseline"]
    assert baseline["cycle_kind"] == "decode" and baseline["cycle_ms"] == pytest.approx(12.2, abs=0.1)
    assert pd.isna(baseline["verify_ms"])
    parts = composition[composition["variant"] == "k2-drafter"].set_index("component")["mean_ms"]
    assert parts.sum() == pytest.approx(k2["cycle_ms"])  # the stacked parts add up to the cycle


def test_headline_sentence() -> None:
    row = pd.Series({"variant": "k2", "cycle_kind": "speculative", "cycle_ms": 30.5, "communication_ms": 29.1,
                     "communication_share": 29.1 / 30.5, "verify_ms": 30.0, "verify_comm_share": 0.97})
    assert summary.breakdown_sentence(row) == (  # ms at the declared 2 decimals (issue #18)
        "Communication is **95%** of **k2**'s cycle (29.10 of 30.50 ms); verify takes 30.00 ms, **97%** of it communication."
    )


def test_cycle_stack_draws_measured_parts_and_hatched_estimates() -> None:
    composition = pd.DataFrame({"variant": ["a", "a"], "component": ["verify communication", "draft"], "mean_ms": [29.0, 1.0]})
    estimates = pd.DataFrame({"variant": ["b"], "cycle_ms": [33.0]})
    fig = charts.cycle_stack(composition, estimates)
    names = [trace.name for trace in fig.data]
    assert names == ["draft", "verify: communication (all-reduce)", "whole cycle, estimated (cycle model, no trace)"]
    assert list(fig.data[1].x) == [29.0, None] and list(fig.data[2].x) == [None, 33.0]
    assert fig.data[2].marker.pattern.shape == "/"


def test_page_on_the_demo_store(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/breakdown.py", demo_db, monkeypatch)
    shown = texts(app)
    # ms at its one declared precision (definitions.MS: 2 decimals), in sentences as in the table
    assert "Communication is **95%** of **k2-drafter**'s cycle (29.08 of 30.50 ms)" in shown
    assert "verify takes 30.00 ms, **97%** of it communication" in shown
    table = app.dataframe[0].value.set_index("part")  # a row per part as the chart's legend names it, a column per variant
    assert table.loc["whole cycle (decode step for a baseline)", "k2-drafter (ms)"] == pytest.approx(30.50, abs=0.005)
    assert pd.isna(table.loc["verify: communication (all-reduce)", "baseline (ms)"])  # shown as "—" (the placeholder)
    assert app.dataframe[0].proto.placeholder == "—"


def test_without_a_trace_the_cycle_is_an_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "no-traces.duckdb"
    for variant in ("baseline", "k2-drafter"):
        files = [DEMO / variant / "bench.json", DEMO / variant / "server.log"]
        ingest_paths(files, db, phase="phase-0", variant=variant)
    app = run_page("views/breakdown.py", db, monkeypatch)
    shown = texts(app)
    assert "**k2-drafter**: no profiler trace — estimated cycle **30.51 ms**" in shown
    assert "Ingest a profiler trace" in shown


def test_a_user_timed_cycle_file_feeds_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    timing = tmp_path / "cycles.jsonl"
    rows = [{"cycle": c, "phase": phase, "ms": ms, "rank": 0}
            for c in range(3) for phase, ms in (("draft", 0.5), ("verify", 29.0), ("draft_extend", 0.4))]
    timing.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    db = tmp_path / "timed.duckdb"
    ingest_paths([DEMO / "k2-drafter" / "bench.json", timing], db, phase="phase-0", variant="k2-drafter")
    composition = data.cycle_composition(db, [], [])
    assert composition["mean_ms"].sum() == pytest.approx(29.9)
