"""The reference page of the ``pages`` benchmark: the least a Streamlit page on the store can do.

One query (measured runs joined to their sessions: variant, tok/s), a title, one metric, one
dataframe and one plotly scatter, on the store named by ``SPECDASH_DB`` opened read-only.
Served by ``bench_pages.py`` with the flags ``specdash serve`` gives Streamlit, so the two
differ only in what the page itself does. Deliberately uncached: it reads the store on every
load, as a page showing current data must at the least (the dashboard's warm loads also read
the store's change id each time).
"""
from __future__ import annotations

import os

import duckdb
import plotly.graph_objects as go
import streamlit as st

QUERY = """
SELECT s.variant, r.session_id, r.run_index, r.output_tokens, r.tok_per_s
FROM bench_runs r JOIN sessions s USING (session_id)
WHERE NOT r.is_warmup AND r.tok_per_s IS NOT NULL
ORDER BY s.variant, r.session_id, r.run_index
"""

# The dashboard's page config: the same layout width, so the chart and table are drawn at the same size.
st.set_page_config(page_title="minimal", layout="wide")
st.title("Minimal page")
with duckdb.connect(os.environ["SPECDASH_DB"], read_only=True) as con:
    runs = con.execute(QUERY).df()
st.metric("Median decode throughput (tok/s)", f"{runs['tok_per_s'].median():,.1f}")
st.dataframe(runs, hide_index=True)
figure = go.Figure()
for variant, points in runs.groupby("variant"):
    figure.add_trace(go.Scatter(x=points["output_tokens"], y=points["tok_per_s"], mode="markers", name=str(variant)))
figure.update_layout(xaxis_title="output tokens", yaxis_title="tok/s")
st.plotly_chart(figure)
