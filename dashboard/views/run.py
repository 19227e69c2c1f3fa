"""Run: one benchmark session — its runs, its server-log window, its config and where the data came from."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from dashboard.state import SESSION, carried_params

st.title("Run drill-down")
store = ui.require_store()
ui.demo_note(store)

sessions = queries.sessions()
if sessions.empty:
    st.info("No benchmark sessions yet. " + ui.INGEST_HINT)
    st.stop()

labels = {
    row["session_id"]: f"{row['variant']} · {row['phase'] or 'no phase'} · {row['started_at']} · {row['n_runs']} runs"
    for _, row in sessions.iterrows()
}
SESSION.seed_value(list(labels), sessions["session_id"].iloc[0])
st.selectbox("Session", list(labels), key=SESSION.key, format_func=labels.get)
SESSION.publish()
session_id: str = st.session_state[SESSION.key]
session = sessions[sessions["session_id"] == session_id].iloc[0]
st.page_link("views/compare.py", label="← Compare", query_params=carried_params())

# --- runs ---------------------------------------------------------------------------------------
runs = queries.session_runs(session_id)
st.subheader(f"Runs · {session['variant']} · {session['phase'] or 'no phase'}")
st.caption(
    f"Model `{session['model'] or '?'}` · endpoint `{session['endpoint'] or '?'}` · max_tokens {session['max_tokens']} · "
    f"{int(runs['is_warmup'].sum())} warm-up runs (grey, excluded from every figure)"
)


def grey_warmups(row: pd.Series) -> list[str]:
    return ["color: #9E9E9E" if row["is_warmup"] else ""] * len(row)


shown = runs.assign(
    flag=[("stopped early" if hit is False and not warm else "") for hit, warm in zip(runs["hit_max_tokens"], runs["is_warmup"])]
)
st.dataframe(shown.style.apply(grey_warmups, axis=1).format(precision=2), hide_index=True, width="stretch")
for _, run in runs[(~runs["is_warmup"]) & runs["hit_max_tokens"].eq(False)].iterrows():
    st.warning(f"⚠ Run {run['run_index']} stopped at {run['output_tokens']} of {run['max_tokens']} tokens: short runs skew tok/s.")

# --- server log window --------------------------------------------------------------------------
st.subheader("Server log")
logs = queries.session_logs(session_id)
if logs.empty:
    st.info("No server log ingested for this session's variant and phase. Ingest it with "
            f"`specdash ingest server.log --phase {session['phase'] or 'PHASE'} --variant {session['variant']}`.")
else:
    window_start = runs["started_at"].min()
    window_end = runs["ended_at"].max()
    series = queries.decode_series(logs["source_id"].tolist(), window_start, window_end)
    if series.empty:
        series = queries.decode_series(logs["source_id"].tolist())
        st.caption("No decode lines inside the runs' time window; showing the whole log.")
    if series.empty:
        st.info("The log has no timestamped decode lines to plot.")
    else:
        st.plotly_chart(charts.decode_timeseries(series, runs), width="stretch")

# --- config -------------------------------------------------------------------------------------
st.subheader("Server config")
config = queries.session_config(session_id)
if config.empty:
    st.info("No `server_args` line found in this variant's logs.")
else:
    row = config.iloc[0]
    key_fields = ["model_path", "tp_size", "dp_size", "speculative_algorithm", "speculative_draft_model_path",
                  "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"]
    st.dataframe(pd.DataFrame({"setting": key_fields, "value": [str(row[f]) for f in key_fields]}),
                 hide_index=True, width="stretch")
    with st.expander("All server arguments"):
        st.json(json.loads(row["args"]) if row["args"] else {})

# --- provenance ---------------------------------------------------------------------------------
st.subheader("Provenance")
provenance = pd.concat(
    [
        pd.DataFrame([{"kind": "benchmark", "path": session["path"], "sha256": session["sha256"],
                       "ingested_at": session["ingested_at"]}]),
        logs.assign(kind="server log")[["kind", "path", "sha256", "ingested_at"]] if not logs.empty else None,
    ]
)
st.dataframe(provenance, hide_index=True, width="stretch")
