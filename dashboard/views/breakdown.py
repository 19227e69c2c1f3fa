"""Breakdown: where a speculative cycle's time goes, from profiler traces — or the cycle model without one."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from dashboard.analysis import compare, definitions, frames, summary
from dashboard.analysis.definitions import MS
from dashboard.state import Keys, carried_params

st.title("Where a cycle's time goes")
store = ui.require_store()
ui.demo_note(store)
st.caption(definitions.BREAKDOWN)

# --- controls -----------------------------------------------------------------------------------
selection = ui.selection_bar(store, with_metric=False)
if not selection.variants:
    st.info("Pick at least one variant above.")
    st.stop()

# --- data ---------------------------------------------------------------------------------------
composition = queries.cycle_composition(selection.phases, selection.variants)
whole_traces = queries.trace_overview(selection.phases, selection.variants)
traced = set(composition["variant"])
untraced = [v for v in selection.variants if v not in traced]
estimates = pd.DataFrame(columns=["variant", "cycle_ms"])
unestimated: dict[str, str] = {}  # variant → why it has no cycle estimate
if untraced:
    untraced_summary = queries.variant_summary(selection.phases, untraced)
    if not untraced_summary.empty:
        comparison = compare.with_methods(
            compare.compare_variants(untraced_summary, queries.accept_length(selection.phases, untraced), None),
            queries.configs_by_variant(selection.phases, untraced))
        estimates = comparison[["variant", "cycle_ms_est"]].rename(columns={"cycle_ms_est": "cycle_ms"}).dropna()
        estimated = set(estimates["variant"])
        unestimated = {row["variant"]: compare.no_cycle_reason(row) for _, row in comparison.iterrows()
                       if row["variant"] not in estimated}
PROFILE_HINT = ("Profile a few decode steps (`POST /start_profile` on the SGLang server), then "
                "`specdash ingest TRACE_DIR --phase P --variant V`.")
if composition.empty and estimates.empty and whole_traces.empty:
    if unestimated:
        st.info("Nothing to break down: no profiler trace, and no cycle estimate for "
                + "; ".join(f"{variant} ({reason})" for variant, reason in sorted(unestimated.items())) + f". {PROFILE_HINT}")
    else:
        st.info(f"Nothing to break down: no profiler trace and no benchmark runs for this selection. {PROFILE_HINT}")
    st.stop()

# --- headline -----------------------------------------------------------------------------------
headlines = compare.cycle_headlines(composition) if not composition.empty else pd.DataFrame()
for _, row in headlines.iterrows():
    st.markdown(summary.breakdown_sentence(row))
if not headlines.empty:
    st.caption(definitions.COMMUNICATION_SHARE)
for _, row in estimates.iterrows():
    st.markdown(f"**{row['variant']}**: no profiler trace — estimated cycle **{MS.text(row['cycle_ms'])}** "
                f"(cycle model: tokens/step × requests decoding together ÷ tok/s), no split into phases.")
for variant, reason in sorted(unestimated.items()):
    st.markdown(f"**{variant}**: no profiler trace, and no cycle estimate: {reason}.")

if not (composition.empty and estimates.empty):
    st.plotly_chart(queries.figure(charts.cycle_stack, composition, estimates), width="stretch")
links = st.columns(3)
links[0].page_link("views/breakeven.py", label="Break-even with these cycle times", icon=":material/balance:",
                   query_params=carried_params())
links[1].page_link("views/compare.py", label="Compare tok/s", icon=":material/leaderboard:", query_params=carried_params())

if composition.empty:
    if whole_traces.empty:
        st.info("Ingest a profiler trace for these variants to see the phases, per-cycle spread, ranks and kernels.")
        st.stop()
    # Traces without phase markers still say where the GPU time went, by kernel class.
    st.subheader("GPU time by kernel class, whole trace")
    st.caption("These traces have no phase markers (no `step[...]` spans, no EAGLE worker stack events), so their "
               "time cannot be split into draft, verify and draft-extend: each bar is one rank's union of the kernels "
               "of a class over the whole trace. Classes can overlap in time (kernels on several streams), so the "
               "bars of one rank may add up to more than its busy time.")
    st.plotly_chart(queries.figure(charts.trace_class_bars, whole_traces), width="stretch")
    files_export, classes_export = frames.trace_exports(whole_traces)
    ui.table(frames.trace_files_table(whole_traces), lines=2)
    ui.export_buttons(files_export, "trace-files")
    ui.table(frames.kernel_classes_table(whole_traces), lines=2)
    st.caption("Classes with no kernel in these traces are left out; span, kernel counts and every class are in the downloads.")
    ui.export_buttons(classes_export, "trace-kernel-classes")
    st.subheader("Top kernels")
    kernels = queries.top_kernels(selection.phases, selection.variants)
    ui.table(frames.top_kernels_table(kernels, with_phase=False), lines=3)
    st.caption("Per variant the 15 kernels with the most GPU time (summed durations, overlaps not merged), per rank.")
    ui.export_buttons(kernels, "top-kernels")
    st.stop()

ui.table(frames.cycle_parts_table(composition))
ui.export_buttons(composition, "cycle-breakdown")

# --- distribution, ranks, kernels ---------------------------------------------------------------
# Only the open tab runs (a tab click reruns the page): a load queries and draws one of the three.
spread_tab, rank_tab, kernel_tab = st.tabs(["Per cycle", "Per rank", "Top kernels"], key=Keys.breakdown_tab, on_change="rerun")
if spread_tab.open:
    with spread_tab:
        cycles = queries.cycle_distribution(selection.phases, selection.variants)
        st.plotly_chart(queries.figure(charts.cycle_distribution, cycles, queries.variant_colors()), width="stretch")
        st.caption("Every complete cycle (or baseline decode step) of every rank; at most 2,000 per variant, sampled in SQL.")
if rank_tab.open:
    with rank_tab:
        ranks = queries.rank_breakdown(selection.phases, selection.variants)
        st.plotly_chart(queries.figure(charts.rank_cycles, ranks), width="stretch")
        st.caption(definitions.RANKS)
        ui.table(frames.rank_table(ranks))
        ui.export_buttons(ranks, "cycle-ranks")
if kernel_tab.open:
    with kernel_tab:
        kernels = queries.top_kernels(selection.phases, selection.variants)
        ui.table(frames.top_kernels_table(kernels), lines=3)
        st.caption("Per variant the 15 kernels with the most GPU time (summed durations, overlaps not merged), per rank.")
        ui.export_buttons(kernels, "top-kernels")
