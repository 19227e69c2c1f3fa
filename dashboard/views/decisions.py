"""Decisions: the ledger of verdicts with the evidence frozen when each was made; stale ones flagged; new ones recorded here."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dashboard import charts, queries, report, sections, ui
from dashboard.analysis import (
    compare,
    definitions,
    evidence,
    frames,
    history,
    ledger,
    sampling,
    summary,
)
from dashboard.analysis.data import NO_PHASE
from dashboard.state import (
    AS_OF,
    BASELINE,
    DECISION,
    METRIC,
    PHASES,
    SESSION,
    VARIANTS,
    Keys,
)
from ingest.errors import SpecdashError
from ingest.storage.decisions import VERDICTS

st.title("Decisions")
store = ui.require_store()
ui.demo_note(store)
decisions = queries.decisions()
checks = queries.decision_checks()

# --- the ledger ---------------------------------------------------------------------------------
if st.session_state.get(Keys.decision_created):
    st.success(st.session_state.pop(Keys.decision_created))
if decisions.empty:
    st.info("No decisions recorded yet. Record the first one below (or from a shell: "
            "`specdash decide --phase phase-0 --title '...' --verdict rejected`).")
else:
    ledger_rows = frames.ledger_table(
        decisions, [bool(checks.get(i) and checks[i].stale) for i in decisions["decision_id"]],
        [evidence.headline(json.loads(e)) for e in decisions["evidence"]],
    )
    ids = decisions["decision_id"].tolist()
    DECISION.seed_value(ids, ids[0])

    def pick_from_ledger() -> None:
        rows = st.session_state[Keys.decision_table].selection.rows
        if rows:
            st.session_state[DECISION.key] = ids[rows[0]]

    ui.table(ledger_rows, key=Keys.decision_table, on_select=pick_from_ledger, lines=3)
    ui.export_buttons(ledger_rows.assign(decision_id=ids), "decisions")
    titles = {row["decision_id"]: f"{str(row['created_at'])[:10]} · {row['title']} · {row['verdict']}" for _, row in decisions.iterrows()}
    st.selectbox("Decision", ids, key=DECISION.key, format_func=titles.__getitem__)
    DECISION.publish()

    # --- one decision -------------------------------------------------------------------------------
    row = decisions[decisions["decision_id"] == st.session_state[DECISION.key]].iloc[0].to_dict()
    frozen = evidence.frozen(row)
    check = checks.get(row["decision_id"], evidence.Check(False))
    colors = queries.variant_colors()  # the store's: each variant in the colour it has on every page and in the report
    st.subheader(row["title"])
    st.badge(row["verdict"], color=ui.VERDICT_BADGES.get(row["verdict"], "gray"))
    st.caption(f"Phase: {row['phase'] or definitions.EMPTY} · decided {str(row['created_at'])[:16]} UTC · baseline: "
               f"**{frozen.get('baseline') or 'none'}** · {len(frozen['sessions'])} evidence sessions · "
               f"headline = {compare.METRIC_LABELS.get(frozen.get('metric') or '', '')}")
    if check.stale:
        st.warning("**Stale**: the evidence has changed since this decision was made — " + "; ".join(check.reasons))
    else:
        st.caption("✓ The evidence sessions still give exactly these numbers.")
    if row["note_md"]:
        st.markdown(row["note_md"])
    st.markdown(f"**Numbers frozen when decided:** {evidence.headline(frozen)}")
    comparison, runs, points = evidence.evidence_frames(frozen)
    runs = runs.astype({"is_warmup": bool})  # frozen without runs, the column is empty object: rows, not columns
    blocked = {f["variant"] for f in frozen.get("comparability", []) if not f["like_for_like"]}
    stem = f"decision-{row['decision_id']}"
    ui.comparison_tables(frames.comparison_table(comparison, frozen.get("baseline") is not None, blocked),
                         frames.comparison_exports(comparison, blocked), stem)
    left, right = st.columns([3, 2])
    left.plotly_chart(queries.figure(charts.tok_per_s_points, runs, comparison, compare.METRIC_LABELS.get(frozen.get("metric") or "", ""),
                                     frozen.get("baseline"), clickable=False, colors=colors), width="stretch")
    thinned = sampling.run_points_note(runs)
    if thinned:
        left.caption(thinned)
    if comparison["delta_pct"].notna().any() if "delta_pct" in comparison else False:
        right.plotly_chart(queries.figure(charts.delta_forest, comparison), width="stretch")
    for line in summary.break_even_lines(frozen):
        st.markdown(line)
    if frozen.get("comparability"):
        ui.table(frames.findings_table(frozen["comparability"]), lines=2)
        ui.export_buttons(frames.findings_table(frozen["comparability"]), f"{stem}-comparability")
    recorded_at = history.decision_snapshot(queries.lake_history(), row["decision_id"])
    as_recorded = {} if recorded_at is None else {AS_OF.url: str(recorded_at)}
    st.caption("Evidence sessions" + ("" if recorded_at is None else
               f" (each opens on Run as the store was at snapshot #{recorded_at}, which recorded this decision)") + ":")
    for session in frozen["sessions"]:
        st.page_link("views/run.py", label=f"{session['variant']} · {session['phase'] or 'no phase'} · "
                                           f"{str(session['started_at']).replace('T', ' ')}",
                     icon=":material/search:", query_params={SESSION.url: session["session_id"], **as_recorded})

    link = ui.app_url("decisions", {DECISION.url: row["decision_id"]})
    markdown = summary.decision_markdown(row, frozen, link, check.reasons if check.stale else None)
    share = st.columns([2, 2, 5])
    with share[0]:
        ui.download("Markdown summary", lambda: markdown, f"{stem}.md", "text/markdown",
                    "Verdict, numbers with CIs and definitions, config differences and a link back: paste into a chat or a PR")
    with share[1]:
        ui.download("HTML report", lambda: report.decision_report(row, frozen, link, check.reasons if check.stale else (), colors),
                    f"{stem}.html", "text/html", "One self-contained HTML file (charts included, opens offline)")
    markdown_box = sections.section("Markdown summary (copy)", Keys.section_decision_markdown)
    if markdown_box.open:
        markdown_box.code(markdown, language="markdown", wrap_lines=True)

# --- record a decision --------------------------------------------------------------------------
st.divider()
# The form opens by itself when a link brings a selection to decide on (Compare's "Record a decision from this
# view") or when the ledger is empty; else it waits for a click, and its widgets are not drawn on every visit.
arrived_with_selection = bool(PHASES.url_list() or VARIANTS.url_list())
form_box = sections.section("Record a decision", Keys.section_record_decision,
                            expanded=arrived_with_selection or decisions.empty)
if not form_box.open:
    st.stop()  # the form is the page's last part
with form_box:
    all_sessions = queries.sessions()
    phase_options = queries.phases()
    carried_phase = PHASES.link_value()
    carried_phase = carried_phase[0] if isinstance(carried_phase, list) else carried_phase
    carried_variants = VARIANTS.link_value()
    carried_variants = [carried_variants] if isinstance(carried_variants, str) else carried_variants or []

    def sessions_of(phase: str | None) -> list[str]:
        if not phase:
            mine = all_sessions
        else:
            mine = all_sessions[all_sessions["phase"].isna() if phase == NO_PHASE else all_sessions["phase"] == phase]
        if carried_variants and mine["variant"].isin(carried_variants).any():
            mine = mine[mine["variant"].isin(carried_variants)]
        return mine["session_id"].tolist()

    if Keys.decision_phase not in st.session_state:
        st.session_state[Keys.decision_phase] = carried_phase if carried_phase in phase_options else (phase_options[-1] if phase_options else None)
        st.session_state[Keys.decision_sessions] = sessions_of(st.session_state[Keys.decision_phase])

    def phase_changed() -> None:
        st.session_state[Keys.decision_sessions] = sessions_of(st.session_state[Keys.decision_phase])

    ORIGINS = {"benchmark": "runs", "server_lifetime": "server log", "bench_record": "bench record", "trace_set": "traces"}

    def evidence_label(session: pd.Series) -> str:
        """A short chip: variant · phase · when · what (the chips share one line, so every character counts)."""
        when = "" if pd.isna(session["started_at"]) else f" · {pd.Timestamp(session['started_at']):%m-%d %H:%M}"
        what = f"{session['n_runs']} runs" if session["origin"] == "benchmark" else ORIGINS.get(session["origin"], session["origin"])
        return f"{session['variant']} · {session['phase'] or 'no phase'}{when} · {what}"

    labels = {r["session_id"]: evidence_label(r) for _, r in all_sessions.iterrows()}
    st.columns([1, 3])[0].selectbox("Phase", phase_options, key=Keys.decision_phase, on_change=phase_changed,
                                    help="The phase this decision closes; picks its sessions as evidence.")
    st.multiselect("Evidence sessions", list(labels), key=Keys.decision_sessions, format_func=labels.__getitem__,
                   help="Sessions whose numbers are frozen with the decision: variant · phase · start (MM-DD HH:MM) · what.")
    chosen: list[str] = st.session_state[Keys.decision_sessions]
    chosen_variants = sorted(set(all_sessions[all_sessions["session_id"].isin(chosen)]["variant"]))
    default_base = BASELINE.link_value() if BASELINE.link_value() in chosen_variants else \
        compare.default_baseline(chosen_variants, queries.speculative_variants())
    if st.session_state.get(Keys.decision_baseline) not in chosen_variants:
        st.session_state[Keys.decision_baseline] = default_base
    middle = st.columns([2, 2, 2])
    middle[0].text_input("Title", key=Keys.decision_title, placeholder="e.g. K2 drafter as-is")
    middle[1].radio("Verdict", VERDICTS, key=Keys.decision_verdict, horizontal=True, index=None)
    middle[2].selectbox("Baseline", chosen_variants, key=Keys.decision_baseline)
    st.text_area("Note (Markdown)", key=Keys.decision_note, height=120,
                 placeholder="Why, what it rests on, what happens next. Rendered as Markdown.")
    linked_metric = METRIC.link_value()
    metric = linked_metric if isinstance(linked_metric, str) and linked_metric in compare.METRIC_LABELS else compare.TOKENS_OVER_TIME

    preview = None
    if chosen:
        try:
            preview = queries.compute_evidence(chosen, st.session_state[Keys.decision_baseline], metric)
            st.caption(f"Evidence that will be frozen: {evidence.headline(preview)}")
        except evidence.NoEvidence as error:
            st.warning(f"{error}: pick sessions with measured runs.")
    else:
        st.caption("Pick the evidence sessions.")

    def record() -> None:
        try:
            decision_id, _ = ledger.record(
                queries.store_ref(), title=st.session_state[Keys.decision_title], verdict=st.session_state[Keys.decision_verdict],
                session_ids=chosen, frozen=preview, phase=None if st.session_state[Keys.decision_phase] == NO_PHASE else st.session_state[Keys.decision_phase],
                baseline=st.session_state[Keys.decision_baseline], metric=metric, note_md=st.session_state[Keys.decision_note],
            )
        except SpecdashError as error:  # a missing field (InvalidDecision), or the store stayed busy (StoreBusy)
            st.session_state[Keys.decision_created] = None
            st.session_state[Keys.decision_error] = f"{error.message} — {error.hint}"
            return
        st.session_state[Keys.decision_created] = f"Recorded “{st.session_state[Keys.decision_title].strip()}” with its evidence frozen."
        st.session_state[DECISION.key] = decision_id
        st.session_state[DECISION.memory_key] = None
        st.query_params[DECISION.url] = decision_id
        st.session_state[Keys.decision_title] = ""
        st.session_state[Keys.decision_note] = ""
        st.session_state[Keys.decision_verdict] = None

    st.button("Record decision", type="primary", icon=":material/gavel:", on_click=record, disabled=preview is None)
    if st.session_state.get(Keys.decision_error):
        st.error(st.session_state.pop(Keys.decision_error))
