"""What keeps the dashboard fast and small at 10,000 sessions: dense charts drawn with WebGL showing the same
runs, downloads that hold loaders instead of frames, caches that forget old change ids."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import charts, memory, queries
from dashboard.analysis import data, sampling


def many_runs(per_variant: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    rows = []
    for variant, speed in (("base", 82.0), ("k2", 51.8)):
        for index in range(per_variant):
            short = index % 10 == 3
            rows.append({"variant": variant, "session_id": f"{variant}-{index // 5}", "run_index": index % 5 + 1,
                         "is_warmup": False, "output_tokens": 1900 if short else 2048, "max_tokens": 2048,
                         "hit_max_tokens": not short, "tok_per_s": speed + rng.normal()})
    comparison = pd.DataFrame({"variant": ["base", "k2"], "is_baseline": [True, False], "headline": [82.0, 51.8],
                               "mean_of_runs": [82.0, 51.8], "ci_low": [81.9, 51.7], "ci_high": [82.1, 51.9]})
    return pd.DataFrame(rows), comparison


def points_of(fig, variant: str) -> pd.DataFrame:
    """Every run point of a variant's traces: x, y, symbol and (session, run), in x order."""
    rows = []
    for trace in fig.data:
        if trace.name != f"{variant} runs":
            continue
        symbols = trace.marker.symbol if isinstance(trace.marker.symbol, (list, tuple)) else [trace.marker.symbol] * len(trace.x)
        for x, y, symbol, custom in zip(trace.x, trace.y, symbols, trace.customdata):
            rows.append({"x": x, "y": y, "symbol": symbol, "session": custom[0], "run": custom[1]})
    return pd.DataFrame(rows).sort_values("x").reset_index(drop=True)


def test_dense_runs_are_drawn_with_webgl_and_show_the_same_points(monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the sampling budget only a sample is drawn (tests/test_run_point_sampling.py); WebGL is for when more
    # points than WEBGL_ABOVE_POINTS are drawn all the same (many variants, each at its floor): a budget that big here.
    monkeypatch.setattr(sampling, "RUN_POINTS_BUDGET", 10 * charts.WEBGL_ABOVE_POINTS)
    runs, comparison = many_runs(charts.WEBGL_ABOVE_POINTS)  # two variants: twice the threshold
    dense = charts.tok_per_s_points(runs, comparison, "Σ tokens ÷ Σ time", baseline="base")
    assert {type(t).__name__ for t in dense.data if t.name.endswith(" runs")} == {"Scattergl"}
    few = charts.tok_per_s_points(runs.iloc[::4], comparison, "Σ tokens ÷ Σ time", baseline="base")
    assert {type(t).__name__ for t in few.data if t.name.endswith(" runs")} == {"Scatter"}
    for variant in ("base", "k2"):
        drawn = points_of(dense, variant)
        assert len(drawn) == charts.WEBGL_ABOVE_POINTS
        assert drawn["y"].tolist() == runs[runs["variant"] == variant]["tok_per_s"].tolist()  # x order is run order
        assert (drawn["symbol"] == "x").sum() == charts.WEBGL_ABOVE_POINTS // 10  # the short runs, crossed
    means = dense.data[-1]
    assert list(means.y) == [82.0, 51.8]


def test_a_loader_reads_the_same_frame_later_without_holding_it(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDASH_DB", str(demo_db))
    load = queries.loader(data.runs, ["phase-0"], ["baseline", "k2-drafter"])
    assert not any(isinstance(value, pd.DataFrame) for value in load.args)
    pd.testing.assert_frame_equal(load(), data.runs(demo_db, ["phase-0"], ["baseline", "k2-drafter"]))


def test_cached_results_of_an_older_change_are_dropped(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDASH_DB", str(demo_db))
    monkeypatch.setattr(queries, "_latest_change", [])
    queries.forget_older_changes((str(demo_db), "first"))
    calls: list[str] = []

    def counted_phases(db: str) -> list[str]:
        calls.append(db)
        return ["phase-0"]

    def read() -> None:
        queries._cached("dashboard.analysis.data.phases", counted_phases, str(demo_db), "first", (), ())

    read()
    read()
    assert calls == [str(demo_db)]  # the second read was cached
    queries.forget_older_changes((str(demo_db), "second"))
    read()
    assert calls == [str(demo_db)] * 2  # recomputed: the older change's entries were dropped


def test_memory_hints_are_harmless_to_call_repeatedly() -> None:
    memory.cap_arenas()
    memory.cap_arenas()
    memory.give_back()


@pytest.fixture(scope="module")
def busy_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated store past the Compare page's thresholds: 1,100 sessions, 5,500 runs, 1.1 M decode lines."""
    from bench import gen_store

    db = tmp_path_factory.mktemp("busy") / "busy.duckdb"
    gen_store.build(db, 0.11)
    return db


def test_a_busy_compare_page_waits_for_a_click_before_its_long_runs_table(
    busy_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, open_sections

    monkeypatch.setenv("SPECDASH_DB", str(busy_store))
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["phase"] = ["phase-0", "phase-1", "phase-2", "phase-3", "phase-4"]
    app.run()
    assert not app.exception
    assert "w_compare_all_runs" not in [toggle.key for toggle in app.toggle]  # "Measured runs" runs when opened
    open_sections(app)
    toggle = app.toggle(key="w_compare_all_runs")
    assert toggle.label == "Show all 5,500 runs" and toggle.value is False
    keys = [frame.key for frame in app.dataframe]
    assert "w_compare_runs" not in keys
    toggle.set_value(True).run()
    table = next(frame for frame in app.dataframe if frame.key == "w_compare_runs")
    assert len(table.value) == 5500


def test_cached_readers_keep_the_readers_names_and_call_them_once_per_change(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECDASH_DB", str(demo_db))
    monkeypatch.setattr(queries, "_latest_change", [])
    queries._cached.clear()
    assert queries.runs.__name__ == "runs" and queries.runs.__doc__ == data.runs.__doc__
    pd.testing.assert_frame_equal(queries.runs(["phase-0"], ["baseline"]), data.runs(demo_db, ["phase-0"], ["baseline"]))
    assert queries.phases() == data.phases(demo_db)
    assert queries.variants(["phase-0"]) != queries.phases()  # two readers, two cache entries, no collision
