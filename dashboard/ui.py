"""Layout pieces every page shares: the store guard, the demo note, number formatting."""
from __future__ import annotations

import math
from typing import Any

import streamlit as st

from dashboard import queries
from dashboard.data import NoStore
from ingest.errors import IngestError

INGEST_HINT = "No data yet — ingest some files: `specdash ingest path/to/bench.json path/to/server.log --phase phase-0`, or build the demo store with `specdash demo`."


def require_store() -> dict[str, Any]:
    """The store's state, or guidance and a stop when there is nothing to show (never a traceback)."""
    try:
        state = queries.store_state()
    except NoStore:
        state = {"exists": False}
    except IngestError as error:
        st.warning(f"{error.message}. {error.hint}")
        st.stop()
    if not state.get("exists") or not state.get("sources"):
        st.info(INGEST_HINT)
        st.stop()
    return state


def demo_note(state: dict[str, Any]) -> None:
    if state.get("demo"):
        st.caption(
            ":material/info: **Demo data.** The K2 drafter's runs are the Phase 0 probe as recorded; baseline, "
            "from-scratch and all logs are illustrative (see `data/README.md`)."
        )


def fmt(value: Any, digits: int = 1, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()


def fmt_ci(low: Any, high: Any, digits: int = 1) -> str:
    if low is None or high is None or any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return "n/a (fewer than 2 runs)"
    return f"{low:,.{digits}f} – {high:,.{digits}f}"
