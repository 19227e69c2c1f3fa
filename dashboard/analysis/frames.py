"""Display tables: analysis frames renamed, chosen and ordered for people, shared by pages and reports. Pure pandas.

Column names are the keys of ``definitions.COLUMNS`` (its label, help and quantity are what a page
shows); numbers stay at full precision, the declaration rounds them when shown. Exports are the
``*_export`` frames: machine names, numbers only (a CI is two columns), every digit.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dashboard.analysis.compare import CYCLE_MEASURED, BreakEven
from dashboard.analysis.definitions import (
    ACCEPT,
    COUNT,
    CYCLE_PARTS,
    EMPTY,
    KERNEL_CLASSES,
    MS,
    REQ_S,
    SECONDS,
    TIME_TEXT,
    TOK_S,
    Quantity,
    missing,
)
from ingest.storage.labels import NO_PHASE

FEWER_THAN_TWO = "n/a (n < 2)"  # fewer than two runs, records or log lines: no interval
TOO_FEW = "n/a (too few)"  # the t interval would reach 0 tok/s or below (compare.ci_from_summary)


def _ci(low: Any, high: Any, n: Any = None) -> str:
    """A tok/s interval as the CI columns show it (their label carries the unit)."""
    if missing(low) or missing(high):
        return TOO_FEW if not missing(n) and int(n) >= 2 else FEWER_THAN_TWO
    return TOK_S.interval(low, high, unit=False)


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame else pd.Series([None] * len(frame), index=frame.index, dtype=object)


def _numbers(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values, errors="coerce").astype(float)


def _text(values: Iterable[Any]) -> list[str]:
    """Text cells with every gap (None, NaN, empty) read as the declared empty mark."""
    return [EMPTY if missing(v) or str(v) == "" else str(v) for v in values]


def _when(value: Any) -> str:
    return EMPTY if missing(value) else pd.Timestamp(value).strftime(TIME_TEXT)


# --- Compare ------------------------------------------------------------------------------------

def comparison_table(comparison: pd.DataFrame, has_baseline: bool, not_like_for_like: Iterable[str] = ()) -> pd.DataFrame:
    """One row per variant, as the Compare page, the decision page and the reports show it.

    The baseline's Δ cells stay empty (it is the reference); the CIs are text ("low – high").
    """
    blocked = set(not_like_for_like)
    base = comparison["is_baseline"] if "is_baseline" in comparison else pd.Series(False, index=comparison.index)
    out = pd.DataFrame({
        "variant": comparison["variant"],
        "runs": comparison["runs"],
        "Σtok/Σtime": _numbers(comparison["tokens_over_time"]),
        "mean of runs": _numbers(comparison["mean_of_runs"]),
        "95% CI": [_ci(lo, hi, n) for lo, hi, n in zip(_col(comparison, "ci_low"), _col(comparison, "ci_high"),
                                                        comparison["runs"], strict=True)],
    })
    if has_baseline:
        out["Δ tok/s"] = _numbers(_col(comparison, "delta")).mask(base)
        out["Δ %"] = _numbers(_col(comparison, "delta_pct")).mask(base)
        out["Δ 95% CI"] = [EMPTY if b else _ci(lo, hi) if not (missing(lo) or missing(hi)) else FEWER_THAN_TWO
                           for b, lo, hi in zip(base, _col(comparison, "delta_low"), _col(comparison, "delta_high"), strict=True)]
        out["verdict"] = _text(_col(comparison, "verdict"))
        out["speedup"] = _numbers(_col(comparison, "speedup"))
    if "method" in comparison:
        out["method"] = _text(comparison["method"])
    out["tokens/step"] = _numbers(_col(comparison, "tokens_per_step"))
    out["drafts/step"] = _numbers(_col(comparison, "accepted_drafts_per_step"))
    out["cycle ms (est.)"] = _numbers(_col(comparison, "cycle_ms_est"))
    out["short runs"] = _col(comparison, "short_runs")
    if has_baseline:
        out["like-for-like"] = ["⚠ no" if v in blocked else "✓" for v in comparison["variant"]]
    return out


COMPARISON_EXPORT = ["variant", "method", "is_baseline", "basis", "runs", "headline", "tokens_over_time", "mean_of_runs", "ci_low",
                     "ci_high", "sd", "delta", "delta_pct", "delta_low", "delta_high", "verdict", "speedup",
                     "tokens_per_step", "accepted_drafts_per_step", "cycle_ms_est", "short_runs"]


def comparison_export(comparison: pd.DataFrame, not_like_for_like: Iterable[str] = ()) -> pd.DataFrame:
    """The comparison as a file holds it: machine names, full precision, each CI as two numeric columns."""
    blocked = set(not_like_for_like)
    out = pd.DataFrame({name: _col(comparison, name) for name in COMPARISON_EXPORT})
    out["like_for_like"] = [v not in blocked for v in comparison["variant"]]
    return out


# The two tables' halves of the export: each table downloads the columns it shows, at full precision.
WHY_EXPORT = ["variant", "method", "speedup", "tokens_per_step", "accepted_drafts_per_step", "cycle_ms_est", "short_runs", "like_for_like"]


DELTA_EXPORT = ["variant", "delta", "delta_pct", "delta_low", "delta_high", "verdict"]


def speed_halves(speed: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The speed export split as a page too narrow for it shows it: (headline and spread, Δ vs baseline)."""
    return speed[[c for c in speed.columns if c not in DELTA_EXPORT or c == "variant"]], speed[DELTA_EXPORT]


def comparison_exports(comparison: pd.DataFrame, not_like_for_like: Iterable[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``comparison_export`` split as ``ui.comparison_tables`` splits the table: (speed, why); both keep the variant."""
    whole = comparison_export(comparison, not_like_for_like)
    speed = [c for c in whole.columns if c not in WHY_EXPORT or c == "variant"]
    return whole[speed], whole[WHY_EXPORT]


def measured_runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Every measured run of the selection, the short ones flagged (Compare's runs table)."""
    measured = runs[~runs["is_warmup"]]
    return pd.DataFrame({
        "variant": measured["variant"],
        "phase": _text(measured["phase"]),
        "run": [str(i) for i in measured["run_index"]],
        "flag": _flags(measured),
        "prompt tokens": measured["prompt_tokens"],
        "output tokens": measured["output_tokens"],
        "time (s)": _numbers(measured["duration_s"]),
        "tok/s": _numbers(measured["tok_per_s"]),
        "finish": _text(measured["finish_reason"]),
    }).reset_index(drop=True)


def sources_table(sources: pd.DataFrame, headline: pd.DataFrame) -> pd.DataFrame:
    """Every throughput source of each variant side by side; the one its headline uses is marked."""
    chosen = set(zip(headline["variant"], headline["basis"], strict=True))
    return pd.DataFrame({
        "variant": sources["variant"],
        "throughput from": sources["basis"],
        "n": sources["n_runs"],
        "of": _text(sources["sample_unit"]),
        "tok/s": _numbers(sources["tokens_over_time"]),
        "sd": _numbers(sources["sd"]),
        "headline": ["✓" if (v, b) in chosen else EMPTY
                     for v, b in zip(sources["variant"], sources["basis"], strict=True)],
    }).reset_index(drop=True)


SOURCES_EXPORT = ["variant", "phase", "session_id", "basis_rank", "basis", "sample_unit", "concurrency", "n_runs",
                  "n_sessions", "mean_of_runs", "tokens_over_time", "sd", "short_runs", "prompt_min", "prompt_max",
                  "max_tokens", "first_run_at", "last_run_at"]


def sources_export(sources: pd.DataFrame) -> pd.DataFrame:
    return sources[[c for c in SOURCES_EXPORT if c in sources]]


FINDING_COLUMNS = {"variant": "variant", "setting": "setting", "baseline": "baseline", "this": "this variant",
                   "kind": "kind", "like_for_like": "like-for-like"}


def findings_table(findings: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(findings, columns=list(FINDING_COLUMNS)).rename(columns=FINDING_COLUMNS)
    for text in ("setting", "baseline", "this variant", "kind"):
        frame[text] = _text(frame[text])
    return frame


def drafter_table(differences: pd.DataFrame) -> pd.DataFrame:
    """Speculation settings that differ between drafters: one ``value in <variant>`` column each."""
    fixed = {"setting", "kind"}
    return differences.rename(columns={c: f"value in {c}" for c in differences.columns if c not in fixed})


# --- Run ----------------------------------------------------------------------------------------

def run_labels(runs: pd.DataFrame) -> list[str]:
    """W1, W2 … for warm-ups, 1, 2 … for measured runs: never two '1's in one column."""
    return [f"W{i}" if warm else str(i) for i, warm in zip(runs["run_index"], runs["is_warmup"], strict=True)]


def _flags(runs: pd.DataFrame) -> list[str]:
    # a run whose file gives no max_tokens may have stopped anywhere: no flag rather than a "full length" claim
    return ["warm-up (excluded)" if warm else EMPTY if missing(hit) else "✓ full length" if hit else "⚠ stopped early"
            for hit, warm in zip(runs["hit_max_tokens"], runs["is_warmup"], strict=True)]


def session_runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """A session's runs as the benchmark recorded them, warm-ups first (W1, W2), the short-run flag beside them."""
    return pd.DataFrame({
        "run": run_labels(runs),
        "warm-up": runs["is_warmup"].astype(bool),
        "flag": _flags(runs),
        "prompt tokens": runs["prompt_tokens"],
        "output tokens": runs["output_tokens"],
        "time (s)": _numbers(runs["duration_s"]),
        "tok/s": _numbers(runs["tok_per_s"]),
        "finish": _text(_col(runs, "finish_reason")),
    }).reset_index(drop=True)


def run_log_table(runs: pd.DataFrame) -> pd.DataFrame:
    """What the server log says inside each run's time window: accept length, gen throughput, lines."""
    return pd.DataFrame({
        "run": run_labels(runs),
        "tokens/step (log)": _numbers(_col(runs, "tokens_per_step")),
        "drafts/step (log)": _numbers(_col(runs, "accepted_drafts_per_step")),
        "gen tok/s (log)": _numbers(_col(runs, "log_gen_throughput")),
        "decode lines": _numbers(_col(runs, "decode_lines")),
    }).reset_index(drop=True)


RECORD_FIELDS: dict[str, tuple[str, Quantity | None]] = {
    "tool": ("benchmark", None), "backend": ("backend", None), "dataset_name": ("dataset", None), "tag": ("tag", None),
    "max_concurrency": ("max concurrency", COUNT), "request_rate": ("request rate (req/s)", REQ_S),
    "completed": ("completed requests", COUNT), "duration_s": ("duration (s)", SECONDS),
    "total_input_tokens": ("input tokens", COUNT), "total_output_tokens": ("output tokens", COUNT),
    "output_throughput": ("output throughput (tok/s)", TOK_S), "request_throughput": ("request throughput (req/s)", REQ_S),
    "mean_ttft_ms": ("mean TTFT (ms)", MS), "median_ttft_ms": ("median TTFT (ms)", MS), "mean_tpot_ms": ("mean TPOT (ms)", MS),
    "median_tpot_ms": ("median TPOT (ms)", MS), "mean_itl_ms": ("mean ITL (ms)", MS),
    "mean_e2e_latency_ms": ("mean end-to-end latency (ms)", MS),
    "accept_length": ("accept length (server lifetime average, tokens/step)", ACCEPT),
}


def record_table(record: pd.Series) -> pd.DataFrame:
    """A bench record's figures as rows of (figure, value): only what the record holds, each at its precision."""
    rows = [(label, record[key], quantity) for key, (label, quantity) in RECORD_FIELDS.items()
            if key in record and not missing(record[key])]
    return pd.DataFrame({
        "figure": [label for label, _, _ in rows],
        "value": [quantity.text(value, unit=False) if quantity is not None and isinstance(value, (int, float)) else str(value)
                  for _, value, quantity in rows],
    })


SHALLOW_FOLDER_PARTS = 3  # "/", "/tmp", "/work/main": too general a folder to be worth naming
TAIL_PARTS = 3  # without one, a path shows its last three parts: …/phase-2/k2-drafter-ft/server.log


def short_paths(paths: Sequence[str]) -> tuple[str, list[str]]:
    """The folder the paths share and each path relative to it (a lone file: its folder and its name).

    Paths from unrelated places (an upload under /tmp beside the demo's files) share no folder worth
    naming: each then shows its tail ("…/parent/folder/name"), the whole path being in the download.
    """
    if not paths:
        return "", []
    parents = [str(Path(p).parent) for p in paths]
    try:
        common = os.path.commonpath(parents)
    except ValueError:  # relative and absolute paths mixed
        common = ""
    if len(Path(common).parts) < SHALLOW_FOLDER_PARTS:
        return "", [p if len(Path(p).parts) <= TAIL_PARTS else "…/" + "/".join(Path(p).parts[-TAIL_PARTS:]) for p in paths]
    return common, [os.path.relpath(p, common) for p in paths]


def provenance_table(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The files behind a session (role, path under their common folder, on disk, format, link, hash)."""
    folder, relative = short_paths(rows["path"].tolist())
    return folder, pd.DataFrame({
        "role": rows["role"].tolist(),
        "path": relative,
        "on disk": rows["on disk"].tolist(),
        "kind": _text(rows["kind"]),
        "linked by": _text(rows["linked by"]),
        "sha256": [EMPTY if missing(h) else str(h)[:12] for h in rows["sha256"]],
    })


# --- Break-even ---------------------------------------------------------------------------------

def _cycle_from(source: str) -> str:
    return "trace" if source == CYCLE_MEASURED else "cycle model"


def break_even_tables(results: Iterable[BreakEven]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Where each drafter is now (τ, cycle, r, S), then what it would need to break even."""
    rows = list(results)
    where = pd.DataFrame([
        {"variant": r.variant, "tokens/step τ": r.tokens_per_step, "cycle ms": r.cycle_ms, "cycle from": _cycle_from(r.cycle_source),
         "cycle ms (cycle model)": r.estimated_cycle_ms, "r": r.cost_ratio, "S = τ ÷ r": r.predicted_speedup,
         "observed speedup": r.observed_speedup}
        for r in rows
    ], columns=["variant", "tokens/step τ", "cycle ms", "cycle from", "cycle ms (cycle model)", "r", "S = τ ÷ r",
                "observed speedup"])
    needs = pd.DataFrame([
        {"variant": r.variant, "drafts/step now": r.tokens_per_step - 1, "break-even drafts/step": r.needed_accepted_drafts,
         "break-even τ": r.needed_tokens_per_step, "break-even cycle ms": r.needed_cycle_ms}
        for r in rows
    ], columns=["variant", "drafts/step now", "break-even drafts/step", "break-even τ", "break-even cycle ms"])
    return where, needs


def break_even_export(results: Iterable[BreakEven]) -> pd.DataFrame:
    return pd.DataFrame([
        {"variant": r.variant, "tokens_per_step": r.tokens_per_step, "accepted_drafts_per_step": r.tokens_per_step - 1,
         "cost_ratio": r.cost_ratio, "needed_accepted_drafts": r.needed_accepted_drafts,
         "needed_tokens_per_step": r.needed_tokens_per_step, "cycle_ms": r.cycle_ms, "needed_cycle_ms": r.needed_cycle_ms,
         "baseline_step_ms": r.baseline_step_ms, "estimated_cycle_ms": r.estimated_cycle_ms,
         "predicted_speedup": r.predicted_speedup, "observed_speedup": r.observed_speedup, "cycle_source": r.cycle_source}
        for r in results
    ])


NEEDS_EXPORT = ["variant", "accepted_drafts_per_step", "needed_accepted_drafts", "needed_tokens_per_step", "needed_cycle_ms"]


def break_even_exports(results: Iterable[BreakEven]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``break_even_export`` split as ``break_even_tables`` splits it: (where each drafter is, what it would need)."""
    whole = break_even_export(results)
    if whole.empty:
        return whole, whole
    where = [c for c in whole.columns if c not in NEEDS_EXPORT or c == "variant"]
    return whole[where], whole[NEEDS_EXPORT]


def plane_points_table(points: pd.DataFrame) -> pd.DataFrame:
    """The points of the (τ, r) plane: sessions (cycle model) and traced variants (measured cycle)."""
    from_trace = points["session_id"].isna() if "session_id" in points else pd.Series(False, index=points.index)
    return pd.DataFrame({
        "point from": ["trace" if t else "session" for t in from_trace],
        "variant": points["variant"],
        "phase": _text(_col(points, "phase")),
        "started": [_when(v) for v in _col(points, "started_at")],
        "tok/s": _numbers(_col(points, "tok_per_s")),
        "tokens/step": _numbers(points["tokens_per_step"]),
        "cycle ms": _numbers(_col(points, "cycle_ms")),
        "r": _numbers(points["cost_ratio"]),
    }).reset_index(drop=True)


# --- Phases -------------------------------------------------------------------------------------

def _dates(first: Any, last: Any) -> str:
    if missing(first):
        return EMPTY
    start, end = pd.Timestamp(first), pd.Timestamp(last) if not missing(last) else pd.Timestamp(first)
    if start.date() == end.date():
        return f"{start:%Y-%m-%d}"
    return f"{start:%Y-%m-%d} – {end:%m-%d}" if start.year == end.year else f"{start:%Y-%m-%d} – {end:%Y-%m-%d}"


def phases_table(overview: pd.DataFrame, decided: Sequence[str], headlines: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({
        "phase": overview["phase"],
        "dates": [_dates(f, la) for f, la in zip(overview["first_at"], overview["last_at"], strict=True)],
        "sessions": overview["sessions"],
        "measured runs": overview["measured_runs"],
        "decisions": list(decided),
        "headline per variant": list(headlines),
    })


def trends_table(trends: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "phase": trends["phase"],
        "variant": trends["variant"],
        "n": trends["runs"],
        "tok/s": _numbers(trends["headline"]),
        "95% CI": [_ci(lo, hi, n) for lo, hi, n in zip(trends["ci_low"], trends["ci_high"], trends["runs"], strict=True)],
        "tokens/step": _numbers(trends["tokens_per_step"]),
        "throughput from": _text(trends["basis"]),
    }).reset_index(drop=True)


# --- Breakdown ----------------------------------------------------------------------------------

def cycle_parts_table(composition: pd.DataFrame) -> pd.DataFrame:
    """Where a cycle goes, one row per part (as the chart's legend names it) and a column per variant (ms).

    Variants are columns so the table stays narrow; a part a variant does not have is empty.
    """
    by_part = composition.pivot_table(index="component", columns="variant", values="mean_ms", aggfunc="sum")
    parts = [p for p in CYCLE_PARTS if p in by_part.index]
    variants = list(dict.fromkeys(composition["variant"]))
    table = by_part.reindex(index=parts, columns=variants)
    totals = pd.DataFrame([table.sum(axis=0, min_count=1)], index=["cycle"])
    shown = pd.concat([totals, table])
    shown.insert(0, "part", ["whole cycle (decode step for a baseline)", *[CYCLE_PARTS[p] for p in parts]])
    return shown.rename(columns={v: f"{v} (ms)" for v in variants}).reset_index(drop=True)


def rank_table(ranks: pd.DataFrame) -> pd.DataFrame:
    """Per variant and rank: cycles, median and slowest cycle, verify, communication per cycle (ms)."""
    out = pd.DataFrame({
        "variant": ranks["variant"],
        "rank": ranks["rank"],
        "cycles": ranks["complete_cycles"],
        "median cycle (ms)": _numbers(ranks["median_cycle_ms"]),
        "slowest cycle (ms)": _numbers(ranks["max_cycle_ms"]),
        "median verify (ms)": _numbers(ranks["median_verify_ms"]),
        "communication per cycle (ms)": communication_per_cycle(ranks),
    })
    if "stage" in ranks and ranks["stage"].notna().any():  # only prefill/decode-disaggregated servers have one
        out.insert(2, "stage", _text(ranks["stage"]))
    return out.reset_index(drop=True)


def communication_per_cycle(ranks: pd.DataFrame) -> pd.Series:
    """Per rank: the median communication inside verify; without verify (a baseline's decode steps), the
    rank's communication over the whole trace ÷ its complete steps (the rank views have no per-step figure)."""
    verify = _numbers(ranks["median_verify_comm_ms"])
    per_step = _numbers(_col(ranks, "communication_ms")) / _numbers(ranks["complete_cycles"]).where(lambda n: n > 0)
    return verify.where(verify.notna(), per_step)


def trace_files_table(overview: pd.DataFrame) -> pd.DataFrame:
    """One row per trace file and rank: GPU busy and idle (ms); the span (busy + idle) and kernel count are in the export."""
    return pd.DataFrame({
        "variant": overview["variant"],
        "file": overview["file_name"],
        "rank": overview["rank"],
        "GPU": _text(overview["gpu_name"]),
        "GPU busy (ms)": _numbers(overview["busy_ms"]),
        "GPU idle (ms)": _numbers(overview["idle_ms"]),
    }).reset_index(drop=True)


KERNEL_CLASS_COLUMNS = {key: f"{name} (ms)" for key, (name, _) in KERNEL_CLASSES.items() if key != "idle_ms"}


def kernel_classes_table(overview: pd.DataFrame) -> pd.DataFrame:
    """Per trace file and rank, each kernel class's union over the whole trace (ms); a class no trace has is left out."""
    out = pd.DataFrame({"variant": overview["variant"], "rank": overview["rank"]})
    for key, label in KERNEL_CLASS_COLUMNS.items():
        values = _numbers(overview[key])
        if values.fillna(0).ne(0).any():
            out[label] = values
    return out.reset_index(drop=True)


TRACE_KEYS = ["variant", "phase", "file_name", "rank"]
TRACE_FILE_EXPORT = [*TRACE_KEYS, "world_size", "gpu_name", "phase_source", "span_ms", "busy_ms", "idle_ms", "kernels",
                     "cycles", "attributed_share"]


def trace_exports(overview: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``data.trace_overview`` as the two tables split it: (files and ranks, kernel classes), every class kept."""
    classes = [*TRACE_KEYS, *(key for key in KERNEL_CLASSES if key != "idle_ms" and key in overview)]
    return overview[[c for c in TRACE_FILE_EXPORT if c in overview]], overview[classes]


# A kernel's cycle phase as the breakdown chart names it (the store's draft_extend is "draft-extend").
PHASE_NAMES = {"draft": "draft", "verify": "verify", "draft_extend": CYCLE_PARTS["draft_extend"], "decode": "decode step",
               "unattributed": CYCLE_PARTS["unattributed"], "idle": CYCLE_PARTS["idle"]}


def top_kernels_table(kernels: pd.DataFrame, with_phase: bool = True) -> pd.DataFrame:
    """The kernels with the most GPU time; p50/p99 stay in the download (the page has room for the mean).

    ``with_phase=False`` for traces without phase markers, where every kernel's phase would read "unattributed".
    """
    out = pd.DataFrame({
        "variant": kernels["variant"],
        "kernel": kernels["name"],
        "class": _text(kernels["kernel_class"]),
        "cycle phase": _text(kernels["cycle_phase"].map(lambda p: PHASE_NAMES.get(p, p))),
        "calls per rank": _numbers(kernels["calls_per_rank"]),
        "total per rank (ms)": _numbers(kernels["total_ms_per_rank"]),
        "mean (ms)": _numbers(kernels["mean_ms"]),
    })
    return (out if with_phase else out.drop(columns=["cycle phase"])).reset_index(drop=True)


# --- Decisions and Ingest -----------------------------------------------------------------------

def ledger_table(decisions: pd.DataFrame, stale: Sequence[bool], numbers: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({
        "decided (UTC)": [_when(v) for v in decisions["created_at"]],
        "title": decisions["title"].tolist(),
        "phase": _text(decisions["phase"]),
        "verdict": decisions["verdict"].tolist(),
        "evidence": ["⚠ stale" if s else "✓ current" for s in stale],
        "numbers then": list(numbers),
    })


def store_files_table(sources: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The files in the store, paths under their common folder, newest first."""
    folder, relative = short_paths(sources["path"].tolist())
    return folder, pd.DataFrame({
        "path": relative,
        "kind": _text(sources["kind"]),
        "phase": _text(sources["phase"]),
        "label": _text(sources["variant"]),
        "rows loaded": sources["rows_loaded"],
        "lines skipped": sources["lines_skipped"],
        "ingested": [_when(v) for v in sources["ingested_at"]],
    })


def formats_table(formats: Iterable[Any]) -> pd.DataFrame:
    return pd.DataFrame([{"kind": f.kind, "what": f.description, "example line": f.example} for f in formats],
                        columns=["kind", "what", "example line"])


LABEL_ACTIONS = {"variant": "relabelled", "phase": "re-phased", "delete": "deleted"}  # label_changes.action


def label_changes_table(changes: pd.DataFrame) -> pd.DataFrame:
    """The label changes recorded, newest first: when, what, which file, from which names to which."""
    after = [EMPTY if action == "delete" else f"{'as the file says' if missing(v) else v} · {NO_PHASE if missing(p) else p}"
             for action, v, p in zip(changes["action"], changes["new_variant"], changes["new_phase"], strict=True)]
    return pd.DataFrame({
        "changed": [_when(v) for v in changes["changed_at"]],
        "change": changes["action"].map(LABEL_ACTIONS).fillna(changes["action"]),
        "labelled file": [Path(p).name for p in changes["path"]],
        "was": [f"{_text([v])[0]} · {NO_PHASE if missing(p) else p}"
                for v, p in zip(changes["old_variant"], changes["old_phase"], strict=True)],
        "now": after,
    })
