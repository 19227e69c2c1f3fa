"""Compare: tok/s per variant with spread and confidence, Δ vs a baseline, accept length, comparability."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import analysis, charts, queries, ui
from dashboard.state import BASELINE, METRIC, PHASES, VARIANTS

st.title("Compare variants")
store = ui.require_store()
ui.demo_note(store)

# --- controls -----------------------------------------------------------------------------------
phase_options = queries.phases()
PHASES.seed_list(phase_options, phase_options)
left, middle, right, far = st.columns([2, 3, 2, 2])
left.multiselect("Phases", phase_options, key=PHASES.key, help="Empty = all phases")
selected_phases: list[str] = st.session_state[PHASES.key]

variant_options = queries.variants(selected_phases)
VARIANTS.seed_list(variant_options, variant_options)
middle.multiselect("Variants", variant_options, key=VARIANTS.key)
selected: list[str] = st.session_state[VARIANTS.key]

speculative = queries.speculative_variants()
plain = [v for v in selected if speculative.get(v) is False]
BASELINE.seed_value(selected, plain[0] if plain else None)
right.selectbox(
    "Baseline", selected, key=BASELINE.key, placeholder="pick a baseline",
    help="Deltas are against this variant. Default: the variant whose server ran without speculation.",
)
baseline: str | None = st.session_state[BASELINE.key]

metric_options = [analysis.TOKENS_OVER_TIME, analysis.MEAN_OF_RUNS]
METRIC.seed_value(metric_options, analysis.TOKENS_OVER_TIME)
far.radio("Headline tok/s", metric_options, key=METRIC.key, format_func=analysis.METRIC_LABELS.get)
metric: str = st.session_state[METRIC.key]
for param in (PHASES, VARIANTS, BASELINE, METRIC):
    param.publish()

if not selected:
    st.info("Pick at least one variant above.")
    st.stop()

# --- data ---------------------------------------------------------------------------------------
summary = queries.variant_summary(selected_phases, selected)
if summary.empty:
    st.info("No measured benchmark runs for this selection. Ingest a benchmark JSON for these variants.")
    st.stop()
summary = summary.set_index("variant").loc[[v for v in selected if v in set(summary["variant"])]].reset_index()
runs = queries.runs(selected_phases, selected)
accept = queries.accept_by_variant(selected_phases, selected)
comparison = analysis.compare_variants(summary, accept, baseline, metric)
has_baseline = baseline is not None and baseline in set(comparison["variant"])

if not has_baseline:
    st.info("No baseline in this selection: pick one above (a variant measured without speculation) to see deltas and speedups.")

# --- headline -----------------------------------------------------------------------------------
cards = st.columns(len(comparison))
for card, (_, row) in zip(cards, comparison.iterrows()):
    delta = None
    if has_baseline and not row["is_baseline"]:
        delta = f"{row['delta_pct']:+.1f}% vs {baseline} ({row['verdict']})"
    card.metric(
        label=f"{row['variant']}{' (baseline)' if row['is_baseline'] else ''}",
        value=f"{row['headline']:.1f} tok/s",
        delta=delta,
        delta_color="off" if has_baseline and row.get("verdict") == "within noise" else "normal",
        help=f"{analysis.METRIC_LABELS[metric]} over {row['runs']} measured runs (warm-ups excluded).",
    )

# --- chart: click a run to open it --------------------------------------------------------------
figure = charts.tok_per_s_points(runs, comparison, analysis.METRIC_LABELS[metric])
event = st.plotly_chart(figure, key="compare_points", on_select="rerun", selection_mode="points", width="stretch")
points = (event or {}).get("selection", {}).get("points", []) if event else []
picked = [p.get("customdata") for p in points if p.get("customdata")]
if picked:
    st.switch_page("views/run.py", query_params={"session": picked[0][0]})

# --- table --------------------------------------------------------------------------------------
def table(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({
        "variant": frame["variant"],
        "runs": frame["runs"],
        "Σtok/Σtime (tok/s)": frame["tokens_over_time"].round(2),
        "mean of runs (tok/s)": frame["mean_of_runs"].round(2),
        "95% CI (t)": [ui.fmt_ci(lo, hi, 2) for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        "sd": frame["sd"].round(2),
    })
    if has_baseline:
        out["Δ mean (tok/s)"] = frame["delta"].round(2)
        out["Δ %"] = frame["delta_pct"].round(1)
        out["Δ 95% CI (Welch)"] = [ui.fmt_ci(lo, hi, 2) for lo, hi in zip(frame["delta_low"], frame["delta_high"])]
        out["verdict"] = frame["verdict"]
        out["speedup"] = frame["speedup"].round(3)
    out["tokens/step"] = frame["tokens_per_step"].round(2)
    out["accepted drafts/step"] = frame["accepted_drafts_per_step"].round(2)
    out["est. cycle (ms)"] = frame["cycle_ms_est"].round(1)
    out["short runs"] = frame["short_runs"]
    return out


st.dataframe(
    table(comparison),
    hide_index=True,
    width="stretch",
    column_config={
        "tokens/step": st.column_config.NumberColumn(help="Accept length as SGLang logs it: tokens emitted per verify step, bonus token included (floor 1.00). Weighted by #running-req over the server log."),
        "accepted drafts/step": st.column_config.NumberColumn(help="Accept length − 1: draft tokens accepted per step, bonus excluded (the story's 0.58)."),
        "est. cycle (ms)": st.column_config.NumberColumn(help="Estimate from the cycle model: tokens/step ÷ tok/s (baseline: 1 ÷ tok/s). No profiler trace used."),
        "Δ 95% CI (Welch)": st.column_config.TextColumn(help="Welch's t interval on the difference of mean-of-runs; 'within noise' when it spans 0."),
        "short runs": st.column_config.NumberColumn(help="Measured runs that stopped before max_tokens: short runs skew tok/s."),
    },
)

# --- warnings: short runs, comparability --------------------------------------------------------
short = runs[(~runs["is_warmup"]) & runs["hit_max_tokens"].eq(False)]
for _, run in short.iterrows():
    st.warning(
        f"⚠ {run['variant']} run {run['run_index']} stopped early: {run['output_tokens']} of {run['max_tokens']} "
        f"tokens ({run['finish_reason'] or 'no finish reason'}). Short runs skew tok/s."
    )

configs = queries.configs_by_variant(selected_phases, selected)
findings = analysis.comparability(configs, summary, baseline) if has_baseline else []
with st.expander(
    f"Comparability check: {'⚠ ' + str(len(findings)) + ' difference(s)' if findings else '✓ like-for-like'}",
    expanded=bool(findings),
):
    if findings:
        st.warning("These differ from the baseline beyond the drafter itself, so the Δ is not purely the drafter's effect.")
        st.dataframe(pd.DataFrame(findings), hide_index=True, width="stretch")
    elif has_baseline:
        st.success("Same model, parallelism, CUDA-graph setting, max_tokens and prompt lengths as the baseline (drafter settings aside).")
    else:
        st.caption("Pick a baseline to check comparability.")

# --- drill down ---------------------------------------------------------------------------------
st.subheader("Sessions")
session_table = queries.sessions()
session_table = session_table[session_table["variant"].isin(selected)]
if selected_phases:
    session_table = session_table[session_table["phase"].isin(selected_phases)]
for _, session in session_table.iterrows():
    st.page_link(
        "views/run.py",
        label=f"{session['variant']} · {session['phase'] or 'no phase'} · {session['started_at']} · "
        f"{session['n_runs']} runs · {ui.fmt(session['mean_tok_per_s'])} tok/s",
        icon=":material/search:",
        query_params={"session": session["session_id"]},
    )

with st.expander("Definitions"):
    st.markdown(
        """
- **tok/s per run** = output tokens ÷ wall time of that run. Warm-up runs are excluded everywhere.
- **Σtok/Σtime** = total output tokens ÷ total wall time over measured runs; **mean of runs** = average of per-run tok/s. They differ (51.78 vs 51.88 for the K2 probe).
- **95% CI (t)**: mean of runs ± t(0.975, n−1)·sd/√n. **Δ 95% CI (Welch)**: interval on the difference of means with unequal variances; *within noise* when it spans 0.
- **tokens/step** (accept length, bonus incl.) and **accepted drafts/step** (= tokens/step − 1): see `docs/metrics.md`.
- **est. cycle** = tokens/step ÷ tok/s: a model estimate, not a measurement.
"""
    )
