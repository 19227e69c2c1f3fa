"""Statistics and the cycle model against published values and the story's numbers."""
from __future__ import annotations

import pandas as pd
import pytest

from dashboard.analysis.compare import (
    CYCLE_ESTIMATED,
    STEP_ESTIMATED,
    BreakEven,
    ci_from_summary,
    compare_variants,
    config_diff,
    welch_from_summary,
    with_methods,
)
from dashboard.analysis.stats import mean_ci, t_quantile, welch_diff_ci

SEED_TOK_PER_S = [50.6, 51.9, 49.1, 54.6, 53.2]


@pytest.mark.parametrize(("df", "expected"), [(1, 12.7062), (4, 2.7764), (10, 2.2281), (30, 2.0423), (120, 1.9799)])
def test_t_quantile_matches_tables(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)


def test_seed_mean_and_ci() -> None:
    ci = mean_ci(SEED_TOK_PER_S)
    assert ci.mean == pytest.approx(51.88)
    assert ci.sd == pytest.approx(2.151, abs=1e-3)
    assert (ci.low, ci.high) == pytest.approx((49.209, 54.551), abs=1e-3)
    assert ci_from_summary(5, ci.mean, ci.sd) == ci


def test_welch_interval_and_noise_verdict() -> None:
    far = welch_diff_ci(SEED_TOK_PER_S, [82.5, 81.5, 82.0, 81.0, 83.0])
    assert far.diff == pytest.approx(51.88 - 82.0)
    assert far.high < 0 and far.within_noise is False
    near = welch_diff_ci(SEED_TOK_PER_S, [52.0, 50.0, 53.5, 51.0, 52.5])
    assert near.within_noise is True
    assert welch_from_summary(mean_ci(SEED_TOK_PER_S), mean_ci([82.5, 81.5, 82.0, 81.0, 83.0])).df == pytest.approx(far.df)


def test_break_even_on_the_k2_story() -> None:
    cycle_ms, step_ms = 1.58 / 51.8 * 1000, 1000 / 82.0
    k2 = BreakEven("k2", 1.58, cycle_ms, CYCLE_ESTIMATED, step_ms, STEP_ESTIMATED, 51.8 / 82.0, cycle_ms)
    assert k2.cycle_ms == pytest.approx(30.5, abs=0.05)
    assert k2.baseline_step_ms == pytest.approx(12.2, abs=0.05)
    assert k2.cost_ratio == pytest.approx(2.50, abs=0.005)
    assert k2.needed_accepted_drafts == pytest.approx(1.50, abs=0.005)
    assert k2.needed_cycle_ms == pytest.approx(1.58 * step_ms)
    assert k2.predicted_speedup == pytest.approx(51.8 / 82.0)


def test_compare_variants_marks_baseline_and_direction() -> None:
    summary = pd.DataFrame(
        {"variant": ["baseline", "k2"], "n_runs": [5, 5], "n_sessions": [1, 1], "mean_of_runs": [82.0, 51.88],
         "tokens_over_time": [82.0, 51.78], "sd": [0.8, 2.151], "sd_tokens_over_time": [0.8, 2.13], "short_runs": [0, 1]}
    )
    accept = pd.DataFrame({"variant": ["k2"], "tokens_per_step": [1.58], "accepted_drafts_per_step": [0.58]})
    out = compare_variants(summary, accept, "baseline").set_index("variant")
    assert out.loc["baseline", "verdict"] == "baseline"
    assert out.loc["k2", "verdict"] == "slower"
    assert out.loc["k2", "delta_pct"] == pytest.approx((51.78 - 82.0) / 82.0 * 100)  # the headline's Δ
    assert out.loc["k2", "cycle_ms_est"] == pytest.approx(1.58 / 51.78 * 1000)
    assert pd.isna(out.loc["baseline", "cycle_ms_est"])  # no τ, and nothing yet says it does not speculate


def test_a_cycle_is_one_tokens_time_only_for_a_variant_whose_config_says_it_does_not_speculate() -> None:
    summary = pd.DataFrame(
        {"variant": ["baseline", "mtp", "unknown"], "n_runs": [5, 5, 5], "n_sessions": [1, 1, 1],
         "mean_of_runs": [82.0, 90.0, 70.0], "tokens_over_time": [82.0, 90.0, 70.0], "sd": [0.8, 1.0, 1.0],
         "sd_tokens_over_time": [0.8, 1.0, 1.0], "short_runs": [0, 0, 0]}
    )
    accept = pd.DataFrame(columns=["variant", "tokens_per_step", "accepted_drafts_per_step"])
    configs = pd.DataFrame({"variant": ["baseline", "mtp"], "method": ["none", "MTP"]})
    out = with_methods(compare_variants(summary, accept, "baseline"), configs).set_index("variant")
    assert out.loc["baseline", "cycle_ms_est"] == pytest.approx(1000 / 82.0)
    assert pd.isna(out.loc["mtp", "cycle_ms_est"])  # 1000 / 90 would be a cycle far too short for an MTP step
    assert pd.isna(out.loc["unknown", "cycle_ms_est"])


def test_config_diff_classifies_keys() -> None:
    diffs = config_diff(
        {"tp_size": 8, "speculative_algorithm": None, "port": 1},
        {"tp_size": 4, "speculative_algorithm": "EAGLE3", "speculative_num_steps": 2, "port": 2},
    )
    assert [(d["key"], d["kind"]) for d in diffs] == [
        ("speculative_algorithm", "drafter"), ("speculative_num_steps", "speculation setting"), ("tp_size", "setup")
    ]
