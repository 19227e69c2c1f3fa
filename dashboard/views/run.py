"""Run: one session of any evidence — its runs or figures, its server-log window and raw lines, its config, its files."""
from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import acceptance_charts, charts, queries, sections, snapshot_ui, ui
from dashboard.analysis import (
    acceptance,
    compare,
    definitions,
    frames,
    rawlog,
    sampling,
)
from dashboard.analysis.definitions import ACCEPT, COUNT, SHARE
from dashboard.state import (
    ACCEPTANCE_VARIANTS,
    BASELINE,
    DIFF_ONLY,
    LOG_SEARCH,
    PHASES,
    RUN,
    SESSION,
    VARIANTS,
    Keys,
    carried_params,
)

WHOLE_SESSION = "all"
WINDOW_MARGIN = pd.Timedelta(seconds=5)
RAW_LINES_BEFORE_SCROLL = 12
POSITION_THRESHOLD = 0.5  # the Acceptance page's default conditional-rate threshold
# What the server log says per run (frames.run_log_table's figures), under the store's names.
LOG_EXPORT = ["run_index", "is_warmup", "started_at", "ended_at", "tokens_per_step", "accepted_drafts_per_step",
              "log_gen_throughput", "decode_lines"]

st.title("Run drill-down")
store = ui.require_store()
ui.demo_note(store)

# --- controls -----------------------------------------------------------------------------------
as_of = snapshot_ui.as_of_picker()  # a team store's past version, read by every query below
sessions = queries.sessions()
if sessions.empty and as_of is not None:
    st.info(f"At snapshot #{as_of} the store held no session yet: pick a later one.")
    st.stop()
if sessions.empty:
    ui.lacking(store, "none of them is a session (a benchmark, a server lifetime, a bench record or a trace set)",
               "specdash ingest server.log bench_serving.jsonl --phase PHASE")
ORIGINS = {"benchmark": "benchmark", "server_lifetime": "server lifetime", "bench_record": "bench record",
           "trace_set": "profiler traces"}


def session_label(row: pd.Series) -> str:
    when = "" if pd.isna(row["started_at"]) else f" · {pd.Timestamp(row['started_at']):%Y-%m-%d %H:%M}"
    what = f"{row['n_runs']} runs" if row["origin"] == "benchmark" else ORIGINS[row["origin"]]
    return f"{row['variant']} · {row['phase'] or 'no phase'}{when} · {what}"


labels = {row["session_id"]: session_label(row) for _, row in sessions.iterrows()}
SESSION.seed_value(list(labels), sessions["session_id"].iloc[0])
top = st.columns([4, 2, 2])
top[0].selectbox("Session", list(labels), key=SESSION.key, format_func=labels.__getitem__)
session_id: str = st.session_state[SESSION.key]
session = sessions[sessions["session_id"] == session_id].iloc[0]
runs = queries.session_runs(session_id)
measured = runs[~runs["is_warmup"]]

run_options = [WHOLE_SESSION, *[str(i) for i in measured["run_index"]]]
short_runs = {str(r.run_index) for r in measured.itertuples() if r.hit_max_tokens is False}
run_labels = {o: "whole session" if o == WHOLE_SESSION else f"run {o}" + (" (stopped early)" if o in short_runs else "")
              for o in run_options}
RUN.seed_value(run_options, WHOLE_SESSION)
# Widget callbacks live as long as the browser session: none of them is defined in this page, whose
# globals (10,000 sessions at scale) they would keep alive with them.
top[1].selectbox("Run", run_options, key=RUN.key, format_func=run_labels.__getitem__)
selected_run = None if st.session_state[RUN.key] == WHOLE_SESSION else int(st.session_state[RUN.key])

variant_options = sorted(set(sessions["variant"]))
BASELINE.seed_value(variant_options, compare.default_baseline(variant_options, queries.speculative_variants()))
top[2].selectbox("Baseline (config diff)", variant_options, key=BASELINE.key, placeholder="pick a baseline",
                 help="The variant whose server config this session's is diffed against.")
for param in (SESSION, RUN, BASELINE):
    param.publish()
back, breakdown = st.columns(2)
back.page_link("views/compare.py", label="← Compare", query_params=carried_params())
breakdown.page_link("views/breakdown.py", label=f"Where {session['variant']}'s cycle time goes",
                    icon=":material/stacked_bar_chart:",
                    query_params={**carried_params(),
                                  VARIANTS.url: list(dict.fromkeys([session["variant"], st.session_state[BASELINE.key]])),
                                  **({PHASES.url: [session["phase"]]} if session["phase"] else {})})

if session["origin"] != "benchmark":
    st.subheader(f"{ORIGINS[session['origin']].capitalize()} · {session['variant']} · {session['phase'] or 'no phase'}")
    linked = (f" · linked to its server log by {session['link_method']}"
              if session["origin"] in ("bench_record", "trace_set") and pd.notna(session["link_method"]) else "")
    st.caption(f"Variant from {session['variant_from']}{linked} · file `{Path(session['path']).name}` ({session['kind']}) · "
               f"session id `{session_id}` (what `specdash ingest --link-to` takes)")
    figures = queries.session_sources(session_id)
    if not figures.empty:
        ui.table(frames.sources_table(figures, figures.iloc[:1]), lines=2)
        st.caption(definitions.HEADLINE_ORDER)
        ui.export_buttons(frames.sources_export(figures), f"throughput-sources-{session_id}")
    record = queries.bench_record(session_id)
    if not record.empty:
        ui.table(frames.record_table(record.iloc[0]))
        ui.export_buttons(record, f"bench-record-{session_id}")
    if session["origin"] == "trace_set":
        traces = queries.trace_overview([session["phase"]] if session["phase"] else [], [session["variant"]])
        files_export, classes_export = frames.trace_exports(traces)
        ui.table(frames.trace_files_table(traces), lines=2)
        ui.export_buttons(files_export, f"trace-files-{session_id}")
        ui.table(frames.kernel_classes_table(traces), lines=2)
        ui.export_buttons(classes_export, f"trace-kernel-classes-{session_id}")
        st.page_link("views/breakdown.py", label="Open these traces on Breakdown", icon=":material/stacked_bar_chart:",
                     query_params={**carried_params(), VARIANTS.url: [session["variant"]],
                                   **({PHASES.url: [session["phase"]]} if session["phase"] else {})})

def raw_lines(window: rawlog.RawWindow, search: str) -> None:
    """A window's raw lines that match ``search`` (all without one), numbered, with how many match."""
    hits = rawlog.matching(window.lines, search)
    st.caption(f"{COUNT.text(len(hits))} of {COUNT.text(len(window.lines))} lines"
               + (f" match “{search}”" if search else "")
               + (f" · capped at {COUNT.text(rawlog.MAX_LINES)} lines" if window.truncated else ""))
    # Wrapped, so a long stats line is read whole; a short window takes only the room it needs.
    st.code(rawlog.as_text(hits) or "(no matching lines)", language=None, wrap_lines=True,
            height=360 if len(hits) > RAW_LINES_BEFORE_SCROLL else "content")


# --- runs ---------------------------------------------------------------------------------------
def highlight(row: pd.Series) -> list[str]:
    if row["warm-up"]:
        return ["color: #9E9E9E"] * len(row)
    if selected_run is not None and row["run"] == str(selected_run):
        return ["background-color: #FFF8E1; font-weight: 600"] * len(row)
    return [""] * len(row)


if session["origin"] == "benchmark":
    st.subheader(f"Runs · {session['variant']} · {session['phase'] or 'no phase'}")
    st.caption(f"Session id `{session_id}` · model `{session['model'] or '?'}` · endpoint `{session['endpoint'] or '?'}` · max_tokens {definitions.EMPTY if pd.isna(session['max_tokens']) else session['max_tokens']} · "
               f"{int(runs['is_warmup'].sum())} warm-up runs (grey, excluded from every figure) · click a row to select a run")
    pick_run_from_table = functools.partial(  # a row click selects its run (warm-ups cannot be selected)
        ui.pick_row_value, Keys.run_table, RUN.key, [None if w else str(i) for i, w in zip(runs["run_index"], runs["is_warmup"], strict=True)]
    )
    ui.table(frames.session_runs_table(runs), key=Keys.run_table, on_select=pick_run_from_table,
             style=lambda shown: shown.style.apply(highlight, axis=1))
    for _, run in measured[sampling.is_short(measured)].iterrows():
        st.warning(f"⚠ Run {run['run_index']} stopped at {run['output_tokens']} of {run['max_tokens']} tokens: short runs skew tok/s.")
    ui.export_buttons(runs, f"runs-{session_id}")

# --- server log window --------------------------------------------------------------------------
st.subheader("Server log")
logs = queries.session_logs(session_id)
windows = queries.log_windows(session_id)
if logs.empty and session["origin"] == "trace_set":
    st.caption("Profiler traces carry no server log lines.")
elif logs.empty:
    st.info("No server log linked to this session. Ingest its log in the same `specdash ingest` call as the benchmark, "
            f"or with the same labels: `specdash ingest server.log --phase {session['phase'] or 'PHASE'} --variant {session['variant']}`.")
else:
    if session["origin"] == "benchmark":
        st.caption(f"Linked by {', '.join(sorted(set(logs['link_method'])))} · {definitions.TOKENS_PER_STEP}")
    else:
        st.caption(f"The whole server lifetime ({', '.join(sorted(set(logs['link_method'])))}): every decode line, "
                   "accept length weighted by #running-req.")
    keys = [f"{r.source_id}:{'' if pd.isna(r.segment) else int(r.segment)}" for r in logs.itertuples()]
    start, end = runs["started_at"].min(), runs["ended_at"].max()
    timed = pd.notna(start) and pd.notna(end)
    series = queries.decode_series(keys, start - WINDOW_MARGIN, end + WINDOW_MARGIN) if timed else queries.decode_series(keys)
    prefill = queries.prefill_events(keys, start - WINDOW_MARGIN, end + WINDOW_MARGIN) if timed else queries.prefill_events(keys)
    if series.empty:
        st.info("The linked log has no timestamped decode lines in this session's time window.")
    else:
        st.plotly_chart(queries.figure(charts.decode_window, series, runs, prefill, selected_run), width="stretch")
        if int(series["lines"].sum()) > len(series):
            st.caption(f"{COUNT.text(series['lines'].sum())} decode lines averaged into {COUNT.text(len(series))} points (in SQL).")
    if not runs.empty:  # what the chart above draws, as figures per run: a click away
        per_run_box = sections.section(f"Inside each run's time window: the log's figures per run ({COUNT.text(len(runs))} runs)",
                                       Keys.section_run_log)
        if per_run_box.open:
            with per_run_box:
                ui.table(frames.run_log_table(runs))
                ui.export_buttons(runs[[c for c in LOG_EXPORT if c in runs]], f"runs-in-log-{session_id}")

    # raw lines of the window, read back from the file
    mine = windows if selected_run is None else windows[(windows["run_index"] == selected_run) & ~windows["is_warmup"]]
    LOG_SEARCH.seed_text("")
    st.text_input("Search the raw lines", key=LOG_SEARCH.key, placeholder="e.g. Prefill, accept len, error",
                  help="Case-insensitive substring; the search is part of the URL.")
    LOG_SEARCH.publish()
    if mine.empty:
        st.caption("No decode lines inside this window, so there is no line range to show.")
    search = st.session_state[LOG_SEARCH.key]
    for index, ((path, size), group) in enumerate(mine.groupby(["path", "size_bytes"], dropna=False)):
        window = queries.raw_window(path, None if pd.isna(size) else int(size),
                                    int(group["first_line_no"].min()), int(group["last_line_no"].max()))
        what = f"run {selected_run}" if selected_run is not None else "the session's runs"
        heading = (f"**Raw lines {COUNT.text(window.first)}–{COUNT.text(window.last)}** of `{Path(path).name}` ({what}, "
                   f"with {rawlog.CONTEXT_LINES} lines of context)")
        if window.problem:
            st.markdown(heading)
            st.warning(window.problem)
            continue
        # The lines only when asked for (highlighting a few hundred lines is the page's slowest drawing); a search
        # opens them, so a link with one shows its matches.
        lines_box = sections.section(heading, f"{Keys.section_raw_lines}_{index}", expanded=bool(search))
        if lines_box.open:
            with lines_box:
                raw_lines(window, search)

# --- acceptance per draft position: vLLM's per-position lines inside this window ---------------------
positions = queries.session_positions(session_id, selected_run)
position_curve = acceptance.session_curve(positions, session["variant"])
if not position_curve.empty:
    st.subheader("Acceptance per draft position")
    inside = (f"run {selected_run}'s window" if selected_run is not None
              else "the measured runs' windows" if session["origin"] == "benchmark" else "the whole server lifetime")
    lines = positions[["source_id", "line_no"]].drop_duplicates()
    st.caption(f"From {COUNT.text(len(lines))} vLLM `SpecDecoding metrics` line(s) of the linked log inside {inside}, "
               f"pooled by drafts: τ = 1 + Σ P(≥ k accepted) = **{ACCEPT.text(position_curve['accept_length'].iloc[0])}**. "
               f"✕ = the first position whose P(k | k−1) is below {SHARE.text(POSITION_THRESHOLD)}. {acceptance.CONDITIONAL}")
    marks = {(v, o): acceptance.first_below(c, POSITION_THRESHOLD)
             for (v, o), c in position_curve.groupby(["variant", "origin"])}
    st.plotly_chart(queries.figure(acceptance_charts.position_figure, position_curve, POSITION_THRESHOLD, marks, queries.variant_colors()),
                    width="stretch")
    ui.table(acceptance.positions_table(position_curve).drop(columns=["variant", "acceptance source"]))
    ui.export_buttons(position_curve, f"acceptance-per-position-{session_id}")
    st.page_link("views/acceptance.py", label=f"{session['variant']} on the Acceptance page (every source, per request, "
                 "per dataset, how many tokens to draft)", icon=":material/target:",
                 query_params={ACCEPTANCE_VARIANTS.url: session["variant"]})
elif selected_run is not None and not queries.session_positions(session_id).empty:
    st.caption(f"No vLLM per-position acceptance line inside run {selected_run}'s window (the whole session has some: "
               "pick “whole session” above).")

# --- config -------------------------------------------------------------------------------------
st.subheader("Server config")
config = queries.session_config(session_id)
baseline = st.session_state[BASELINE.key]
NO_CONFIG = {
    "benchmark": "No `server_args` line in this session's log, so its config is unknown.",
    "server_lifetime": "No `server_args` line in this server lifetime, so its config is unknown: keep the server's start-up in the log.",
    "bench_record": "This record carries no `server_info` (bench_serving writes it since late 2025) and no server log of the "
                    "same ingest call was found, so the config is unknown.",
    "trace_set": "No server lifetime is linked to these traces, and traces carry no server config. Ingest the log of "
                 "the server that wrote them (its `Profiling starts … profile id` line links them), or name it: "
                 "`specdash ingest TRACE_FILES --replace --link-to SESSION_ID`.",
}
if config.empty:
    st.info(NO_CONFIG[session["origin"]])
else:
    args = compare.config_args(config.iloc[0])
    base = queries.variant_config(baseline, session["phase"]) if baseline else pd.DataFrame()
    DIFF_ONLY.seed_bool(True)
    st.toggle("Differences only", key=DIFF_ONLY.key, help="Hide settings equal to the baseline's.")
    DIFF_ONLY.publish()
    diff_only = st.session_state[DIFF_ONLY.key]
    alone = base.empty or baseline == session["variant"]  # nothing to diff against: every setting is listed
    base_args = {} if base.empty else compare.config_args(base.iloc[0])
    if alone:
        table = compare.side_by_side({f"this ({session['variant']})": args}, diff_only=False)
        st.caption("No other variant's config to diff against: pick a different baseline above." if not base.empty or not baseline
                   else f"No config ingested for {baseline}.")
    else:
        table = compare.side_by_side({f"this ({session['variant']})": args, f"baseline ({baseline})": base_args},
                                      diff_only=diff_only)
        st.caption(f"{len(table)} setting(s) {'differ' if diff_only else 'in all'}; kinds: "
                   + "; ".join(f"**{k}** — {v}" for k, v in compare.KIND_EXPLAINED.items() if k in set(table["kind"])))
    key_first = table.assign(_key=~table["setting"].isin(compare.KEY_SETTINGS)).sort_values(["_key", "setting"]).drop(columns="_key")
    # Open by itself when a differing setting makes the comparison not like-for-like (Compare's rule); else its label says what differs.
    kinds = sorted(set(key_first["kind"]))
    differing = diff_only and not alone
    baseline_speculates = bool(base_args.get("speculative_algorithm"))
    unlike = differing and any(compare.breaks_like_for_like(kind, baseline_speculates) for kind in kinds)
    settings_box = sections.section(f"{'Differing settings' if differing else 'Settings'} ({COUNT.text(len(key_first))}): "
                                    f"{', '.join(kinds) or 'none'}" + (" — not like-for-like" if unlike else ""),
                                    Keys.section_config_settings, expanded=unlike)
    if settings_box.open:
        with settings_box:
            ui.table(key_first, lines=2)
            ui.export_buttons(key_first, f"config-{session_id}")
    arguments_box = sections.section("All server arguments (JSON)", Keys.section_server_args)
    if arguments_box.open:
        arguments_box.json(args)

# --- provenance ---------------------------------------------------------------------------------
def on_disk(path: str, size: int | None) -> str:
    file = Path(path)
    if not file.is_file():
        return "gone"
    return "present" if size is None or file.stat().st_size == size else "changed since ingest"


other_logs = logs[logs["source_id"] != session["source_id"]] if not logs.empty else logs
provenance = pd.concat([
    pd.DataFrame([{"role": ORIGINS[session["origin"]], "path": session["path"], "kind": session["kind"], "sha256": session["sha256"],
                   "size_bytes": session["size_bytes"], "ingested_at": session["ingested_at"], "linked by": "—"}]),
    other_logs.assign(role="server log", **{"linked by": other_logs["link_method"]})[
        ["role", "path", "kind", "sha256", "size_bytes", "ingested_at", "linked by"]] if not other_logs.empty else None,
])
provenance.insert(2, "on disk", [on_disk(p, None if pd.isna(s) else int(s)) for p, s in zip(provenance["path"], provenance["size_bytes"], strict=True)])
# Open by itself when a file is gone or changed since ingest: then it says which.
moved = int((provenance["on disk"] != "present").sum())
provenance_box = sections.section(f"Provenance: the {len(provenance)} file(s) behind this session"
                                  + (f" ({moved} not as ingested)" if moved else ""), Keys.section_provenance, expanded=moved > 0)
if provenance_box.open:
    with provenance_box:
        folder, files = frames.provenance_table(provenance)
        st.caption(f"Files under `{folder}`" if folder else "Files (whole paths in the download):")
        ui.table(files, lines=2)
        ui.export_buttons(provenance, f"provenance-{session_id}")
