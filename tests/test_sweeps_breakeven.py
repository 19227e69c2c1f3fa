"""Sweeps on the Break-even page (issue #21): each sweep a path in the (τ, r) plane, its labels clear of the plane's
own, hover naming the batch; nothing changes when no sweep exists."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard import charts, sweep_charts
from dashboard.analysis import compare, sweeps
from tests.test_app import run_page, texts

POINTS = pd.DataFrame({"label": ["base", "fs · p0", "fs (trace)", "k2 · p0", "k2 (trace)"],
                       "variant": ["base", "fs", "fs", "k2", "k2"],
                       "tokens_per_step": [1.0, 2.0, 2.0, 1.58, 1.58], "cost_ratio": [1.0, 2.73, 2.70, 2.50, 2.50],
                       "source": ["session", "session", "trace", "session", "trace"]})
NEEDS = pd.DataFrame({"variant": ["fs", "k2"], "tokens_per_step": [2.0, 1.58], "cost_ratio": [2.70, 2.50]})


def plane() -> object:
    return charts.breakeven_plane(POINTS, compare.ISO_SPEEDUPS, NEEDS)


def demo_path(demo_db: Path, phase: str = "phase-0") -> pd.DataFrame:
    found = sweeps.points(demo_db)
    return sweeps.break_even_path(found[found["phase"] == phase])


def label_clashes(figure: object) -> list[tuple[str, str]]:
    fig = figure  # the same geometry as tests/test_display_formats.py's check of the plane alone
    scale = (charts.PLANE_PLOT_PX[0] / fig.layout.xaxis.range[1], charts.PLANE_PLOT_PX[1] / fig.layout.yaxis.range[1])
    boxes = [(a.text, charts.tag_box(charts.Tag(a.x, a.y, a.text, "", a.xanchor, a.yanchor, a.xshift or 0, a.yshift or 0),
                                     scale)) for a in fig.layout.annotations]
    markers = [charts.marker_box(x, y, scale, size) for trace in fig.data if trace.mode in ("markers", "lines+markers")
               and trace.x is not None for x, y, size in zip(
                   trace.x, trace.y, (trace.marker.size if isinstance(trace.marker.size, tuple) else [13] * len(trace.x)),
                   strict=True) if x is not None]
    return [(a, b if isinstance(b, str) else "a marker") for i, (a, box) in enumerate(boxes)
            for b, other in [*boxes[i + 1:], *(("marker", m) for m in markers)] if charts.overlap(box, other)]


def test_no_sweep_leaves_the_plane_as_it_was() -> None:
    before = plane()
    after = sweep_charts.break_even_paths(plane(), sweeps.break_even_path(pd.DataFrame(columns=["sweep"])))
    assert after.to_json() == before.to_json()


def test_the_demo_sweeps_are_paths_with_hover_and_clear_labels(demo_db: Path) -> None:
    path = demo_path(demo_db)
    fig = sweep_charts.break_even_paths(plane(), path)
    drawn = {t.name: t for t in fig.data if (t.name or "").endswith("→ 32")}
    assert sorted(drawn) == ["from-scratch: sweep, batch size 1 → 32", "k2-drafter: sweep, batch size 1 → 32"]
    k2 = drawn["k2-drafter: sweep, batch size 1 → 32"]
    assert [c[0] for c in k2.customdata] == ["1", "2", "4", "8", "16", "32"] and "batch size %{customdata[0]}" in k2.hovertemplate
    assert list(k2.x) == pytest.approx(path[path["variant"] == "k2-drafter"]["tau"].tolist())
    assert max(k2.x) < 1.75  # the K2 drafter's τ stays low at every batch: its wrong mapping, whatever the config
    assert {"batch size 32"} <= {a.text for a in fig.layout.annotations}
    assert label_clashes(fig) == []


def test_a_path_beyond_the_plane_grows_it() -> None:
    far = pd.DataFrame({"sweep": ["s"] * 2, "variant": ["fs"] * 2, "axis": ["batch size"] * 2, "x": [1, 64],
                        "tau": [3.0, 5.5], "cost_ratio": [2.0, 6.0], "r_from": ["estimated: τ ÷ speedup"] * 2})
    fig = sweep_charts.break_even_paths(plane(), far)
    assert fig.layout.xaxis.range[1] >= 5.5 * 1.1 - 1e-9 and fig.layout.yaxis.range[1] >= 6.0 * 1.1 - 1e-9
    lose = next(t for t in fig.data if t.name.startswith("speculation loses"))
    assert max(lose.x) == fig.layout.xaxis.range[1] and max(lose.y) == fig.layout.yaxis.range[1]
    assert "batch size 64 (r est.)" in {a.text for a in fig.layout.annotations} and label_clashes(fig) == []


def test_the_break_even_page_draws_the_phase_sweeps(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/breakeven.py", demo_db, monkeypatch, {"phase": "phase-0"})
    shown = texts(app)
    assert "Dotted paths" in shown and "modelled" in shown and "from-scratch, k2-drafter" in shown
    app = run_page("views/breakeven.py", demo_db, monkeypatch, {"phase": "phase-2"})  # no sweep in phase 2
    assert "Dotted paths" not in texts(app)
