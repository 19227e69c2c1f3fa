"""Past a budget the tok/s-per-run chart draws a sample of each variant's runs: honest, deterministic, and said
so under the chart. Every number the page shows still comes from all runs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import charts, report
from dashboard.analysis import sampling
from dashboard.state import Keys

BUDGET, FLOOR = 600, 30


def variant_runs(variant: str, count: int, speed: float, short_every: int = 0, seed: int = 3) -> pd.DataFrame:
    """``count`` measured runs of one variant, 5 per session; every ``short_every``-th stopped short."""
    rng = np.random.default_rng(seed)
    short = np.zeros(count, dtype=bool) if not short_every else (np.arange(count) % short_every == 1)
    return pd.DataFrame({
        "variant": variant, "session_id": [f"{variant}-{i // 5:05d}" for i in range(count)], "run_index": np.arange(count) % 5 + 1,
        "is_warmup": False, "output_tokens": np.where(short, 1500, 2048), "max_tokens": 2048, "hit_max_tokens": ~short,
        "tok_per_s": speed + rng.normal(0, 4, count) - np.where(short, 6.0, 0.0),
    })


def store_runs(sizes: dict[str, int], short_every: int = 10) -> pd.DataFrame:
    parts = [variant_runs(name, size, 50.0 + 10 * i, short_every, seed=i) for i, (name, size) in enumerate(sizes.items())]
    return pd.concat(parts, ignore_index=True)


def drawn(runs: pd.DataFrame) -> pd.DataFrame:
    return sampling.drawn_runs(runs, BUDGET, FLOOR)


def per_variant(frame: pd.DataFrame) -> dict[str, int]:
    return frame.groupby("variant", sort=False).size().to_dict()


# --- the sample ------------------------------------------------------------------------------------

def test_within_the_budget_every_run_is_drawn_unchanged() -> None:
    runs = store_runs({"base": 300, "k2": 300})
    assert drawn(runs) is runs
    assert sampling.thinning_note(len(runs), len(drawn(runs))) is None


@pytest.mark.parametrize(("sizes", "expected"), [
    ({"base": 5000, "k2": 5000, "k3": 5000}, {"base": 200, "k2": 200, "k3": 200}),  # an equal share each
    ({"base": 5000, "k2": 40, "k3": 5000}, {"base": 280, "k2": 40, "k3": 280}),  # a small variant whole; its rest shared
    ({f"v{i:02d}": 1000 for i in range(40)}, {f"v{i:02d}": FLOOR for i in range(40)}),  # 40 × 15 < floor: the floor wins
])
def test_each_variant_gets_an_equal_share_small_ones_whole_and_never_less_than_the_floor(
    sizes: dict[str, int], expected: dict[str, int]
) -> None:
    assert per_variant(drawn(store_runs(sizes))) == expected


def test_the_sample_stays_within_the_budget_unless_the_floor_needs_more() -> None:
    for variants in (1, 2, 7, 20, 33):
        runs = store_runs({f"v{i}": 700 + 37 * i for i in range(variants)})
        size = len(drawn(runs))
        assert size <= max(BUDGET, FLOOR * variants)
        assert size >= min(BUDGET, len(runs)) - variants  # the share's rounding leaves at most one point per variant


def test_each_variants_fastest_and_slowest_runs_are_always_drawn() -> None:
    runs = store_runs({"base": 4000, "k2": 3000, "k3": 2000}, short_every=3)
    runs.loc[17, "tok_per_s"] = 5.0  # an outlier among base's short runs
    runs.loc[4001, "tok_per_s"] = 500.0  # and one among k2's full runs
    sample = drawn(runs)
    for variant, rows in runs.groupby("variant"):
        mine = sample[sample["variant"] == variant]
        assert mine["tok_per_s"].min() == rows["tok_per_s"].min()
        assert mine["tok_per_s"].max() == rows["tok_per_s"].max()


def test_runs_are_taken_at_evenly_spaced_ranks_of_tok_per_s() -> None:
    runs = store_runs({"base": 2000, "k2": 2000}, short_every=0)
    sample = drawn(runs)
    for variant, rows in runs.groupby("variant"):
        every = np.sort(rows["tok_per_s"].to_numpy())
        mine = np.sort(sample[sample["variant"] == variant]["tok_per_s"].to_numpy())
        ranks = np.round(np.linspace(0, len(every) - 1, len(mine))).astype(int)
        assert mine.tolist() == every[ranks].tolist()
        assert np.median(mine) == pytest.approx(np.median(every), abs=0.2)


def test_runs_that_stopped_short_keep_their_share() -> None:
    runs = store_runs({"base": 5000, "k2": 5000, "k3": 3000}, short_every=8)
    runs.loc[runs["variant"] == "k3", "hit_max_tokens"] = True
    runs.loc[12000, "hit_max_tokens"] = False  # k3: a single short run among 3,000
    sample = drawn(runs)
    for variant in ("base", "k2"):
        mine = sample[sample["variant"] == variant]
        assert sampling.is_short(mine).sum() == 25  # 1 in 8 of its 200 points
    k3 = sample[sample["variant"] == "k3"]
    assert sampling.is_short(k3).sum() == 1  # a lone short run still shows as a cross


def test_the_same_runs_give_the_same_points_in_any_row_order() -> None:
    runs = store_runs({"base": 3000, "k2": 2500, "k3": 900}, short_every=6)
    first, again = drawn(runs), drawn(runs.copy())
    pd.testing.assert_frame_equal(first, again)
    shuffled = drawn(runs.sample(frac=1.0, random_state=11))
    key = ["variant", "session_id", "run_index"]
    assert sorted(map(tuple, shuffled[key].to_numpy())) == sorted(map(tuple, first[key].to_numpy()))


def test_drawn_rows_are_real_runs_in_their_original_order() -> None:
    runs = store_runs({"base": 3000, "k2": 3000})
    sample = drawn(runs)
    assert sample.index.is_monotonic_increasing
    pd.testing.assert_frame_equal(sample, runs.loc[sample.index])


def test_runs_without_tok_per_s_are_left_out_of_a_sample() -> None:
    runs = store_runs({"base": 3000, "k2": 3000})
    runs.loc[::7, "tok_per_s"] = np.nan
    assert drawn(runs)["tok_per_s"].notna().all()
    runs.loc[runs.index % 20 != 0, "tok_per_s"] = np.nan  # 300 left to draw: within the budget, nothing thinned
    assert drawn(runs) is runs and sampling.run_points_note(runs) is None


# --- the chart and its caption -----------------------------------------------------------------------

def comparison_of(runs: pd.DataFrame) -> pd.DataFrame:
    means = runs.groupby("variant", sort=False)["tok_per_s"].mean()
    return pd.DataFrame({"variant": means.index, "is_baseline": [i == 0 for i in range(len(means))], "headline": means.values,
                         "mean_of_runs": means.values, "ci_low": means.values - 1, "ci_high": means.values + 1})


def test_the_chart_draws_the_sample_with_each_points_session_and_run() -> None:
    runs = store_runs({"base": 3000, "k2": 3000, "k3": 3000})
    fig = charts.tok_per_s_points(runs, comparison_of(runs), "Σ tokens ÷ Σ time", baseline="base")
    points = [t for t in fig.data if t.name.endswith(" runs")]
    expected = sampling.drawn_runs(runs)
    assert sum(len(t.y) for t in points) == len(expected) == sampling.RUN_POINTS_BUDGET
    assert {type(t).__name__ for t in points} == {"Scatter"}  # SVG: fewer points than WebGL is worth setting up
    base = next(t for t in points if t.name == "base runs")
    mine = expected[expected["variant"] == "base"]
    assert [tuple(c[:2]) for c in base.customdata] == list(zip(mine["session_id"], mine["run_index"]))
    assert list(fig.data[-1].y) == pytest.approx(comparison_of(runs)["mean_of_runs"].tolist())  # means: from all runs


def test_the_caption_says_how_many_runs_are_drawn_and_that_numbers_use_all() -> None:
    runs = store_runs({"base": 3000, "k2": 3000, "k3": 3000})
    note = sampling.run_points_note(runs)
    assert note is not None and note.startswith(f"Drawing {sampling.RUN_POINTS_BUDGET:,} of 9,000 measured runs")
    assert "min and max kept" in note and "uses all runs" in note and "runs table and the download" in note
    assert sampling.run_points_note(store_runs({"base": 20, "k2": 20})) is None


def test_the_html_report_carries_the_caption_under_its_chart() -> None:
    runs = store_runs({"base": 3000, "k2": 3000})
    comparison = comparison_of(runs)
    page = report.compare_report_of("base vs k2", pd.DataFrame({"variant": ["base", "k2"]}), pd.DataFrame(), lambda: runs,
                                    comparison, "Σ tokens ÷ Σ time", None)
    assert "Drawing 600 of 6,000 measured runs" in page
    small = store_runs({"base": 30, "k2": 30})
    assert "measured runs (per variant" not in report.compare_report_of(
        "base vs k2", pd.DataFrame({"variant": ["base", "k2"]}), pd.DataFrame(), lambda: small, comparison_of(small), "m", None)


# --- the Compare page ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 sessions, 1,000 runs: the latest phase alone (200 runs) fits the budget, every phase does not."""
    from bench import gen_store

    db = tmp_path_factory.mktemp("sampled") / "sampled.duckdb"
    gen_store.build(db, 0.02)
    return db


EVERY_PHASE = {"phase": ["phase-0", "phase-1", "phase-2", "phase-3", "phase-4"]}


@pytest.fixture
def one_chart_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """All 20 variants on one chart page (Compare pages charts at 12 variants): the thinning is what is tested."""
    from dashboard.analysis import compare

    monkeypatch.setattr(compare, "VARIANTS_PER_VIEW", 20)


def thinning_captions(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.value for c in app.caption if c.value.startswith("Drawing ")]


def test_the_compare_page_says_so_only_when_it_thins(generated_store: Path, monkeypatch: pytest.MonkeyPatch,
                                                     one_chart_page: None) -> None:
    from tests.test_app import run_page

    every = run_page("views/compare.py", generated_store, monkeypatch, EVERY_PHASE)
    assert thinning_captions(every) == [
        f"Drawing {sampling.RUN_POINTS_BUDGET:,} of 1,000 measured runs (per variant, evenly spaced by tok/s, min and max kept, "
        "stopped-short runs in proportion); the mean ± CI uses all runs; every run is in the runs table and the download."
    ]
    latest = run_page("views/compare.py", generated_store, monkeypatch)
    assert thinning_captions(latest) == []


def shown_numbers(app) -> tuple[list[pd.DataFrame], list[tuple[str, str, str]]]:  # type: ignore[no-untyped-def]
    tables = [frame.value for frame in app.dataframe if frame.key in (Keys.compare_table, Keys.compare_why)]
    metrics = [(m.label, m.value, m.delta) for m in app.metric]
    return tables, metrics


def test_every_number_on_the_compare_page_is_the_same_with_and_without_thinning(
    generated_store: Path, monkeypatch: pytest.MonkeyPatch, one_chart_page: None
) -> None:
    from tests.test_app import run_page

    thinned = run_page("views/compare.py", generated_store, monkeypatch, EVERY_PHASE)
    monkeypatch.setattr(sampling, "RUN_POINTS_BUDGET", 10**9)
    whole = run_page("views/compare.py", generated_store, monkeypatch, EVERY_PHASE)
    assert thinning_captions(thinned) and not thinning_captions(whole)
    thinned_tables, thinned_metrics = shown_numbers(thinned)
    whole_tables, whole_metrics = shown_numbers(whole)
    assert len(thinned_tables) == 2 and len(thinned_tables[0]) == 20  # every variant of the store
    for left, right in zip(thinned_tables, whole_tables, strict=True):
        pd.testing.assert_frame_equal(left, right)
    assert thinned_metrics == whole_metrics and len(thinned_metrics) == 20
    assert [c.value for c in thinned.caption if not c.value.startswith("Drawing ")] == [
        c.value for c in whole.caption if not c.value.startswith("Drawing ")]


def test_compare_pages_its_cards_and_charts_at_twelve_variants(generated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard.analysis import compare
    from tests.test_app import run_page

    app = run_page("views/compare.py", generated_store, monkeypatch, EVERY_PHASE)
    [pager] = [s for s in app.selectbox if s.key == Keys.compare_page]
    assert pager.label == f"20 variants: the charts show {compare.VARIANTS_PER_VIEW} at a time"
    assert len(app.metric) == compare.VARIANTS_PER_VIEW
    pager.select(1).run()
    assert len(app.metric) == 20 - compare.VARIANTS_PER_VIEW + 1  # the rest, with the baseline first again
    tables, _ = shown_numbers(app)
    assert len(tables[0]) == 20  # the tables hold every variant whatever the chart page
