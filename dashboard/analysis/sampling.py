"""Which runs the tok/s-per-run chart draws when there are too many to draw: a deterministic, honest sample.

Pure: a DataFrame of measured runs in, the rows to draw out. Only the markers thin out; every
number the dashboard shows (means, CIs, deltas, verdicts, tables, downloads) is computed from all
runs elsewhere, and a drawn marker is a real run with its own hover and click.

How the sample keeps the picture honest:

* **Per variant, an equal share of the budget** (water-filling): a variant with fewer runs than its
  share is drawn whole, the others get what is left, split evenly. Every variant is equally legible,
  however many runs it has; the table beside the chart gives each variant's n.
* **A floor per variant** (``floor``): no variant is thinned below it, even when many variants
  make the budget's share smaller (the budget then gives way, not the floor).
* **Evenly spaced ranks of tok/s** inside a variant, so the distribution's shape survives; its
  **minimum and maximum are always drawn**.
* **Runs that stopped short of max_tokens** (drawn as crosses) and the others are sampled
  separately, in proportion to their counts (at least one cross when a variant has any).
* **Deterministic**: ties in tok/s are broken by (session, run index); the same runs give the same points.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

# 600 markers per chart. A variant's strip is 0.16 of its category wide: ~40 px with 3 variants in the
# Compare page's chart column, ~6 px with 20; room for about a hundred 12 px markers before they cover
# each other, so more add ink, not information. Each drawn SVG marker costs the browser ~0.1 ms on every
# redraw (a baseline switch with 1,500 of them: +0.1 s in headless Chromium on 2 cores), and WebGL costs
# more than that just to set up without a GPU.
RUN_POINTS_BUDGET = 600
RUN_POINTS_FLOOR = 30  # never fewer per variant: a distribution's shape needs a few dozen points


def is_short(runs: pd.DataFrame) -> pd.Series:
    """Runs that stopped before max_tokens (unknown counts as not short, as the chart's symbols do)."""
    return runs["hit_max_tokens"].eq(False).fillna(False).astype(bool)


def variant_shares(counts: pd.Series, budget: int, floor: int) -> pd.Series:
    """Points per variant: the largest equal cap whose total fits ``budget``, never below ``floor`` nor above the count."""
    sizes = np.sort(counts.to_numpy())
    cap, remaining = 0, budget
    for position, size in enumerate(sizes):  # smallest first: a variant under the cap frees budget for the rest
        even = remaining // (len(sizes) - position)
        if size > even:
            cap = even
            break
        remaining -= size
    else:
        cap = int(sizes[-1]) if len(sizes) else 0
    return counts.clip(upper=max(cap, floor))


def split_by_share(quota: int, sizes: list[int], required: list[int]) -> list[int]:
    """``quota`` points over groups of ``sizes`` in proportion (largest remainder), each at least ``required``."""
    total = sum(sizes)
    exact = [quota * size / total for size in sizes]
    taken = [min(size, max(need, int(np.floor(share)))) for size, need, share in zip(sizes, required, exact, strict=True)]
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - np.floor(exact[i])), i))
    while sum(taken) < quota:
        growable = [i for i in by_remainder if taken[i] < sizes[i]]
        taken[growable[0]] += 1
    while sum(taken) > quota:  # a required minimum pushed past the quota: give back where most is spare
        spare = max(range(len(sizes)), key=lambda i: (taken[i] - required[i], -i))
        taken[spare] -= 1
    return taken


def evenly_spaced(first: int, stop: int, count: int, prefer_end: str) -> np.ndarray:
    """``count`` of the sorted positions ``first``..``stop - 1`` at evenly spaced ranks; both ends when count ≥ 2.

    With one position to keep, ``prefer_end`` says which: "low", "high" or "middle".
    """
    if count <= 0:
        return np.array([], dtype=np.int64)
    if count == 1:
        return np.array([{"low": first, "high": stop - 1, "middle": (first + stop - 1) // 2}[prefer_end]])
    return first + np.round(np.linspace(0, stop - first - 1, count)).astype(np.int64)  # distinct: the step is ≥ 1


def thin_variant(keys: np.ndarray, first: int, split: int, stop: int, quota: int) -> np.ndarray:
    """Sorted positions to keep of one variant: full runs at ``first:split``, crossed at ``split:stop``.

    Each part is sorted by (tok/s, session, run index) (``keys``, one row per position); the
    variant's lowest and highest run are the head or tail of one of them and are always kept.
    """
    parts = [(first, split), (split, stop)]
    heads = [tuple(keys[a]) for a, b in parts if b > a]
    tails = [tuple(keys[b - 1]) for a, b in parts if b > a]
    lowest, highest = min(heads), max(tails)
    holds = [
        ({"low"} if b > a and tuple(keys[a]) == lowest else set()) | ({"high"} if b > a and tuple(keys[b - 1]) == highest else set())
        for a, b in parts
    ]
    sizes = [b - a for a, b in parts]
    required = [min(size, max(len(held), 1 if size else 0)) for size, held in zip(sizes, holds, strict=True)]
    counts = split_by_share(quota, sizes, required)
    kept = [
        evenly_spaced(a, b, count, "low" if "low" in held else "high" if "high" in held else "middle")
        for (a, b), count, held in zip(parts, counts, holds, strict=True)
    ]
    return np.concatenate(kept)


def sort_keys(runs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``runs`` sorted by (variant as first seen, crossed, tok/s, session, run index), and those keys."""
    variant = pd.factorize(runs["variant"], use_na_sentinel=False)[0]
    crossed = is_short(runs).to_numpy().astype(np.int64)
    session = pd.factorize(runs["session_id"].astype(str), sort=True)[0]
    run_index = runs["run_index"].fillna(-1).to_numpy(dtype=np.int64)
    speed = runs["tok_per_s"].to_numpy(dtype=np.float64)
    order = np.lexsort((run_index, session, speed, crossed, variant))
    keys = np.column_stack([variant, crossed, speed, session, run_index])[order]
    return order, keys


def drawn_runs(measured: pd.DataFrame, budget: int = RUN_POINTS_BUDGET, floor: int = RUN_POINTS_FLOOR) -> pd.DataFrame:
    """The measured runs to draw as markers: all of them within ``budget``, else a per-variant sample.

    Rows keep their original order (the chart spreads a variant's points in run order). Runs
    without a tok/s (nothing to draw) neither count towards the budget nor are kept in a sample.
    """
    if len(measured) <= budget:
        return measured
    drawable = np.flatnonzero(measured["tok_per_s"].notna().to_numpy())
    if len(drawable) <= budget:
        return measured
    order, keys = sort_keys(measured.iloc[drawable])
    variant_starts = np.flatnonzero(np.r_[True, np.diff(keys[:, 0]) != 0])
    bounds = np.r_[variant_starts, len(keys)]
    shares = variant_shares(pd.Series(np.diff(bounds)), budget, floor)
    kept = []
    for first, stop, share in zip(bounds[:-1], bounds[1:], shares, strict=True):
        if stop - first <= share:
            kept.append(np.arange(first, stop))
            continue
        split = first + int(np.searchsorted(keys[first:stop, 1], 1))  # crossed runs sort after full ones
        kept.append(thin_variant(keys[:, 2:], first, split, stop, int(share)))
    chosen = drawable[order[np.concatenate(kept)]] if kept else drawable[:0]
    return measured.iloc[np.sort(chosen)]


def thinning_note(measured_count: int, drawn_count: int) -> str | None:
    """What the chart's caption says when it draws a sample; None when every run is drawn."""
    if drawn_count >= measured_count:
        return None
    return (
        f"Drawing {drawn_count:,} of {measured_count:,} measured runs (per variant, evenly spaced by tok/s, "
        "min and max kept, stopped-short runs in proportion); the mean ± CI uses all runs; every run is in "
        "the runs table and the download."
    )


def run_points_note(runs: pd.DataFrame) -> str | None:
    """The caption for ``charts.tok_per_s_points(runs, ...)``: says how many of the measured runs it draws."""
    measured = runs[~runs["is_warmup"]]
    return thinning_note(len(measured), len(drawn_runs(measured, RUN_POINTS_BUDGET, RUN_POINTS_FLOOR)))
