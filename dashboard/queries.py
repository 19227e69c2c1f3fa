"""Cached access to ``dashboard.data`` for the pages.

Every cached call is keyed by the store's change id (bumped by each ingest), so
new data shows after a rerun without restarting the app. Nothing here holds a
connection: ``dashboard.data`` opens and closes one per call.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard import data
from ingest.store import resolve_db_path


def db_path() -> str:
    return str(resolve_db_path(None))


def store_state() -> dict[str, Any]:
    """Read on every rerun (one tiny query): it carries the change id the caches key on."""
    return data.store_state(db_path())


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(name: str, db: str, change_id: str | None, args: tuple[Any, ...]) -> Any:
    return getattr(data, name)(db, *args)


def call(name: str, *args: Any) -> Any:
    """``data.<name>(db, *args)``, cached until the store changes."""
    frozen = tuple(tuple(a) if isinstance(a, list) else a for a in args)
    return _cached(name, db_path(), store_state()["last_change"], frozen)


def phases() -> list[str]:
    return call("phases")


def variants(phase_list: list[str]) -> list[str]:
    return call("variants", phase_list)


def speculative_variants() -> dict[str, bool]:
    return call("speculative_variants")


def variant_summary(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("variant_summary", phase_list, variant_list)


def runs(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("runs", phase_list, variant_list)


def accept_by_variant(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("accept_by_variant", phase_list, variant_list)


def configs_by_variant(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("configs_by_variant", phase_list, variant_list)


def sessions() -> pd.DataFrame:
    return call("sessions")


def session_runs(session_id: str) -> pd.DataFrame:
    return call("session_runs", session_id)


def session_logs(session_id: str) -> pd.DataFrame:
    return call("session_logs", session_id)


def decode_series(source_ids: list[str], start: Any = None, end: Any = None) -> pd.DataFrame:
    return call("decode_series", source_ids, start, end)


def session_config(session_id: str) -> pd.DataFrame:
    return call("session_config", session_id)
