"""The per-request figures of the Acceptance page, aggregated in SQL, against their definitions computed here in
plain Python from the view's rows: on the demo store, on a store of 5,000 generated vLLM responses (more than the
ECDF's point budget), and on a store of one request."""
from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from bench.bench_acceptance import generate
from dashboard.acceptance_charts import request_figure
from dashboard.analysis import acceptance, stats
from dashboard.analysis.definitions import COUNT
from ingest.pipeline import ingest_paths


def view_rows(db: Path) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT * FROM acceptance_request_rows WHERE accept_length IS NOT NULL").df()


def generated_store(folder: Path, records: int, variant: str) -> Path:
    responses = folder / f"responses-{records}.jsonl"
    generate(responses, records)
    db = folder / f"requests-{records}.duckdb"
    assert not any(report.failed for report in ingest_paths([responses], db, variant=variant))
    return db


@pytest.fixture(scope="module")
def many_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated_store(tmp_path_factory.mktemp("many"), 5000, "many")


@pytest.fixture(scope="module")
def one_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated_store(tmp_path_factory.mktemp("one"), 1, "one")


@pytest.fixture(params=["demo_db", "many_db", "one_db"])
def db(request: pytest.FixtureRequest) -> Path:
    return Path(request.getfixturevalue(request.param))


def survival(histogram: list[int]) -> list[float]:
    """S(k) = Σ_{i≥k} h[i] ÷ Σ h, k = 1 … len(h)−1, one request at a time."""
    total = sum(histogram)
    return [sum(histogram[k:]) / total for k in range(1, len(histogram))]


def test_request_curves_pool_every_requests_histogram_by_its_steps(db: Path) -> None:
    rows = view_rows(db)
    curves = acceptance.request_curves(db).set_index(["variant", "position"])
    held = rows[rows["histogram"].map(lambda h: h is not None and len(h) >= 2 and sum(h) > 0)]
    assert len(held) > 0
    for variant, group in held.groupby("variant"):
        per_request = [(sum(h), survival(list(h))) for h in group["histogram"]]
        for k in range(1, max(len(s) for _, s in per_request) + 1):
            at_k = [(steps, s[k - 1]) for steps, s in per_request if len(s) >= k]
            point = curves.loc[(variant, k)]
            assert point["survival"] == pytest.approx(sum(w * s for w, s in at_k) / sum(w for w, _ in at_k))
            assert point["samples"] == len(at_k) and point["weight"] == sum(w for w, _ in at_k)
            if len(at_k) > 1:
                values = [s for _, s in at_k]
                assert (point["low"], point["high"]) == pytest.approx(tuple(np.quantile(values, acceptance.SPREAD)))
            else:
                assert point["low"] is None or pd.isna(point["low"])
        tau = 1.0 + curves.loc[variant]["survival"].sum()
        assert curves.loc[variant]["accept_length"].iloc[0] == pytest.approx(tau)
        assert set(curves.loc[variant]["origin"]) == {acceptance.REQUEST_ORIGIN}


def test_request_distribution_is_the_quantiles_mean_ci_and_step_pooled_value(db: Path) -> None:
    rows = view_rows(db)
    distribution = acceptance.request_distribution(db).set_index("variant")
    assert set(distribution.index) == set(rows["variant"])
    for variant, group in rows.groupby("variant"):
        lengths = group["accept_length"].astype(float).tolist()
        got = distribution.loc[variant]
        assert got["requests"] == len(lengths)
        assert [got["p10"], got["p50"], got["p90"]] == pytest.approx(list(np.quantile(lengths, [0.1, 0.5, 0.9])))
        ci = stats.mean_ci(lengths)
        assert got["mean"] == pytest.approx(ci.mean)
        if len(lengths) > 1:
            assert (got["ci_low"], got["ci_high"]) == pytest.approx((ci.low, ci.high))
        else:
            assert got["ci_low"] is None and got["ci_high"] is None
        steps = group["spec_steps"]
        if steps.notna().all():
            assert got["pooled"] == pytest.approx(sum(a * s for a, s in zip(lengths, steps, strict=True)) / steps.sum())


def test_request_histogram_counts_every_request_once_in_its_bin(db: Path) -> None:
    rows = view_rows(db)
    bins = acceptance.request_histogram(db)
    for variant, group in rows.groupby("variant"):
        expected = pd.Series([math.floor(a / acceptance.HISTOGRAM_BIN + 1e-9) for a in group["accept_length"]]).value_counts()
        got = bins[bins["variant"] == variant]
        assert got["requests"].sum() == len(group)
        assert dict(zip((got["start"] / acceptance.HISTOGRAM_BIN).round().astype(int), got["requests"], strict=True)) == \
            expected.to_dict()
        assert (got["end"] - got["start"]).round(9).eq(acceptance.HISTOGRAM_BIN).all()


def test_request_ecdf_points_are_exact_ranks_within_the_point_budget(db: Path) -> None:
    rows = view_rows(db)
    ecdf = acceptance.request_ecdf(db)
    for variant, group in rows.groupby("variant"):
        ordered = np.sort(group["accept_length"].astype(float).to_numpy())
        points = ecdf[ecdf["variant"] == variant]
        n = len(ordered)
        assert len(points) == n if n <= acceptance.ECDF_POINTS else len(points) <= acceptance.ECDF_POINTS + 1
        ranks = (points["share"] * n).round().astype(int).to_numpy()  # 1-based rank of each point
        assert ranks[0] == 1 and ranks[-1] == n and (np.diff(ranks) > 0).all()
        assert points["accept_length"].to_numpy() == pytest.approx(ordered[ranks - 1])


def test_worst_requests_are_the_lowest_accept_lengths_in_order(db: Path) -> None:
    rows = view_rows(db)
    worst = acceptance.worst_requests(db, count=7)
    assert list(worst["accept_length"]) == pytest.approx(sorted(rows["accept_length"].astype(float))[:7])
    assert worst["path"].notna().all() and worst["line_no"].notna().all()


def test_variant_filter_narrows_every_reader(many_db: Path, demo_db: Path) -> None:
    assert acceptance.request_distribution(demo_db, ["k2-drafter"])["variant"].tolist() == ["k2-drafter"]
    assert set(acceptance.request_curves(demo_db, ["k2-drafter"])["variant"]) == {"k2-drafter"}
    assert set(acceptance.request_sources(demo_db, ["nope"])["variant"]) == set()
    assert acceptance.worst_requests(many_db, ["nope"]).empty


def test_request_histogram_counts_tick_in_whole_requests(one_db: Path, many_db: Path) -> None:
    for db, one_per_tick in ((one_db, True), (many_db, False)):
        figure = request_figure(acceptance.request_histogram(db), acceptance.request_ecdf(db))
        counts_axis = figure.layout.yaxis
        assert counts_axis.tickformat == COUNT.d3()  # whole requests: the count's declared format (",.0f")
        assert (counts_axis.dtick == 1) is one_per_tick  # a lone request is not drawn against ticks of 0.2
