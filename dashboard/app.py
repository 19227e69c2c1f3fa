"""specdash dashboard entrypoint: page config, shared sidebar, routing. Pages live in views/."""
from __future__ import annotations

import streamlit as st

from dashboard import memory, queries
from ingest.storage.store import shared_reads

memory.cap_arenas()
st.set_page_config(page_title="specdash", page_icon=":material/speed:", layout="wide")

pages = {
    "Decide": [
        st.Page("views/compare.py", title="Compare", icon=":material/leaderboard:", url_path="compare", default=True),
        st.Page("views/breakeven.py", title="Break-even", icon=":material/balance:", url_path="breakeven"),
        st.Page("views/sweeps.py", title="Sweeps", icon=":material/ssid_chart:", url_path="sweeps"),
        st.Page("views/drafters.py", title="Drafters", icon=":material/key:", url_path="drafters"),
        st.Page("views/breakdown.py", title="Breakdown", icon=":material/stacked_bar_chart:", url_path="breakdown"),
        st.Page("views/acceptance.py", title="Acceptance", icon=":material/target:", url_path="acceptance"),
        st.Page("views/run.py", title="Run", icon=":material/search:", url_path="run"),
        st.Page("views/phases.py", title="Phases", icon=":material/timeline:", url_path="phases"),
        st.Page("views/decisions.py", title="Decisions", icon=":material/gavel:", url_path="decisions"),
    ],
    "Data": [
        st.Page("views/ingest.py", title="Ingest", icon=":material/upload_file:", url_path="ingest"),
    ],
}
navigation = st.navigation(pages)

with st.sidebar:
    st.markdown("**specdash** — speculative decoding results")
    st.caption(f"Store: `{queries.db_path()}`")
    if st.button("Refresh data", icon=":material/refresh:", help="Re-read the store (new ingests show after this)"):
        st.cache_data.clear()
        st.rerun()
    st.caption("Every view's selection is in the page URL: copy it to share this exact view.")

queries.read_as_of(None)  # only a page that asks reads a past snapshot
try:
    with shared_reads():  # the page's reads share one connection to the store, closed when it is done
        navigation.run()
finally:  # also after st.stop() and page switches
    memory.give_back()
