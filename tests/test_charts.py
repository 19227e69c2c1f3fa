"""Chart builders are pure: small frames in, figures whose traces say what the page promises."""
from __future__ import annotations

import pandas as pd
import pytest

from dashboard import charts
from dashboard.analysis.compare import ISO_SPEEDUPS
from dashboard.analysis.definitions import ACCEPT, COUNT

T0 = pd.Timestamp("2026-02-10 14:00:00")


def runs_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "variant": ["base", "base", "k2", "k2", "k2"],
        "session_id": ["b-0", "b-0", "k-0", "k-0", "k-0"],
        "run_index": [1, 2, 1, 2, 1],
        "is_warmup": [False, False, False, False, True],
        "output_tokens": [2048, 2048, 2048, 1963, 256],
        "max_tokens": [2048] * 5,
        "hit_max_tokens": [True, True, True, False, True],
        "tok_per_s": [82.0, 81.5, 50.6, 54.6, 44.6],
        "started_at": [T0, T0 + pd.Timedelta(seconds=30), T0 + pd.Timedelta(seconds=60), T0 + pd.Timedelta(seconds=100),
                       T0 - pd.Timedelta(seconds=10)],
        "ended_at": [T0 + pd.Timedelta(seconds=25), T0 + pd.Timedelta(seconds=55), T0 + pd.Timedelta(seconds=95),
                     T0 + pd.Timedelta(seconds=130), T0 - pd.Timedelta(seconds=5)],
    })


def comparison_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "variant": ["base", "k2", "noise"], "is_baseline": [True, False, False], "headline": [81.75, 52.6, 81.0],
        "mean_of_runs": [81.75, 52.6, 81.0], "ci_low": [79.0, 27.2, 78.0], "ci_high": [84.5, 78.0, 84.0],
        "delta_pct": [0.0, -35.7, -0.9], "delta_pct_low": [None, -60.0, -4.0], "delta_pct_high": [None, -10.0, 2.0],
        "verdict": ["baseline", "slower", "within noise"],
    })


def test_points_are_measured_runs_with_clickable_session_and_run() -> None:
    fig = charts.tok_per_s_points(runs_frame(), comparison_frame(), "Σ tokens ÷ Σ time", baseline="base")
    run_traces = [t for t in fig.data if t.name.endswith(" runs")]
    assert [len(t.y) for t in run_traces] == [2, 2, 0]  # the warm-up is not plotted
    k2 = run_traces[1]
    assert list(k2.marker.symbol) == ["circle", "x"]  # run 2 stopped short of max_tokens
    assert [tuple(c[:2]) for c in k2.customdata] == [("k-0", 1), ("k-0", 2)]
    means = fig.data[-1]
    assert list(means.y) == [81.75, 52.6, 81.0]
    assert list(means.error_y.array) == pytest.approx([2.75, 25.4, 3.0])
    assert any(shape.y0 == 81.75 for shape in fig.layout.shapes)  # the baseline line


def test_delta_forest_colours_by_direction_and_skips_the_baseline() -> None:
    fig = charts.delta_forest(comparison_frame())
    colours = {t.name: t.marker.color for t in fig.data}
    assert colours == {"k2": charts.SLOWER, "noise": charts.NEUTRAL}
    k2 = next(t for t in fig.data if t.name == "k2")
    assert list(k2.error_x.arrayminus) == pytest.approx([24.3]) and list(k2.error_x.array) == pytest.approx([25.7])


def test_breakeven_plane_has_iso_lines_losing_region_and_labelled_points() -> None:
    points = pd.DataFrame({"label": ["base · p0", "k2 · p0"], "variant": ["base", "k2"], "tokens_per_step": [1.0, 1.58],
                           "cost_ratio": [1.0, 2.50], "source": ["estimate", "estimate"]})
    needs = pd.DataFrame({"variant": ["k2"], "tokens_per_step": [1.58], "cost_ratio": [2.50]})
    fig = charts.breakeven_plane(points, ISO_SPEEDUPS, needs)
    names = [t.name for t in fig.data]
    assert "speculation loses (S < 1: r > τ)" in names and "break-even (S = 1: τ = r)" in names
    iso = [t for t in fig.data if t.name and t.name.startswith("S = ")]
    assert len(iso) == len(ISO_SPEEDUPS) - 1
    for trace in iso:  # every iso line has slope 1/S through the origin
        speedup = float(trace.name.split("= ")[1])
        assert trace.y[1] == pytest.approx(trace.x[1] / speedup)
    k2 = next(t for t in fig.data if t.name == "k2")
    assert (list(k2.x), list(k2.y), list(k2.text)) == ([1.58], [2.5], ["k2 · p0"])
    guides = [t for t in fig.data if t.mode == "lines" and t.line.dash == "dash"]
    assert sorted(tuple(t.x) for t in guides) == [(1.58, 1.58), (1.58, 2.5)]  # to τ = r horizontally and vertically
    assert {a.text for a in fig.layout.annotations} >= {"τ ≥ 2.50", "r ≤ 1.58"}


def test_breakeven_plane_without_points_still_draws_the_frame() -> None:
    fig = charts.breakeven_plane(pd.DataFrame(columns=["label", "variant", "tokens_per_step", "cost_ratio", "source"]),
                                 ISO_SPEEDUPS)
    assert fig.layout.xaxis.range == (0, 4.0)


def test_decode_window_shades_runs_and_marks_prefill() -> None:
    series = pd.DataFrame({"ts": [T0 + pd.Timedelta(seconds=s) for s in (1, 2, 61)], "gen_throughput": [0.4, 80.0, 50.0],
                           "tokens_per_step": [None, None, 1.6], "running_req": [1.0, 1.0, 1.0], "first_line_no": [10, 11, 40]})
    prefill = pd.DataFrame({"ts": [T0, T0 + pd.Timedelta(seconds=60)], "new_token": [32, 31], "line_no": [9, 39]})
    session = runs_frame().query("session_id == 'k-0'")
    fig = charts.decode_window(series, session, prefill, selected_run=2)
    assert [t.name for t in fig.data] == ["gen throughput", "accept length", "#running-req", "prefill batch"]
    fills = [shape.fillcolor for shape in fig.layout.shapes]  # each run shaded across the 3 stacked panels
    assert [fills.count(c) for c in (charts.MEASURED_RUN_FILL, charts.SELECTED_FILL, charts.WARMUP_FILL)] == [3, 3, 3]
    assert "yellow: selected run" in fig.layout.title.text
    assert fig.layout.yaxis3.dtick == 1  # one running request: a tick per request, not "0, 1, 1, 1" at halves


def test_a_whole_number_axis_gets_a_tick_per_unit_only_while_it_is_short() -> None:
    assert COUNT.ticks(1)["dtick"] == 1 and COUNT.ticks(6)["dtick"] == 1
    assert "dtick" not in COUNT.ticks(7) and "dtick" not in COUNT.ticks() and "dtick" not in ACCEPT.ticks(2)


def test_decode_window_without_speculation_says_so() -> None:
    series = pd.DataFrame({"ts": [T0], "gen_throughput": [80.0], "tokens_per_step": [None], "running_req": [1.0]})
    fig = charts.decode_window(series, runs_frame().iloc[0:0])
    assert "accept length" not in [t.name for t in fig.data]
    assert any("no speculation" in a.text for a in fig.layout.annotations)


def test_phase_timeline_and_trends() -> None:
    overview = pd.DataFrame({"phase": ["p0", "p1"], "first_at": [T0, T0 + pd.Timedelta(days=7)],
                             "last_at": [T0 + pd.Timedelta(days=1), T0 + pd.Timedelta(days=8)], "sessions": [3, 1],
                             "measured_runs": [15, 5]})
    decisions = pd.DataFrame({"phase": ["p0"], "verdict": ["rejected"], "created_at": [T0 + pd.Timedelta(days=1)],
                              "title": ["K2 as-is"]})
    timeline = charts.phase_timeline(overview, decisions)
    assert [t.name for t in timeline.data] == ["p0", "p1", "decision: rejected"]
    assert timeline.data[-1].marker.color == charts.SLOWER
    trends = pd.DataFrame({"phase": ["p0", "p1", "p0"], "variant": ["k2", "k2", "base"], "headline": [51.8, 70.0, 82.0],
                           "mean_of_runs": [51.9, 70.0, 82.0], "ci_low": [49.2, 68.0, 81.0], "ci_high": [54.6, 72.0, 83.0],
                           "tokens_per_step": [1.58, 2.4, None]})
    fig = charts.phase_trends(trends, ["p0", "p1"], "Σ tokens ÷ Σ time")
    by_axis = {(t.name, t.xaxis): list(t.y) for t in fig.data}
    assert by_axis[("k2", "x")] == [51.8, 70.0] and by_axis[("k2", "x2")] == [1.58, 2.4]
    assert ("base", "x2") not in by_axis  # no accept length without speculation
