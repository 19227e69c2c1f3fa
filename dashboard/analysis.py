"""Pure computations behind the pages: comparison with a baseline, cycle estimates, config diffs.

DataFrames in, DataFrames or plain values out; no Streamlit, no SQL. Definitions
follow DOMAIN.md §2–§3 and docs/metrics.md.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dashboard.stats import DiffCI, MeanCI, t_quantile

MEAN_OF_RUNS = "mean_of_runs"
TOKENS_OVER_TIME = "tokens_over_time"
METRIC_LABELS = {
    TOKENS_OVER_TIME: "Σ output tokens ÷ Σ wall time",
    MEAN_OF_RUNS: "mean of per-run tok/s",
}

# Keys that make a variant what it is: they are expected to differ between variants.
DRAFTER_KEYS = frozenset({"speculative_algorithm", "speculative_draft_model_path", "speculative_draft_model_revision"})
# Speculation settings: differ by design against the baseline, but matter between drafters.
SPEC_KEY_PREFIX = "speculative_"
# Keys that never change what is measured.
IGNORED_KEYS = frozenset(
    {"host", "port", "served_model_name", "log_level", "log_requests", "random_seed", "watchdog_timeout",
     "decode_log_interval", "tokenizer_path", "file_storage_path", "api_key", "nccl_port", "dist_init_addr"}
)


def ci_from_summary(n: int, mean: float, sd: float | None, level: float = 0.95) -> MeanCI:
    if n < 2 or sd is None or (isinstance(sd, float) and math.isnan(sd)):
        return MeanCI(n, mean, None, None, None)
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return MeanCI(n, mean, sd, mean - half, mean + half)


def welch_from_summary(a: MeanCI, b: MeanCI, level: float = 0.95) -> DiffCI:
    diff = a.mean - b.mean
    if a.sd is None or b.sd is None:
        return DiffCI(diff, None, None, None)
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    if va + vb == 0:
        return DiffCI(diff, diff, diff, None)
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    half = t_quantile(0.5 + level / 2, df) * math.sqrt(va + vb)
    return DiffCI(diff, diff - half, diff + half, df)


def verdict(diff: DiffCI) -> str:
    if diff.within_noise is None:
        return "too few runs to tell"
    if diff.within_noise:
        return "within noise"
    return "faster" if diff.diff > 0 else "slower"


def compare_variants(
    summary: pd.DataFrame, accept: pd.DataFrame, baseline: str | None, metric: str = TOKENS_OVER_TIME
) -> pd.DataFrame:
    """One row per variant: both means, 95% CI, Δ vs baseline (Welch), accept length, estimated cycle time."""
    accept_by = accept.set_index("variant") if not accept.empty else pd.DataFrame()
    base_row = summary[summary["variant"] == baseline]
    base_ci = None
    base_rate = None
    if not base_row.empty:
        row = base_row.iloc[0]
        base_ci = ci_from_summary(int(row["n_runs"]), float(row["mean_of_runs"]), _num(row["sd"]))
        base_rate = float(row[metric])
    rows = []
    for _, row in summary.iterrows():
        ci = ci_from_summary(int(row["n_runs"]), float(row["mean_of_runs"]), _num(row["sd"]))
        tau = _num(accept_by["tokens_per_step"].get(row["variant"])) if not accept_by.empty else None
        drafts = _num(accept_by["accepted_drafts_per_step"].get(row["variant"])) if not accept_by.empty else None
        rate = float(row[metric])
        out: dict[str, Any] = {
            "variant": row["variant"],
            "runs": int(row["n_runs"]),
            "sessions": int(row["n_sessions"]),
            "headline": rate,
            "tokens_over_time": float(row["tokens_over_time"]),
            "mean_of_runs": ci.mean,
            "ci_low": ci.low,
            "ci_high": ci.high,
            "sd": ci.sd,
            "short_runs": int(row["short_runs"]),
            "tokens_per_step": tau,
            "accepted_drafts_per_step": drafts,
            "cycle_ms_est": (tau if tau is not None else 1.0) / rate * 1000 if rate > 0 else None,
            "is_baseline": row["variant"] == baseline,
        }
        if base_ci is not None and base_rate:
            diff = welch_from_summary(ci, base_ci)
            out.update(
                delta=diff.diff,
                delta_pct=diff.diff / base_ci.mean * 100,
                delta_low=diff.low,
                delta_high=diff.high,
                verdict="baseline" if out["is_baseline"] else verdict(diff),
                speedup=rate / base_rate,
            )
        rows.append(out)
    return pd.DataFrame(rows)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


# --- cycle model (DOMAIN.md §2) ---------------------------------------------------------------

@dataclass(frozen=True)
class CycleEstimate:
    """Cycle-model estimate from tok/s and accept length alone (no trace): an estimate, labelled so."""

    tokens_per_step: float
    tok_per_s: float
    baseline_tok_per_s: float

    @property
    def cycle_ms(self) -> float:
        return self.tokens_per_step / self.tok_per_s * 1000

    @property
    def baseline_step_ms(self) -> float:
        return 1000 / self.baseline_tok_per_s

    @property
    def cost_ratio(self) -> float:
        """r: cycle time ÷ baseline step time."""
        return self.cycle_ms / self.baseline_step_ms

    @property
    def speedup(self) -> float:
        return self.tokens_per_step / self.cost_ratio

    @property
    def break_even_tokens_per_step(self) -> float:
        """τ needed at this cycle cost: τ = r."""
        return self.cost_ratio

    @property
    def break_even_cycle_ms(self) -> float:
        """Cycle time needed at this accept length: r = τ."""
        return self.tokens_per_step * self.baseline_step_ms


# --- config differences -----------------------------------------------------------------------

def config_args(row: pd.Series) -> dict[str, Any]:
    try:
        args = json.loads(row["args"]) if isinstance(row.get("args"), str) else {}
    except json.JSONDecodeError:
        args = {}
    return args if isinstance(args, dict) else {}


def config_diff(base: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    """Every key whose value differs, with its kind: drafter identity, speculation setting, or setup."""
    diffs = []
    for key in sorted(set(base) | set(other)):
        if key in IGNORED_KEYS:
            continue
        a, b = base.get(key), other.get(key)
        if a == b:
            continue
        if key in DRAFTER_KEYS:
            kind = "drafter"
        elif key.startswith(SPEC_KEY_PREFIX):
            kind = "speculation setting"
        else:
            kind = "setup"
        diffs.append({"key": key, "baseline": _show(a), "this": _show(b), "kind": kind})
    return diffs


def _show(value: Any) -> str:
    return "—" if value is None else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def comparability(
    configs: pd.DataFrame, summary: pd.DataFrame, baseline: str | None
) -> list[dict[str, Any]]:
    """Differences that make a comparison with the baseline not like-for-like.

    Setup keys (model, tp_size, CUDA graph, ...) always count; speculation settings
    count only between two speculative variants; max_tokens and prompt lengths come
    from the benchmark sessions.
    """
    findings: list[dict[str, Any]] = []
    by_variant = {row["variant"]: config_args(row) for _, row in configs.iterrows()}
    base_args = by_variant.get(baseline)
    base_spec = bool(base_args and base_args.get("speculative_algorithm"))
    for variant, args in by_variant.items():
        if variant == baseline or base_args is None:
            continue
        for diff in config_diff(base_args, args):
            if diff["kind"] == "setup" or (diff["kind"] == "speculation setting" and base_spec):
                findings.append({"variant": variant, **diff})
    findings += session_differences(summary, baseline)
    if base_args is None and baseline is not None:
        findings.append({"variant": baseline, "key": "server config", "baseline": "—", "this": "not ingested",
                         "kind": "unknown"})
    return findings


def session_differences(summary: pd.DataFrame, baseline: str | None) -> list[dict[str, Any]]:
    base = summary[summary["variant"] == baseline]
    if base.empty:
        return []
    b = base.iloc[0]
    findings = []
    for _, row in summary[summary["variant"] != baseline].iterrows():
        if sorted(_as_list(row["max_tokens"])) != sorted(_as_list(b["max_tokens"])):
            findings.append({"variant": row["variant"], "key": "max_tokens", "baseline": _show(_as_list(b["max_tokens"])),
                             "this": _show(_as_list(row["max_tokens"])), "kind": "benchmark"})
        if not _ranges_overlap(row, b):
            findings.append({"variant": row["variant"], "key": "prompt tokens",
                             "baseline": f"{_int(b['prompt_min'])}–{_int(b['prompt_max'])}",
                             "this": f"{_int(row['prompt_min'])}–{_int(row['prompt_max'])}", "kind": "benchmark"})
    return findings


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [v for v in list(value) if v is not None]


def _int(value: Any) -> str:
    number = _num(value)
    return "?" if number is None else str(int(number))


def _ranges_overlap(a: pd.Series, b: pd.Series) -> bool:
    values = [_num(a["prompt_min"]), _num(a["prompt_max"]), _num(b["prompt_min"]), _num(b["prompt_max"])]
    if any(v is None for v in values):
        return True
    a_min, a_max, b_min, b_max = values
    return a_min <= b_max * 2 and b_min <= a_max * 2  # type: ignore[operator]
