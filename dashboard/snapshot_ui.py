"""Time travel on a team's lake: a picker of the store's past snapshots, read by the rest of the page's rerun."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.analysis import history as snapshots
from dashboard.analysis.definitions import COUNT
from dashboard.state import AS_OF

NOW = ""  # the picker's value for the store as it is now: left out of the URL


def as_of_picker() -> int | None:
    """On a lake, a "Store as of" picker; the snapshot picked is what this rerun's readers read (None: now, and
    always on a DuckDB file, which keeps no history)."""
    history = queries.lake_history()
    if history.empty:
        return None
    past = snapshots.past_snapshots(history)
    newest = history.iloc[0]
    labels = {NOW: f"now · {snapshots.snapshot_label(newest)}",
              **{str(row["snapshot_id"]): snapshots.snapshot_label(row) for _, row in past.iterrows()}}
    asked = AS_OF.url_value()
    newest_asked = asked == str(newest["snapshot_id"]) and asked != AS_OF.remembered()
    if newest_asked:  # a link to the snapshot that is still the newest (a decision nothing came after): now
        st.query_params.pop(AS_OF.url)
        st.session_state[AS_OF.key] = NOW
    AS_OF.seed_value(list(labels), NOW)
    older = snapshots.unreadable_count(history)
    st.selectbox(
        "Store as of", list(labels), key=AS_OF.key, format_func=labels.__getitem__,
        help="A team store (DuckLake) keeps every version: each ingest, decision or relabel made one snapshot, named "
             "here by who made it and what it changed. Pick one to see this page as it was then."
             + (f" {COUNT.text(older)} older snapshot(s) predate the store's last schema migration and cannot be read "
                "by this version." if older else ""))
    AS_OF.publish()
    picked = st.session_state[AS_OF.key]
    if newest_asked:
        st.caption(f"The link's snapshot #{newest['snapshot_id']} is the store's newest: nothing has changed since.")
    if picked == NOW:
        return None
    snapshot = int(picked)
    queries.read_as_of(snapshot)
    later = int((history["snapshot_id"] > snapshot).sum())
    when = pd.Timestamp(past.loc[past["snapshot_id"] == snapshot, "snapshot_time"].iloc[0])
    st.info(f"**The store as it was at snapshot #{snapshot}** ({when:%Y-%m-%d %H:%M:%S} UTC): the {COUNT.text(later)} "
            "later change(s) are not shown. Only this page reads the past: its links open the other pages on the "
            "store as it is now.", icon=":material/history:")
    return snapshot
