"""Acceptance: where drafts die (per position), which requests a drafter fails (per request), per dataset."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard import acceptance_charts, queries, ui
from dashboard.analysis import acceptance
from dashboard.analysis.definitions import (
    ACCEPT,
    COUNT,
    EMPTY,
    MS,
    RATIO,
    SHARE,
    TOK_S,
    TOKENS,
    Quantity,
)

st.title("Acceptance")
store = ui.require_store()
ui.demo_note(store)
st.caption(f"{acceptance.ACCEPT_LENGTH} {acceptance.POOLED}")

position_rates = queries.cached(acceptance.position_rates)
request_rows = queries.cached(acceptance.request_rows)
dataset_rows = queries.cached(acceptance.dataset_rows)
metric_windows = queries.cached(acceptance.metric_windows)
trace_cycle_parts = queries.cached(acceptance.trace_cycle_parts)
source_paths = queries.cached(acceptance.source_paths)

INGEST_WHAT = ("Ingest a vLLM server log with `SpecDecoding metrics` lines, a `vllm bench serve --save-result` JSON or "
               "`spec_decode.py` summary, per-request responses (vLLM `metrics.speculative_decoding`, SGLang `meta_info` "
               "spec fields, AIPerf `profile_export.jsonl`) or `/metrics` snapshots: `specdash ingest FILES --variant NAME`.")


def shown(table: pd.DataFrame, columns: dict[str, tuple[str, Quantity | None, str]]) -> None:
    """A table with human labels, each number at its quantity's precision, '—' for a gap, a definition on hover."""
    out = pd.DataFrame({label: [EMPTY if acceptance_value_missing(v) else (q.text(v, unit=False) if q else str(v))
                                for v in table[name]]
                        for name, (label, q, _) in columns.items()})
    config = {label: st.column_config.TextColumn(f"{label} ({q.unit})" if q and q.unit else label, help=help_text)
              for _, (label, q, help_text) in columns.items()}
    st.dataframe(out, hide_index=True, column_config=config, width="stretch")


def acceptance_value_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and value != value


# --- controls -----------------------------------------------------------------------------------
rates, requests, datasets, windows = position_rates(), request_rows(), dataset_rows(), metric_windows()
everything = sorted(set(rates["variant"]) | set(requests["variant"]) | set(datasets["variant"]) | set(windows["variant"]))
if not everything:
    ui.lacking(store, "per-position, per-request or per-dataset acceptance", INGEST_WHAT)
left, right = st.columns([3, 1])
variants = left.multiselect("Variants", everything, default=everything, key="acceptance_variants")
threshold = right.slider("Conditional-rate threshold", 0.05, 0.95, 0.5, 0.05, key="acceptance_threshold",
                         help="Mark the first draft position whose conditional acceptance falls below this.")
if not variants:
    st.info("Pick at least one variant above.")
    st.stop()
rates, requests = rates[rates["variant"].isin(variants)], requests[requests["variant"].isin(variants)]
samples = acceptance.position_samples(rates, requests)
curves = acceptance.position_curves(samples)
distribution = acceptance.request_distribution(requests)
for note in acceptance.mixed_sources(curves, distribution):
    st.warning(f":material/warning: Not like-for-like. {note}")

# --- per position -------------------------------------------------------------------------------
st.subheader("Per draft position: where the drafts die")
if curves.empty:
    st.info("No per-position acceptance for these variants. " + INGEST_WHAT)
else:
    st.caption(f"{acceptance.SURVIVAL} {acceptance.CONDITIONAL}")
    marks = {(v, o): acceptance.first_below(c, threshold) for (v, o), c in curves.groupby(["variant", "origin"])}
    st.plotly_chart(acceptance_charts.position_figure(curves, threshold, marks), width="stretch")
    summary = pd.DataFrame([{"variant": v, "origin": o, "scope": c["scope"].iloc[0], "positions": len(c),
                             "accept_length": c["accept_length"].iloc[0], "first_below": marks[(v, o)] or None,
                             "samples": int(c["samples"].max())} for (v, o), c in curves.groupby(["variant", "origin"])])
    shown(summary, {
        "variant": ("Variant", None, "The --variant label, or the file's name."),
        "origin": ("Source", None, "Which engine output the rates come from."),
        "scope": ("Scope", None, " · ".join(acceptance.SCOPES.values())),
        "positions": ("Positions", COUNT, "Draft positions the source reports."),
        "accept_length": ("τ = 1 + Σ P(≥ k)", ACCEPT, acceptance.ACCEPT_LENGTH),
        "first_below": (f"First position below {threshold:.0%}", COUNT, acceptance.CONDITIONAL),
        "samples": ("Samples", COUNT, "Log intervals, snapshot deltas, runs or requests pooled."),
    })
    with st.expander("Every position"):
        shown(curves, {
            "variant": ("Variant", None, ""), "origin": ("Source", None, ""),
            "position": ("Position k", COUNT, "1 = the first draft token after the verified prefix."),
            "survival": ("P(≥ k accepted)", SHARE, acceptance.SURVIVAL),
            "low": ("p10", SHARE, acceptance.SPREAD_TEXT), "high": ("p90", SHARE, acceptance.SPREAD_TEXT),
            "conditional": ("P(k | k−1)", SHARE, acceptance.CONDITIONAL),
            "samples": ("Samples", COUNT, ""), "sources": ("Source ids", None, "The files' ids (Ingest page lists them)."),
        })

# --- how many tokens to draft -------------------------------------------------------------------
st.subheader("How many tokens to draft")
if curves.empty:
    st.info("Needs a per-position curve (above).")
else:
    st.caption(acceptance.MODEL)
    options = [f"{v} · {o}" for v, o in curves.groupby(["variant", "origin"]).groups]
    chosen = st.selectbox("Curve", options, key="acceptance_model_curve")
    variant, origin = chosen.split(" · ", 1)
    curve = curves[(curves["variant"] == variant) & (curves["origin"] == origin)]
    inputs = acceptance.model_inputs(trace_cycle_parts(), variant, len(curve), None)
    values = {}
    for column, model_input in zip(st.columns(len(inputs)), inputs, strict=True):
        values[model_input.name] = column.number_input(
            f"{model_input.name} ({model_input.unit})", min_value=0.0, value=round(model_input.value, 2), step=0.1,
            key=f"acceptance_model_{model_input.name}", help=model_input.origin)
        column.caption(("**measured** — " if model_input.measured else "**assumed** — ") + model_input.origin.split(": ", 1)[-1])
    model = acceptance.steps_model(curve["survival"].tolist(), values["draft step"], values["verify + draft-extend"],
                                   values["baseline step"], values["verify per extra token"])
    best = model[model["best"]]
    if not best.empty:
        st.markdown(f"**{variant}**: drafting **{int(best['steps'].iloc[0])}** token(s) per cycle models best, "
                    f"speedup {RATIO.text(best['speedup'].iloc[0])}× at τ = {ACCEPT.text(best['tokens_per_cycle'].iloc[0])} "
                    f"(measured up to N = {len(curve)}; the model does not extrapolate beyond it).")
    st.plotly_chart(acceptance_charts.steps_figure({variant: model}), width="stretch")
    shown(model.assign(best=["best" if b else "" for b in model["best"]]), {
        "steps": ("Drafted tokens N", COUNT, ""), "tokens_per_cycle": ("τ(N)", ACCEPT, acceptance.MODEL),
        "cycle_ms": ("Cycle", MS, acceptance.MODEL), "speedup": ("Speedup S", RATIO, acceptance.MODEL),
        "best": ("Best", None, "The N with the highest modelled speedup."),
    })

# --- per request --------------------------------------------------------------------------------
st.subheader("Per request")
if requests.empty or distribution.empty:
    st.info("No per-request acceptance for these variants. Ingest responses carrying vLLM `metrics.speculative_decoding`, "
            "SGLang `meta_info` spec fields or AIPerf `spec_decode_acceptance` records.")
else:
    shown(distribution, {
        "variant": ("Variant", None, ""), "requests": ("Requests", COUNT, ""),
        "p10": ("p10", ACCEPT, acceptance.ACCEPT_LENGTH), "p50": ("p50", ACCEPT, acceptance.ACCEPT_LENGTH),
        "p90": ("p90", ACCEPT, acceptance.ACCEPT_LENGTH), "mean": ("Mean of requests", ACCEPT, "Unweighted mean."),
        "ci_low": ("95% CI low", ACCEPT, "Student's t over requests."), "ci_high": ("95% CI high", ACCEPT, "Student's t over requests."),
        "pooled": ("Pooled", ACCEPT, acceptance.POOLED), "origins": ("Source", None, ""),
    })
    st.plotly_chart(acceptance_charts.request_figure(requests.dropna(subset=["accept_length"])), width="stretch")
    st.markdown("**Lowest-acceptance requests**")
    worst = acceptance.worst_requests(requests)
    shown(worst, {
        "variant": ("Variant", None, ""), "accept_length": ("Accept length", ACCEPT, acceptance.ACCEPT_LENGTH),
        "request_id": ("Request id", None, ""), "dataset": ("Dataset", None, "As the client tagged the request."),
        "input_tokens": ("Prompt", TOKENS, ""), "output_tokens": ("Output", TOKENS, ""),
        "spec_steps": ("Verify steps", COUNT, ""), "path": ("File", None, ""), "line_no": ("Line", COUNT, ""),
    })

# --- per dataset --------------------------------------------------------------------------------
st.subheader("Per dataset")
datasets = datasets[datasets["variant"].isin(variants)]
if datasets.empty:
    st.info("No acceptance per dataset for these variants. Ingest benchmark records that name their dataset "
            "(bench_serving's `dataset_name`, an EAGLE bench summary's `task`) or per-request records tagged with one.")
else:
    dataset_variants = sorted(set(datasets["variant"]))
    reference = st.selectbox("Δ against", dataset_variants, key="acceptance_reference",
                             help="The reference drafter (or baseline) each cell's Δ accept length is taken against.")
    matrix = acceptance.dataset_matrix(datasets, reference)
    st.plotly_chart(acceptance_charts.dataset_figure(matrix), width="stretch")
    shown(matrix, {
        "dataset": ("Dataset", None, ""), "variant": ("Variant", None, ""),
        "accept_length": ("Accept length", ACCEPT, acceptance.ACCEPT_LENGTH),
        "delta": (f"Δ vs {reference}", ACCEPT, "This variant's accept length − the reference's, same dataset."),
        "output_throughput": ("Output throughput", TOK_S, "As the benchmark reported it."),
        "records": ("Records", COUNT, ""), "origins": ("Source", None, ""),
        "scope": ("Scope", None, " · ".join(acceptance.SCOPES.values())),
    })
    if datasets["scope"].nunique() > 1:
        st.warning(":material/warning: Not like-for-like: some figures are per run, some per request, some the "
                   "server's lifetime average (bench_serving's accept_length).")

# --- Prometheus windows -------------------------------------------------------------------------
windows = windows[windows["variant"].isin(variants)]
if not windows.empty:
    st.subheader("From /metrics snapshots")
    st.caption("Counter deltas between two snapshots are that window's figures; counters alone are totals since the "
               "server started; gauges are the engine's own averaging and are never differenced.")
    shown(windows, {
        "variant": ("Variant", None, ""), "scope": ("Kind", None, ""), "window": ("Window", None, ""),
        "reset": ("Restart inside", None, "A counter went down: the server restarted, the window counts from zero."),
        "engines": ("DP engines", COUNT, "Engine labels summed."), "drafts": ("Drafts", COUNT, ""),
        "accepted": ("Accepted", COUNT, ""), "accept_length": ("Accept length", ACCEPT, acceptance.ACCEPT_LENGTH),
        "accept_rate": ("Mean rate", SHARE, acceptance.MEAN_RATE),
    })

used = sorted(set(rates["source_id"]) | set(requests["source_id"]) | set(datasets["source_id"]) | set(windows["source_id"]))
with st.expander("Where these numbers come from"):
    paths = source_paths(used)
    st.markdown("\n".join(f"- `{source}`: `{paths.get(source, EMPTY)}`" for source in used) or EMPTY)
