"""Where speculation pays: sweep points read from the store, speedup against the baseline at the same batch
size (or concurrency), the crossover where it stops paying, and the drafter-config grid. UI-free.

The figures, each defined in docs/metrics.md ("Sweeps"):

- speedup S = a variant's tok/s ÷ the baseline's tok/s *at the same batch size / concurrency, same sweep*;
  a point with no baseline at its batch has no speedup (never one borrowed from another batch);
- spread: when a (variant, config, batch) was measured more than once, S carries sd(S) by the delta
  method, sd(S)/S = √((sd_v/m_v)² + (sd_b/m_b)²);
- crossover: the batch where S falls through 1, interpolated linearly in log2(batch) between the last
  point that pays and the first that does not; with spread, the same interpolation of S − sd and
  S + sd gives its range;
- cycle cost r = τ ÷ S (the cycle model, τ = accept length): "modelled" when the sweep's step times
  are the server's p20 step times (bench_speculative.py), "estimated" otherwise;
- a depth sweep (no batch, concurrency or rate; two or more draft depths): x is the depth (``CONFIG_AXES``), and the
  baseline, which has none, is every depth's reference.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dashboard.analysis.data import reader
from dashboard.analysis.definitions import (
    COLUMNS,
    SWEEP_LEFT_OUT,
    SWEEP_POOLS_FILES,
    Quantity,
)
from ingest.derive.variants import drafter_name
from ingest.storage.location import StoreRef

# The definitions the page shows (docs/metrics.md, "Sweeps", says the same); the tables' helps are these words.
SPEEDUP = COLUMNS["sweep speedup"].help
CROSSOVER = ("Crossover = the batch where speedup falls through 1×, interpolated linearly in log2(batch) between the "
             "last point that pays and the first that does not; its range is the same interpolation of speedup ± sd, "
             "where points were measured more than once.")
STEP_TIME = COLUMNS["sweep cycle ms"].help
COST = "r = the cycle time ÷ the baseline's step time at the same batch; speedup S = τ ÷ r."

# The interpolated crossover batch (batch sizes themselves are counts: definitions.COUNT).
CROSSOVER_AT = Quantity("crossover", "", 1)

X_AXES = {"batch_size": "batch size", "concurrency": "max concurrency", "request_rate": "request rate",
          "steps": "draft depth"}
# Axes that are a drafter config: a depth sweep (llama.cpp's --spec-draft-n-max, vLLM's num_speculative_tokens at
# 1, 2, 3, ...) measures its baseline once, without a depth, and every depth is compared with it.
CONFIG_AXES = frozenset({"steps"})
# The best-config table's columns: the frame's names -> the keys definitions.COLUMNS declares them under.
BEST_COLUMNS = {"variant": "variant", "method": "method", "config_short": "best config", "throughput": "sweep tok/s",
                "speedup": "sweep speedup", "tau": "sweep τ", "cycle_ms": "sweep cycle ms"}
CONFIG = ["steps", "topk", "num_draft_tokens"]
MODELLED = "modelled from step time"
UNKNOWN = "?"  # a config value no file gives: never formatted as a number
UNLABELLED = "unlabelled"  # the prefix of a variant named only by its folder (migration 019's folder_variant)
NAMES_SHOWN = 4  # file names a sentence lists before "…"


def points(db_path: str | StoreRef) -> pd.DataFrame:
    """Every sweep point (view ``sweep_series``: sweep files and bench records grouped into sweeps)."""
    with reader(db_path) as con:
        return con.execute(
            """
            SELECT sweep, phase, model, dataset, variant, is_baseline, batch_size, concurrency, request_rate, steps, topk,
                   num_draft_tokens, accept_length, step_time_ms, throughput, throughput_kind, accept_length_from,
                   simulated, simulated_by, tp_size, origin, path, source_id, method, speedup_reported, acceptance_rate
            FROM sweep_series ORDER BY sweep, variant, batch_size, concurrency, request_rate, steps, topk, num_draft_tokens
            """
        ).df()


def apart_by_model(frame: pd.DataFrame) -> pd.DataFrame:
    """Sweeps that pool points of several target models, one sweep per model ("<sweep> · <model>"; points naming
    none: "<sweep> · model unknown"): one sweep is one system, and runs of two models never are."""
    if frame.empty:
        return frame
    names = frame["model"].map(drafter_name)
    models = names.groupby(frame["sweep"]).transform(lambda values: values.dropna().nunique())
    split = models > 1
    if not split.any():
        return frame
    out = frame.copy()
    out.loc[split, "sweep"] = out.loc[split, "sweep"] + " · " + names[split].fillna("model unknown")
    return out


def file_names(paths: pd.Series) -> list[str]:
    return sorted({str(p).replace("\\", "/").rsplit("/", 1)[-1] for p in paths.dropna()})


def listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def one_system(frame: pd.DataFrame) -> bool:
    """Whether something says a sweep's points are one system: one file, a target model every point names (the
    same: ``apart_by_model``), or variants named by a label or folder layout rather than only by their folder."""
    if frame["source_id"].nunique() <= 1:
        return True
    if frame["model"].notna().all():
        return True
    return not frame["variant"].astype(str).str.startswith(UNLABELLED).any()


def pooled_files(frame: pd.DataFrame) -> str | None:
    """Why a sweep's speedups pair points only within a file (``with_speedup(within_file=True)``); None when the
    sweep is one system (``one_system``)."""
    if frame.empty or one_system(frame):
        return None
    names = file_names(frame["path"])
    return SWEEP_POOLS_FILES.format(files=len(names), names=listed(names))


def placed(frame: pd.DataFrame, x: str) -> pd.DataFrame:
    """The points that give the sweep's x (the others cannot be placed on its axis: ``left_out``); on a config axis
    (depth) the baseline too, which has no depth and is every depth's reference."""
    return frame[frame[x].notna() | (frame["is_baseline"] & (x in CONFIG_AXES))]


def left_out(frame: pd.DataFrame, x: str) -> str | None:
    """What ``placed`` leaves out, in one sentence; None when every point gives x."""
    missing = frame.drop(placed(frame, x).index)
    if missing.empty:
        return None
    return SWEEP_LEFT_OUT.format(count=len(missing), axis=X_AXES[x], names=listed(file_names(missing["path"])))


def best_table(best: pd.DataFrame, x: str) -> pd.DataFrame:
    """The best config per variant and x as the page shows it: columns named as definitions.COLUMNS declares them
    (the x axis under its own words: "batch size", "max concurrency", "request rate"); values at full precision. Where
    the step times come from (modelled or estimated) the page says above the table, once."""
    names = {"variant": "variant", x: X_AXES[x], **{k: v for k, v in BEST_COLUMNS.items() if k != "variant"}}
    if x in CONFIG_AXES:  # the depth is the config: no other config to pick per point; a column no depth fills is left out
        names.pop("config_short")
        names = {k: v for k, v in names.items() if k not in ("tau", "cycle_ms") or best[k].notna().any()}
    if "acceptance_rate" in best and best["acceptance_rate"].notna().any():
        names["acceptance_rate"] = "sweep acceptance rate"
    return best[list(names)].rename(columns=names).reset_index(drop=True)


def x_axis(frame: pd.DataFrame) -> str:
    """The sweep's independent variable: batch size when the points give one, else concurrency, else rate; with none of
    them, the draft depth when the speculative points give two or more (a depth sweep)."""
    for column in X_AXES:
        if column not in CONFIG_AXES and column in frame and frame[column].notna().any():
            return column
    for column in sorted(CONFIG_AXES):
        if column in frame and depth_is_the_only_config(frame, column):
            return column
    return "batch_size"


def depth_is_the_only_config(frame: pd.DataFrame, column: str) -> bool:
    """Whether the speculative points give two or more depths and each file gives one point per (variant, depth): two
    points of one file at one depth differ by something else the file shows (vLLM's fr-spec table: depth 1 with
    branching 1 and 3), and a curve over the depth would average them."""
    spec = frame[~frame["is_baseline"].astype(bool) & frame[column].notna()]
    if spec[column].nunique() < 2:
        return False
    keys = [k for k in ("source_id", "variant", "dataset") if k in spec]
    return not spec.duplicated([*keys, column]).any()


def width(frame: pd.DataFrame, x: str) -> pd.Series:
    """The requests decoded together at each point, for the cycle model: x itself on a batch axis (as before), the
    point's batch size on a config axis (unknown: NaN, and no cycle time is estimated)."""
    return (frame["batch_size"] if x in CONFIG_AXES else frame[x]).astype(float)


def sweep_overview(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep: what it holds, so the page can list and pick them."""
    rows = []
    for sweep, part in frame.groupby("sweep", sort=True):
        x = x_axis(part)
        values = sorted(part[x].dropna().unique())
        rows.append({
            "sweep": sweep, "model": first(part["model"]), "dataset": first(part["dataset"]),
            "variants": ", ".join(sorted(part.loc[~part["is_baseline"], "variant"].unique())) or "—",
            "has_baseline": bool(part["is_baseline"].any()), "x": x,
            "x_values": ", ".join(f"{v:g}" for v in values), "points": len(part),
            "kinds": ", ".join(sorted(part["throughput_kind"].dropna().unique())),
            "simulated": bool(part["simulated"].any()), "origin": ", ".join(sorted(part["origin"].unique())),
        })
    return pd.DataFrame(rows)


def first(values: pd.Series) -> object:
    present = values.dropna()
    return present.iloc[0] if len(present) else None


def aggregate(frame: pd.DataFrame, x: str, within_file: bool = False) -> pd.DataFrame:
    """Points repeated at one (variant, config, x) as mean, sd and count; the configs kept as given; with
    ``within_file``, per file too."""
    keys = list(dict.fromkeys(["variant", "is_baseline", x, *CONFIG, *(["source_id"] if within_file else [])]))
    shaped = frame.assign(**{c: frame[c].astype("Int64") for c in CONFIG})
    grouped = shaped.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        throughput=("throughput", "mean"), throughput_sd=("throughput", "std"), runs=("throughput", "count"),
        accept_length=("accept_length", "mean"), step_time_ms=("step_time_ms", "mean"),
        throughput_kind=("throughput_kind", "first"), simulated=("simulated", "any"),
        **({"batch_size": ("batch_size", "first")} if x in CONFIG_AXES else {}),
        **({"acceptance_rate": ("acceptance_rate", "mean")} if "acceptance_rate" in frame else {}),
        **({"method": ("method", "first")} if "method" in frame else {}),
        **({"speedup_reported": ("speedup_reported", "mean")} if "speedup_reported" in frame else {}),
    ).reset_index()
    return out


def with_speedup(frame: pd.DataFrame, x: str, within_file: bool = False) -> pd.DataFrame:
    """Each speculative point with the baseline at the same x: speedup, its sd, τ, r and the step time. With
    ``within_file`` (a sweep that is not known to be one system: ``pooled_files``), only a baseline of the same file."""
    agg = aggregate(frame, x, within_file)
    # on a config axis the baseline has no depth: it is every depth's reference (of the same file, when pooled)
    on = [c for c in [x, "source_id"] if (c != x or x not in CONFIG_AXES) and (c == x or within_file)]
    columns = {"base_throughput": "throughput", "base_sd": "throughput_sd", "base_step_ms": "step_time_ms"}
    baseline, spec = agg[agg["is_baseline"]], agg[~agg["is_baseline"]]
    if on:
        base = baseline.groupby(on).agg(**{k: (v, "mean") for k, v in columns.items()}).reset_index()
        spec = spec.merge(base, on=on, how="left")
    else:
        spec = spec.assign(**{k: baseline[v].mean() for k, v in columns.items()})
    measured = spec["throughput"] / spec["base_throughput"]
    # a table that gives speedups and no tok/s (a leaderboard): the file's own figure, said to be so
    reported = spec["speedup_reported"] if "speedup_reported" in spec else pd.Series(np.nan, index=spec.index)
    spec["speedup"] = measured.where(measured.notna(), reported)
    spec["speedup_from"] = pd.Series("tok/s ÷ baseline tok/s at the same x", index=spec.index).where(
        measured.notna(), pd.Series("as the file reports it", index=spec.index).where(reported.notna()))
    rel = np.sqrt((spec["throughput_sd"].fillna(0) / spec["throughput"]) ** 2
                  + (spec["base_sd"].fillna(0) / spec["base_throughput"]) ** 2)
    spec["speedup_sd"] = (spec["speedup"] * rel).where((spec["runs"] > 1) | spec["base_sd"].notna())
    spec["tau"] = spec["accept_length"]
    measured_r = spec["step_time_ms"] / spec["base_step_ms"]
    spec["cost_ratio"] = measured_r.where(measured_r.notna(), spec["tau"] / spec["speedup"])
    spec["r_from"] = np.where(measured_r.notna(), "modelled step time ÷ baseline step time", "estimated: τ ÷ speedup")
    spec["cycle_ms"] = spec["step_time_ms"].where(
        spec["step_time_ms"].notna(), 1000 * spec["tau"] * width(spec, x) / spec["throughput"])
    spec["cycle_from"] = np.where(spec["step_time_ms"].notna(), "modelled (server p20 step time)",
                                  "estimated: τ × batch ÷ tok/s")
    spec["config"] = [config_label(r) for r in spec[CONFIG].itertuples(index=False)]
    spec["config_short"] = [" · ".join(config_parts(r)) for r in spec[CONFIG].itertuples(index=False)]
    return spec


def config_value(value: object) -> str:
    """A config value as text: the integer, or ``UNKNOWN`` when no file gives it."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    return str(int(value)) if isinstance(value, (int, float, np.integer, np.floating)) else str(value)


def config_parts(values: Sequence[object]) -> list[str]:
    return [config_value(v) for v in values]


def config_label(values: Sequence[object]) -> str:
    return "steps {} · topk {} · draft {}".format(*config_parts(values))


def baseline_steps(frame: pd.DataFrame, x: str) -> pd.DataFrame:
    """The baseline's step time at each x: modelled when the sweep gives it, else 1000 × batch ÷ tok/s."""
    agg = aggregate(frame, x)
    base = agg[agg["is_baseline"]].copy()
    base["cycle_ms"] = base["step_time_ms"].where(base["step_time_ms"].notna(),
                                                  1000 * width(base, x) / base["throughput"])
    base["tau"] = 1.0
    return base


def curves(spec: pd.DataFrame, x: str, config: str | None = None) -> pd.DataFrame:
    """Per variant and x, the best config's point (highest speedup; highest tok/s without a baseline), or
    the named ``config`` only."""
    chosen = spec if config is None else spec[spec["config"] == config]
    if chosen.empty:
        return chosen
    score = chosen["speedup"].where(chosen["speedup"].notna(), chosen["throughput"] / 1e12)
    best = chosen.assign(_score=score).sort_values("_score", ascending=False).groupby(["variant", x], sort=False).head(1)
    return best.drop(columns="_score").sort_values(["variant", x]).reset_index(drop=True)


@dataclass(frozen=True)
class Crossover:
    variant: str
    status: str  # 'crosses' | 'pays at every point' | 'pays at no point' | 'no baseline' | 'one point'
    at: float | None = None  # interpolated x where speedup = 1
    low: float | None = None  # its range from speedup ± sd, when the points carry spread
    high: float | None = None
    last_paying: float | None = None
    first_losing: float | None = None


def crossing(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The first x where ys falls from ≥ 1 to < 1, interpolated linearly in log2(x)."""
    for i in range(len(xs) - 1):
        if ys[i] >= 1 > ys[i + 1]:
            lo, hi = math.log2(xs[i]), math.log2(xs[i + 1])
            at = lo + (ys[i] - 1) / (ys[i] - ys[i + 1]) * (hi - lo)
            return float(2**at)
    return None


def crossover(curve: pd.DataFrame, x: str, variant: str) -> Crossover:
    rows = curve[(curve["variant"] == variant) & curve["speedup"].notna() & (curve[x] > 0)].sort_values(x)
    if rows.empty:
        return Crossover(variant, "no baseline")
    xs = rows[x].astype(float).tolist()
    ys = rows["speedup"].tolist()
    if len(rows) == 1:
        return Crossover(variant, "one point", last_paying=xs[0] if ys[0] >= 1 else None,
                         first_losing=None if ys[0] >= 1 else xs[0])
    at = crossing(xs, ys)
    if at is None:
        status = "pays at every point" if min(ys) >= 1 else "pays at no point" if max(ys) < 1 else "pays again"
        return Crossover(variant, status)
    index = next(i for i in range(len(xs) - 1) if ys[i] >= 1 > ys[i + 1])
    sd = rows["speedup_sd"].fillna(0).tolist()
    low = high = None
    if any(sd):
        ends = [crossing(xs, [y + s * sign for y, s in zip(ys, sd, strict=True)]) for sign in (-1, 1)]
        low = ends[0] if ends[0] is not None else xs[0]
        high = ends[1] if ends[1] is not None else xs[-1]
    return Crossover(variant, "crosses", at, low, high, xs[index], xs[index + 1])


def crossovers(curve: pd.DataFrame, x: str) -> list[Crossover]:
    return [crossover(curve, x, variant) for variant in sorted(curve["variant"].unique())] if not curve.empty else []


def best_per_x(spec: pd.DataFrame, x: str) -> pd.DataFrame:
    """The best config of each variant at each x, for the table under the grid."""
    return curves(spec, x)


def grid(spec: pd.DataFrame, x: str, value: float, variant: str) -> pd.DataFrame:
    """The config grid at one x: rows 'steps s · topk k', columns draft tokens; speedup or tok/s per cell."""
    part = spec[(spec[x] == value) & (spec["variant"] == variant)].copy()
    if part.empty:
        return part
    part["row"] = [f"steps {config_value(s)} · topk {config_value(k)}" for s, k in zip(part["steps"], part["topk"], strict=True)]
    part["column"] = [config_value(d) for d in part["num_draft_tokens"]]
    return part


def config_unknown(cells: pd.DataFrame) -> bool:
    """Whether some grid cell's config is not given by its files (``UNKNOWN`` in its row or column)."""
    return bool(cells[CONFIG].isna().any().any()) if not cells.empty else False


def like_for_like(frame: pd.DataFrame) -> list[str]:
    """What makes a sweep's comparisons not like-for-like, each in one sentence; empty when nothing does."""
    notes = []
    models = frame["model"].dropna().unique()
    if len(models) > 1:
        notes.append(f"The sweep mixes models ({', '.join(map(str, models))}): its speedups are not like-for-like.")
    tps = frame["tp_size"].dropna().unique()
    if len(tps) > 1:
        notes.append(f"The sweep mixes tensor-parallel sizes ({', '.join(str(int(t)) for t in tps)}).")
    kinds = frame["throughput_kind"].dropna().unique()
    if len(kinds) > 1:
        notes.append(f"The sweep mixes throughput kinds ({', '.join(kinds)}): a speedup across kinds is not like-for-like.")
    base_sources = set(frame.loc[frame["is_baseline"], "source_id"])
    spec_sources = set(frame.loc[~frame["is_baseline"], "source_id"])
    if base_sources and spec_sources and not base_sources & spec_sources:
        notes.append("The baseline comes from other files than the speculative points: check that model, TP, "
                     "hardware and max tokens match.")
    if frame["simulated"].any():
        notes.append("Some points ran with simulated acceptance (SGLANG_SIMULATE_ACC_LEN / synthetic rejection "
                     "sampling): they measure cycle cost, not a drafter.")
    return notes


def break_even_path(frame: pd.DataFrame) -> pd.DataFrame:
    """Every sweep's best-config points as (τ, r) pairs, in batch order, for a path on the Break-even plane:
    sweep, variant, x (its axis in ``axis``), tau, cost_ratio and ``r_from`` ("modelled step time ÷ baseline step
    time" when the sweep gives step times, else "estimated: τ ÷ speedup")."""
    parts = []
    for sweep, part in apart_by_model(frame).groupby("sweep", sort=True):
        x = x_axis(part)
        curve = curves(with_speedup(placed(part, x), x, pooled_files(part) is not None), x)
        if curve.empty:
            continue
        curve = curve[curve["cost_ratio"].notna()]
        parts.append(pd.DataFrame({"sweep": sweep, "variant": curve["variant"], "axis": X_AXES[x], "x": curve[x],
                                   "tau": curve["tau"], "cost_ratio": curve["cost_ratio"], "r_from": curve["r_from"]}))
    columns = ["sweep", "variant", "axis", "x", "tau", "cost_ratio", "r_from"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


# --- what the pages read, whole (cached by the pages as readers: ``queries.cached``) ---------------------

def overview(db_path: str | StoreRef) -> pd.DataFrame:
    """``sweep_overview`` of every sweep in the store, each model apart: the Sweeps page's list of sweeps."""
    return sweep_overview(apart_by_model(points(db_path)))


@dataclass(frozen=True)
class SweepView:
    """One sweep as the Sweeps page reads it: its points, its axis, what makes it not like-for-like, its speculative
    points with their speedup, the baseline's step times, and each variant's best config at each x."""

    part: pd.DataFrame
    x: str
    pooled: str | None
    notes: list[str]
    spec: pd.DataFrame
    base: pd.DataFrame
    best: pd.DataFrame

    @property
    def axisless(self) -> bool:
        """No point gives the sweep's x (batch size, concurrency or rate): a table of results, not a curve."""
        return bool(self.part[self.x].isna().all())


def view(db_path: str | StoreRef, sweep: str) -> SweepView:
    """The sweep named ``sweep`` (an ``overview`` row), analysed once per store change rather than at every rerun."""
    everything = apart_by_model(points(db_path))
    part = everything[everything["sweep"] == sweep]
    x = x_axis(part)
    pooled = pooled_files(part)
    notes = [*like_for_like(part), *filter(None, [pooled, left_out(part, x)])]
    spec = with_speedup(placed(part, x), x, within_file=pooled is not None)
    base = baseline_steps(placed(part, x), x)
    return SweepView(part, x, pooled, notes, spec, base, best_per_x(spec, x) if not spec.empty else spec)


POINT_COLUMNS = {"variant": "variant", "method": "method", "dataset": "dataset", "throughput": "sweep tok/s",
                 "speedup": "sweep speedup", "speedup_reported": "reported speedup", "accept_length": "sweep τ",
                 "throughput_kind": "throughput kind"}


def points_table(part: pd.DataFrame) -> pd.DataFrame:
    """A sweep's points as they are, for a sweep with no axis to draw them on, each speculative point's speedup over
    the baseline of the same file and dataset: columns named as definitions.COLUMNS declares them; a column no point
    fills is left out."""
    keys = ["source_id", "dataset"]
    base = (part[part["is_baseline"]].groupby(keys, dropna=False)["throughput"].mean().rename("base_throughput")
            .reset_index())
    # a sweep with no baseline point groups nothing, and pandas gives the empty keys another dtype than part's
    points = part.merge(base.astype({key: part[key].dtype for key in keys}), on=keys, how="left")
    points["speedup"] = (points["throughput"] / points["base_throughput"]).where(~points["is_baseline"])
    shown = {k: v for k, v in POINT_COLUMNS.items() if k in points and points[k].notna().any()}
    return points[list(shown)].rename(columns=shown).reset_index(drop=True)


def phase_paths(db_path: str | StoreRef, phase_list: Sequence[str]) -> pd.DataFrame:
    """``break_even_path`` of the sweeps in ``phase_list`` (every sweep for none): the Break-even page's paths."""
    frame = points(db_path)
    return break_even_path(frame[frame["phase"].isin(phase_list)] if phase_list else frame)
