"""specdash dashboard entrypoint: page config, shared sidebar, routing. Pages live in views/."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `streamlit run dashboard/app.py` puts only dashboard/ on the path
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard import queries  # noqa: E402

st.set_page_config(page_title="specdash", page_icon=":material/speed:", layout="wide")

pages = [
    st.Page("views/compare.py", title="Compare", icon=":material/leaderboard:", url_path="compare", default=True),
    st.Page("views/run.py", title="Run", icon=":material/search:", url_path="run"),
]
navigation = st.navigation(pages)

with st.sidebar:
    st.markdown("**specdash** — speculative decoding results")
    st.caption(f"Store: `{queries.db_path()}`")
    if st.button("Refresh data", icon=":material/refresh:", help="Re-read the store (new ingests show after this)"):
        st.cache_data.clear()
        st.rerun()

navigation.run()
