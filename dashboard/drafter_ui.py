"""The Drafters page's cached readers, and the note Compare shows for a variant's drafter."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.analysis import drafters

all_drafters = queries.cached(drafters.drafters)
comparison = queries.cached(drafters.comparison)
coverage = queries.cached(drafters.coverage)
variant_drafter_notes = queries.cached(drafters.variant_drafter_notes_for)


def variant_drafters(configs: pd.DataFrame) -> None:
    """Under Compare: for each variant whose speculative_draft_model_path is an ingested drafter, its verdict
    and how its mapping compares with the reference (nothing when no variant's drafter is ingested)."""
    if configs.empty or "speculative_draft_model_path" not in configs:
        return
    pairs = tuple(sorted({(str(v), str(p)) for v, p in configs[["variant", "speculative_draft_model_path"]].itertuples(index=False)
                          if isinstance(p, str) and p}))
    for note in variant_drafter_notes(pairs):
        st.caption(f":material/key: {note} — see the [Drafters](drafters) page.")
