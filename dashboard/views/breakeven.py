"""Break-even: where each session sits in the (τ, r) plane, and what each drafter would need to beat the baseline."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries, sections, sweep_charts, ui
from dashboard.analysis import compare, definitions, frames, summary, sweeps
from dashboard.analysis.definitions import ACCEPT, MS
from dashboard.state import SESSION, Keys, carried_params

st.title("Break-even")
store = ui.require_store()
ui.demo_note(store)
st.caption(f"{definitions.TAU} {definitions.COST_RATIO} {definitions.BREAK_EVEN}")

PROFILE_HINT = ("A profiler trace of the baseline gives its step time directly (`specdash ingest TRACE_DIR --phase P "
                "--variant V`).")

# --- controls -----------------------------------------------------------------------------------
selection = ui.selection_bar(store)
if not selection.variants:
    st.info("Pick at least one variant above.")
    st.stop()

# --- data ---------------------------------------------------------------------------------------
variant_summary = queries.variant_summary(selection.phases, selection.variants)
if variant_summary.empty:
    st.info("No measured benchmark runs for this selection. Ingest a benchmark JSON for these variants.")
    st.stop()
accept = queries.accept_length(selection.phases, selection.variants)
comparison = compare.compare_variants(variant_summary, accept, selection.baseline, selection.metric)
baseline = selection.baseline
if baseline is None or baseline not in set(comparison["variant"]):
    st.info("Break-even is relative to a baseline step: pick a baseline above (a variant measured without speculation).")
    st.stop()
measured = queries.measured_cycles(selection.phases, selection.variants)
results = compare.break_even(comparison, measured, baseline)
step = compare.baseline_step(comparison, measured, baseline)
if step is None:
    st.info(f"No step time for the baseline {baseline}: {compare.no_step_reason(comparison, baseline)}. {PROFILE_HINT}")
    st.stop()
step_ms, step_source = step

session_accept = queries.accept_length(selection.phases, selection.variants, by="session")
sessions = queries.session_summary(selection.phases, selection.variants)
configs = queries.configs_by_variant(selection.phases, selection.variants)
# The baseline is taken to decode one token per step (its step time is 1 ÷ its tok/s) unless its logs give it an
# accept length, as is every variant whose server config says it runs without speculation.
baseline_tau = compare.baseline_tokens_per_step(comparison, baseline)
plain = frozenset(configs.loc[configs["method"] == "none", "variant"]) | ({baseline} if baseline_tau is None else set())
if baseline_tau is not None and step_source != compare.CYCLE_MEASURED:
    st.warning(f"The baseline {baseline} speculates: its server log gives τ = {ACCEPT.text(baseline_tau)}. Its step time "
               "from tok/s is a speculative cycle's, not one decode step, so every r below is against that cycle. Pick "
               "a baseline measured without speculation.", icon=":material/warning:")
session_points = compare.plane_points(sessions, session_accept, step_ms, selection.metric, plain)
left_out = compare.off_plane(sessions, session_accept, plain)
points = session_points.assign(
    label=[f"{v} · {p or 'no phase'}" for v, p in zip(session_points["variant"], session_points["phase"], strict=True)],
    source=["session: cycle model estimate"] * len(session_points),
) if not session_points.empty else pd.DataFrame(columns=["label", "variant", "tokens_per_step", "cost_ratio", "source", "session_id"])
traced = [r for r in results if r.cycle_source == compare.CYCLE_MEASURED and r.tau_problem is None]
if traced:
    points = pd.concat([points, pd.DataFrame([{"label": f"{r.variant} (trace)", "variant": r.variant, "session_id": None,
                                               "phase": ", ".join(selection.phases) or None, "cycle_ms": r.cycle_ms,
                                               "tokens_per_step": r.tokens_per_step, "cost_ratio": r.cost_ratio,
                                               "source": "profiler trace (measured cycle)"} for r in traced])],
                       ignore_index=True)

# --- the plane ----------------------------------------------------------------------------------
# Guides to the break-even line only where there is one (τ ≥ 1 and r ≥ 1: BreakEven.reason).
needs = pd.DataFrame([{"variant": r.variant, "tokens_per_step": r.tokens_per_step, "cost_ratio": r.cost_ratio}
                      for r in results if r.reason is None])
# The sweeps of the selected variants in the selected phases (all phases when none is picked), as paths.
sweep_path = queries.cached(sweeps.phase_paths)(selection.phases)
sweep_path = sweep_path[sweep_path["variant"].isin(selection.variants)]
colors = queries.variant_colors()  # the store's: each variant in the colour it has on every page
event = st.plotly_chart(
    queries.figure(sweep_charts.break_even_figure, points, compare.ISO_SPEEDUPS, needs if not needs.empty else None,
                   sweep_path, colors),
    key=Keys.breakeven_plane, on_select="rerun", selection_mode="points", width="stretch",
)
labels = [p.get("customdata")[0] for p in ui.selected(event, "points") if p.get("customdata") is not None]
if labels:
    match = points[(points["label"] == labels[0]) & points["session_id"].notna()]
    if not match.empty:
        st.switch_page("views/run.py", query_params={**carried_params(), SESSION.url: match["session_id"].iloc[0]})
if not left_out.empty:  # one line per reason: a store of many sessions would list the same reason many times
    st.warning(f"Not on the plane ({len(left_out)} sessions):\n" + "\n".join(
        f"- {reason}: {', '.join(f'`{sid}`' for sid in ids)}" for reason, ids in
        left_out.groupby("reason", sort=False)["session_id"]), icon=":material/warning:")
st.caption("Each session is a point (click one to open it). Dashed guides: how far right (more accepted drafts) or down "
           "(a cheaper cycle) a drafter must move to reach the break-even line.")
if not sweep_path.empty:
    modelled = sweep_path["r_from"].str.startswith("modelled")
    how = ("r from the sweep's **modelled** step times (bench_speculative.py's p20 step time ÷ the baseline's), not a "
           "measured cycle" if modelled.all() else "r **estimated** as τ ÷ speedup (the sweep has no step times)"
           if not modelled.any() else "r modelled from step times where the sweep gives them, else estimated as τ ÷ speedup")
    st.caption(f"Dotted paths (◆, growing with the batch): the sweeps of {', '.join(sorted(sweep_path['variant'].unique()))} "
               f"({', '.join(sorted(sweep_path['sweep'].unique()))}), one point per {' / '.join(sorted(sweep_path['axis'].unique()))}: "
               f"its best config, against the sweep's own baseline at the same batch; {how}. See the "
               "[Sweeps](sweeps) page.")

# --- what each variant needs --------------------------------------------------------------------
placed = {result.variant for result in results}
unplaced = [variant for variant, tau in zip(comparison["variant"], comparison["tokens_per_step"], strict=True)
            if variant != baseline and pd.notna(tau) and variant not in placed]
for variant in unplaced:
    st.markdown(f"**{variant}**: no break-even figure: {compare.STREAMS_UNKNOWN}.")
if not results:
    if not unplaced:
        st.info("No speculative variant with an accept length in this selection. Ingest the server logs of the "
                "speculative runs (same `--phase`/`--variant` as their benchmark) so accept length can be read from them.")
    st.stop()
step_text = ("measured in the baseline's profiler trace" if step_source == compare.CYCLE_MEASURED
             else step_source.removeprefix("estimate: ").replace("tok/s", "the baseline's tok/s"))
st.markdown(f"Baseline **{baseline}**: one decode step ≈ **{MS.text(step_ms)}** ({step_text}).")
for result in results:
    st.markdown(summary.break_even_sentence(result))
if loads := compare.other_loads(comparison, results, baseline):
    st.warning("Not like-for-like:\n" + "\n".join(f"- {load}" for load in loads), icon=":material/warning:")
if traced:
    st.caption(f":material/check: r is **measured**: cycle time from the profiler traces of {', '.join(r.variant for r in traced)} "
               "(per rank the median complete cycle; the slowest rank sets the pace). The cycle model's estimate is in the table "
               "for comparison.")
else:
    st.caption(":material/info: r is an **estimate** from the cycle model (cycle ≈ tokens/step × requests decoding together "
               "÷ tok/s): no profiler trace "
               "was ingested for these variants. Ingest a trace (`specdash ingest TRACE_DIR --phase P --variant V`) and r "
               "comes from the measured cycle instead.")

where, needs_table = frames.break_even_tables(results)
where_export, needs_export = frames.break_even_exports(results)
st.markdown("**Where each drafter is now**")
ui.table(where)
ui.export_buttons(where_export, "break-even-now")
st.markdown("**What it would need to break even** (S = 1)")
ui.table(needs_table)
ui.export_buttons(needs_export, "break-even-needs")
points_box = sections.section(f"Points of the plane ({len(points)})", Keys.section_plane_points)
if points_box.open:  # the chart above shows them; the table only when asked for
    with points_box:
        ui.table(frames.plane_points_table(points))
        ui.export_buttons(points.drop(columns=["label"], errors="ignore"), "break-even-points")
