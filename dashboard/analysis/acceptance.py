"""Why acceptance is what it is: per draft position, per request, per dataset (UI-free; issue #19).

Readers of migration 017's views and the figures the Acceptance page shows. Every per-position source
reduces to one curve, the **survival** S(k) = P(at least k drafts accepted in a step): vLLM's
per-position rates are exactly that (accepted-at-position ÷ drafts), and a per-request histogram h
(steps with i drafts accepted) gives S(k) = Σ_{i≥k} h[i] ÷ Σ h. From it, the **conditional** rate
c(k) = S(k) ÷ S(k−1) (S(0) = 1) — the one to compare across configs, since the mean rate
(accepted ÷ drafted) shrinks as more tokens are drafted — and the accept length τ = 1 + Σ S(k)
(bonus-inclusive). docs/metrics.md, "Acceptance in depth", states each engine's definition.

Pooling: windows and requests are pooled by their weight (drafts, verify steps), never averaged per
line; the spread shown beside a pooled value is the p10–p90 of the per-window or per-request values.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dashboard.analysis import stats
from dashboard.analysis.data import frame, reader, relations
from dashboard.analysis.definitions import (
    ACCEPT,
    ACCEPT_BELOW_FLOOR,
    COLUMNS,
    CONDITIONAL_OUTSIDE,
    EMPTY,
    RATE_OUTSIDE,
    SAMPLES_DROP,
    SHARE,
    SURVIVAL_OUTSIDE,
    SURVIVAL_RISES,
)
from ingest.storage.location import StoreRef

ACCEPTANCE_VIEWS = frozenset({"acceptance_position_rates", "acceptance_request_rows", "acceptance_datasets",
                              "acceptance_metric_windows"})
REQUEST_ORIGIN = "per-request histograms"
SPREAD = (0.10, 0.90)


# --- readers ------------------------------------------------------------------------------------

def _has_views(db_path: str | StoreRef) -> bool:
    with reader(db_path) as con:
        return ACCEPTANCE_VIEWS <= relations(con)


def position_rates(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Every per-position rate with its variant, origin and scope (view ``acceptance_position_rates``)."""
    columns = ["variant", "phase", "source_id", "origin", "scope", "window", "ts", "engine_index", "position", "rate", "drafts"]
    if not _has_views(db_path):
        return pd.DataFrame(columns=columns)
    return frame(db_path, f"""
        SELECT {', '.join(f'"{c}"' for c in columns)} FROM acceptance_position_rates
        WHERE len($variants) = 0 OR list_contains($variants, variant)
        ORDER BY variant, origin, source_id, "window", position""", {"variants": list(variant_list)})


# Every per-request figure is one SQL aggregate over the view's rows, so the page reads a few hundred rows
# whether the store holds 36 requests or a million (bench/bench_acceptance.py).
# A request whose accept length is below 1 (the floor, bonus included) is not a result: left out of every figure,
# and ``out_of_domain`` says which and why.
IN_DOMAIN = "(accept_length IS NULL OR accept_length >= 1)"
REQUESTS_OF = ("FROM acceptance_request_rows WHERE (len($variants) = 0 OR list_contains($variants, variant)) "
               f"AND {IN_DOMAIN}")
HISTOGRAM_BIN = 0.1  # tokens/step per bar of the per-request histogram
ECDF_POINTS = 2000  # the ECDF is drawn through at most this many of each variant's sorted values (exact at each)


def _request_params(db_path: str | StoreRef, variant_list: Sequence[str], **params: object) -> dict[str, object] | None:
    """The bound values of a per-request reader, or None when the store predates the acceptance views."""
    return {"variants": list(variant_list), **params} if _has_views(db_path) else None


def request_sources(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """The (variant, source) pairs that carry per-request rows."""
    params = _request_params(db_path, variant_list)
    if params is None:
        return pd.DataFrame(columns=["variant", "source_id"])
    return frame(db_path, f"SELECT DISTINCT variant, source_id {REQUESTS_OF} ORDER BY ALL", params)


def request_curves(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Per variant, the S(k) curve pooled over its requests' histograms (``position_curves``' columns).

    A request's histogram h (steps with i drafts accepted, h[0] first) gives S(k) = Σ_{i≥k} h[i] ÷ Σ h for
    k = 1 … len(h)−1; requests are pooled by their steps, and the spread is the p10–p90 of the requests' S(k).
    """
    params = _request_params(db_path, variant_list, origin=REQUEST_ORIGIN, low=SPREAD[0], high=SPREAD[1])
    if params is None:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    points = frame(db_path, f"""
        WITH held AS (
            SELECT variant, source_id, histogram, list_sum(histogram)::DOUBLE AS steps,
                   unnest(range(1, len(histogram))) AS position
            {REQUESTS_OF} AND len(histogram) >= 2 AND list_sum(histogram) > 0
        ), positions AS (
            -- DuckDB lists count from 1: h[i] is histogram[i + 1], so the sum of h[i] for i ≥ k is histogram[k + 1:]
            SELECT variant, source_id, steps, position, list_sum(histogram[position + 1:]) / steps AS survival FROM held
        )
        SELECT variant, $origin AS origin, 'requests' AS scope, position, sum(survival * steps) AS sw, sum(steps) AS w,
               count(*) AS samples, sum(steps) AS weight,
               CASE WHEN count(*) > 1 THEN quantile_cont(survival, $low) END AS low,
               CASE WHEN count(*) > 1 THEN quantile_cont(survival, $high) END AS high,
               string_agg(DISTINCT source_id, ', ' ORDER BY source_id) AS sources
        FROM positions GROUP BY variant, position ORDER BY variant, position""", params)
    return _curves(points)


def request_distribution(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Per variant: requests, p10/p50/p90 and mean of the per-request accept length with a 95% CI, and the
    value pooled by verify steps (only where every request names its steps)."""
    columns = ["variant", "requests", "p10", "p50", "p90", "mean", "ci_low", "ci_high", "pooled", "origins"]
    params = _request_params(db_path, variant_list, low=SPREAD[0], high=SPREAD[1])
    if params is None:
        return pd.DataFrame(columns=columns)
    moments = frame(db_path, f"""
        SELECT variant, count(*) AS requests, quantile_cont(accept_length, $low) AS p10,
               quantile_cont(accept_length, 0.5) AS p50, quantile_cont(accept_length, $high) AS p90,
               avg(accept_length) AS mean, stddev_samp(accept_length) AS sd,
               CASE WHEN count(spec_steps) = count(*) AND sum(spec_steps) > 0
                    THEN sum(accept_length * spec_steps) / sum(spec_steps) END AS pooled,
               string_agg(DISTINCT origin, ', ' ORDER BY origin) AS origins
        {REQUESTS_OF} AND accept_length IS NOT NULL GROUP BY variant ORDER BY variant""", params)
    if moments.empty:
        return pd.DataFrame(columns=columns)
    intervals = [stats.mean_ci_of(int(n), float(mean), None if pd.isna(sd) else float(sd))
                 for n, mean, sd in zip(moments["requests"], moments["mean"], moments["sd"], strict=True)]
    moments["ci_low"] = [ci.low for ci in intervals]
    moments["ci_high"] = [ci.high for ci in intervals]
    moments["pooled"] = moments["pooled"].astype(object).where(moments["pooled"].notna(), None)
    return moments[columns]


def request_rates(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Per variant, the requests that give an acceptance rate and no accept length (llama.cpp's ``timings`` and
    ``llama-speculative`` count drafted and accepted tokens, not verify steps): how many, and the rate pooled over
    their drafted tokens (Σ accepted ÷ Σ drafted) where every one counts them, else the mean of their rates."""
    columns = ["variant", "requests", "rate", "origins"]
    params = _request_params(db_path, variant_list)
    if params is None:
        return pd.DataFrame(columns=columns)
    return frame(db_path, f"""
        SELECT variant, count(*) AS requests,
               CASE WHEN count(draft_tokens) = count(*) AND sum(draft_tokens) > 0
                    THEN sum(accepted_drafts) / sum(draft_tokens) ELSE avg(accept_rate) END AS rate,
               string_agg(DISTINCT origin, ', ' ORDER BY origin) AS origins
        {REQUESTS_OF} AND accept_length IS NULL AND accept_rate BETWEEN 0 AND 1
        GROUP BY variant ORDER BY variant""", params)[columns]


def rates_table(rates: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"variant": rates["variant"], "rate requests": rates["requests"],
                         "request acceptance rate": rates["rate"], "rate from": rates["origins"]})


def request_histogram(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Requests per accept-length bin of ``HISTOGRAM_BIN`` (bins start at its multiples), per variant."""
    params = _request_params(db_path, variant_list, size=HISTOGRAM_BIN)
    if params is None:
        return pd.DataFrame(columns=["variant", "start", "end", "requests"])
    bins = frame(db_path, f"""
        -- 1e-9: 1.6 / 0.1 is 15.999…
        SELECT variant, CAST(floor(accept_length / $size + 1e-9) AS BIGINT) AS bin, count(*) AS requests
        {REQUESTS_OF} AND accept_length IS NOT NULL GROUP BY ALL ORDER BY ALL""", params)
    start = bins["bin"].astype(float) * HISTOGRAM_BIN
    return pd.DataFrame({"variant": bins["variant"], "start": start, "end": start + HISTOGRAM_BIN,
                         "requests": bins["requests"]})


def request_ecdf(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Per variant, points of the ECDF of per-request accept length: every value when there are at most
    ``ECDF_POINTS``, else the first of each of ``ECDF_POINTS``−1 equal rank intervals and the last."""
    params = _request_params(db_path, variant_list, points=ECDF_POINTS)
    if params is None:
        return pd.DataFrame(columns=["variant", "accept_length", "share", "requests"])
    return frame(db_path, f"""
        WITH ranked AS (
            SELECT variant, accept_length, row_number() OVER sorted - 1 AS i, count(*) OVER (PARTITION BY variant) AS n
            {REQUESTS_OF} AND accept_length IS NOT NULL
            WINDOW sorted AS (PARTITION BY variant ORDER BY accept_length)
        )
        SELECT variant, accept_length, (i + 1) / n AS share, n AS requests FROM ranked
        WHERE n <= $points OR i = 0 OR i = n - 1 OR (i * ($points - 1)) // (n - 1) > ((i - 1) * ($points - 1)) // (n - 1)
        ORDER BY variant, i""", params)


def worst_requests(db_path: str | StoreRef, variant_list: Sequence[str] = (), count: int = 10) -> pd.DataFrame:
    """The lowest-acceptance requests, with what identifies them (ties: in file order)."""
    columns = ["variant", "accept_length", "request_id", "dataset", "input_tokens", "output_tokens", "spec_steps",
               "path", "line_no"]
    params = _request_params(db_path, variant_list, count=count)
    if params is None:
        return pd.DataFrame(columns=columns)
    return frame(db_path, f"""
        SELECT {', '.join(columns)}
        {REQUESTS_OF} AND accept_length IS NOT NULL
        ORDER BY accept_length, variant, source_id, record_index, request_index LIMIT $count""", params)


def dataset_rows(db_path: str | StoreRef) -> pd.DataFrame:
    """Accept length per (dataset, variant, source) from benchmark records and per-request rows; those below 1 left
    out (``out_of_domain`` says which)."""
    rows = all_dataset_rows(db_path)
    return rows[~below_one(rows["accept_length"])].reset_index(drop=True)


def all_dataset_rows(db_path: str | StoreRef) -> pd.DataFrame:
    """``dataset_rows`` before the domain check."""
    columns = ["variant", "phase", "dataset", "source_id", "origin", "scope", "accept_length", "output_throughput",
               "requests", "records"]
    if not _has_views(db_path):
        return pd.DataFrame(columns=columns)
    own = frame(db_path, f"SELECT {', '.join(columns)} FROM acceptance_datasets ORDER BY dataset, variant")
    with reader(db_path) as con:
        has_sweeps = "sweep_points" in relations(con)
    if not has_sweeps:
        return own
    sweeps = frame(db_path, SWEEP_DATASETS)
    return pd.concat([own, sweeps], ignore_index=True) if not sweeps.empty else own


# The sweeps' per-benchmark accept length (migration 016, SpecForge bench_eagle3 / SpecBundle files, owned by
# ingest/parsers/bench/sweeps.py): per sweep, variant and dataset, the mean over the drafter configs measured at the
# smallest batch size (acceptance does not depend on the batch; configs do change it, so the count is named).
SWEEP_DATASETS = """
    WITH points AS (
        SELECT *, min(coalesce(batch_size, concurrency, 1)) OVER (PARTITION BY source_id, sweep, variant, dataset) AS smallest
        FROM sweep_points
        WHERE dataset IS NOT NULL AND accept_length IS NOT NULL AND NOT simulated AND NOT is_baseline
    )
    SELECT variant, phase, dataset, source_id,
           'sweep file: mean of ' || count(*) || ' config(s) at batch ' || any_value(smallest) AS origin, 'run' AS scope,
           avg(accept_length) AS accept_length, avg(throughput) AS output_throughput, CAST(NULL AS BIGINT) AS requests,
           count(*) AS records
    FROM points WHERE coalesce(batch_size, concurrency, 1) = smallest
    GROUP BY variant, phase, dataset, source_id
"""


def metric_windows(db_path: str | StoreRef) -> pd.DataFrame:
    """Accept length per Prometheus window: counter deltas, counters since start, exported gauges; a window whose
    accept length is below 1 or whose rate is outside 0–1 left out (``out_of_domain`` says which)."""
    windows = all_metric_windows(db_path)
    return windows[~window_outside(windows)].reset_index(drop=True)


def all_metric_windows(db_path: str | StoreRef) -> pd.DataFrame:
    """``metric_windows`` before the domain check."""
    columns = ["variant", "phase", "source_id", "scope", "window", "reset", "engines", "drafts", "draft_tokens",
               "accepted", "accept_length", "accept_rate"]
    if not _has_views(db_path):
        return pd.DataFrame(columns=columns)
    return frame(db_path, METRIC_WINDOWS)


METRIC_WINDOWS = """
    SELECT variant, phase, source_id, scope, "window", reset, engines, drafts, draft_tokens, accepted, accept_length, accept_rate
    FROM acceptance_metric_windows ORDER BY variant, source_id, "window"
"""


def source_paths(db_path: str | StoreRef, source_ids: Sequence[str]) -> dict[str, str]:
    """File path per source id (for "where this number comes from")."""
    if not source_ids:
        return {}
    rows = frame(db_path, "SELECT source_id, path FROM sources WHERE list_contains($ids, source_id)", {"ids": list(source_ids)})
    return dict(zip(rows["source_id"], rows["path"], strict=True))


def record_lines(db_path: str | StoreRef, source_ids: Sequence[str]) -> dict[str, str]:
    """'<source id> · record <i>' → 'line <n>': where a bench record's per-position rates were read (its line)."""
    if not source_ids:
        return {}
    rows = frame(db_path, "SELECT source_id, record_index, line_no FROM bench_serving "
                 "WHERE list_contains($ids, source_id) AND line_no IS NOT NULL", {"ids": list(source_ids)})
    return {f"{s} · record {int(i)}": f"line {int(n)}"
            for s, i, n in zip(rows["source_id"], rows["record_index"], rows["line_no"], strict=True)}


def trace_cycle_parts(db_path: str | StoreRef) -> pd.DataFrame:
    """Median draft, verify and draft-extend time per speculative cycle and per baseline step, per variant (traces)."""
    columns = ["variant", "cycle_kind", "draft_ms", "verify_ms", "draft_extend_ms", "cycle_ms", "cycles"]
    with reader(db_path) as con:
        if "cycle_totals" not in relations(con):
            return pd.DataFrame(columns=columns)
        return con.execute("""
            SELECT variant, cycle_kind, median(draft_ms) AS draft_ms, median(verify_ms) AS verify_ms,
                   median(draft_extend_ms) AS draft_extend_ms, median(cycle_ms) AS cycle_ms, count(*) AS cycles
            FROM cycle_totals GROUP BY variant, cycle_kind ORDER BY variant, cycle_kind""").df()


# --- per position -------------------------------------------------------------------------------

def conditional(survival: Sequence[float]) -> list[float | None]:
    """c(k) = S(k) ÷ S(k−1), S(0) = 1; undefined (None) where S(k−1) is 0."""
    out: list[float | None] = []
    previous = 1.0
    for value in survival:
        out.append(value / previous if previous > 0 else None)
        previous = value
    return out


def position_samples(rates: pd.DataFrame) -> pd.DataFrame:
    """One row per (sample, position) of the per-position rates: a log window, a run or a snapshot delta
    (per-request histograms are pooled in SQL: ``request_curves``)."""
    columns = ["variant", "origin", "scope", "sample", "source_id", "position", "survival", "weight"]
    if rates.empty:
        return pd.DataFrame(columns=columns)
    r = rates.copy()
    # windows of one file and engine are one sample each; DP engines of one window are pooled first
    r["weight"] = pd.to_numeric(r["drafts"], errors="coerce")
    r["sample"] = r["source_id"].astype(str) + " · " + r["window"].astype(str)
    r["w"] = r["weight"].fillna(1.0)
    r["rw"] = r["rate"] * r["w"]
    grouped = r.groupby(["variant", "origin", "scope", "sample", "source_id", "position"], as_index=False).agg(
        rw=("rw", "sum"), w=("w", "sum"), weight=("weight", "sum"))
    grouped["survival"] = grouped["rw"] / grouped["w"]
    grouped["weight"] = grouped["weight"].where(grouped["weight"] > 0)
    return grouped[columns]


# Per (variant, origin, position), what pooling the samples gives: Σ S·w and Σ w (w: a sample's drafts or
# steps, 1 where unknown), the sample count, the known weight, the p10–p90 of the samples' S(k) (none for
# one sample), the scope and the sources.
CURVE_POINTS = ["variant", "origin", "scope", "position", "sw", "w", "samples", "weight", "low", "high", "sources"]
CURVE_COLUMNS = ["variant", "origin", "scope", "position", "survival", "conditional", "low", "high", "samples",
                 "weight", "accept_length", "sources"]


def position_curves(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (variant, origin): pooled S(k), c(k), the p10–p90 spread of S(k) across samples, and τ = 1 + Σ S(k)."""
    if samples.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    weighted = samples.assign(w=samples["weight"].fillna(1.0).astype(float))
    weighted["sw"] = weighted["survival"].astype(float) * weighted["w"]
    by_position = weighted.groupby(["variant", "origin", "position"], sort=True)
    points = by_position.agg(sw=("sw", "sum"), w=("w", "sum"), samples=("survival", "size"),
                             weight=("weight", lambda w: float(w.sum()) if w.notna().any() else None),
                             scope=("scope", _joined), sources=("source_id", _joined))
    spread = by_position["survival"].quantile(list(SPREAD)).unstack()
    single = points["samples"] <= 1  # one sample has no spread
    points["low"] = spread[SPREAD[0]].astype(object).where(~single, None)
    points["high"] = spread[SPREAD[1]].astype(object).where(~single, None)
    return _curves(points.reset_index()[CURVE_POINTS])


def _joined(values: pd.Series) -> str:
    return ", ".join(sorted({part for value in values for part in str(value).split(", ")}))


def _curves(points: pd.DataFrame) -> pd.DataFrame:
    """``CURVE_POINTS`` rows to curves: S(k) = Σ S·w ÷ Σ w, c(k), τ, and each curve's scopes and sources."""
    if points.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    out = []
    for _, curve in points.groupby(["variant", "origin"], sort=True):
        curve = curve.sort_values("position").reset_index(drop=True)
        curve["position"] = curve["position"].astype(int)
        curve["survival"] = curve["sw"].astype(float) / curve["w"].astype(float)
        curve["conditional"] = conditional(curve["survival"].tolist())
        curve["accept_length"] = 1.0 + curve["survival"].sum()
        curve["scope"], curve["sources"] = _joined(curve["scope"]), _joined(curve["sources"])
        out.append(curve)
    return pd.concat(out, ignore_index=True)[CURVE_COLUMNS]


def joined_curves(*parts: pd.DataFrame) -> pd.DataFrame:
    """Curves of several readers as one frame, in (variant, origin, position) order."""
    held = [part for part in parts if not part.empty]
    if not held:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    return pd.concat(held, ignore_index=True).sort_values(["variant", "origin", "position"], ignore_index=True)


def first_below(curve: pd.DataFrame, threshold: float) -> int | None:
    """The first draft position whose conditional rate falls below ``threshold`` (None: none does)."""
    below = curve[pd.to_numeric(curve["conditional"], errors="coerce") < threshold]
    return int(below["position"].min()) if not below.empty else None


# --- invariants: a figure outside its domain is no result (issue #29) -------------------------------
# S(k) = P(≥ k accepted) lies in [0, 1] and never rises with k; c(k) = P(k | k−1) lies in [0, 1]; a rate lies in
# [0, 1]; an accept length (bonus included) is ≥ 1. A curve or row that breaks one is left out and named, with why.

PLACES_SHOWN = 3  # windows (lines, records) named per file before "…"
SLACK = 1e-9  # pooled sums are floats: a rise or an excess smaller than this is rounding, not a defect


def outside_unit(value: float) -> bool:
    return bool(pd.notna(value)) and not -SLACK <= value <= 1 + SLACK


def curve_defects(curve: pd.DataFrame) -> list[str]:
    """What breaks one curve's invariants (rows of one (variant, origin) or one sample, any order); empty: none."""
    ordered = curve.sort_values("position")
    ks = ordered["position"].astype(int).tolist()
    survival = pd.to_numeric(ordered["survival"], errors="coerce").tolist()
    defects = [SURVIVAL_OUTSIDE.format(value=SHARE.text(v), k=k) for k, v in zip(ks, survival, strict=True)
               if outside_unit(v)]
    for i in range(1, len(ks)):
        if survival[i] > survival[i - 1] + SLACK:
            defects.append(SURVIVAL_RISES.format(before=SHARE.text(survival[i - 1]), k0=ks[i - 1],
                                                 after=SHARE.text(survival[i]), k1=ks[i]))
            break
    given = ordered["conditional"] if "conditional" in ordered else pd.Series(conditional(survival))
    bad = [(k, float(c)) for k, c in zip(ks, pd.to_numeric(given, errors="coerce"), strict=True) if outside_unit(c)]
    if bad and not any(d.startswith("survival rises") for d in defects):  # a rise is what lifts c(k) above 1
        defects.append(CONDITIONAL_OUTSIDE.format(value=SHARE.text(bad[0][1]), k=bad[0][0]))
    return defects


def samples_drop(curve: pd.DataFrame) -> str | None:
    """Where a pooled curve's positions pool fewer samples than the position before (the usual cause of a rise)."""
    ordered = curve.sort_values("position")
    counts = pd.to_numeric(ordered["samples"], errors="coerce").tolist()
    ks = ordered["position"].astype(int).tolist()
    for i in range(1, len(ks)):
        if counts[i] < counts[i - 1]:
            return SAMPLES_DROP.format(k0=ks[i - 1], before=int(counts[i - 1]), k1=ks[i], after=int(counts[i]))
    return None


def file_name(source_id: str, paths: dict[str, str]) -> str:
    return Path(paths[source_id]).name if source_id in paths else source_id


def places(source_ids: Sequence[str], windows: Sequence[str], paths: dict[str, str]) -> str:
    """'a.log (line 12, line 40), b.txt (record 0)': each file with the windows (lines, records) it gave."""
    by_file: dict[str, list[str]] = {}
    for source, window in zip(source_ids, windows, strict=True):
        listed = by_file.setdefault(file_name(source, paths), [])
        if window and window not in listed:
            listed.append(window)
    parts = []
    for name, listed in sorted(by_file.items()):
        more = f", … {len(listed) - PLACES_SHOWN} more" if len(listed) > PLACES_SHOWN else ""
        parts.append(f"`{name}`" + (f" ({', '.join(listed[:PLACES_SHOWN])}{more})" if listed else ""))
    return ", ".join(parts)


@dataclass(frozen=True)
class CurveWarning:
    """A per-position curve left out: whose, from where (files, lines), and what is wrong."""

    variant: str
    origin: str
    where: str
    what: str

    def text(self) -> str:
        return (f"**{self.variant}** · {self.origin}, from {self.where}: {self.what}. Not shown as a result: "
                "P(≥ k) must lie in 0–100% and never rise with k, and P(k | k−1) must lie in 0–100%.")


def sample_places(samples: pd.DataFrame, paths: dict[str, str], lines: dict[str, str]) -> str:
    """The files and windows (a log line, a record's line) of these ``position_samples`` rows."""
    windows = [lines.get(s, s.split(" · ", 1)[-1]) for s in samples["sample"].astype(str)]
    return places(samples["source_id"].astype(str).tolist(), windows, paths)


def curve_warning(curve: pd.DataFrame, samples: pd.DataFrame, paths: dict[str, str],
                  lines: dict[str, str] | None = None) -> CurveWarning | None:
    """Why one (variant, origin) curve is no result, naming its samples' files and windows (``lines``: a record's
    line, from ``record_lines``); None when it holds."""
    defects = curve_defects(curve)
    if not defects:
        return None
    variant, origin = str(curve["variant"].iloc[0]), str(curve["origin"].iloc[0])
    own = samples[(samples["variant"] == variant) & (samples["origin"] == origin)] if not samples.empty else samples
    broken = [part for _, part in own.groupby("sample", sort=True) if curve_defects(part)] if not own.empty else []
    if broken:  # a sample that breaks the invariants by itself: name it and what it says
        where = sample_places(pd.concat(broken), paths, lines or {})
        return CurveWarning(variant, origin, where, "; ".join(curve_defects(broken[0])))
    if not own.empty:
        where = sample_places(own, paths, lines or {})
    else:
        sources = [part for value in curve["sources"] for part in str(value).split(", ") if part]
        where = places(sources, [""] * len(sources), paths)
    cause = samples_drop(curve)
    return CurveWarning(variant, origin, where, "; ".join(defects) + (f" ({cause})" if cause else ""))


def checked_curves(curves: pd.DataFrame, samples: pd.DataFrame, paths: dict[str, str],
                   lines: dict[str, str] | None = None) -> tuple[pd.DataFrame, list[CurveWarning]]:
    """The curves that hold their invariants, and a warning for each that does not (it is left out).

    ``samples``: the ``position_samples`` the curves pooled (empty for per-request curves, pooled in SQL);
    ``paths``: file path per source id and ``lines`` (``record_lines``) a record's line, to name where the figures
    were read."""
    if curves.empty:
        return curves, []
    kept, warnings = [], []
    for _, curve in curves.groupby(["variant", "origin"], sort=True):
        warning = curve_warning(curve, samples, paths, lines)
        if warning is None:
            kept.append(curve)
        else:
            warnings.append(warning)
    held = pd.concat(kept, ignore_index=True) if kept else pd.DataFrame(columns=curves.columns)
    return held, warnings


def below_one(values: pd.Series) -> pd.Series:
    """An accept length below its floor 1 (bonus included); a missing one is not."""
    return pd.to_numeric(values, errors="coerce") < 1


def window_outside(windows: pd.DataFrame) -> pd.Series:
    """A /metrics window whose accept length is below 1 or whose mean rate is outside 0–1."""
    rate = pd.to_numeric(windows["accept_rate"], errors="coerce")
    return below_one(windows["accept_length"]) | (rate < 0) | (rate > 1)


REQUESTS_BELOW = f"""
    SELECT variant, path, line_no, accept_length FROM acceptance_request_rows
    WHERE (len($variants) = 0 OR list_contains($variants, variant)) AND NOT {IN_DOMAIN}
    ORDER BY variant, path, line_no"""


def out_of_domain(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> list[str]:
    """What the page's per-request, per-dataset and /metrics figures leave out because it is outside its domain
    (accept length below 1, a rate outside 0–1): one sentence per variant and kind, naming files and lines."""
    if not _has_views(db_path):
        return []
    wanted = set(variant_list)
    notes = []
    requests = frame(db_path, REQUESTS_BELOW, {"variants": list(variant_list)})
    for variant, rows in requests.groupby("variant", sort=True):
        where = places([str(p) for p in rows["path"]], [f"line {int(n)}" if pd.notna(n) else "" for n in rows["line_no"]],
                       {str(p): str(p) for p in rows["path"]})
        notes.append(f"**{variant}** · {len(rows)} request(s) from {where}: "
                     + ACCEPT_BELOW_FLOOR.format(value=ACCEPT.number(rows["accept_length"].min())) + ".")
    datasets, windows = all_dataset_rows(db_path), all_metric_windows(db_path)
    datasets = datasets[below_one(datasets["accept_length"]) & (datasets["variant"].isin(wanted) | (not wanted))]
    windows = windows[window_outside(windows) & (windows["variant"].isin(wanted) | (not wanted))]
    paths = source_paths(db_path, sorted(set(datasets["source_id"]) | set(windows["source_id"])))
    for row in datasets.itertuples():
        notes.append(f"**{row.variant}** · dataset {row.dataset}, from {places([str(row.source_id)], [''], paths)}: "
                     + ACCEPT_BELOW_FLOOR.format(value=ACCEPT.number(row.accept_length)) + ".")
    for row in windows.itertuples():
        what = (ACCEPT_BELOW_FLOOR.format(value=ACCEPT.number(row.accept_length)) if below_one(pd.Series([row.accept_length])).iloc[0]
                else RATE_OUTSIDE.format(value=SHARE.text(row.accept_rate)))
        notes.append(f"**{row.variant}** · /metrics {row.window}, from {places([str(row.source_id)], [''], paths)}: {what}.")
    return notes


# --- how many steps to draft ----------------------------------------------------------------------

@dataclass(frozen=True)
class ModelInput:
    name: str
    value: float | None  # None: nothing in the store measures it, and no other team's figure stands in for it
    unit: str
    origin: str  # "measured: …", "assumed: …" or "needed: how to measure it"

    @property
    def measured(self) -> bool:
        return self.origin.startswith("measured")

    @property
    def needed(self) -> bool:
        return self.value is None


def steps_model(survival: Sequence[float], draft_step_ms: float, verify_ms: float, baseline_step_ms: float,
                verify_per_token_ms: float = 0.0) -> pd.DataFrame:
    """For N = 1..len(survival) drafted tokens: τ(N) = 1 + Σ_{k≤N} S(k), cycle(N), speedup = τ(N)·step ÷ cycle(N).

    cycle(N) = N·draft step + verify + N·verify per extra token. Drafting fewer tokens than measured keeps the
    first N positions' S(k) (a chain drafter's position k does not depend on how many follow it).
    """
    rows = []
    tau = 1.0
    for n, value in enumerate(survival, start=1):
        tau += float(value)
        cycle = n * draft_step_ms + verify_ms + n * verify_per_token_ms
        rows.append({"steps": n, "tokens_per_cycle": tau, "cycle_ms": cycle,
                     "speedup": tau * baseline_step_ms / cycle if cycle > 0 else None})
    table = pd.DataFrame(rows, columns=["steps", "tokens_per_cycle", "cycle_ms", "speedup"])
    table["best"] = False
    if not table.empty and table["speedup"].notna().any():
        table.loc[table["speedup"].astype(float).idxmax(), "best"] = True
    return table


NEEDS_BASELINE_STEP = ("needed: the baseline's decode step time — ingest a profiler trace of the server without "
                       "speculation (`specdash ingest TRACE --variant NAME`), or enter 1000 ÷ its tok/s at batch 1")
NEEDS_DRAFT_STEP = ("needed: one draft forward's time — ingest a profiler trace of this variant's server "
                    "(SGLang `/start_profile`), or enter it")
NEEDS_VERIFY = ("needed: the verify (+ draft-extend) time per cycle — ingest a profiler trace of this variant's "
                "server (SGLang `/start_profile`), or enter it")


def model_inputs(parts: pd.DataFrame, variant: str, drafted: int, baseline: str | None) -> list[ModelInput]:
    """The cycle model's inputs, measured from this variant's and the baseline's profiler traces where they exist.

    What no trace measures is left empty for the user to enter (``needed``): another team's step or verify time
    says nothing about this one's hardware, so none is assumed. Only the verify's growth per extra drafted
    token is assumed (0 at batch 1), and says so.
    """
    spec = parts[(parts["variant"] == variant) & (parts["cycle_kind"] == "speculative")]
    base = parts[(parts["cycle_kind"] == "decode") & ((parts["variant"] == baseline) if baseline else True)]
    inputs = []
    if not base.empty:
        inputs.append(ModelInput("baseline step", float(base["cycle_ms"].median()), "ms",
                                 f"measured: profiler traces of {', '.join(sorted(set(base['variant'].dropna())))}"))
    else:
        inputs.append(ModelInput("baseline step", None, "ms", NEEDS_BASELINE_STEP))
    if not spec.empty and drafted > 0 and float(spec["draft_ms"].iloc[0]) > 0:
        inputs.append(ModelInput("draft step", float(spec["draft_ms"].iloc[0]) / drafted, "ms",
                                 f"measured: {variant}'s traces, draft time ÷ {drafted} positions"))
    else:
        inputs.append(ModelInput("draft step", None, "ms", NEEDS_DRAFT_STEP))
    if not spec.empty and float(spec["verify_ms"].iloc[0]) > 0:
        fixed = float(spec["verify_ms"].iloc[0]) + float(spec["draft_extend_ms"].iloc[0] or 0.0)
        inputs.append(ModelInput("verify + draft-extend", fixed, "ms", f"measured: {variant}'s traces (median cycle)"))
    else:
        inputs.append(ModelInput("verify + draft-extend", None, "ms", NEEDS_VERIFY))
    inputs.append(ModelInput("verify per extra token", 0.0, "ms", "assumed: verify cost does not grow with N at batch 1"))
    return inputs


# --- per dataset --------------------------------------------------------------------------------

def dataset_matrix(rows: pd.DataFrame, reference: str | None) -> pd.DataFrame:
    """Datasets × variants: accept length (weighted over records by requests), throughput, Δ accept length vs ``reference``."""
    columns = ["dataset", "variant", "accept_length", "output_throughput", "records", "origins", "scope", "delta"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    r = rows.copy()
    r["w"] = pd.to_numeric(r["requests"], errors="coerce").fillna(1.0).clip(lower=1.0)
    r["aw"] = r["accept_length"] * r["w"]
    r["tw"] = r["output_throughput"] * r["w"]
    r["tw_w"] = r["w"].where(r["output_throughput"].notna())
    grouped = r.groupby(["dataset", "variant"], as_index=False).agg(
        aw=("aw", "sum"), w=("w", "sum"), tw=("tw", "sum"), tw_w=("tw_w", "sum"), records=("records", "sum"),
        origins=("origin", lambda s: ", ".join(sorted(set(s)))), scope=("scope", lambda s: ", ".join(sorted(set(s)))))
    grouped["accept_length"] = grouped["aw"] / grouped["w"]
    grouped["output_throughput"] = (grouped["tw"] / grouped["tw_w"]).where(grouped["tw_w"] > 0)
    grouped["delta"] = None
    if reference is not None:
        ref = grouped[grouped["variant"] == reference].set_index("dataset")["accept_length"]
        grouped["delta"] = [a - ref[d] if d in ref.index and v != reference else None
                            for d, v, a in zip(grouped["dataset"], grouped["variant"], grouped["accept_length"], strict=True)]
    return grouped[columns]


def mixed_sources(curves: pd.DataFrame, distribution: pd.DataFrame) -> list[str]:
    """Sentences naming what is not like-for-like in what the page compares (different origins or scopes)."""
    notes = []
    if not curves.empty:
        origins = curves.groupby("variant")["origin"].nunique()
        several = sorted(origins[origins > 1].index)
        if several:
            notes.append(f"{', '.join(several)}: per-position figures from more than one kind of source — compare within one source.")
        if curves["origin"].nunique() > 1:
            notes.append("Variants' per-position curves come from different sources ("
                         + ", ".join(sorted(set(curves["origin"]))) + "): logs pool intervals, histograms pool requests.")
    if not distribution.empty and distribution["origins"].nunique() > 1:
        notes.append("Per-request figures come from different engines' fields (" + "; ".join(sorted(set(distribution["origins"])))
                     + "): SGLang's accept length is completion tokens ÷ verify steps, vLLM's 1 + accepted ÷ steps.")
    return notes


# --- definitions shown on hover: the label table's helps (definitions.COLUMNS, the one place they are written) ---

SURVIVAL = COLUMNS["P(≥ k)"].help
CONDITIONAL = COLUMNS["P(k | k−1)"].help
ACCEPT_LENGTH = COLUMNS["accept length"].help
MEAN_RATE = COLUMNS["mean rate"].help
SPREAD_TEXT = COLUMNS["P(≥ k) p10"].help
POOLED = COLUMNS["pooled"].help
MODEL = COLUMNS["τ(N)"].help


# --- what the page's tables show (keys of definitions.COLUMNS; values at full precision) -------------

def curve_summary_table(curves: pd.DataFrame, marks: dict[tuple[str, str], int | None]) -> pd.DataFrame:
    """One row per curve: its source, scope, positions, τ, first position below the threshold, samples."""
    rows = [{"variant": v, "acceptance source": o, "acceptance scope": c["scope"].iloc[0], "draft positions": len(c),
             "τ from positions": c["accept_length"].iloc[0], "first below threshold": marks.get((v, o)),
             "acceptance samples": int(c["samples"].max())}
            for (v, o), c in curves.groupby(["variant", "origin"], sort=True)]
    table = pd.DataFrame(rows, columns=["variant", "acceptance source", "acceptance scope", "draft positions",
                                        "τ from positions", "first below threshold", "acceptance samples"])
    table["first below threshold"] = pd.array(table["first below threshold"], dtype="Int64")
    return table


def positions_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Every position of every curve: P(≥ k) with its p10–p90 spread, P(k | k−1) (samples: the summary table)."""
    return pd.DataFrame({
        "variant": curves["variant"], "acceptance source": curves["origin"], "position k": curves["position"],
        "P(≥ k)": curves["survival"], "P(≥ k) p10": pd.to_numeric(curves["low"], errors="coerce"),
        "P(≥ k) p90": pd.to_numeric(curves["high"], errors="coerce"),
        "P(k | k−1)": pd.to_numeric(curves["conditional"], errors="coerce"),
    }).reset_index(drop=True)


def steps_table(model: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"drafted tokens N": model["steps"], "τ(N)": model["tokens_per_cycle"],
                         "model cycle ms": model["cycle_ms"], "model speedup": pd.to_numeric(model["speedup"], errors="coerce"),
                         "best N": ["✓ best" if b else EMPTY for b in model["best"]]})


def distribution_table(distribution: pd.DataFrame) -> pd.DataFrame:
    """Per variant: requests, p10 · p50 · p90 (one cell), mean with its 95% CI (one cell), pooled: five columns fit."""
    return pd.DataFrame({
        "variant": distribution["variant"], "requests": distribution["requests"],
        "request spread": [" · ".join(ACCEPT.number(v) for v in values)
                           for values in zip(distribution["p10"], distribution["p50"], distribution["p90"], strict=True)],
        "requests mean CI": [f"{ACCEPT.number(mean)} ({ACCEPT.interval(lo, hi, unit=False)})" if not (pd.isna(lo) or pd.isna(hi))
                             else f"{ACCEPT.number(mean)} (n/a: n < 2)"
                             for mean, lo, hi in zip(distribution["mean"], distribution["ci_low"], distribution["ci_high"],
                                                     strict=True)],
        "pooled": pd.to_numeric(distribution["pooled"], errors="coerce"),
    })


def worst_table(worst: pd.DataFrame) -> pd.DataFrame:
    """The lowest-acceptance requests and what identifies them (their file and line: ``worst_places``)."""
    return pd.DataFrame({
        "variant": worst["variant"], "accept length": worst["accept_length"],
        "request id": [None if _gap(v) else str(v) for v in worst["request_id"]],
        "dataset": [None if _gap(v) else str(v) for v in worst["dataset"]],
        "request prompt": pd.array(pd.to_numeric(worst["input_tokens"], errors="coerce"), dtype="Int64"),
        "request output": pd.array(pd.to_numeric(worst["output_tokens"], errors="coerce"), dtype="Int64"),
        "verify steps": pd.array(pd.to_numeric(worst["spec_steps"], errors="coerce"), dtype="Int64"),
    })


def worst_places(worst: pd.DataFrame) -> pd.DataFrame:
    """Where each of the lowest-acceptance requests was read: file and line."""
    return pd.DataFrame({
        "variant": worst["variant"], "request id": [None if _gap(v) else str(v) for v in worst["request_id"]],
        "request file": [Path(str(p)).name if not _gap(p) else None for p in worst["path"]],
        "line": pd.array(pd.to_numeric(worst["line_no"], errors="coerce"), dtype="Int64"),
    })


def dataset_table(matrix: pd.DataFrame) -> pd.DataFrame:
    """The datasets × variants matrix as rows: accept length, Δ against the reference, throughput, records, scope."""
    return pd.DataFrame({
        "dataset": matrix["dataset"], "variant": matrix["variant"], "accept length": matrix["accept_length"],
        "Δ accept length": pd.to_numeric(matrix["delta"], errors="coerce"),
        "output throughput": pd.to_numeric(matrix["output_throughput"], errors="coerce"),
        "records": pd.array(pd.to_numeric(matrix["records"], errors="coerce"), dtype="Int64"),
        "acceptance scope": matrix["scope"],
    }).reset_index(drop=True)


def dataset_sources(matrix: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"dataset": matrix["dataset"], "variant": matrix["variant"],
                         "acceptance source": matrix["origins"]}).reset_index(drop=True)


def windows_table(windows: pd.DataFrame) -> pd.DataFrame:
    """Accept length per Prometheus window, as the page shows it."""
    return pd.DataFrame({
        "variant": windows["variant"], "counter kind": windows["scope"].astype(str),
        "metrics window": [window_text(w, e, r) for w, e, r in zip(windows["window"], windows["engines"], windows["reset"],
                                                                    strict=True)],
        "drafts": pd.to_numeric(windows["drafts"], errors="coerce"),
        "accepted": pd.to_numeric(windows["accepted"], errors="coerce"),
        "window accept length": pd.to_numeric(windows["accept_length"], errors="coerce"),
        "mean rate": pd.to_numeric(windows["accept_rate"], errors="coerce"),
    }).reset_index(drop=True)


def window_text(window: object, engines: object, reset: object) -> str:
    """'snapshots 1→2 · 2 DP engines · server restarted inside': the window, its engines when several, a restart."""
    parts = [str(window)]
    if not _gap(engines) and float(str(engines)) > 1:
        engines = int(float(str(engines)))
        parts.append(f"{engines} DP engines summed")
    if not _gap(reset) and bool(reset):
        parts.append("server restarted inside (counts from zero)")
    return " · ".join(parts)


def _gap(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value) or str(value).strip() == ""


# --- a session's window (the Run page) ------------------------------------------------------------

def session_curve(rows: pd.DataFrame, variant: str) -> pd.DataFrame:
    """The per-position curve of one session's window from its ``data.session_positions`` rows (empty: none)."""
    if rows.empty:
        return position_curves(pd.DataFrame())
    rates = rows.assign(variant=variant, scope="window", window="line " + rows["line_no"].astype(str))
    return position_curves(position_samples(rates))


# --- training: what training promised vs what serving measured (migration 021) ----------------------

TRAINING_TABLE = "training_steps"
TRAINING_COLUMNS = ["variant", "phase", "source_id", "path", "kind", "line_no", "epoch", "step", "split", "position",
                    "loss", "accuracy", "acceptance_rate", "simulated_accept_length", "learning_rate", "origin"]
TRAINERS = {"specforge_training_log": "SpecForge", "automodel_training_log": "NeMo AutoModel"}
SIMULATED_VS_SERVED = (
    "Simulated τ (lines): the accept length a trainer computes on its own batches, 1 + Σ over draft steps of the share "
    "of positions whose draft prefix matches the target's tokens — what training promises. Served τ (dotted): the same "
    "variant's accept length as this page's other readings measured it when served. They pair by variant: ingest a "
    "training log with `--variant` set to the name its drafter is served as (or `specdash label` it).")


def training_steps(db_path: str | StoreRef, variant_list: Sequence[str] = ()) -> pd.DataFrame:
    """Every row of the training logs (table ``training_steps``) with its variant (its label, else its folder's) and
    file, in file order; out-of-domain rows included (``training_in_domain`` splits them off)."""
    with reader(db_path) as con:
        if TRAINING_TABLE not in relations(con):
            return pd.DataFrame(columns=TRAINING_COLUMNS)
    return frame(db_path, """
        SELECT coalesce(t.variant, folder_variant(s.path)) AS variant, t.phase, t.source_id, s.path, s.kind, t.line_no,
               t.epoch, t.step, t.split, t."position", t.loss, t.accuracy, t.acceptance_rate, t.simulated_accept_length,
               t.learning_rate, t.origin
        FROM training_steps t JOIN sources s USING (source_id)
        WHERE len($variants) = 0 OR list_contains($variants, coalesce(t.variant, folder_variant(s.path)))
        ORDER BY variant, t.source_id, t.line_no, t."position" NULLS FIRST""", {"variants": list(variant_list)})


def training_variants(db_path: str | StoreRef) -> list[str]:
    """The variants the training logs belong to (for the page's variant list), without reading their rows."""
    with reader(db_path) as con:
        if TRAINING_TABLE not in relations(con):
            return []
    rows = frame(db_path, "SELECT DISTINCT coalesce(t.variant, folder_variant(s.path)) AS variant "
                 "FROM training_steps t JOIN sources s USING (source_id) ORDER BY 1")
    return [str(v) for v in rows["variant"]]


def training_outside(steps: pd.DataFrame) -> pd.Series:
    """Rows whose simulated τ is below 1 (the bonus token's floor) or whose accuracy or acceptance rate is outside 0–1."""
    tau = pd.to_numeric(steps["simulated_accept_length"], errors="coerce")
    outside = tau.lt(1 - SLACK)
    for column in ("accuracy", "acceptance_rate"):
        values = pd.to_numeric(steps[column], errors="coerce")
        outside |= values.lt(-SLACK) | values.gt(1 + SLACK)
    return outside.fillna(False).astype(bool)


def training_in_domain(steps: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The rows a page may show, and one note per file whose rows were left out, naming their lines and why."""
    outside = training_outside(steps)
    notes = []
    for path, rows in steps[outside].groupby("path", sort=True):
        lines = ", ".join(str(int(n)) for n in rows["line_no"].head(PLACES_SHOWN)) + (", …" if len(rows) > PLACES_SHOWN else "")
        notes.append(f"{len(rows)} logged step(s) of `{Path(str(path)).name}` (line {lines}): a simulated accept length "
                     "below 1.00 (the bonus token is always emitted) or an accuracy or acceptance rate outside 0–1 — not "
                     "a figure of this kind; check the log's columns.")
    return steps[~outside].reset_index(drop=True), notes


def training_curves(steps: pd.DataFrame) -> pd.DataFrame:
    """The simulated accept length per step, per file and split (figures over every position only). An end-of-epoch
    evaluation line that names no step (AutoModel's ``val_*``) is placed at the last step logged before it."""
    totals = steps[steps["position"].isna()].copy()
    totals["step"] = pd.to_numeric(totals["step"], errors="coerce").groupby(totals["source_id"]).ffill()
    curves = totals[totals["simulated_accept_length"].notna() & totals["step"].notna()]
    return curves[["variant", "source_id", "path", "split", "step", "simulated_accept_length", "line_no"]].reset_index(drop=True)


def served_accept_lengths(curves: pd.DataFrame, distribution: pd.DataFrame, datasets: pd.DataFrame) -> pd.DataFrame:
    """Per variant, the served accept length the page's other readings hold, and where it comes from: the per-request
    pooled figure, else the per-position curve's τ (the one with the most samples), else the mean of its per-dataset
    figures. Only figures at or above the floor of 1."""
    served: dict[str, tuple[float, str]] = {}
    if not datasets.empty:
        for variant, rows in datasets.groupby("variant"):
            values = pd.to_numeric(rows["accept_length"], errors="coerce").dropna()
            if not values.empty:
                served[str(variant)] = (float(values.mean()), f"mean of {len(values)} per-dataset figure(s)")
    if not curves.empty:
        for variant, rows in curves.groupby("variant"):
            best = rows.loc[pd.to_numeric(rows["samples"], errors="coerce").idxmax()]
            served[str(variant)] = (float(best["accept_length"]), f"per-position curve ({best['origin']})")
    if not distribution.empty:
        for row in distribution.itertuples():
            if not _gap(row.pooled):
                served[str(row.variant)] = (float(row.pooled), f"per-request, pooled ({row.origins})")
    rows_out = [{"variant": v, "served_accept_length": value, "served_from": origin}
                for v, (value, origin) in sorted(served.items()) if value == value and value >= 1 - SLACK]
    return pd.DataFrame(rows_out, columns=["variant", "served_accept_length", "served_from"])


def _last(rows: pd.DataFrame, column: str) -> float | None:
    values = pd.to_numeric(rows[column], errors="coerce").dropna()
    return float(values.iloc[-1]) if not values.empty else None


def training_table(steps: pd.DataFrame, served: pd.DataFrame) -> pd.DataFrame:
    """One row per training log: its last simulated τ (train, eval), last accuracy, the variant's served τ and the gap."""
    served_of = {row.variant: (row.served_accept_length, row.served_from) for row in served.itertuples()}
    rows = []
    for (variant, _source_id), log in steps.groupby(["variant", "source_id"], sort=True):
        totals = log[log["position"].isna()]
        train, evaluation = totals[totals["split"] == "train"], totals[totals["split"] == "eval"]
        simulated = _last(evaluation, "simulated_accept_length") or _last(train, "simulated_accept_length")
        value, origin = served_of.get(variant, (None, None))
        rows.append({
            "variant": variant, "training file": Path(str(log["path"].iloc[0])).name,
            "trainer": TRAINERS.get(str(log["kind"].iloc[0]), str(log["kind"].iloc[0])),
            "last step": _last(log, "step"), "simulated τ (train)": _last(train, "simulated_accept_length"),
            "simulated τ (eval)": _last(evaluation, "simulated_accept_length"),
            "training accuracy": _last(train, "accuracy"), "served τ": value, "served τ from": origin,
            "served − simulated": value - simulated if value is not None and simulated is not None else None,
        })
    columns = ["variant", "training file", "trainer", "last step", "simulated τ (train)", "simulated τ (eval)",
               "training accuracy", "served τ", "served τ from", "served − simulated"]
    table = pd.DataFrame(rows, columns=columns)
    table["last step"] = pd.array(pd.to_numeric(table["last step"], errors="coerce").round(), dtype="Int64")
    for column in ("simulated τ (train)", "simulated τ (eval)", "training accuracy", "served τ", "served − simulated"):
        table[column] = pd.to_numeric(table[column], errors="coerce")
    return table


def training_steps_table(steps: pd.DataFrame) -> pd.DataFrame:
    """Every logged step as read: split, step, position, loss, accuracy, acceptance rate, simulated τ, learning rate."""
    return pd.DataFrame({
        "variant": steps["variant"], "training file": [Path(str(p)).name for p in steps["path"]],
        "training split": steps["split"], "epoch": pd.array(pd.to_numeric(steps["epoch"], errors="coerce"), dtype="Int64"),
        "training step": pd.array(pd.to_numeric(steps["step"], errors="coerce"), dtype="Int64"),
        "position k": pd.array(pd.to_numeric(steps["position"], errors="coerce"), dtype="Int64"),
        "training loss": pd.to_numeric(steps["loss"], errors="coerce"),
        "training accuracy": pd.to_numeric(steps["accuracy"], errors="coerce"),
        "training acceptance rate": pd.to_numeric(steps["acceptance_rate"], errors="coerce"),
        "simulated τ": pd.to_numeric(steps["simulated_accept_length"], errors="coerce"),
        "learning rate": [None if _gap(v) else f"{float(v):.3e}" for v in steps["learning_rate"]],
        "line": pd.array(pd.to_numeric(steps["line_no"], errors="coerce"), dtype="Int64"),
    }).reset_index(drop=True)
