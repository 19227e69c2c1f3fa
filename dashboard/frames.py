"""Display tables: analysis frames renamed and ordered for people, shared by pages, exports and reports. Pure pandas."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from dashboard.analysis import BreakEven


def _ci(low: Any, high: Any, digits: int = 2) -> str:
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "n/a (< 2 runs)"
    return f"{low:,.{digits}f} – {high:,.{digits}f}"


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame else pd.Series([None] * len(frame), index=frame.index, dtype=object)


def comparison_table(comparison: pd.DataFrame, has_baseline: bool, not_like_for_like: Iterable[str] = ()) -> pd.DataFrame:
    """One row per variant, as the Compare page, the decision page and the reports show it."""
    blocked = set(not_like_for_like)
    base = comparison["is_baseline"] if "is_baseline" in comparison else pd.Series(False, index=comparison.index)
    out = pd.DataFrame({
        "variant": comparison["variant"],
        "runs": comparison["runs"],
        "Σtok/Σtime": comparison["tokens_over_time"].astype(float).round(2),
        "mean of runs": comparison["mean_of_runs"].astype(float).round(2),
        "95% CI": [_ci(lo, hi) for lo, hi in zip(_col(comparison, "ci_low"), _col(comparison, "ci_high"), strict=True)],
    })
    if has_baseline:
        out["Δ tok/s"] = _col(comparison, "delta").astype(float).round(2).mask(base)
        out["Δ %"] = _col(comparison, "delta_pct").astype(float).round(1).mask(base)
        out["Δ 95% CI"] = ["—" if b else _ci(lo, hi)
                           for b, lo, hi in zip(base, _col(comparison, "delta_low"), _col(comparison, "delta_high"), strict=True)]
        out["verdict"] = _col(comparison, "verdict")
        out["speedup"] = _col(comparison, "speedup").astype(float).round(3)
    out["tokens/step"] = _col(comparison, "tokens_per_step").astype(float).round(2)
    out["drafts/step"] = _col(comparison, "accepted_drafts_per_step").astype(float).round(2)
    out["cycle ms (est.)"] = _col(comparison, "cycle_ms_est").astype(float).round(1)
    out["short runs"] = _col(comparison, "short_runs")
    if has_baseline:
        out["like-for-like"] = ["⚠ no" if v in blocked else "✓" for v in comparison["variant"]]
    return out


def break_even_table(results: Iterable[BreakEven]) -> pd.DataFrame:
    """What each drafter needs, the answer first: break-even accepted drafts per step and cycle time."""
    return pd.DataFrame([
        {"variant": r.variant, "tokens/step τ": r.tokens_per_step, "drafts/step now": r.tokens_per_step - 1,
         "r": r.cost_ratio, "break-even drafts/step": r.needed_accepted_drafts, "break-even τ": r.needed_tokens_per_step,
         "cycle ms": r.cycle_ms, "break-even cycle ms": r.needed_cycle_ms, "baseline step ms": r.baseline_step_ms,
         "cycle ms (cycle model)": r.estimated_cycle_ms,
         "S = τ ÷ r": r.predicted_speedup, "observed speedup": r.observed_speedup, "cycle from": r.cycle_source}
        for r in results
    ])


FINDING_COLUMNS = {"variant": "variant", "setting": "setting", "baseline": "baseline", "this": "this variant",
                   "kind": "kind", "like_for_like": "like-for-like"}


def findings_table(findings: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(findings, columns=list(FINDING_COLUMNS))
    return frame.rename(columns=FINDING_COLUMNS)


RUN_COLUMNS = {
    "run_index": "run", "is_warmup": "warm-up", "flag": "flag", "prompt_tokens": "prompt tokens",
    "output_tokens": "output tokens", "max_tokens": "max_tokens", "duration_s": "time (s)", "tok_per_s": "tok/s",
    "tokens_per_step": "tokens/step (log)", "accepted_drafts_per_step": "drafts/step (log)",
    "log_gen_throughput": "gen tok/s (log)", "decode_lines": "decode lines", "finish_reason": "finish",
    "started_at": "started", "ended_at": "ended",
}


def session_runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """A session's runs, the short-run flag beside them; column names for people."""
    flagged = runs.assign(flag=[("⚠ stopped early" if hit is False and not warm else "")
                                for hit, warm in zip(runs["hit_max_tokens"], runs["is_warmup"], strict=True)])
    return flagged[[c for c in RUN_COLUMNS if c in flagged]].rename(columns=RUN_COLUMNS)


TREND_COLUMNS = {"phase": "phase", "variant": "variant", "basis": "throughput from", "runs": "n", "headline": "tok/s",
                 "mean_of_runs": "mean", "ci_low": "95% CI low", "ci_high": "95% CI high", "tokens_per_step": "tokens/step",
                 "accepted_drafts_per_step": "drafts/step"}


def trends_table(trends: pd.DataFrame) -> pd.DataFrame:
    return trends[list(TREND_COLUMNS)].rename(columns=TREND_COLUMNS)


TRACE_OVERVIEW_COLUMNS = {
    "variant": "variant", "file_name": "file", "rank": "rank", "gpu_name": "GPU", "span_ms": "span (ms)",
    "busy_ms": "GPU busy (ms)", "idle_ms": "GPU idle (ms)", "communication_ms": "communication (ms)",
    "gemm_ms": "GEMM (ms)", "attention_ms": "attention (ms)", "moe_ms": "MoE (ms)", "memcpy_ms": "memcpy (ms)",
    "other_kernel_ms": "other kernels (ms)", "kernels": "kernels",
}


def trace_overview_table(overview: pd.DataFrame) -> pd.DataFrame:
    """One row per trace file and rank: busy, idle and each kernel class's union, ms to 2 decimals."""
    shown = overview[list(TRACE_OVERVIEW_COLUMNS)].rename(columns=TRACE_OVERVIEW_COLUMNS)
    ms = [label for key, label in TRACE_OVERVIEW_COLUMNS.items() if key.endswith("_ms")]
    shown[ms] = shown[ms].astype(float).round(2)
    shown["GPU"] = shown["GPU"].fillna("—")
    return shown


TOP_KERNEL_COLUMNS = {
    "variant": "variant", "name": "kernel", "kernel_class": "class", "cycle_phase": "phase",
    "calls_per_rank": "calls per rank", "total_ms_per_rank": "total per rank (ms)", "mean_ms": "mean (ms)",
    "p50_ms": "median (ms)", "p99_ms": "p99 (ms)",
}


def top_kernels_table(kernels: pd.DataFrame) -> pd.DataFrame:
    shown = kernels[list(TOP_KERNEL_COLUMNS)].rename(columns=TOP_KERNEL_COLUMNS)
    ms = [label for key, label in TOP_KERNEL_COLUMNS.items() if key.endswith("_ms")]
    shown[ms] = shown[ms].astype(float).round(2)
    shown["calls per rank"] = shown["calls per rank"].astype(float).round(0)
    return shown


SOURCE_COLUMNS = {
    "variant": "variant", "basis": "throughput from", "n_runs": "n", "sample_unit": "of", "tokens_over_time": "tok/s",
    "sd": "sd", "headline": "headline",
}


def sources_table(sources: pd.DataFrame, headline: pd.DataFrame) -> pd.DataFrame:
    """Every throughput source of each variant side by side; the one its headline uses is marked."""
    chosen = set(zip(headline["variant"], headline["basis"], strict=True))
    shown = sources.assign(headline=["✓" if (v, b) in chosen else "" for v, b in zip(sources["variant"], sources["basis"], strict=True)])
    shown = shown[list(SOURCE_COLUMNS)].rename(columns=SOURCE_COLUMNS)
    shown["tok/s"] = shown["tok/s"].astype(float).round(1)
    shown["sd"] = shown["sd"].astype(float).round(1)
    return shown



RECORD_FIELDS = {
    "tool": "benchmark", "backend": "backend", "dataset_name": "dataset", "tag": "tag", "max_concurrency": "max concurrency",
    "request_rate": "request rate (req/s)", "completed": "completed requests", "duration_s": "duration (s)",
    "total_input_tokens": "input tokens", "total_output_tokens": "output tokens",
    "output_throughput": "output throughput (tok/s)", "request_throughput": "request throughput (req/s)",
    "mean_ttft_ms": "mean TTFT (ms)", "median_ttft_ms": "median TTFT (ms)", "mean_tpot_ms": "mean TPOT (ms)",
    "median_tpot_ms": "median TPOT (ms)", "mean_itl_ms": "mean ITL (ms)", "mean_e2e_latency_ms": "mean end-to-end latency (ms)",
    "accept_length": "accept length (server lifetime average, tokens/step)",
}


def record_table(record: pd.Series) -> pd.DataFrame:
    """A bench record's figures as rows of (figure, value): only what the record holds."""
    rows = [{"figure": label, "value": record[key]} for key, label in RECORD_FIELDS.items()
            if key in record and record[key] is not None and not (isinstance(record[key], float) and pd.isna(record[key]))]
    return pd.DataFrame({"figure": [r["figure"] for r in rows],
                         "value": [f"{v:,.2f}" if isinstance(v, float) else str(v) for v in (r["value"] for r in rows)]})
