"""Pure computations behind the pages: comparison with a baseline, the cycle model, break-even, config diffs.

DataFrames in, DataFrames or plain values out; no Streamlit, no SQL. Definitions
follow DOMAIN.md §2–§3 and docs/dashboard.md.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dashboard.analysis.definitions import ACCEPT, R_BELOW_ONE, RATIO, TAU_BELOW_FLOOR
from dashboard.analysis.stats import DiffCI, MeanCI, mean_ci_of, t_quantile
from ingest.derive.variants import drafter_name

MEAN_OF_RUNS = "mean_of_runs"
TOKENS_OVER_TIME = "tokens_over_time"
METRIC_LABELS = {
    TOKENS_OVER_TIME: "Σ output tokens ÷ Σ wall time",
    MEAN_OF_RUNS: "mean of per-run tok/s",
}
# Each headline's spread across its samples (data.SOURCE_FIGURES): Welch's Δ is on the headline, so it takes the
# headline's own spread — the ratio estimator's for Σtok/Σtime, the runs' sd for the mean of runs.
HEADLINE_SD = {TOKENS_OVER_TIME: "sd_tokens_over_time", MEAN_OF_RUNS: "sd"}
ISO_SPEEDUPS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)

CYCLE_ESTIMATED = "estimate: tokens/step ÷ tok/s"
CYCLE_MEASURED = "measured: profiler trace"
STEP_ESTIMATED = "estimate: 1 ÷ tok/s"
# A throughput of several requests decoding together (a bench record at max concurrency 16, a log line at 16
# running requests) is 16 streams' tokens per second: one step emits τ tokens for each, so cycle = τ × 16 ÷ tok/s.
# Taken as one stream's, the cycle would come out 16× too short.
STREAMS_UNKNOWN = ("its throughput is of several requests decoding together, and how many is not recorded, so a "
                   "step time cannot be estimated from it")


def cycle_estimate_source(streams: float) -> str:
    """How a cycle estimate was made: ``CYCLE_ESTIMATED`` for one stream, naming the streams otherwise."""
    return CYCLE_ESTIMATED if streams == 1 else f"estimate: tokens/step × {int(streams)} requests ÷ tok/s"


def step_estimate_source(streams: float) -> str:
    return STEP_ESTIMATED if streams == 1 else f"estimate: {int(streams)} requests ÷ tok/s"


def _num(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def decode_streams(row: Any) -> float | None:
    """How many requests decode together in a summary row's throughput (its ``streams``, data.SOURCE_FIGURES); a
    row without the column is benchmark runs, one stream each. None when not recorded."""
    if "streams" not in row:
        return 1.0
    streams = _num(row["streams"])
    return streams if streams is not None and streams >= 1 else None


def cycle_model_ms(tokens_per_step: float | None, rate: float | None, streams: float | None) -> float | None:
    """The cycle model (DOMAIN.md §2): a step emits τ tokens for each of ``streams`` requests, so its time is
    τ × streams ÷ tok/s; None when a figure is missing or tok/s is not positive."""
    if tokens_per_step is None or rate is None or streams is None or rate <= 0 or streams < 1:
        return None
    return tokens_per_step * streams / rate * 1000


# --- means, intervals and the comparison ------------------------------------------------------

def ci_from_summary(n: int, mean: float, sd: float | None, level: float = 0.95) -> MeanCI:
    """The t interval of a tok/s mean; withheld (low and high None) when it would reach 0 tok/s or below.

    tok/s > 0, so such an interval bounds nothing: the sample is too small or too spread (n = 2 gives
    t = 12.7). The sd is kept; Welch's Δ takes each headline's spread, not this interval (``headline_spread``), and
    then says "within noise" when its own interval spans 0.
    """
    ci = mean_ci_of(n, mean, None if sd is None or math.isnan(sd) else sd, level)
    if ci.low is not None and ci.low <= 0:
        return MeanCI(n, mean, ci.sd, None, None)
    return ci


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


def headline_spread(row: pd.Series, metric: str) -> MeanCI:
    """A variant's headline (``metric``) with the sd of its samples that estimator has, for Welch's Δ (no interval:
    the Δ's is Welch's). No sd (one sample, or a frame without the column): the Δ gets no interval."""
    return MeanCI(int(row["n_runs"]), float(row[metric]), _num(row.get(HEADLINE_SD.get(metric, "sd"))), None, None)


def verdict(diff: DiffCI) -> str:
    if diff.within_noise is None:
        return "too few runs to tell"
    if diff.within_noise:
        return "within noise"
    return "faster" if diff.diff > 0 else "slower"


def default_baseline(
    variants: list[str], speculative: dict[str, bool], models: dict[str, frozenset[str]] | None = None
) -> str | None:
    """The variant whose server ran without speculation; else one named 'baseline'; else none.

    With ``models`` (variant → target models), among several such variants the one sharing a target
    model with the most speculative variants: a baseline is a run of the same model without speculation.
    """
    plain = [v for v in variants if speculative.get(v) is False]
    named = [v for v in variants if v.lower().startswith("baseline")]
    candidates = plain or named
    if models and len(candidates) > 1:
        drafted = [models.get(v, frozenset()) for v in variants if v not in candidates]
        return max(candidates, key=lambda v: sum(bool(models.get(v, frozenset()) & m) for m in drafted))
    return next(iter(candidates), None)


def compare_variants(
    summary: pd.DataFrame, accept: pd.DataFrame, baseline: str | None, metric: str = TOKENS_OVER_TIME
) -> pd.DataFrame:
    """One row per variant: both means, 95% CI, Δ vs baseline (Welch), accept length, estimated cycle time.

    The headline figure is ``metric``, and Δ is on that same headline: Δ = headline − the baseline's headline,
    Δ% = Δ ÷ the baseline's headline = speedup − 1, so the Δ under a headline is the difference of the numbers
    shown. Its interval is Welch's on each headline's own standard error (``headline_spread``). The 95% CI beside
    each variant stays the mean of runs' (Student's t). Speedup is headline ÷ baseline headline.
    """
    accept_by = accept.set_index("variant") if not accept.empty else pd.DataFrame()
    base_row = summary[summary["variant"] == baseline]
    base_spread, base_rate = None, None
    if not base_row.empty:
        base_spread = headline_spread(base_row.iloc[0], metric)
        base_rate = base_spread.mean
    rows = []
    for _, row in summary.iterrows():
        ci = ci_from_summary(int(row["n_runs"]), float(row["mean_of_runs"]), _num(row["sd"]))
        log = accept_by.loc[row["variant"]] if row["variant"] in accept_by.index else None
        tau = _num(log["tokens_per_step"]) if log is not None else None
        rate = float(row[metric])
        streams = decode_streams(row)
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
            "accepted_drafts_per_step": _num(log["accepted_drafts_per_step"]) if log is not None else None,
            "log_lines": int(_num(log.get("log_lines")) or 0) if log is not None else 0,
            # one token per step without a τ holds only for a variant known not to speculate: ``with_methods``
            "cycle_ms_est": cycle_model_ms(tau, rate, streams),
            "streams": streams,
            "is_baseline": row["variant"] == baseline,
            "session_ids": list(row["session_ids"]) if "session_ids" in row and row["session_ids"] is not None else [],
            "basis": row.get("basis", "benchmark runs"),
            "sample_unit": row.get("sample_unit", "runs"),
            "accept_basis": log.get("accept_basis") if log is not None else None,
        }
        if base_spread is not None and base_rate and out["is_baseline"]:
            out.update(delta=0.0, delta_pct=0.0, verdict="baseline", speedup=1.0)
        elif base_spread is not None and base_rate:
            diff = welch_from_summary(headline_spread(row, metric), base_spread)
            out.update(
                delta=diff.diff,
                delta_pct=diff.diff / base_rate * 100,
                delta_low=diff.low,
                delta_high=diff.high,
                delta_pct_low=None if diff.low is None else diff.low / base_rate * 100,
                delta_pct_high=None if diff.high is None else diff.high / base_rate * 100,
                verdict=verdict(diff),
                speedup=rate / base_rate,
            )
        rows.append(out)
    return pd.DataFrame(rows)


# --- break-even (DOMAIN.md §2) ---------------------------------------------------------------

@dataclass(frozen=True)
class BreakEven:
    """Where one variant sits in the (τ, r) plane and what it would need to break even."""

    variant: str
    tokens_per_step: float  # τ, bonus token included
    cycle_ms: float
    cycle_source: str
    baseline_step_ms: float
    baseline_step_source: str
    observed_speedup: float | None
    estimated_cycle_ms: float | None  # the cycle model's figure, kept beside a measured one (None: streams unknown)

    @property
    def cost_ratio(self) -> float:
        return self.cycle_ms / self.baseline_step_ms

    @property
    def predicted_speedup(self) -> float:
        return self.tokens_per_step / self.cost_ratio

    @property
    def tau_problem(self) -> str | None:
        """Why τ is no result (below its floor 1), or None."""
        return tau_below_floor(self.tokens_per_step)

    @property
    def reason(self) -> str | None:
        """Why there is no break-even accept length (τ below 1, or r below 1), or None."""
        return break_even_reason(self.tokens_per_step, self.cost_ratio)

    @property
    def needed_tokens_per_step(self) -> float | None:
        """Accept length (bonus incl.) that breaks even at this cycle cost: τ = r; None outside the domain (``reason``)."""
        return None if self.reason else self.cost_ratio

    @property
    def needed_accepted_drafts(self) -> float | None:
        return None if self.reason else self.cost_ratio - 1

    @property
    def needed_cycle_ms(self) -> float | None:
        """Cycle time that breaks even at this accept length: r = τ; None when τ is below its floor."""
        return None if self.tau_problem else self.tokens_per_step * self.baseline_step_ms


TAU_FLOOR = 1.0  # tokens per step, bonus token included: a step always emits one token


def tau_below_floor(tau: float) -> str | None:
    """Why a τ read from data is no result: below 1 it is not bonus-inclusive, or broken; None when τ ≥ 1."""
    return TAU_BELOW_FLOOR.format(tau=ACCEPT.text(tau)) if tau < TAU_FLOOR else None


def break_even_reason(tau: float, cost_ratio: float) -> str | None:
    """Why break-even (τ = r) has no figure: τ below its floor, or r < 1 (speculation wins at every τ ≥ 1)."""
    if (problem := tau_below_floor(tau)) is not None:
        return problem
    return R_BELOW_ONE.format(r=RATIO.number(cost_ratio)) if cost_ratio < TAU_FLOOR else None


def measured_cycle_ms(measured: pd.DataFrame, variant: str, kind: str) -> float | None:
    if measured.empty:
        return None
    rows = measured[(measured["variant"] == variant) & (measured["cycle_kind"] == kind)]
    return _num(rows["cycle_ms"].iloc[0]) if not rows.empty else None


def baseline_step(
    comparison: pd.DataFrame, measured: pd.DataFrame, baseline: str | None, metric_column: str = "headline"
) -> tuple[float, str] | None:
    """The baseline's step time: from its trace when one exists, else 1 ÷ its tok/s."""
    if baseline is None:
        return None
    from_trace = measured_cycle_ms(measured, baseline, "decode")
    if from_trace is not None:
        return from_trace, CYCLE_MEASURED
    rows = comparison[comparison["variant"] == baseline]
    if rows.empty:
        return None
    streams = decode_streams(rows.iloc[0])
    step_ms = cycle_model_ms(1.0, _num(rows[metric_column].iloc[0]), streams)
    return None if step_ms is None or streams is None else (step_ms, step_estimate_source(streams))


def baseline_tokens_per_step(comparison: pd.DataFrame, baseline: str) -> float | None:
    """The baseline's accept length when its logs give one (it speculates), else None."""
    rows = comparison[comparison["variant"] == baseline]
    return _num(rows["tokens_per_step"].iloc[0]) if not rows.empty and "tokens_per_step" in rows else None


def no_step_reason(comparison: pd.DataFrame, baseline: str) -> str:
    """Why ``baseline_step`` has no figure for ``baseline`` (no trace): its tok/s, or how many requests it is of."""
    rows = comparison[comparison["variant"] == baseline]
    if not rows.empty and decode_streams(rows.iloc[0]) is None:
        return STREAMS_UNKNOWN
    return "it has no tok/s to derive a step time from"


def break_even(comparison: pd.DataFrame, measured: pd.DataFrame, baseline: str | None) -> list[BreakEven]:
    """Per speculative variant with an accept length and a cycle time (measured, or estimated: ``cycle_ms_est``):
    its (τ, r) and what it needs to break even."""
    step = baseline_step(comparison, measured, baseline)
    if step is None:
        return []
    step_ms, step_source = step
    out = []
    for _, row in comparison.iterrows():
        tau = _num(row.get("tokens_per_step"))
        if row["variant"] == baseline or tau is None:
            continue
        streams = decode_streams(row)
        estimate = cycle_model_ms(tau, _num(row["headline"]), streams)
        cycle = measured_cycle_ms(measured, row["variant"], "speculative")
        if cycle is not None:
            out.append(BreakEven(row["variant"], tau, cycle, CYCLE_MEASURED, step_ms, step_source,
                                 _num(row.get("speedup")), estimate))
        elif estimate is not None and streams is not None:
            out.append(BreakEven(row["variant"], tau, estimate, cycle_estimate_source(streams), step_ms, step_source,
                                 _num(row.get("speedup")), estimate))
    return out


def other_loads(comparison: pd.DataFrame, results: list[BreakEven], baseline: str) -> list[str]:
    """Per estimated break-even whose cycle is of another number of requests than the baseline's step, why its r
    compares two loads rather than two drafters (a batch-16 cycle against a batch-1 step)."""
    streams = {row["variant"]: decode_streams(row) for _, row in comparison.iterrows()}
    base = streams.get(baseline)
    return [f"{result.variant}: its cycle is of {int(mine)} requests decoding together, the baseline's step of "
            f"{int(base)}; r compares two loads, not two drafters"
            for result in results
            if result.cycle_source != CYCLE_MEASURED and base is not None
            and (mine := streams.get(result.variant)) is not None and mine != base]


NO_TAU = ("no accept length: no server log gives its tokens/step, and no server config says it runs without "
          "speculation (then a step emits one token)")


def no_cycle_reason(row: pd.Series) -> str:
    """Why a comparison row has no ``cycle_ms_est``: no τ for a variant not known to run without speculation, or a
    throughput of an unknown number of requests."""
    return STREAMS_UNKNOWN if decode_streams(row) is None else NO_TAU


def off_plane_reason(tau: float | None, streams: float | None, decodes_one_token: bool) -> str | None:
    """Why a session has no point (τ, r) on the plane, or None: τ below its floor, no τ for a speculating (or
    unknown) variant, or a throughput of an unknown number of requests."""
    if tau is not None and (problem := tau_below_floor(tau)) is not None:
        return problem
    if tau is None and not decodes_one_token:
        return NO_TAU
    return STREAMS_UNKNOWN if streams is None else None


def off_plane(sessions: pd.DataFrame, accept: pd.DataFrame, plain_variants: frozenset[str]) -> pd.DataFrame:
    """The sessions ``plane_points`` leaves out, with why (``off_plane_reason``)."""
    tau_by = _taus(accept)
    rows = [{"session_id": row["session_id"], "reason": reason} for _, row in sessions.iterrows()
            if (reason := off_plane_reason(_num(tau_by.get(row["session_id"])), decode_streams(row),
                                           row["variant"] in plain_variants))]
    return pd.DataFrame(rows, columns=["session_id", "reason"])


def _taus(accept: pd.DataFrame) -> dict[str, Any]:
    return accept.set_index("session_id")["tokens_per_step"].to_dict() if not accept.empty else {}


def plane_points(
    sessions: pd.DataFrame, accept: pd.DataFrame, baseline_step_ms: float, metric: str,
    plain_variants: frozenset[str] = frozenset(),
) -> pd.DataFrame:
    """Every session as a point (τ, r) from its own tok/s and accept length (cycle model). A session without an
    accept length is placed at τ = 1 only when its variant is in ``plain_variants`` (known not to speculate);
    ``off_plane`` names the sessions left out, and why."""
    tau_by = _taus(accept)
    rows = []
    for _, row in sessions.iterrows():
        tau = _num(tau_by.get(row["session_id"]))
        streams = decode_streams(row)
        if off_plane_reason(tau, streams, row["variant"] in plain_variants) is not None:
            continue
        tau = 1.0 if tau is None else tau  # a variant that runs without speculation: one token per step
        cycle_ms = cycle_model_ms(tau, _num(row[metric]), streams)
        if cycle_ms is None:  # no positive tok/s: nothing to place
            continue
        rate = _num(row[metric])
        rows.append({
            "session_id": row["session_id"], "variant": row["variant"], "phase": row["phase"],
            "started_at": row["started_at"], "tok_per_s": rate, "tokens_per_step": tau,
            "cycle_ms": cycle_ms, "cost_ratio": cycle_ms / baseline_step_ms,
            "speedup": tau / (cycle_ms / baseline_step_ms),
        })
    return pd.DataFrame(rows)


# --- config differences -----------------------------------------------------------------------

# Keys that make a variant what it is: they are expected to differ between variants.
DRAFTER_KEYS = frozenset({"speculative_algorithm", "speculative_draft_model_path", "speculative_draft_model_revision"})
SPEC_KEY_PREFIX = "speculative_"
# Keys that never change what is measured.
IGNORED_KEYS = frozenset(
    {"host", "port", "served_model_name", "log_level", "log_level_http", "log_requests", "log_requests_level",
     "random_seed", "watchdog_timeout", "decode_log_interval", "tokenizer_path", "file_storage_path", "api_key",
     "nccl_port", "dist_init_addr", "show_time_cost", "enable_metrics", "crash_dump_folder", "bucket_time_to_first_token",
     "bucket_e2e_request_latency", "bucket_inter_token_latency", "collect_tokens_histogram", "prompt_tokens_buckets",
     "generation_tokens_buckets"}
)
# Settings worth naming even when equal: what "like-for-like" is checked on.
KEY_SETTINGS = ("model_path", "version", "tp_size", "dp_size", "ep_size", "pp_size", "disable_cuda_graph",
                "cuda_graph_max_bs", "attention_backend", "kv_cache_dtype", "quantization", "max_running_requests",
                "speculative_algorithm", "speculative_draft_model_path", "speculative_num_steps",
                "speculative_eagle_topk", "speculative_num_draft_tokens")
KIND_EXPLAINED = {
    "drafter": "what the variant is: expected to differ",
    "speculation setting": "by design against a baseline without speculation; matters between drafters",
    "setup": "changes what is measured: not like-for-like",
    "benchmark": "different benchmark load: not like-for-like",
    "observed": "seen in the server log: not like-for-like",
    "unknown": "cannot be checked",
}


def config_args(row: pd.Series) -> dict[str, Any]:
    try:
        args = json.loads(row["args"]) if isinstance(row.get("args"), str) else {}
    except json.JSONDecodeError:
        args = {}
    return args if isinstance(args, dict) else {}


def setting_kind(key: str) -> str:
    if key in DRAFTER_KEYS:
        return "drafter"
    if key.startswith(SPEC_KEY_PREFIX):
        return "speculation setting"
    return "setup"


def breaks_like_for_like(kind: str, baseline_speculates: bool) -> bool:
    """Whether a setting of this kind that differs makes a comparison not like-for-like: a setup setting always,
    a speculation setting only against a baseline that speculates itself (else it differs by design), the
    drafter never (it is what the variant is)."""
    return kind == "setup" or (kind == "speculation setting" and baseline_speculates)


def config_diff(base: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    """Every key whose value differs, with its kind: drafter identity, speculation setting, or setup."""
    diffs = []
    for key in sorted(set(base) | set(other)):
        if key in IGNORED_KEYS:
            continue
        a, b = base.get(key), other.get(key)
        if a != b:
            diffs.append({"key": key, "baseline": show(a), "this": show(b), "kind": setting_kind(key)})
    return diffs


def show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=_plain_json)  # pandas hands over numpy scalars (int64, bool_) in lists
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _plain_json(value: Any) -> Any:
    """A numpy scalar as the Python value JSON writes; anything else as its text."""
    return value.item() if hasattr(value, "item") else str(value)


def side_by_side(configs: dict[str, dict[str, Any]], diff_only: bool) -> pd.DataFrame:
    """Settings as rows, one column per config; with ``diff_only`` only rows whose values differ."""
    keys = sorted(set().union(*configs.values()) - IGNORED_KEYS) if configs else []
    rows = []
    for key in keys:
        values = [show(args.get(key)) for args in configs.values()]
        if diff_only and len(set(values)) <= 1:
            continue
        rows.append({"setting": key, "kind": setting_kind(key), **dict(zip(configs, values, strict=True))})
    return pd.DataFrame(rows, columns=["setting", "kind", *configs])


def comparability(
    configs: pd.DataFrame, summary: pd.DataFrame, accept: pd.DataFrame, baseline: str | None
) -> list[dict[str, Any]]:
    """Every difference from the baseline other than the drafter, each marked whether it breaks like-for-like.

    Setup keys (model, tp_size, version, CUDA graph, ...), the benchmark load
    (max_tokens, prompt lengths, model) and CUDA-graph use seen in the log always
    count; speculation settings count only when the baseline itself speculates
    (else they differ by design and are listed as expected).
    """
    if baseline is None:
        return []
    by_variant = {row["variant"]: config_args(row) for _, row in configs.iterrows()}
    findings: list[dict[str, Any]] = []
    base_args = by_variant.get(baseline)
    # An unknown config is not the same config: like-for-like needs both known (docs/dashboard.md).
    if base_args is None:
        findings.append(finding(baseline, "server config", "not ingested", "—", "unknown", True))
    findings += [finding(variant, "server config", "ingested" if base_args is not None else "not ingested",
                         "not ingested", "unknown", True)
                 for variant in summary["variant"].drop_duplicates() if variant != baseline and variant not in by_variant]
    if base_args is not None:
        base_spec = bool(base_args.get("speculative_algorithm"))
        for variant, args in by_variant.items():
            if variant == baseline:
                continue
            for diff in config_diff(base_args, args):
                if diff["kind"] != "drafter":
                    findings.append(finding(variant, diff["key"], diff["baseline"], diff["this"], diff["kind"],
                                            breaks_like_for_like(diff["kind"], base_spec)))
    for _, row in configs.iterrows():
        if (distinct := _num(row.get("distinct_configs"))) and distinct > 1:
            findings.append(finding(row["variant"], "server config", "one", f"{int(row['distinct_configs'])} different",
                                    "setup", True))
    findings += session_differences(summary, baseline)
    findings += basis_differences(summary, baseline)
    findings += observed_differences(accept, baseline)
    return findings


def finding(variant: str, key: str, base: str, this: str, kind: str, breaks: bool) -> dict[str, Any]:
    return {"variant": variant, "setting": key, "baseline": base, "this": this, "kind": kind,
            "like_for_like": not breaks}


def drafter_differences(configs: pd.DataFrame, baseline: str | None) -> pd.DataFrame:
    """Speculation settings that differ between the speculative variants (not the baseline)."""
    spec = {row["variant"]: config_args(row) for _, row in configs.iterrows()
            if row["variant"] != baseline and config_args(row).get("speculative_algorithm")}
    if len(spec) < 2:
        return pd.DataFrame()
    table = side_by_side({v: {k: a for k, a in args.items() if k.startswith(SPEC_KEY_PREFIX)} for v, args in spec.items()},
                         diff_only=True)
    return table[table["kind"] != "drafter"].reset_index(drop=True)


def session_differences(summary: pd.DataFrame, baseline: str | None) -> list[dict[str, Any]]:
    base = summary[summary["variant"] == baseline]
    if base.empty:
        return []
    b = base.iloc[0]
    findings = []
    for _, row in summary[summary["variant"] != baseline].iterrows():
        if _as_list(row["max_tokens"]) != _as_list(b["max_tokens"]):
            findings.append(finding(row["variant"], "max_tokens", show(_as_list(b["max_tokens"])),
                                    show(_as_list(row["max_tokens"])), "benchmark", True))
        if not _ranges_overlap(row, b):
            findings.append(finding(row["variant"], "prompt tokens", f"{_int(b['prompt_min'])}–{_int(b['prompt_max'])}",
                                    f"{_int(row['prompt_min'])}–{_int(row['prompt_max'])}", "benchmark", True))
        if "models" in row and _as_list(row["models"]) and _as_list(b["models"]) and _as_list(row["models"]) != _as_list(b["models"]):
            findings.append(finding(row["variant"], "model (benchmark)", show(_as_list(b["models"])),
                                    show(_as_list(row["models"])), "benchmark", True))
    return findings


def basis_differences(summary: pd.DataFrame, baseline: str | None) -> list[dict[str, Any]]:
    """Throughput taken from another kind of source, or at another concurrency, than the baseline's: not like-for-like.

    A bench record at max concurrency 16 reports the throughput of 16 streams together; a benchmark run or
    a log line at 1 running request, one stream's: their Δ measures the load, not the drafter.
    """
    if "basis" not in summary:
        return []
    base = summary[summary["variant"] == baseline]
    if base.empty:
        return []
    base_basis = base.iloc[0]["basis"]
    return [finding(row["variant"], "throughput from", base_basis, row["basis"], "benchmark", True)
            for _, row in summary[summary["variant"] != baseline].iterrows() if row["basis"] != base_basis]


def observed_differences(accept: pd.DataFrame, baseline: str | None) -> list[dict[str, Any]]:
    """CUDA-graph use as the decode lines report it, when it differs from the baseline's."""
    if accept.empty or "cuda_graph" not in accept:
        return []
    graphs = {row["variant"]: _as_list(row["cuda_graph"]) for _, row in accept.iterrows()}
    base = graphs.get(baseline)
    if not base:
        return []
    return [
        finding(variant, "cuda graph (decode lines)", show(base), show(values), "observed", True)
        for variant, values in graphs.items()
        if variant != baseline and values and values != base
    ]


# --- target models: runs of two models are never one system ----------------------------------

def variant_models(configs: pd.DataFrame, summary: pd.DataFrame) -> dict[str, frozenset[str]]:
    """variant → the target models its server configs and benchmark sessions name (as model_name gives them)."""
    models: dict[str, set[str]] = {}
    for _, row in configs.iterrows():
        if (name := model_name(row.get("model_path"))) is not None:
            models.setdefault(row["variant"], set()).add(name)
    for _, row in summary.iterrows():
        for model in _as_list(row.get("models")):
            if (name := model_name(model)) is not None:
                models.setdefault(row["variant"], set()).add(name)
    return {variant: frozenset(names) for variant, names in models.items()}


def model_name(path: Any) -> str | None:
    """'moonshotai/Kimi-K2.5', '/models/Kimi-K2.5' and a cache snapshot of it → 'kimi-k2.5': one model, one name."""
    name = drafter_name(path)
    return name.lower() if name else None


def other_model(models: dict[str, frozenset[str]], variant: str, baseline: str | None) -> str | None:
    """Why ``variant`` has no Δ against ``baseline`` because their target models differ; None when they may share one."""
    mine, base = models.get(variant, frozenset()), models.get(baseline or "", frozenset())
    if variant == baseline or not mine or not base or mine & base:
        return None
    return f"other target model ({', '.join(sorted(mine))}; the baseline's: {', '.join(sorted(base))})"


DELTA_COLUMNS = ("delta", "delta_pct", "delta_low", "delta_high", "delta_pct_low", "delta_pct_high", "speedup")


def apart_by_model(comparison: pd.DataFrame, models: dict[str, frozenset[str]], baseline: str | None) -> pd.DataFrame:
    """The comparison with no Δ for a variant of another target model than the baseline's: its verdict says why."""
    reasons = {variant: reason for variant in comparison.get("variant", []) if (reason := other_model(models, variant, baseline))}
    if not reasons:
        return comparison
    kept = comparison.copy()
    apart = kept["variant"].isin(list(reasons))
    for column in DELTA_COLUMNS:
        if column in kept:
            kept[column] = kept[column].astype("float64").mask(apart)
    kept.loc[apart, "verdict"] = [f"not compared: {reasons[v]}" for v in kept.loc[apart, "variant"]]
    return kept


def with_methods(comparison: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """The comparison with each variant's speculative method (``method``: macro ``spec_method`` over its latest server
    config's algorithm, ``configs_by_variant``); a variant no config names gets none rather than a guess.

    Without a tokens/step figure, a variant's cycle is estimated as one token's time per stream (streams ÷ tok/s)
    only when its config says it runs without speculation; for any other it stays empty rather than too short."""
    methods = dict(zip(configs["variant"], configs["method"], strict=True)) if "method" in configs else {}
    shown = comparison.assign(method=[methods.get(v) for v in comparison.get("variant", [])])
    if "cycle_ms_est" in shown:
        streams = shown["streams"].astype("float64") if "streams" in shown else 1.0
        one_token = shown["tokens_per_step"].isna() & (shown["method"] == "none") & (shown["headline"] > 0)
        shown["cycle_ms_est"] = shown["cycle_ms_est"].astype("float64").mask(one_token, 1000 * streams / shown["headline"])
    return shown


VARIANTS_PER_VIEW = 12  # cards and bars that stay readable at 1280 px


def variant_pages(variants: list[str], baseline: str | None, size: int) -> list[list[str]]:
    """``variants`` in pages of at most ``size``, the baseline first on every page."""
    others = [v for v in variants if v != baseline]
    step = size - (baseline is not None)
    chunks = [others[i:i + step] for i in range(0, len(others), step)] or [[]]
    return [([baseline] if baseline is not None else []) + chunk for chunk in chunks]


def _as_list(value: Any) -> list[Any]:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return []
    return sorted(v for v in list(value) if v is not None)


def _int(value: Any) -> str:
    number = _num(value)
    return "?" if number is None else str(int(number))


def _ranges_overlap(a: pd.Series, b: pd.Series) -> bool:
    """Prompt-length ranges count as comparable unless one lies beyond twice the other (short prompts jitter)."""
    values = [_num(a["prompt_min"]), _num(a["prompt_max"]), _num(b["prompt_min"]), _num(b["prompt_max"])]
    if any(v is None for v in values):
        return True
    a_min, a_max, b_min, b_max = values
    return a_min <= b_max * 2 and b_min <= a_max * 2  # type: ignore[operator]


# --- phases -----------------------------------------------------------------------------------

def phase_trends(summary: pd.DataFrame, accept: pd.DataFrame, phase_order: list[str], metric: str) -> pd.DataFrame:
    """Per (phase, variant): headline tok/s, mean of runs with its 95% CI, and accept length."""
    tau = {(r["phase"], r["variant"]): (_num(r["tokens_per_step"]), _num(r["accepted_drafts_per_step"]))
           for _, r in accept.iterrows()} if not accept.empty else {}
    rows = []
    for _, row in summary.iterrows():
        ci = ci_from_summary(int(row["n_runs"]), float(row["mean_of_runs"]), _num(row["sd"]))
        tps, drafts = tau.get((row["phase"], row["variant"]), (None, None))
        rows.append({"phase": row["phase"], "variant": row["variant"], "runs": int(row["n_runs"]),
                     "headline": float(row[metric]), "mean_of_runs": ci.mean, "ci_low": ci.low, "ci_high": ci.high,
                     "tokens_per_step": tps, "accepted_drafts_per_step": drafts,
                     "basis": row.get("basis", "benchmark runs")})
    out = pd.DataFrame(rows, columns=["phase", "variant", "runs", "headline", "mean_of_runs", "ci_low", "ci_high",
                                      "tokens_per_step", "accepted_drafts_per_step", "basis"])
    order = {phase: i for i, phase in enumerate(phase_order)}
    return out.sort_values(by=["phase", "variant"], key=lambda s: s.map(order) if s.name == "phase" else s).reset_index(drop=True)


# --- trace breakdown --------------------------------------------------------------------------

def cycle_headlines(composition: pd.DataFrame) -> pd.DataFrame:
    """Per variant: mean cycle, its communication share, and verify with its communication share.

    From ``data.cycle_composition`` (mean ms per component over the pace-setting rank's complete
    cycles), so the parts add up to the cycle.
    """
    rows = []
    for (variant, kind), parts in composition.groupby(["variant", "cycle_kind"], sort=False):
        by = parts.set_index("component")["mean_ms"]
        cycle = float(by.sum())
        communication = float(parts["communication_ms"].sum())
        verify = float(by.get("verify compute", 0.0) + by.get("verify communication", 0.0))
        rows.append({
            "variant": variant,
            "cycle_kind": kind,
            "cycle_ms": cycle,
            "communication_ms": communication,
            "communication_share": communication / cycle if cycle else None,
            "verify_ms": verify if kind == "speculative" else None,
            "verify_comm_share": by.get("verify communication", 0.0) / verify if verify else None,
            "verify_share": verify / cycle if verify and cycle else None,
            "pace_rank": int(parts["pace_rank"].iloc[0]),
            "ranks": int(parts["ranks"].iloc[0]),
            "cycles": int(parts["cycles"].iloc[0]),
        })
    return pd.DataFrame(rows)
