"""Cached access to ``dashboard.data`` (and evidence checks) for the pages.

Every cached call is keyed by the store's change id (bumped by each ingest and
each recorded decision), so new data shows after a rerun without restarting the
app. Nothing here holds a connection: ``dashboard.data`` opens and closes one per call.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import data, evidence, rawlog
from dashboard.state import Keys
from ingest.store import resolve_db_path


def db_path() -> str:
    return str(resolve_db_path(None))


def store_state() -> dict[str, Any]:
    """Read once per rerun (by the page's store guard): it carries the change id the caches key on."""
    state = data.store_state(db_path())
    st.session_state[Keys.change_id] = (db_path(), state["last_change"])
    forget_older_changes((db_path(), state["last_change"]))
    return state


_latest_change: list[tuple[str, str | None]] = []  # the newest (db, change id) any session has seen


def forget_older_changes(seen: tuple[str, str | None]) -> None:
    """Drop cached results of earlier change ids: no rerun asks for them again, and at 50,000 runs they are large."""
    if _latest_change == [seen]:
        return
    if _latest_change:
        for cached in (_cached, _evidence, _checks):
            cached.clear()
    _latest_change[:] = [seen]


def change_id() -> str | None:
    """The change id read by this rerun's store guard (re-read if the page did not run one)."""
    remembered = st.session_state.get(Keys.change_id)
    if remembered is None or remembered[0] != db_path():
        return store_state()["last_change"]
    return remembered[1]


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(name: str, db: str, change_id: str | None, args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...]) -> Any:
    return getattr(data, name)(db, *args, **dict(kwargs))


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """``data.<name>(db, *args, **kwargs)``, cached until the store changes."""
    frozen_args = tuple(_frozen(a) for a in args)
    frozen_kwargs = tuple(sorted((k, _frozen(v)) for k, v in kwargs.items()))
    return _cached(name, db_path(), change_id(), frozen_args, frozen_kwargs)


def loader(name: str, *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """``data.<name>(db, ...)`` to call later, from any thread (a download): uncached, holding only its arguments."""
    return functools.partial(getattr(data, name), db_path(), *args, **kwargs)


def phases() -> list[str]:
    return call("phases")


def variants(phase_list: list[str]) -> list[str]:
    return call("variants", phase_list)


def speculative_variants() -> dict[str, bool]:
    return call("speculative_variants")


def variant_summary(phase_list: list[str], variant_list: list[str], by_phase: bool = False) -> pd.DataFrame:
    return call("variant_summary", phase_list, variant_list, by_phase=by_phase)


def session_summary(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("session_summary", phase_list, variant_list)


def runs(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("runs", phase_list, variant_list)


def accept_length(phase_list: list[str], variant_list: list[str], by: str = "variant") -> pd.DataFrame:
    return call("accept_length", phase_list, variant_list, by=by)


def configs_by_variant(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("configs_by_variant", phase_list, variant_list)


def measured_cycles(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("measured_cycles", phase_list, variant_list)


def phase_overview() -> pd.DataFrame:
    return call("phase_overview")


def sessions(phase_list: list[str] | None = None, variant_list: list[str] | None = None) -> pd.DataFrame:
    return call("sessions", phase_list or [], variant_list or [])


def session_runs(session_id: str) -> pd.DataFrame:
    return call("session_runs", session_id)


def session_logs(session_id: str) -> pd.DataFrame:
    return call("session_logs", session_id)


def log_windows(session_id: str) -> pd.DataFrame:
    return call("log_windows", session_id)


def bench_record(session_id: str) -> pd.DataFrame:
    return call("bench_record", session_id)


def session_sources(session_id: str) -> pd.DataFrame:
    return call("variant_sources", [], [], [session_id])


def decode_series(log_keys: list[str], start: Any = None, end: Any = None) -> pd.DataFrame:
    return call("decode_series", log_keys, start, end)


def prefill_events(log_keys: list[str], start: Any = None, end: Any = None) -> pd.DataFrame:
    return call("prefill_events", log_keys, start, end)


def session_config(session_id: str) -> pd.DataFrame:
    return call("session_config", session_id)


def variant_config(variant: str, phase: str | None) -> pd.DataFrame:
    return call("variant_config", variant, phase)


def decisions() -> pd.DataFrame:
    return call("decisions")


def sources() -> pd.DataFrame:
    return call("sources")


@st.cache_data(show_spinner=False, max_entries=64)
def _evidence(db: str, change_id: str | None, session_ids: tuple[str, ...], baseline: str | None, metric: str) -> dict[str, Any]:
    return evidence.compute_evidence(Path(db), list(session_ids), baseline, metric)


def compute_evidence(session_ids: list[str], baseline: str | None, metric: str) -> dict[str, Any]:
    return _evidence(db_path(), change_id(), tuple(sorted(session_ids)), baseline, metric)


@st.cache_data(show_spinner=False, max_entries=16)
def _checks(db: str, change_id: str | None) -> dict[str, evidence.Check]:
    table = data.decisions(db)
    return {row["decision_id"]: evidence.check_decision(Path(db), row) for _, row in table.iterrows()}


def decision_checks() -> dict[str, evidence.Check]:
    """Each decision's staleness: its frozen evidence against a fresh computation."""
    return _checks(db_path(), change_id())


@st.cache_data(show_spinner=False, max_entries=32)
def _raw_window(path: str, size: int | None, first: int, last: int, on_disk: tuple[float, int] | None) -> rawlog.RawWindow:
    return rawlog.read_window(path, size, first, last)


def raw_window(path: str, size: int | None, first: int, last: int) -> rawlog.RawWindow:
    """Raw lines of a window, re-read when the file on disk changes (its mtime and size are part of the key)."""
    try:
        stat = Path(path).stat()
        on_disk: tuple[float, int] | None = (stat.st_mtime, stat.st_size)
    except OSError:
        on_disk = None
    return _raw_window(path, None if size is None else int(size), int(first), int(last), on_disk)


def has_traces() -> bool:
    return call("has_traces")


def trace_overview(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("trace_overview", phase_list, variant_list)


def variant_sources(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("variant_sources", phase_list, variant_list)


def cycle_composition(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("cycle_composition", phase_list, variant_list)


def cycle_distribution(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("cycle_distribution", phase_list, variant_list)


def rank_breakdown(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("rank_breakdown", phase_list, variant_list)


def top_kernels(phase_list: list[str], variant_list: list[str]) -> pd.DataFrame:
    return call("top_kernels", phase_list, variant_list)
