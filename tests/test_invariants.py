"""Issue #29: the analysis layer holds each figure's domain, and a page shows a reason instead of a figure outside it.

- Sweeps: unrelated files are not paired into one speedup; a missing config is '?', never formatted as a number;
  a point without the sweep's x is left out and named (the Sweeps page's NoneType.__format__ traceback).
- Break-even: τ ≥ 1 (bonus included); r < 1 means speculation wins at every τ, so there is no break-even τ.
- Acceptance: S(k) in [0, 1] and non-increasing, P(k | k−1) in [0, 1], rates in [0, 1], accept length ≥ 1.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from dashboard import sweep_charts
from dashboard.analysis import acceptance, compare, summary, sweeps
from dashboard.analysis.compare import CYCLE_ESTIMATED, STEP_ESTIMATED, BreakEven
from dashboard.state import Keys
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS, FIXTURES
from tests.test_app import run_page, texts

# --- sweeps -------------------------------------------------------------------------------------


def points(rows: list[tuple[str, bool, float | None, float, str, str | None]]) -> pd.DataFrame:
    """(variant, is_baseline, concurrency, tok/s, file, model) bench points of one sweep, config unknown."""
    return pd.DataFrame([
        {"sweep": "s", "model": model, "dataset": None, "variant": v, "is_baseline": b, "batch_size": None,
         "concurrency": x, "request_rate": None, "steps": None, "topk": None, "num_draft_tokens": None,
         "accept_length": None if b else 2.5, "step_time_ms": None, "throughput": t, "throughput_kind": "measured wall-clock",
         "simulated": False, "tp_size": None, "origin": "bench_serving", "path": f"/runs/{f}", "source_id": f}
        for v, b, x, t, f, model in rows])


def test_a_sweep_of_unrelated_files_pairs_baseline_and_drafter_only_within_a_file() -> None:
    frame = points([("unlabelled: bench", True, 1, 100.0, "a.jsonl", None), ("unlabelled: bench", False, 1, 150.0, "a.jsonl", None),
                    ("unlabelled: bench", True, 8, 50.0, "b.txt", None), ("unlabelled: bench", False, 8, 700.0, "c.txt", None)])
    note = sweeps.pooled_files(frame)
    assert note is not None and "pools 3 files" in note and "a.jsonl, b.txt, c.txt" in note
    spec = sweeps.with_speedup(frame, "concurrency", within_file=note is not None).set_index("concurrency")
    assert spec.loc[1, "speedup"] == pytest.approx(1.5)  # one file holds both
    assert pd.isna(spec.loc[8, "speedup"])  # 700 ÷ 50 across two unrelated files: no figure
    assert sweeps.with_speedup(frame, "concurrency").set_index("concurrency").loc[8, "speedup"] == pytest.approx(14.0)


def test_evidence_of_one_system_pairs_across_files() -> None:
    labelled = points([("eagle3", False, 1, 150.0, "a.txt", None), ("baseline", True, 1, 100.0, "b.txt", None)])
    same_model = points([("unlabelled: runs", False, 1, 150.0, "a.txt", "/m/Kimi"), ("unlabelled: runs", True, 1, 100.0, "b.txt", "/m/Kimi")])
    one_file = points([("unlabelled: runs", False, 1, 150.0, "a.txt", None), ("unlabelled: runs", True, 2, 100.0, "a.txt", None)])
    assert [sweeps.pooled_files(f) for f in (labelled, same_model, one_file)] == [None, None, None]


def test_runs_of_two_target_models_are_two_sweeps() -> None:
    frame = points([("d", False, 1, 150.0, "a.txt", "org/Llama-3-8B"), ("b", True, 1, 100.0, "a.txt", "org/Llama-3-8B"),
                    ("d", False, 2, 150.0, "b.txt", "/models/Qwen3-8B"), ("b", True, 2, 90.0, "c.txt", None)])
    apart = sweeps.apart_by_model(frame)
    assert sorted(apart["sweep"].unique()) == ["s · Llama-3-8B", "s · Qwen3-8B", "s · model unknown"]
    one = points([("d", False, 1, 150.0, "a.txt", "m"), ("b", True, 2, 100.0, "a.txt", None)])
    assert sweeps.apart_by_model(one)["sweep"].tolist() == ["s", "s"]  # one model named: nothing to tell apart


def test_points_without_the_x_are_left_out_and_named() -> None:
    frame = points([("v", True, 1, 100.0, "a.txt", None), ("v", False, 2, 150.0, "a.txt", None),
                    ("w", False, None, 150.0, "other.txt", None)])
    assert sweeps.placed(frame, "concurrency")["variant"].tolist() == ["v", "v"]
    assert sweeps.left_out(frame, "concurrency") == ("1 point(s) give no max concurrency (other.txt) and are left out "
                                                     "of this sweep's figures.")
    assert sweeps.left_out(sweeps.placed(frame, "concurrency"), "concurrency") is None


def test_an_unknown_config_is_a_question_mark_in_labels_grid_and_chart() -> None:
    frame = points([("v", True, 1, 100.0, "a.txt", None), ("v", False, 1, 150.0, "a.txt", None)])
    frame.loc[1, "steps"] = 3  # steps known, topk and draft tokens not
    spec = sweeps.with_speedup(frame, "concurrency")
    assert spec["config"].tolist() == ["steps 3 · topk ? · draft ?"] and spec["config_short"].tolist() == ["3 · ? · ?"]
    cells = sweeps.grid(spec, "concurrency", 1, "v")
    assert (cells["row"].tolist(), cells["column"].tolist()) == (["steps 3 · topk ?"], ["?"])
    assert sweeps.config_unknown(cells)
    figure = sweep_charts.grid_chart(cells, True, "v at max concurrency 1")
    assert list(figure.data[0].y) == ["steps 3 · topk ?"] and list(figure.data[0].x) == ["draft ?"]
    assert sorted(["?", "4", "12"], key=sweep_charts.config_order) == ["4", "12", "?"]


@pytest.fixture
def mixed_bench_store(tmp_path: Path) -> Path:
    """The issue's store: unrelated bench_serving outputs (corpus bench/*.txt and console fixtures) in one folder, and a
    drafter's console summary without a max concurrency in another: all one 'vllm bench serve' sweep."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    (tmp_path / "bench").mkdir()
    (tmp_path / "other").mkdir()
    for path in [*sorted((CORPUS / "bench").glob("*.txt")), FIXTURES / "bench" / "vllm-bench-serve-append-result.jsonl",
                 FIXTURES / "bench" / "vllm-console-2025-spec-decoding.txt"]:
        shutil.copy(path, tmp_path / "bench")
    shutil.copy(FIXTURES / "bench" / "vllm-console-spec-decoding-section-only.txt", tmp_path / "other")
    db = tmp_path / "mixed.duckdb"
    ingest_paths(sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".duckdb"), db)
    return db


@pytest.mark.corpus
def test_the_sweeps_page_explains_a_pooled_sweep_instead_of_a_traceback(mixed_bench_store: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/sweeps.py", mixed_bench_store, monkeypatch, {"sweep": "vllm bench serve · unnamed dataset"})
    page = texts(app)
    assert "pools 4 files that no label or server config says are one system" in page
    assert "point(s) give no max concurrency (vllm-console-spec-decoding-section-only.txt" in page
    app.session_state[Keys.sweeps_tab] = "Config grid: steps × topk × draft tokens"  # the grid runs when its tab opens
    app.run()
    assert not app.exception
    assert "the grid shows '?'" in texts(app)
    # the drafter whose only point has no max concurrency is not offered on the grid (was: a None formatted as a number)
    variant = next(s for s in app.selectbox if s.label == "Variant")
    assert variant.options == ["unlabelled: bench"]
    assert not [s for s in app.selectbox if s.label == "Max concurrency" and s.value is None]


# --- break-even -----------------------------------------------------------------------------------


def result(tau: float, cycle_ms: float, step_ms: float = 12.2) -> BreakEven:
    return BreakEven("d", tau, cycle_ms, CYCLE_ESTIMATED, step_ms, STEP_ESTIMATED, None, cycle_ms)


def test_a_cycle_cheaper_than_a_baseline_step_has_no_break_even_tau() -> None:
    cheap = result(1.58, 0.56 * 12.2)  # r = 0.56: the "breaks even at τ = 0.56, i.e. −0.44 accepted drafts"
    assert cheap.cost_ratio == pytest.approx(0.56)
    assert cheap.needed_tokens_per_step is None and cheap.needed_accepted_drafts is None
    assert cheap.needed_cycle_ms == pytest.approx(1.58 * 12.2)  # the cycle it may cost at its τ is still a figure
    assert cheap.reason is not None and cheap.reason.startswith("r = 0.56 < 1") and "wins at every τ ≥ 1" in cheap.reason
    sentence = summary.break_even_sentence(cheap)
    assert "r = 0.56 < 1" in sentence and "−0.44" not in sentence and "-0.44" not in sentence
    assert "breaks even at τ" not in sentence


def test_a_tau_below_one_is_no_result() -> None:
    broken = result(0.58, 30.5)  # the story's 0.58 is accepted drafts, not τ
    assert broken.tau_problem is not None and "τ = 0.58 tokens/step is below 1.00" in broken.tau_problem
    assert (broken.needed_tokens_per_step, broken.needed_accepted_drafts, broken.needed_cycle_ms) == (None, None, None)
    assert summary.break_even_sentence(broken) == f"**d**: no break-even figure. {broken.tau_problem}"
    held = result(1.58, 30.5)
    assert held.reason is None and held.needed_accepted_drafts == pytest.approx(30.5 / 12.2 - 1)


def test_frozen_break_even_lines_say_why_too() -> None:
    frozen = {"break_even": [{"variant": "d", "tokens_per_step": 1.58, "cost_ratio": 0.56, "cycle_ms": 6.8,
                              "cycle_source": CYCLE_ESTIMATED, "baseline_step_ms": 12.2, "needed_tokens_per_step": 0.56,
                              "needed_accepted_drafts": -0.44, "needed_cycle_ms": 19.3}]}
    [line] = summary.break_even_lines(frozen)
    assert "r = 0.56 < 1" in line and "-0.44" not in line


def test_sessions_with_tau_below_one_stay_off_the_plane() -> None:
    sessions = pd.DataFrame({"session_id": ["b", "k", "x"], "variant": ["baseline", "k2", "x"], "phase": [None] * 3,
                             "started_at": [None] * 3, "headline": [82.0, 51.8, 40.0]})
    accept = pd.DataFrame({"session_id": ["k", "x"], "tokens_per_step": [1.58, 0.58]})
    plane = compare.plane_points(sessions, accept, 12.2, "headline", frozenset({"baseline"}))
    assert plane["session_id"].tolist() == ["b", "k"]
    left = compare.off_plane(sessions, accept, frozenset({"baseline"}))
    assert left["session_id"].tolist() == ["x"] and "below 1.00" in left["reason"].iloc[0]


# --- acceptance -----------------------------------------------------------------------------------


def curve(survival: list[float], samples: list[int] | None = None, variant: str = "v", origin: str = "o") -> pd.DataFrame:
    n = len(survival)
    return pd.DataFrame({"variant": variant, "origin": origin, "scope": "run", "position": range(1, n + 1),
                         "survival": survival, "conditional": acceptance.conditional(survival), "low": None, "high": None,
                         "samples": samples or [1] * n, "weight": None, "accept_length": 1 + sum(survival), "sources": "s1"})


def test_a_rising_survival_curve_is_left_out_with_its_files_and_why() -> None:
    rising = curve([0.70, 0.38, 0.68], samples=[2, 2, 1])
    held = curve([0.7, 0.5, 0.3], variant="w")
    kept, warnings = acceptance.checked_curves(pd.concat([rising, held], ignore_index=True), pd.DataFrame(),
                                               {"s1": "/runs/vllm-summary.txt"})
    assert kept["variant"].unique().tolist() == ["w"]
    [warning] = warnings
    text = warning.text()
    assert "survival rises from 38% at k = 2 to 68% at k = 3: these per-position figures are not one run's" in text
    assert "`vllm-summary.txt`" in text and "position 3 pools 1 sample(s) and position 2 pools 2" in text
    assert "P(k | k−1)" not in warning.what  # the rise is what lifts c(3) to 179%: said once


@pytest.mark.parametrize(("survival", "wrong"), [
    ([1.2, 0.5], "P(≥ k) = 120% at k = 1 is outside 0–100%"),
    ([0.5, -0.1], "P(≥ k) = -10% at k = 2 is outside 0–100%"),
    ([0.9, 0.95], "survival rises from 90% at k = 1 to 95% at k = 2"),
])
def test_curve_defects(survival: list[float], wrong: str) -> None:
    assert any(d.startswith(wrong) for d in acceptance.curve_defects(curve(survival)))
    assert acceptance.curve_defects(curve([0.8, 0.5, 0.5, 0.0])) == []


def test_a_conditional_rate_above_one_is_a_defect_even_when_given() -> None:
    given = curve([0.6, 0.5]).assign(conditional=[0.6, 1.4])
    assert acceptance.curve_defects(given) == ["P(k | k−1) = 140% at k = 2 is outside 0–100%"]


def summary_file(path: Path, drafts: int, rates: list[float]) -> Path:
    """A vLLM examples/offline_inference/spec_decode.py summary with these per-position figures."""
    lines = ["-" * 50, "total_num_output_tokens: 20000", f"num_drafts: {drafts}", f"num_draft_tokens: {drafts * 3}",
             "num_accepted_tokens: 1000", "mean acceptance length: 2.00", "-" * 50]
    lines += [f"acceptance at token {i}: {rate:.2f}" for i, rate in enumerate(rates)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def pooled_positions(tmp_path: Path) -> Path:
    """Two summaries of one unlabelled group: one drafted 2 positions (low rates), one 3 (high): pooled, S(3) > S(2)."""
    (tmp_path / "runs").mkdir()
    files = [summary_file(tmp_path / "runs" / "short.txt", 10000, [0.40, 0.30]),
             summary_file(tmp_path / "runs" / "long.txt", 1000, [0.90, 0.80, 0.68])]
    db = tmp_path / "acc.duckdb"
    ingest_paths(files, db)
    return db


def test_pooled_per_position_figures_that_rise_are_named_by_file_and_line(pooled_positions: Path) -> None:
    rates = acceptance.position_rates(pooled_positions)
    samples = acceptance.position_samples(rates)
    curves = acceptance.position_curves(samples)
    ids = sorted(set(rates["source_id"]))
    kept, [warning] = acceptance.checked_curves(curves, samples, acceptance.source_paths(pooled_positions, ids),
                                                acceptance.record_lines(pooled_positions, ids))
    assert kept.empty
    assert warning.where == "`long.txt` (line 2), `short.txt` (line 2)"
    assert warning.what.startswith("survival rises from 35% at k = 2 to 68% at k = 3")


def test_the_acceptance_page_warns_instead_of_plotting_a_rising_curve(pooled_positions: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/acceptance.py", pooled_positions, monkeypatch)
    page = texts(app)
    assert "survival rises from 35% at k = 2 to 68% at k = 3" in page and "`short.txt` (line 2)" in page
    assert "No per-position curve left to show" in page
    assert not app.get("plotly_chart") or all("P(≥ k)" not in str(c.proto.spec) for c in app.get("plotly_chart"))


def test_a_sample_that_breaks_the_invariant_by_itself_is_named(tmp_path: Path) -> None:
    db = tmp_path / "one.duckdb"
    ingest_paths([summary_file(tmp_path / "rising.txt", 500, [0.38, 0.68])], db)
    rates = acceptance.position_rates(db)
    samples = acceptance.position_samples(rates)
    ids = sorted(set(rates["source_id"]))
    _, [warning] = acceptance.checked_curves(acceptance.position_curves(samples), samples,
                                             acceptance.source_paths(db, ids), acceptance.record_lines(db, ids))
    assert warning.where == "`rising.txt` (line 2)" and warning.what.startswith("survival rises from 38% at k = 1 to 68%")


@pytest.mark.corpus
def test_the_vllm_offline_summary_is_a_survival_curve_and_holds(corpus_dir: Path, tmp_path: Path) -> None:
    """vLLM's spec_decode.py prints acceptance_counts[i] ÷ num_drafts, where acceptance_counts sums the counter
    vllm:spec_decode_num_accepted_tokens_per_pos: a token at position i counts only when every earlier one was
    accepted, so "acceptance at token i" is P(≥ i+1 accepted), unconditional; 1 + Σ of them is the printed mean
    acceptance length (1 + 2.64 = 3.64). The reader's interpretation holds, and so does each block's curve."""
    db = tmp_path / "vllm.duckdb"
    ingest_paths([corpus_dir / "bench" / "vllm-pr-26498-offline-spec-decode-summary.txt"], db)
    rates = acceptance.position_rates(db)
    first = rates[rates["window"] == "record 0"].sort_values("position")
    assert 1 + first["rate"].sum() == pytest.approx(3.64, abs=0.005)
    samples = acceptance.position_samples(rates)
    kept, warnings = acceptance.checked_curves(acceptance.position_curves(samples), samples, {})
    assert warnings == [] and len(kept) == 10
    assert all(acceptance.curve_defects(part) == [] for _, part in samples.groupby("sample"))


def test_rates_and_accept_lengths_outside_their_domain() -> None:
    assert acceptance.below_one(pd.Series([0.58, 1.0, None, 2.3])).tolist() == [True, False, False, False]
    windows = pd.DataFrame({"accept_length": [2.1, 0.9, 2.0, None], "accept_rate": [0.4, 0.1, 37.0, -0.1]})
    assert acceptance.window_outside(windows).tolist() == [False, True, True, True]


def test_out_of_domain_names_nothing_on_a_clean_store(pooled_positions: Path) -> None:
    assert acceptance.out_of_domain(pooled_positions) == []


def test_the_breakeven_page_says_why_a_cheap_cycle_has_no_break_even(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's K2 drafter log (τ = 1.58) beside runs 4× as fast as its own: r = 1.58 × 82 ÷ 207 ≈ 0.63 < 1."""
    import json

    from tests.test_app import ROOT

    demo = ROOT / "data" / "demo" / "phase-0"
    bench = json.loads((demo / "k2-drafter" / "bench.json").read_text())
    for run in bench["runs"]:
        run["output_tokens"] *= 4
        run["tok_per_s"] *= 4
    bench["variant"] = "fast"
    (tmp_path / "fast").mkdir()
    (tmp_path / "fast" / "bench.json").write_text(json.dumps(bench))
    db = tmp_path / "cheap.duckdb"
    ingest_paths([demo / "baseline" / "bench.json", demo / "baseline" / "server.log"], db, phase="phase-0", variant="baseline")
    ingest_paths([tmp_path / "fast" / "bench.json", demo / "k2-drafter" / "server.log"], db, phase="phase-0", variant="fast")
    app = run_page("views/breakeven.py", db, monkeypatch)
    fast = next(m.value for m in app.markdown if m.value.startswith("**fast**"))
    assert "< 1: one speculative cycle costs less than one baseline step" in fast
    assert "breaks even at τ" not in fast and "accepted drafts per step**" not in fast
    needs = app.dataframe[1].value.set_index("variant")
    assert pd.isna(needs.loc["fast", "break-even τ"]) and pd.isna(needs.loc["fast", "break-even drafts/step"])
    from tests.test_app_every_page import table_defects

    assert table_defects(app, "views/breakeven.py") == []


def test_a_request_with_accept_length_below_one_is_left_out_and_named(tmp_path: Path) -> None:
    good = (FIXTURES / "acceptance" / "vllm-responses-per-request-spec-metrics.jsonl").read_text().splitlines()[0]
    bad = good.replace('"chatcmpl-0000"', '"chatcmpl-0009"').replace('"mean_acceptance_length": 1.2325581395348837',
                                                                    '"mean_acceptance_length": 0.23')
    assert bad != good
    (tmp_path / "req").mkdir()
    (tmp_path / "req" / "responses.jsonl").write_text(good + "\n" + bad + "\n")
    db = tmp_path / "req.duckdb"
    ingest_paths([tmp_path / "req" / "responses.jsonl"], db)
    assert acceptance.request_distribution(db)["requests"].tolist() == [1]  # the 0.23 one is no result
    assert acceptance.worst_requests(db)["accept_length"].min() >= 1
    notes = acceptance.out_of_domain(db)
    assert notes[0] == ("**unlabelled: req** · 1 request(s) from `responses.jsonl` (line 2): accept length 0.23 is below "
                        "1.00, the floor of tokens per step (bonus included): not a bonus-inclusive figure, or broken; left out.")
    assert acceptance.dataset_rows(db).empty  # its dataset's mean (0.73) pooled the broken request: left out too
