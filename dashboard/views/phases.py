"""Phases: the experiment's timeline (phases, their sessions, headline numbers, decisions) and trends across phases."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui, variant_ui
from dashboard.analysis import compare, frames
from dashboard.analysis.data import NO_PHASE
from dashboard.analysis.definitions import ACCEPT, EMPTY, TOK_S
from dashboard.state import METRIC, PHASES, VARIANTS, carried_params

st.title("Phases")
store = ui.require_store()
ui.demo_note(store)

overview = queries.phase_overview()
if overview.empty:
    ui.lacking(store, "none of them is a session (a benchmark, a server lifetime, a bench record or a trace set)",
               "specdash ingest server.log bench_serving.jsonl --phase PHASE")
phase_order = overview["phase"].tolist()

# --- controls -----------------------------------------------------------------------------------
variant_options = queries.variants([])
VARIANTS.seed_list(variant_options, variant_options)
METRIC.seed_value([compare.TOKENS_OVER_TIME, compare.MEAN_OF_RUNS], compare.TOKENS_OVER_TIME)
left, right = st.columns([3, 2])
left.multiselect("Variants", variant_options, key=VARIANTS.key)
right.radio("Headline tok/s", [compare.TOKENS_OVER_TIME, compare.MEAN_OF_RUNS], key=METRIC.key,
            format_func=compare.METRIC_LABELS.get, horizontal=True)
VARIANTS.publish(every=variant_options)
METRIC.publish()
variants: list[str] = st.session_state[VARIANTS.key]
metric: str = st.session_state[METRIC.key]
variant_ui.origins_note([], variants)

# --- data ---------------------------------------------------------------------------------------
decisions = queries.decisions()
# Evidence without --phase is the timeline's "(no phase)" row: the trends name it the same.
summary = queries.variant_summary([], variants, by_phase=True).fillna({"phase": NO_PHASE}) if variants else pd.DataFrame()
accept = queries.accept_length([], variants, by="phase").fillna({"phase": NO_PHASE}) if variants else pd.DataFrame()
trends = compare.phase_trends(summary, accept, phase_order, metric) if not summary.empty else pd.DataFrame()

# --- timeline -----------------------------------------------------------------------------------
st.plotly_chart(queries.figure(charts.phase_timeline, overview, decisions), width="stretch")


HEADLINE_CHARACTERS = 100  # what three wrapped lines of the column hold; the trends table below has every variant


def headline_numbers(phase: str) -> str:
    if trends.empty:
        return EMPTY
    rows = trends[trends["phase"] == phase]
    items = [f"{r.variant} {TOK_S.text(r.headline)}" + (f" (τ {ACCEPT.number(r.tokens_per_step)})" if pd.notna(r.tokens_per_step) else "")
             for r in rows.itertuples()]
    shown = [item for i, item in enumerate(items) if len(" · ".join(items[: i + 1])) <= HEADLINE_CHARACTERS] or items[:1]
    more = f" · +{len(items) - len(shown)} more (trends below)" if len(shown) < len(items) else ""
    return " · ".join(shown) + more if items else EMPTY


def decided(phase: str) -> str:
    mine = decisions[decisions["phase"].fillna(NO_PHASE) == phase] if not decisions.empty else decisions
    return " · ".join(f"{r.title}: {r.verdict}" for r in mine.itertuples()) or EMPTY


table = frames.phases_table(overview, [decided(p) for p in overview["phase"]], [headline_numbers(p) for p in overview["phase"]])
ui.table(table, lines=3)
st.caption(f"Headline: {compare.METRIC_LABELS[metric]}; τ = accept length (tokens/step, bonus token included).")
ui.export_buttons(overview.drop(columns=["variants", "origins"], errors="ignore").assign(
    decisions=table["decisions"], headline_per_variant=table["headline per variant"]), "phases")
links = st.columns(min(len(phase_order), 6))
for index, phase in enumerate(phase_order):
    if phase != NO_PHASE:
        links[index % len(links)].page_link("views/compare.py", label=f"Compare {phase}", icon=":material/leaderboard:",
                         query_params={**carried_params(METRIC), PHASES.url: phase})

# --- trends -------------------------------------------------------------------------------------
st.subheader("Trends across phases")
if not variants:
    st.info("Pick at least one variant above.")
    st.stop()
if trends.empty:
    st.info("No measured runs for these variants.")
    st.stop()
if len(set(trends["phase"])) < 2:
    st.info("Only one phase has runs of these variants so far: each line becomes a trend once a second phase is ingested "
            "(`specdash ingest DIR --phase phase-1`).")
st.plotly_chart(queries.figure(charts.phase_trends, trends, phase_order, compare.METRIC_LABELS[metric], queries.variant_colors()),
                width="stretch")
ui.table(frames.trends_table(trends), lines=2)
ui.export_buttons(trends, "phase-trends")
