"""One headline (issue #30 item 5): the Δ under a headline is that headline's — same estimator, an interval on its own
spread — and every chart axis of a declared quantity ticks at that quantity's precision (definitions.py)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard import acceptance_charts, charts, drafter_frames, sweep_charts
from dashboard.analysis import compare, data
from dashboard.analysis.compare import ISO_SPEEDUPS, MEAN_OF_RUNS, TOKENS_OVER_TIME
from dashboard.analysis.definitions import (
    ACCEPT,
    COUNT,
    MS,
    PERCENT,
    RATIO,
    SHARE,
    TOK_S,
    Quantity,
)
from dashboard.analysis.stats import t_quantile
from tests.test_app import run_page
from tests.test_palette import figure_specs

PHASE0 = ["baseline", "from-scratch", "k2-drafter"]


# --- Δ on the demo store's Compare page -------------------------------------------------------------

def compare_table(app: object) -> pd.DataFrame:
    """Compare's two tables joined by variant (full-precision numbers, as the page holds them)."""
    frames = app.dataframe  # type: ignore[attr-defined]
    return frames[0].value.set_index("variant").join(frames[1].value.set_index("variant"))


@pytest.mark.parametrize(("metric", "column"), [(None, "Σtok/Σtime"), (MEAN_OF_RUNS, "mean of runs")])
def test_the_delta_under_each_headline_is_that_headlines(demo_db: Path, monkeypatch: pytest.MonkeyPatch,
                                                        metric: str | None, column: str) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch, {"metric": metric} if metric else None)
    table = compare_table(app)
    base = table.loc["baseline", column]
    cards = {m.label: m for m in app.metric}
    for variant in ("from-scratch", "k2-drafter"):
        headline = table.loc[variant, column]
        assert table.loc[variant, "Δ tok/s"] == pytest.approx(headline - base, rel=1e-9)
        assert table.loc[variant, "Δ %"] == pytest.approx((headline / base - 1) * 100, rel=1e-9)
        assert table.loc[variant, "Δ %"] == pytest.approx((table.loc[variant, "speedup"] - 1) * 100, rel=1e-9)
        # the card: the headline, and under it the difference of the two headlines shown
        card = cards[variant]
        assert card.value == TOK_S.text(headline)
        assert card.delta.startswith(f"{TOK_S.text(headline - base, signed=True)} "
                                     f"({PERCENT.text((headline / base - 1) * 100, signed=True)})")


def test_the_demos_k2_delta_is_its_headline_ratio_minus_one(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The numbers the issue measured: the headline 51.8 (Σtok/Σtime), not the mean of runs 51.9, under the Δ."""
    app = run_page("views/compare.py", demo_db, monkeypatch)
    k2 = next(m for m in app.metric if m.label == "k2-drafter")
    assert (k2.value, k2.delta) == ("51.8 tok/s", "-30.2 tok/s (-36.8%) · slower")
    table = compare_table(app)
    assert table.loc["k2-drafter", "Δ %"] / 100 == pytest.approx(10155 / 196.11 / table.loc["baseline", "Σtok/Σtime"] - 1)


def ratio_interval(runs: pd.DataFrame, base: pd.DataFrame) -> tuple[float, float, float]:
    """Σtok/Σtime(runs) − Σtok/Σtime(base) with Welch's 95% interval on the ratio estimators' standard errors, by hand."""
    def ratio_and_variance(frame: pd.DataFrame) -> tuple[float, float, int]:
        y, x = frame["output_tokens"].to_numpy(float), frame["duration_s"].to_numpy(float)
        ratio = y.sum() / x.sum()
        residual_var = ((y - ratio * x) ** 2).sum() / (len(y) - 1)
        return ratio, residual_var / x.mean() ** 2 / len(y), len(y)

    (a, va, na), (b, vb, nb) = ratio_and_variance(runs), ratio_and_variance(base)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = t_quantile(0.975, df) * math.sqrt(va + vb)
    return a - b, a - b - half, a - b + half


def test_the_delta_interval_is_welchs_on_the_ratio_estimators(demo_db: Path) -> None:
    summary = data.variant_summary(demo_db, ["phase-0"], PHASE0)
    comparison = compare.compare_variants(summary, data.accept_length(demo_db, ["phase-0"], PHASE0), "baseline")
    runs = data.runs(demo_db, ["phase-0"], PHASE0)
    measured = runs[~runs["is_warmup"]]
    for _, row in comparison[~comparison["is_baseline"]].iterrows():
        delta, low, high = ratio_interval(measured[measured["variant"] == row["variant"]],
                                          measured[measured["variant"] == "baseline"])
        assert (row["delta"], row["delta_low"], row["delta_high"]) == pytest.approx((delta, low, high), rel=1e-9)
        assert row["delta_low"] < row["delta"] < row["delta_high"]
        base = comparison.loc[comparison["is_baseline"], "headline"].iloc[0]
        assert row["delta_pct_low"] == pytest.approx(low / base * 100) and row["delta_pct_high"] == pytest.approx(high / base * 100)


def test_with_the_mean_of_runs_as_headline_the_delta_is_welchs_on_the_means(demo_db: Path) -> None:
    summary = data.variant_summary(demo_db, ["phase-0"], PHASE0)
    comparison = compare.compare_variants(summary, data.accept_length(demo_db, ["phase-0"], PHASE0), "baseline",
                                          MEAN_OF_RUNS).set_index("variant")
    assert comparison.loc["k2-drafter", "delta"] == pytest.approx(51.88 - 81.98)
    assert comparison.loc["k2-drafter", "delta_low"] == pytest.approx(-32.725, abs=1e-3)  # Welch on the runs' tok/s


def test_a_headline_without_tokens_keeps_the_means_spread(demo_db: Path) -> None:
    """Log lines carry no token counts: their Σtok/Σtime is the mean of the lines, and so is its spread."""
    sources = data.variant_sources(demo_db, [], [])
    lines = sources[sources["sample_unit"] == "log lines"]
    assert not lines.empty
    assert lines["tokens_over_time"].to_numpy() == pytest.approx(lines["mean_of_runs"].to_numpy())
    assert lines["sd_tokens_over_time"].to_numpy() == pytest.approx(lines["sd"].to_numpy(), nan_ok=True)
    single = sources[sources["n_runs"] == 1]
    assert single["sd_tokens_over_time"].isna().all()  # one sample: no spread, so no interval (not a zero one)


def test_a_summary_without_the_headlines_spread_gives_no_interval() -> None:
    summary = pd.DataFrame({"variant": ["b", "k"], "n_runs": [5, 5], "n_sessions": [1, 1], "mean_of_runs": [82.0, 52.0],
                            "tokens_over_time": [82.0, 51.8], "sd": [0.8, 2.0], "short_runs": [0, 0]})
    row = compare.compare_variants(summary, pd.DataFrame(), "b", TOKENS_OVER_TIME).set_index("variant").loc["k"]
    assert row["delta"] == pytest.approx(51.8 - 82.0) and pd.isna(row["delta_low"])
    assert row["verdict"] == "too few runs to tell"  # not an interval borrowed from another estimator


# --- axis ticks at the declared precision --------------------------------------------------------------

def ticks(axis: go.layout.XAxis | go.layout.YAxis) -> tuple[str | None, str | None]:
    return axis.tickformat, axis.ticksuffix


def declared(quantity: Quantity) -> tuple[str | None, str | None]:
    settings = quantity.ticks()
    return settings["tickformat"], settings.get("ticksuffix")


def test_quantities_tick_at_their_declared_precision() -> None:
    assert TOK_S.ticks() == {"tickformat": ",.1f"}  # a tok/s axis never reads 51.83333
    assert SHARE.ticks() == {"tickformat": ",.0%"}  # a rate axis reads the rate's format
    assert PERCENT.ticks() == {"tickformat": ",.1f", "ticksuffix": "%"}
    assert MS.ticks()["tickformat"] == ",.2f" and ACCEPT.ticks()["tickformat"] == ",.2f"
    assert RATIO.ticks()["tickformat"] == ",.2f" and COUNT.ticks()["tickformat"] == ",.0f"


T0 = pd.Timestamp("2026-02-10 14:00:00")


def test_every_builders_axes_carry_their_quantitys_format() -> None:
    runs = pd.DataFrame({"variant": ["b", "k"], "session_id": ["s", "t"], "run_index": [1, 1], "is_warmup": [False, False],
                         "output_tokens": [2048, 2048], "max_tokens": [2048, 2048], "hit_max_tokens": [True, True],
                         "tok_per_s": [82.0, 51.8]})
    comparison = pd.DataFrame({"variant": ["b", "k"], "is_baseline": [True, False], "headline": [82.0, 51.8],
                               "mean_of_runs": [82.0, 51.8], "ci_low": [81.0, 50.0], "ci_high": [83.0, 53.0],
                               "delta_pct": [0.0, -36.8], "delta_pct_low": [None, -40.0], "delta_pct_high": [None, -33.7],
                               "verdict": ["baseline", "slower"]})
    points = pd.DataFrame({"label": ["k"], "variant": ["k"], "tokens_per_step": [1.58], "cost_ratio": [2.5], "source": ["x"]})
    trends = pd.DataFrame({"phase": ["p0"], "variant": ["k"], "headline": [51.8], "mean_of_runs": [51.9], "ci_low": [49.0],
                           "ci_high": [54.0], "tokens_per_step": [1.58]})
    series = pd.DataFrame({"ts": [T0, T0 + pd.Timedelta(seconds=1)], "gen_throughput": [80.0, 81.0],
                           "tokens_per_step": [1.6, 1.5], "running_req": [1.0, 1.0]})
    cycles = pd.DataFrame({"variant": ["k"], "cycle_ms": [30.5], "rank": [0], "cycle_idx": [1]})
    ranks = pd.DataFrame({"variant": ["k"], "rank": [0], "median_cycle_ms": [30.5], "median_verify_comm_ms": [28.0],
                          "communication_ms": [300.0], "complete_cycles": [10]})
    overview = pd.DataFrame({"variant": ["k"], "rank": [0], **{column: [1.0] for column in charts.CLASS_COLORS}})
    composition = pd.DataFrame({"variant": ["k"], "component": ["draft"], "mean_ms": [1.0]})
    expected: list[tuple[str, go.Figure, str, Quantity]] = [
        ("tok/s per run", charts.tok_per_s_points(runs, comparison, "Σ tokens ÷ Σ time"), "yaxis", TOK_S),
        ("Δ forest", charts.delta_forest(comparison), "xaxis", PERCENT),
        ("plane τ", charts.breakeven_plane(points, ISO_SPEEDUPS), "xaxis", ACCEPT),
        ("plane r", charts.breakeven_plane(points, ISO_SPEEDUPS), "yaxis", RATIO),
        ("trends tok/s", charts.phase_trends(trends, ["p0"], "Σ tokens ÷ Σ time"), "yaxis", TOK_S),
        ("trends τ", charts.phase_trends(trends, ["p0"], "Σ tokens ÷ Σ time"), "yaxis2", ACCEPT),
        ("log tok/s", charts.decode_window(series, runs.iloc[0:0].assign(started_at=[], ended_at=[])), "yaxis", TOK_S),
        ("log τ", charts.decode_window(series, runs.iloc[0:0].assign(started_at=[], ended_at=[])), "yaxis2", ACCEPT),
        ("log requests", charts.decode_window(series, runs.iloc[0:0].assign(started_at=[], ended_at=[])), "yaxis3", COUNT),
        ("cycle stack", charts.cycle_stack(composition, pd.DataFrame(columns=["variant", "cycle_ms"])), "xaxis", MS),
        ("cycle distribution", charts.cycle_distribution(cycles), "xaxis", MS),
        ("rank cycles", charts.rank_cycles(ranks), "xaxis", MS),
        ("kernel classes", charts.trace_class_bars(overview), "xaxis", MS),
    ]
    curves = pd.DataFrame({"variant": ["k"] * 2, "origin": ["o"] * 2, "position": [1, 2], "survival": [0.6, 0.3],
                           "conditional": [0.6, 0.5], "low": [None, None], "high": [None, None], "samples": [3, 3]})
    position = acceptance_charts.position_figure(curves, 0.5, {})
    bins = pd.DataFrame({"variant": ["k"], "start": [1.5], "end": [1.6], "requests": [3]})
    ecdf = pd.DataFrame({"variant": ["k"], "accept_length": [1.55], "share": [1.0], "requests": [3]})
    requests = acceptance_charts.request_figure(bins, ecdf)
    model = pd.DataFrame({"steps": [1, 2], "speedup": [1.1, 1.2], "tokens_per_cycle": [1.6, 1.9], "cycle_ms": [20.0, 22.0],
                          "best": [False, True]})
    steps = acceptance_charts.steps_figure({"k": model})
    expected += [
        ("survival", position, "yaxis", SHARE), ("conditional", position, "yaxis2", SHARE),
        ("positions", position, "xaxis", COUNT),
        ("requests per bin", requests, "yaxis", COUNT), ("share of requests", requests, "yaxis2", SHARE),
        ("request accept length", requests, "xaxis", ACCEPT),
        ("modelled speedup", steps, "yaxis", RATIO), ("drafted tokens", steps, "xaxis", COUNT),
    ]
    curve = pd.DataFrame({"variant": ["k", "k"], "batch_size": [1, 4], "speedup": [1.2, 0.9], "speedup_sd": [None, None],
                          "config": ["c", "c"], "throughput": [90.0, 70.0], "base_throughput": [80.0, 80.0],
                          "tau": [1.6, 1.5], "cycle_ms": [20.0, 25.0], "cycle_from": ["x", "x"], "cost_ratio": [1.3, 1.7],
                          "r_from": ["modelled", "modelled"]})
    base = pd.DataFrame({"batch_size": [1, 4], "cycle_ms": [12.0, 14.0]})
    cause = sweep_charts.cause_chart(curve, base, "batch_size")
    path = sweep_charts.path_chart(curve, "batch_size")
    expected += [
        ("sweep speedup", sweep_charts.speedup_chart(curve, "batch_size", []), "yaxis", RATIO),
        ("sweep τ", cause, "yaxis", ACCEPT), ("sweep cycle", cause, "yaxis2", MS),
        ("sweep path τ", path, "xaxis", ACCEPT), ("sweep path r", path, "yaxis", RATIO),
    ]
    for name, figure, axis, quantity in expected:
        assert ticks(figure.layout[axis]) == declared(quantity), name
    # a sweep's log axis is ticked at the measured values, each written as its quantity (batch size: a count)
    assert list(cause.layout.xaxis.ticktext) == [COUNT.number(1), COUNT.number(4)]


def test_the_drafter_divergence_axis_is_in_percent() -> None:
    where = pd.DataFrame({"first_draft_id": [0], "last_draft_id": [9], "share_differing": [0.25]})

    class Found:  # the fields divergence_chart reads of a drafter_checks.Comparison
        name_a, name_b, first_difference = "a", "b", 3

    figure = drafter_frames.divergence_chart(where, Found())  # type: ignore[arg-type]
    assert ticks(figure.layout.yaxis) == declared(PERCENT) and ticks(figure.layout.xaxis)[0] == COUNT.d3()


def test_the_compare_pages_axes_tick_at_the_declared_precision(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    specs = figure_specs(run_page("views/compare.py", demo_db, monkeypatch))
    points, forest = specs[0], specs[1]
    assert points["layout"]["yaxis"]["tickformat"] == TOK_S.d3()
    assert (forest["layout"]["xaxis"]["tickformat"], forest["layout"]["xaxis"]["ticksuffix"]) == declared(PERCENT)


def test_a_decision_frozen_with_the_old_delta_says_what_changed(demo_db: Path) -> None:
    """A decision recorded when Δ was on the mean of runs (before issue #30) is stale, and says why in shown numbers."""
    from dashboard.analysis import evidence

    row = next(r for _, r in data.decisions(demo_db).iterrows()
               if {"k2-drafter", "from-scratch"} <= {v["variant"] for v in evidence.frozen(r)["variants"]})
    now = evidence.frozen(row)
    then = {**now, "variants": [{**v, "delta": v["delta"] if v["variant"] == "baseline" else v["mean_of_runs"] - 81.98}
                                for v in now["variants"]]}
    changes = evidence.what_changed(then, now)
    assert "k2-drafter: Δ tok/s -30.1 → -30.2" in changes
    assert not any(c.startswith("from-scratch") for c in changes)  # -21.98 → -22.01: both read -22.0
