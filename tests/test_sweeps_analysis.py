"""Where speculation pays (dashboard/analysis/sweeps.py): speedup against the baseline at the same batch, the
interpolated crossover with its range, the config grid; on hand-made points, the demo store and the corpus."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from dashboard.analysis import sweeps
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS, FIXTURES


def frame(points: list[tuple[str, bool, int, float]], **extra: object) -> pd.DataFrame:
    """(variant, is_baseline, batch, tok/s) points of one sweep; config (3, 1, 4) for the speculative ones."""
    rows = [{"sweep": "s", "model": "m", "dataset": "d", "variant": v, "is_baseline": b, "batch_size": x,
             "concurrency": None, "request_rate": None, "steps": None if b else 3, "topk": None if b else 1,
             "num_draft_tokens": None if b else 4, "accept_length": 1.0 if b else 2.0, "step_time_ms": None,
             "throughput": t, "throughput_kind": "measured wall-clock", "simulated": False, "tp_size": None,
             "source_id": "a", **extra} for v, b, x, t in points]
    return pd.DataFrame(rows)


def test_crossing_interpolates_in_log2_batch() -> None:
    # 1.2 at batch 4, 0.8 at batch 16: halfway in log2 -> batch 8
    assert sweeps.crossing([1, 4, 16], [1.5, 1.2, 0.8]) == pytest.approx(8.0)
    # 1.1 at 2, 0.7 at 8: a quarter of the way from log2 2 = 1 to 3 -> 2^1.5
    assert sweeps.crossing([2, 8], [1.1, 0.7]) == pytest.approx(2**1.5)
    assert sweeps.crossing([1, 2], [0.9, 0.8]) is None
    assert sweeps.crossing([1, 2, 4], [1.0, 0.5, 0.4]) == pytest.approx(1.0)  # exactly 1 still pays


def test_speedup_uses_the_baseline_at_the_same_batch_only() -> None:
    points = frame([("b", True, 1, 100.0), ("b", True, 4, 300.0), ("d", False, 1, 150.0), ("d", False, 4, 270.0),
                    ("d", False, 16, 900.0)])
    spec = sweeps.with_speedup(points, "batch_size")
    by_batch = dict(zip(spec["batch_size"], spec["speedup"], strict=True))
    assert by_batch[1] == pytest.approx(1.5) and by_batch[4] == pytest.approx(0.9)
    assert math.isnan(by_batch[16])  # no baseline at 16: no speedup borrowed from another batch
    curve = sweeps.curves(spec, "batch_size")
    [found] = sweeps.crossovers(curve, "batch_size")
    # 1.5 at 1, 0.9 at 4: log2 x = 0 + 0.5/0.6 * 2
    assert found.status == "crosses" and found.at == pytest.approx(2 ** (2 * 0.5 / 0.6))
    assert (found.last_paying, found.first_losing) == (1.0, 4.0) and found.low is None  # no spread, no range


def test_repeated_points_give_the_crossover_a_range() -> None:
    points = frame([("b", True, 1, 100.0), ("b", True, 1, 100.0), ("b", True, 4, 100.0), ("b", True, 4, 100.0),
                    ("d", False, 1, 125.0), ("d", False, 1, 115.0), ("d", False, 4, 85.0), ("d", False, 4, 95.0)])
    curve = sweeps.curves(sweeps.with_speedup(points, "batch_size"), "batch_size")
    sd = curve.set_index("batch_size")["speedup_sd"]
    assert sd[1] == pytest.approx(pd.Series([125.0, 115.0]).std() / 100)  # the baseline has no spread here
    [found] = sweeps.crossovers(curve, "batch_size")
    assert found.at == pytest.approx(2 ** (2 * 0.2 / 0.3))
    expected_low = 2 ** (2 * (1.2 - sd[1] - 1) / ((1.2 - sd[1]) - (0.9 - sd[4])))
    expected_high = 2 ** (2 * (1.2 + sd[1] - 1) / ((1.2 + sd[1]) - (0.9 + sd[4])))
    assert found.low == pytest.approx(expected_low) and found.high == pytest.approx(expected_high)
    assert found.low < found.at < found.high


def test_statuses_without_a_crossing() -> None:
    pays = frame([("b", True, 1, 100.0), ("b", True, 2, 100.0), ("d", False, 1, 120.0), ("d", False, 2, 110.0)])
    never = frame([("b", True, 1, 100.0), ("b", True, 2, 100.0), ("d", False, 1, 80.0), ("d", False, 2, 70.0)])
    lone = frame([("b", True, 8, 100.0), ("d", False, 8, 160.0)])
    for points, status in ((pays, "pays at every point"), (never, "pays at no point"), (lone, "one point")):
        curve = sweeps.curves(sweeps.with_speedup(points, "batch_size"), "batch_size")
        assert [c.status for c in sweeps.crossovers(curve, "batch_size")] == [status]


def test_like_for_like_notes() -> None:
    mixed = frame([("b", True, 1, 100.0), ("d", False, 1, 120.0)])
    mixed.loc[1, "model"] = "other"
    mixed.loc[1, "simulated"] = True
    notes = " ".join(sweeps.like_for_like(mixed))
    assert "mixes models" in notes and "simulated acceptance" in notes
    assert sweeps.like_for_like(frame([("b", True, 1, 100.0), ("d", False, 1, 120.0)])) == []


def test_the_demo_sweeps_cross_where_the_data_says(demo_db: Path) -> None:
    points = sweeps.points(demo_db)
    phase0 = points[points["sweep"] == "phase-0 · bench_speculative.py"]
    spec = sweeps.with_speedup(phase0, "batch_size")
    # the seed's single-stream point: 82 vs 51.8 (K2 drafter's Phase 0 config) and 60 (from-scratch's)
    at1 = spec[spec["batch_size"] == 1].set_index(["variant", "config"])
    assert round(at1.loc[("k2-drafter", "steps 2 · topk 1 · draft 3"), "base_throughput"]) == 82
    assert at1.loc[("k2-drafter", "steps 2 · topk 1 · draft 3"), "throughput"] == pytest.approx(51.8, abs=0.3)
    assert at1.loc[("from-scratch", "steps 3 · topk 1 · draft 4"), "throughput"] == pytest.approx(60.0, abs=0.5)
    # the K2 drafter's wrong d2t caps its accept length whatever the config (a second candidate is shifted too):
    # 1.41 – 1.72 over the whole grid, its best config at batch 1 (2, 2, 3) only 1.63 (52.0 tok/s, 0.63×)
    k2 = spec[spec["variant"] == "k2-drafter"]
    assert k2["tau"].min() == pytest.approx(1.41) and k2["tau"].max() == pytest.approx(1.718)
    best1 = sweeps.curves(spec, "batch_size").set_index(["variant", "batch_size"]).loc[("k2-drafter", 1)]
    assert best1["config"] == "steps 2 · topk 2 · draft 3" and best1["tau"] == pytest.approx(1.633, abs=1e-3)
    assert round(best1["speedup"], 2) == 0.63  # both runs: 52.0 tok/s against 82.2
    found = {c.variant: c for c in sweeps.crossovers(sweeps.curves(spec, "batch_size"), "batch_size")}
    assert found["k2-drafter"].status == "pays at no point"
    cross = found["from-scratch"]
    assert cross.status == "crosses" and (cross.last_paying, cross.first_losing) == (4.0, 8.0)
    assert 5 < cross.low < cross.at < cross.high < 8 and round(cross.at, 1) == 6.1
    # Phase 1's bench_serving records at concurrency 1, 4, 16 form a sweep of their own
    phase1 = points[points["sweep"] == "phase-1 · sglang.bench_serving · random"]
    assert sweeps.x_axis(phase1) == "concurrency"
    curve = sweeps.curves(sweeps.with_speedup(phase1, "concurrency"), "concurrency")
    [ft] = sweeps.crossovers(curve, "concurrency")
    assert ft.variant == "k2-drafter-ft" and (ft.last_paying, ft.first_losing) == (4.0, 16.0) and round(ft.at, 1) == 8.9


def test_the_config_grid_marks_acceptance_and_step_time(demo_db: Path) -> None:
    points = sweeps.points(demo_db)
    spec = sweeps.with_speedup(points[points["sweep"] == "phase-0 · bench_speculative.py"], "batch_size")
    cells = sweeps.grid(spec, "batch_size", 1, "from-scratch")
    assert len(cells) == 14 and set(cells["column"]) == {"2", "3", "4"}
    best = cells.loc[cells["speedup"].idxmax()]
    assert (best["row"], best["column"]) == ("steps 3 · topk 2", "4") and best["cycle_from"].startswith("modelled")


def test_the_corpus_kimi_k2_specbundle_sweep(corpus_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "k.duckdb"
    ingest_paths([CORPUS / "new" / "specforge_bench" / "specforge-specbundle-raw-data.json"], db)
    points = sweeps.points(db)
    kimi = points[points["sweep"] == "Kimi-K2-Instruct · gsm8k"]
    curve = sweeps.curves(sweeps.with_speedup(kimi, "batch_size"), "batch_size")
    [row] = curve.to_dict("records")
    assert row["config"] == "steps 7 · topk 1 · draft 8" and row["speedup"] == pytest.approx(1.610, abs=1e-3)
    assert row["cycle_from"].startswith("estimated")  # no step time in the file: the cycle model
    assert [c.status for c in sweeps.crossovers(curve, "batch_size")] == ["one point"]


def test_fixture_sweep_crosses_between_4_and_16(tmp_path: Path) -> None:
    db = tmp_path / "f.duckdb"
    ingest_paths([FIXTURES / "sweeps" / "bench-speculative-output.jsonl"], db)
    points = sweeps.points(db)
    spec = sweeps.with_speedup(points, "batch_size")
    curve = sweeps.curves(spec, "batch_size")
    [cross] = sweeps.crossovers(curve, "batch_size")
    s4 = 94.004 / 77.22
    s16 = 59.232 / 62.696
    assert cross.at == pytest.approx(2 ** (2 + (s4 - 1) / (s4 - s16) * 2))
    # r from the modelled step times: cycle ÷ baseline step at the same batch
    at1 = curve[curve["batch_size"] == 1].iloc[0]
    assert at1["cost_ratio"] == pytest.approx(27.44 / 12.2) and at1["r_from"].startswith("modelled")


def test_an_mtp_depth_sweep_is_drawn_against_its_depth_and_its_one_baseline(tmp_path: Path) -> None:
    db = tmp_path / "depth.duckdb"
    ingest_paths([FIXTURES / "tables" / "llamacpp-mtp-n-max-sweep.md"], db)
    [overview] = sweeps.overview(db).to_dict("records")
    assert (overview["x"], overview["x_values"], overview["has_baseline"]) == ("steps", "1, 2, 3, 4", True)
    analysed = sweeps.view(db, overview["sweep"])
    assert analysed.x == "steps" and not analysed.axisless and analysed.notes == []  # the baseline is not left out
    curve = sweeps.curves(analysed.spec, "steps")
    # the file's "average tk\s" at each --spec-draft-n-max over its "n/a - no mtp" row's 22.92
    assert curve["steps"].tolist() == [1, 2, 3, 4]
    assert curve["speedup"].tolist() == pytest.approx([27.58 / 22.92, 29.39 / 22.92, 27.78 / 22.92, 26.09 / 22.92])
    assert curve["acceptance_rate"].tolist() == pytest.approx([0.8835, 0.815, 0.7127, 0.6421])
    assert set(curve["method"]) == {"MTP"}
    # no accept length and no batch size in the file: no τ, so no r and no cycle time estimated
    assert curve[["tau", "cost_ratio", "cycle_ms"]].isna().all().all()
    [found] = sweeps.crossovers(curve, "steps")
    assert found.status == "pays at every point"  # 1.14x at depth 4 still pays
    table = sweeps.best_table(analysed.best, "steps")
    # the depth is the config; τ and cycle time, which no depth gives, are left out
    assert list(table.columns) == ["variant", "draft depth", "method", "sweep tok/s", "sweep speedup",
                                   "sweep acceptance rate"]
    assert sweeps.break_even_path(sweeps.points(db)).empty  # no τ, no (τ, r) pair


def test_a_batch_axis_wins_over_the_depth_and_a_single_depth_is_no_axis() -> None:
    points = frame([("b", True, 1, 100.0), ("d", False, 1, 150.0)])
    assert sweeps.x_axis(points) == "batch_size"
    depths = frame([("b", True, 1, 100.0), ("d", False, 1, 150.0)], batch_size=None)
    assert sweeps.x_axis(depths) == "batch_size"  # one depth (3): a table of points, not a curve
    depths.loc[len(depths)] = {**depths.iloc[1].to_dict(), "steps": 5, "throughput": 120.0}
    assert sweeps.x_axis(depths) == "steps"
    spec = sweeps.with_speedup(sweeps.placed(depths, "steps"), "steps")
    assert spec.set_index("steps")["speedup"].to_dict() == pytest.approx({3: 1.5, 5: 1.2})
    depths.loc[len(depths)] = {**depths.iloc[1].to_dict(), "topk": 4, "throughput": 130.0}
    assert sweeps.x_axis(depths) == "batch_size"  # two points of one file at depth 3: not one config per depth


def test_a_table_whose_depth_is_not_its_only_config_stays_a_table(tmp_path: Path) -> None:
    db = tmp_path / "frspec.duckdb"
    ingest_paths([FIXTURES / "tables" / "vllm-frspec-methods.md"], db)
    [overview] = sweeps.overview(db).to_dict("records")
    # | fr-spec | 1 | 3 | 3 | ... | and | fr-spec | 1 | 1 | 1 | ...: depth 1 twice, by branching (kept in extra)
    assert overview["x"] == "batch_size" and sweeps.view(db, overview["sweep"]).axisless


def test_the_sweep_modules_format_numbers_only_through_quantities() -> None:
    from tests.conftest import ROOT
    from tests.test_display_formats import own_formatting

    for name in ("dashboard/analysis/sweeps.py", "dashboard/sweep_charts.py", "dashboard/views/sweeps.py"):
        assert own_formatting((ROOT / name).read_text(encoding="utf-8")) == [], name


def test_status_lists_the_sweeps(demo_db: Path) -> None:
    from ingest.storage.sweep_status import sweep_lines

    assert sweep_lines(demo_db) == [
        "  sweep phase-0 · bench_speculative.py: from-scratch, k2-drafter; batch 1, 2, 4, 8, 16, 32; 348 points, "
        "modelled from step time",
        "  sweep phase-1 · sglang.bench_serving · random: k2-drafter-ft; concurrency 1, 4, 16; 6 points, measured wall-clock",
    ]


def test_each_sweep_point_is_a_tau_r_pair_for_break_even(demo_db: Path) -> None:
    path = sweeps.break_even_path(sweeps.points(demo_db))
    k2 = path[(path["sweep"] == "phase-0 · bench_speculative.py") & (path["variant"] == "k2-drafter")]
    assert k2["x"].tolist() == [1, 2, 4, 8, 16, 32]
    assert set(k2["r_from"]) == {"modelled step time ÷ baseline step time"}
    assert (k2["tau"] < k2["cost_ratio"]).all()  # above the diagonal: never pays
    ft = path[path["variant"] == "k2-drafter-ft"]
    assert set(ft["r_from"]) == {"estimated: τ ÷ speedup"} and ft["axis"].iloc[0] == "max concurrency"
    # S = τ ÷ r: the path reproduces the measured speedups (1.15× at concurrency 1, 0.92× at 16)
    assert (ft["tau"] / ft["cost_ratio"]).round(2).tolist() == [1.15, 1.11, 0.92]


def test_a_table_sweep_whose_points_name_no_dataset_gets_its_speedups() -> None:
    # Found by a random store of real files (tests/fixtures/tables/vllm-frspec-methods.md): pandas groups the
    # baseline's one all-None dataset as a float NaN, and the page raised "merge on object and float64 columns".
    part = pd.DataFrame({"source_id": ["s1", "s1"], "dataset": [None, None], "is_baseline": [False, True],
                         "variant": ["eagle3", "baseline"], "method": ["EAGLE-3", None], "throughput": [120.0, 96.0]})
    table = sweeps.points_table(part)
    assert table["variant"].tolist() == ["eagle3", "baseline"]
    assert table["sweep speedup"].iloc[0] == pytest.approx(1.25) and pd.isna(table["sweep speedup"].iloc[1])
