"""The dashboard's pure computations: comparison, break-even, comparability, trends — on small frames and on the demo store."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dashboard.analysis import compare, data, frames, summary
from dashboard.analysis.compare import CYCLE_ESTIMATED, CYCLE_MEASURED, TOKENS_OVER_TIME

VARIANTS = ["baseline", "from-scratch", "k2-drafter"]


def summary_frame(**overrides: list) -> pd.DataFrame:
    base = {
        "variant": ["baseline", "k2"], "n_runs": [5, 5], "n_sessions": [1, 1], "mean_of_runs": [81.98, 51.88],
        "tokens_over_time": [81.99, 51.78], "sd": [0.795, 2.151], "sd_tokens_over_time": [0.787, 2.130], "short_runs": [0, 1],
        "prompt_min": [27, 26], "prompt_max": [33, 34], "max_tokens": [[2048], [2048]], "models": [["m"], ["m"]],
        "session_ids": [["b-0"], ["k-0"]],
    }
    base.update(overrides)
    return pd.DataFrame(base)


ACCEPT = pd.DataFrame({"variant": ["baseline", "k2"], "tokens_per_step": [None, 1.58],
                       "accepted_drafts_per_step": [None, 0.58], "log_lines": [255, 159], "cuda_graph": [[True], [True]]})


def config_row(variant: str, **args: object) -> dict[str, object]:
    return {"variant": variant, "args": json.dumps(args), "distinct_configs": 1}


# --- comparison -------------------------------------------------------------------------------

def test_baseline_row_has_no_delta_interval_and_speedup_one() -> None:
    out = compare.compare_variants(summary_frame(), ACCEPT, "baseline").set_index("variant")
    assert out.loc["baseline", "verdict"] == "baseline"
    assert out.loc["baseline", "speedup"] == 1.0
    assert pd.isna(out.loc["baseline", "delta_low"])
    assert out.loc["k2", "delta"] == pytest.approx(51.78 - 81.99)  # on the headline (Σtok/Σtime), as shown above it
    assert out.loc["k2", "delta_pct_low"] < out.loc["k2", "delta_pct"] < out.loc["k2", "delta_pct_high"] < 0
    assert out.loc["k2", "session_ids"] == ["k-0"]


def test_without_baseline_there_are_no_deltas() -> None:
    out = compare.compare_variants(summary_frame(), ACCEPT, None)
    assert "delta" not in out.columns
    assert out["headline"].tolist() == [81.99, 51.78]


@pytest.mark.parametrize(
    ("variants", "speculative", "expected"),
    [
        (["k2", "plain", "baseline"], {"k2": True, "plain": False}, "plain"),
        (["k2", "baseline"], {}, "baseline"),
        (["k2", "scratch"], {"k2": True, "scratch": True}, None),
    ],
)
def test_default_baseline_prefers_the_non_speculative_server(variants: list[str], speculative: dict, expected: str | None) -> None:
    assert compare.default_baseline(variants, speculative) == expected


def test_comparison_table_reads_like_the_page() -> None:
    comparison = compare.compare_variants(summary_frame(), ACCEPT, "baseline")
    table = frames.comparison_table(comparison, True, {"k2"}).set_index("variant")
    assert table.loc["baseline", "Δ 95% CI"] == "—" and pd.isna(table.loc["baseline", "Δ tok/s"])
    assert table.loc["k2", "drafts/step"] == 0.58
    assert table.loc["k2", "like-for-like"] == "⚠ no"
    assert table.loc["k2", "95% CI"] == "49.2 – 54.6"  # tok/s at its one declared precision (definitions.TOK_S)


# --- break-even (DOMAIN.md §2) ----------------------------------------------------------------

def test_break_even_of_the_k2_story_from_the_cycle_model() -> None:
    comparison = compare.compare_variants(summary_frame(), ACCEPT, "baseline", TOKENS_OVER_TIME)
    [k2] = compare.break_even(comparison, pd.DataFrame(), "baseline")
    assert k2.cycle_source == CYCLE_ESTIMATED
    assert k2.cycle_ms == pytest.approx(30.5, abs=0.05)
    assert k2.baseline_step_ms == pytest.approx(12.2, abs=0.05)
    assert round(k2.cost_ratio, 2) == 2.50
    assert round(k2.needed_accepted_drafts, 2) == 1.50
    assert k2.needed_cycle_ms == pytest.approx(1.58 * 1000 / 81.99)
    assert k2.predicted_speedup == pytest.approx(51.78 / 81.99)  # with the estimate, S is the observed speedup
    sentence = summary.break_even_sentence(k2)
    assert "1.50 accepted drafts per step" in sentence and "r = 2.50" in sentence


def test_a_measured_cycle_replaces_the_estimate() -> None:
    comparison = compare.compare_variants(summary_frame(), ACCEPT, "baseline")
    measured = pd.DataFrame({"variant": ["k2", "baseline"], "cycle_kind": ["speculative", "decode"], "cycle_ms": [36.0, 12.0]})
    [k2] = compare.break_even(comparison, measured, "baseline")
    assert (k2.cycle_source, k2.baseline_step_source) == (CYCLE_MEASURED, CYCLE_MEASURED)
    assert k2.cost_ratio == pytest.approx(3.0)
    assert k2.needed_accepted_drafts == pytest.approx(2.0)


def test_plane_points_place_each_session() -> None:
    sessions = pd.DataFrame({"session_id": ["b-0", "k-0"], "variant": ["baseline", "k2"], "phase": ["p0", "p0"],
                             "started_at": [None, None], "tokens_over_time": [80.0, 50.0], "mean_of_runs": [80.0, 50.0]})
    accept = pd.DataFrame({"session_id": ["k-0"], "tokens_per_step": [1.5]})
    points = compare.plane_points(sessions, accept, 1000 / 80.0, TOKENS_OVER_TIME, frozenset({"baseline"})).set_index("session_id")
    assert points.loc["b-0", "tokens_per_step"] == 1.0 and points.loc["b-0", "cost_ratio"] == pytest.approx(1.0)
    assert points.loc["k-0", "cost_ratio"] == pytest.approx(1.5 / 50 * 80)
    assert points.loc["k-0", "speedup"] == pytest.approx(50 / 80)


def test_a_session_without_accept_length_is_placed_only_when_its_variant_does_not_speculate() -> None:
    sessions = pd.DataFrame({"session_id": ["b-0", "d-0"], "variant": ["baseline", "drafter"], "phase": ["p0", "p0"],
                             "started_at": [None, None], "tokens_over_time": [80.0, 60.0]})
    no_tau = pd.DataFrame(columns=["session_id", "tokens_per_step"])
    points = compare.plane_points(sessions, no_tau, 1000 / 80.0, TOKENS_OVER_TIME, frozenset({"baseline"}))
    assert points["session_id"].tolist() == ["b-0"]  # the drafter's τ is unknown, not 1
    [why] = compare.off_plane(sessions, no_tau, frozenset({"baseline"})).itertuples(index=False)
    assert why.session_id == "d-0" and why.reason == compare.NO_TAU


# --- the cycle model over several requests decoding together ----------------------------------

def concurrent_summary(streams: list[float | None]) -> pd.DataFrame:
    """A baseline and a drafter measured as bench records at max concurrency 16: throughput of 16 streams."""
    frame = summary_frame()
    return frame.assign(tokens_over_time=[1312.0, 3267.0], mean_of_runs=[1312.0, 3267.0], basis_rank=4, streams=streams)


def test_a_throughput_of_sixteen_requests_gives_a_sixteen_stream_cycle() -> None:
    accept = pd.DataFrame({"variant": ["k2"], "tokens_per_step": [3.5], "accepted_drafts_per_step": [2.5]})
    comparison = compare.compare_variants(concurrent_summary([16, 16]), accept, "baseline")
    k2 = comparison.set_index("variant").loc["k2"]
    assert k2["cycle_ms_est"] == pytest.approx(3.5 * 16 / 3267 * 1000)  # 17.1 ms, not 1.07 ms
    [result] = compare.break_even(comparison, pd.DataFrame(), "baseline")
    assert result.baseline_step_ms == pytest.approx(16 / 1312 * 1000)
    assert result.cycle_source == "estimate: tokens/step × 16 requests ÷ tok/s"
    assert result.predicted_speedup == pytest.approx(3267 / 1312)  # S = τ ÷ r is the observed speedup again
    assert "16 requests" in summary.break_even_sentence(result)
    assert compare.other_loads(comparison, [result], "baseline") == []  # both at 16: one load


def test_a_cycle_at_sixteen_requests_against_a_one_request_step_is_not_like_for_like() -> None:
    accept = pd.DataFrame({"variant": ["k2"], "tokens_per_step": [3.5], "accepted_drafts_per_step": [2.5]})
    comparison = compare.compare_variants(concurrent_summary([1, 16]), accept, "baseline")
    [result] = compare.break_even(comparison, pd.DataFrame(), "baseline")
    [load] = compare.other_loads(comparison, [result], "baseline")
    assert load.startswith("k2: its cycle is of 16 requests decoding together, the baseline's step of 1")


def test_an_unknown_number_of_requests_gives_no_cycle_and_says_why() -> None:
    accept = pd.DataFrame({"variant": ["k2"], "tokens_per_step": [3.5], "accepted_drafts_per_step": [2.5]})
    comparison = compare.compare_variants(concurrent_summary([None, None]), accept, "baseline")
    assert comparison["cycle_ms_est"].isna().all()
    assert compare.baseline_step(comparison, pd.DataFrame(), "baseline") is None
    assert compare.no_step_reason(comparison, "baseline") == compare.STREAMS_UNKNOWN
    assert compare.break_even(compare.compare_variants(concurrent_summary([1, None]), accept, "baseline"),
                              pd.DataFrame(), "baseline") == []
    assert compare.no_cycle_reason(comparison.iloc[1]) == compare.STREAMS_UNKNOWN
    plain = compare.with_methods(comparison, pd.DataFrame({"variant": ["baseline"], "method": ["none"]}))
    assert plain["cycle_ms_est"].isna().all()  # one token per step, but of how many requests is unknown


# --- comparability ----------------------------------------------------------------------------

def test_like_for_like_when_only_the_drafter_differs() -> None:
    configs = pd.DataFrame([config_row("baseline", model_path="m", tp_size=8, speculative_algorithm=None),
                            config_row("k2", model_path="m", tp_size=8, speculative_algorithm="EAGLE3",
                                       speculative_num_steps=2, speculative_draft_model_path="/d")])
    findings = compare.comparability(configs, summary_frame(), ACCEPT, "baseline")
    assert [f["setting"] for f in findings] == ["speculative_num_steps"]  # the drafter itself is not listed
    assert all(f["like_for_like"] for f in findings)


def test_setup_benchmark_and_observed_differences_break_like_for_like() -> None:
    configs = pd.DataFrame([config_row("baseline", model_path="m", tp_size=8, version="0.5.1"),
                            config_row("k2", model_path="m", tp_size=4, version="0.5.3", speculative_algorithm="EAGLE3")])
    summary = summary_frame(max_tokens=[[2048], [1024]], prompt_min=[27, 900], prompt_max=[33, 1000])
    accept = ACCEPT.assign(cuda_graph=[[True], [False]])
    blocked = {(f["setting"], f["kind"]) for f in compare.comparability(configs, summary, accept, "baseline")
               if not f["like_for_like"]}
    assert blocked == {("tp_size", "setup"), ("version", "setup"), ("max_tokens", "benchmark"),
                       ("prompt tokens", "benchmark"), ("cuda graph (decode lines)", "observed")}


def test_missing_baseline_config_cannot_be_checked() -> None:
    configs = pd.DataFrame([config_row("k2", speculative_algorithm="EAGLE3")])
    [finding] = compare.comparability(configs, summary_frame(), ACCEPT, "baseline")
    assert finding["kind"] == "unknown" and finding["like_for_like"] is False


def test_drafter_differences_list_speculation_settings_between_drafters() -> None:
    configs = pd.DataFrame([config_row("baseline"),
                            config_row("a", speculative_algorithm="EAGLE3", speculative_num_steps=3),
                            config_row("b", speculative_algorithm="EAGLE3", speculative_num_steps=2)])
    table = compare.drafter_differences(configs, "baseline")
    assert table.to_dict("records") == [{"setting": "speculative_num_steps", "kind": "speculation setting", "a": "3", "b": "2"}]


@pytest.mark.parametrize(("diff_only", "expected"), [(True, ["tp_size"]), (False, ["model_path", "tp_size"])])
def test_side_by_side_diff_only(diff_only: bool, expected: list[str]) -> None:
    table = compare.side_by_side({"this": {"model_path": "m", "tp_size": 8, "port": 1},
                                   "baseline": {"model_path": "m", "tp_size": 4, "port": 2}}, diff_only)
    assert table["setting"].tolist() == expected  # port is never a difference that matters


# --- phases -----------------------------------------------------------------------------------

def test_phase_trends_follow_the_phase_order() -> None:
    summary = pd.DataFrame({"phase": ["p1", "p0"], "variant": ["k2", "k2"], "n_runs": [3, 5], "mean_of_runs": [70.0, 51.88],
                            "tokens_over_time": [70.1, 51.78], "sd": [1.0, 2.151]})
    accept = pd.DataFrame({"phase": ["p0"], "variant": ["k2"], "tokens_per_step": [1.58], "accepted_drafts_per_step": [0.58]})
    trends = compare.phase_trends(summary, accept, ["p0", "p1"], TOKENS_OVER_TIME)
    assert trends["phase"].tolist() == ["p0", "p1"]
    assert trends["tokens_per_step"].tolist()[0] == 1.58 and pd.isna(trends["tokens_per_step"].tolist()[1])


# --- on the demo store ------------------------------------------------------------------------

def test_demo_break_even_reads_as_the_story(demo_db: Path) -> None:
    summary = data.variant_summary(demo_db, ["phase-0"], VARIANTS)
    accept = data.accept_length(demo_db, ["phase-0"], VARIANTS)
    comparison = compare.compare_variants(summary, accept, "baseline")
    results = {r.variant: r for r in compare.break_even(comparison, data.measured_cycles(demo_db, [], []), "baseline")}
    k2 = results["k2-drafter"]
    assert (round(k2.cost_ratio, 2), round(k2.needed_accepted_drafts, 2)) == (2.50, 1.50)
    assert (round(k2.cycle_ms, 1), round(k2.baseline_step_ms, 1)) == (30.5, 12.2)
    assert round(k2.needed_cycle_ms, 1) == 19.3
    assert results["from-scratch"].tokens_per_step == pytest.approx(2.0)


def test_demo_accept_length_comes_from_measured_run_windows(demo_db: Path) -> None:
    accept = data.accept_length(demo_db, ["phase-0"], VARIANTS).set_index("variant")
    assert accept.loc["k2-drafter", "tokens_per_step"] == pytest.approx(1.58)
    assert accept.loc["k2-drafter", "log_lines"] == 159  # 5 measured runs' windows; warm-ups and idle lines out
    assert pd.isna(accept.loc["baseline", "tokens_per_step"])
    by_session = data.accept_length(demo_db, ["phase-0"], [], by="session")
    assert by_session["session_id"].notna().all() and len(by_session) == 3


def test_demo_is_like_for_like_against_the_baseline(demo_db: Path) -> None:
    configs = data.configs_by_variant(demo_db, ["phase-0"], VARIANTS)
    summary = data.variant_summary(demo_db, ["phase-0"], VARIANTS)
    accept = data.accept_length(demo_db, ["phase-0"], VARIANTS)
    findings = compare.comparability(configs, summary, accept, "baseline")
    assert findings and all(f["like_for_like"] for f in findings)
    between = compare.drafter_differences(configs, "baseline").set_index("setting")
    assert between.loc["speculative_num_steps"].to_dict() == {"kind": "speculation setting", "from-scratch": "3", "k2-drafter": "2"}


def test_decode_series_is_downsampled_in_sql(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = data.sources(demo_db)
    keys = [f"{s}:0" for s in logs[(logs["kind"] == "sglang_log") & (logs["phase"] == "phase-0")]["source_id"]]
    full = data.decode_series(demo_db, keys)
    monkeypatch.setattr(data, "MAX_POINTS", 50)
    small = data.decode_series(demo_db, keys)
    assert len(full) == 565 and len(small) <= 51
    assert small["lines"].sum() == 565


def test_a_baseline_with_an_accept_length_is_known_to_speculate() -> None:
    comparison = compare.compare_variants(summary_frame(), ACCEPT, "baseline")
    assert compare.baseline_tokens_per_step(comparison, "baseline") is None
    assert compare.baseline_tokens_per_step(comparison, "k2") == 1.58  # k2 as the baseline: its steps are cycles
