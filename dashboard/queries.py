"""Cached access to ``dashboard.analysis.data`` (and evidence checks) for the pages.

Every cached call is keyed by the store's change id (bumped by each ingest and
each recorded decision), so new data shows after a rerun without restarting the
app. Nothing here holds a connection: ``dashboard.analysis.data`` opens and closes one per call.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import pandas as pd
import streamlit as st

from dashboard.analysis import data, evidence, palette, rawlog
from dashboard.state import Keys
from ingest.storage.location import LAKE_PREFIX, LakeStore, StoreRef, as_store
from ingest.storage.store import resolve_db_path

P = ParamSpec("P")
R = TypeVar("R")


def db_path() -> str:
    return str(resolve_db_path(None))


def store_ref() -> StoreRef:
    """The store a page writes to (an upload, a decision, a relabel): a file's path, or a lake. ``Path(db_path())``
    would name a local file called after a lake's URL, and the write would land there."""
    return as_store(db_path())


def read_as_of(snapshot: int | None) -> None:
    """This rerun's readers read a lake as it was at ``snapshot`` (None: as it is now). app.py resets it before
    every page, so only the page that sets it reads the past (the Run page's time travel)."""
    st.session_state[Keys.as_of] = snapshot


def reader_store() -> str:
    """The store this rerun's readers read: the store, or a past snapshot of its lake (``read_as_of``)."""
    snapshot = st.session_state.get(Keys.as_of)
    store = as_store(db_path())
    return str(store.at(snapshot)) if snapshot is not None and isinstance(store, LakeStore) else db_path()


def on_disk(path: str) -> tuple[tuple[int, int, int, int] | None, ...]:
    """What the file system says of the store and its write-ahead log: (inode, size, mtime, ctime in ns) each, None
    for a missing file. Every committed write changes one of them (the log grows, or a checkpoint rewrites the
    store and drops the log), so an unchanged signature means an unchanged store, without opening it. A lake's
    catalog may be a database server: its newest snapshot number stands for it (one query, ~10 ms)."""
    if path.startswith(LAKE_PREFIX):
        snapshot = data.lake_snapshot(path)
        return (None if snapshot is None else (snapshot, 0, 0, 0),)
    found: list[tuple[int, int, int, int] | None] = []
    for file in (path, f"{path}.wal"):
        try:
            stat = os.stat(file)
        except OSError:
            found.append(None)
            continue
        found.append((stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
    return tuple(found)


@st.cache_data(show_spinner=False, max_entries=8)
def _store_state(db: str, signature: tuple[tuple[int, int, int, int] | None, ...]) -> dict[str, Any]:
    # ``signature`` (on_disk) is the key: a rerun on an unchanged store opens no connection (a DuckDB open is ~30 ms).
    return data.store_state(db)


def store_state() -> dict[str, Any]:
    """Read once per rerun (by the page's store guard): it carries the change id the caches key on."""
    state = _store_state(db_path(), on_disk(db_path()))
    st.session_state[Keys.change_id] = (db_path(), state["last_change"])
    forget_older_changes((db_path(), state["last_change"]))
    return state


_latest_change: list[tuple[str, str | None]] = []  # the newest (db, change id) any session has seen


def forget_older_changes(seen: tuple[str, str | None]) -> None:
    """Drop cached results of earlier change ids: no rerun asks for them again, and at 50,000 runs they are large."""
    if _latest_change == [seen]:
        return
    if _latest_change:
        for cached in (_cached, _evidence, _checks, _figure):
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
def _cached(
    name: str, _reader: Callable[..., Any], db: str, change_id: str | None,
    args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...],
) -> Any:
    # ``_reader`` is not hashed (leading underscore): ``name`` stands for it in the key.
    return _reader(db, *args, **dict(kwargs))


def cached(reader: Callable[Concatenate[str, P], R]) -> Callable[P, R]:
    """``reader`` without its first argument (the store), cached until the store changes.

    One cache for every reader, so a new change id drops them all at once (``forget_older_changes``).
    """
    name = f"{reader.__module__}.{reader.__qualname__}"

    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        frozen_args = tuple(_frozen(a) for a in args)
        frozen_kwargs = tuple(sorted((k, _frozen(v)) for k, v in kwargs.items()))
        result: R = _cached(name, reader, reader_store(), change_id(), frozen_args, frozen_kwargs)
        return result

    read.__name__, read.__qualname__, read.__doc__ = reader.__name__, reader.__qualname__, reader.__doc__
    return read


def fingerprint(value: Any) -> str | None:
    """A digest of everything in ``value`` (frames whole, not sampled as st.cache_* hashes large ones), or None
    when it cannot be pickled. Equal digests mean equal inputs; equal inputs pickled differently only miss."""
    try:
        return hashlib.blake2b(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).hexdigest()
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


@st.cache_resource(show_spinner=False, max_entries=64)
def _figure(name: str, key: str, _builder: Callable[..., Any], _args: tuple[Any, ...], _kwargs: dict[str, Any]) -> Any:
    # ``name`` and ``key`` (the inputs' fingerprint) are the cache key; the builder and its inputs are not hashed.
    return _builder(*_args, **_kwargs)


def figure(builder: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``builder(*args, **kwargs)`` (a pure chart builder), built once per distinct input and shared by every rerun
    and session that draws the same data: plotly spends most of a page's script time validating figures.

    A resource, not a copy (st.cache_data would unpickle, which validates the figure again): callers only draw
    it (st.plotly_chart reads it); a builder that changes another's figure is cached as one builder.
    """
    key = fingerprint((args, sorted(kwargs.items())))
    if key is None:
        return builder(*args, **kwargs)
    built: R = _figure(f"{builder.__module__}.{builder.__qualname__}", key, builder, args, dict(kwargs))
    return built


def loader(reader: Callable[Concatenate[str, P], R], *args: P.args, **kwargs: P.kwargs) -> Callable[[], R]:
    """``reader(db, ...)`` to call later, from any thread (a download): uncached, holding only its arguments."""
    return functools.partial(reader, db_path(), *args, **kwargs)


# The pages' readers: ``dashboard.analysis.data``'s functions, same names and arguments, without the store.
phases = cached(data.phases)
variants = cached(data.variants)
throughput_phases = cached(data.throughput_phases)
speculative_variants = cached(data.speculative_variants)
variant_summary = cached(data.variant_summary)
variant_sources = cached(data.variant_sources)
session_summary = cached(data.session_summary)
runs = cached(data.runs)
accept_length = cached(data.accept_length)
configs_by_variant = cached(data.configs_by_variant)
measured_cycles = cached(data.measured_cycles)
phase_overview = cached(data.phase_overview)
sessions = cached(data.sessions)
session_runs = cached(data.session_runs)
session_logs = cached(data.session_logs)
log_windows = cached(data.log_windows)
bench_record = cached(data.bench_record)
decode_series = cached(data.decode_series)
prefill_events = cached(data.prefill_events)
session_config = cached(data.session_config)
variant_config = cached(data.variant_config)
decisions = cached(data.decisions)
sources = cached(data.sources)
label_changes = cached(data.label_changes)
has_traces = cached(data.has_traces)
trace_overview = cached(data.trace_overview)
cycle_composition = cached(data.cycle_composition)
cycle_distribution = cached(data.cycle_distribution)
rank_breakdown = cached(data.rank_breakdown)
top_kernels = cached(data.top_kernels)
session_positions = cached(data.session_positions)
variant_origins = cached(data.variant_origins)
variant_order = cached(data.variant_order)
lake_history = cached(data.lake_history)


def variant_colors() -> palette.VariantColors:
    """The store's one variant → colour mapping, for every chart a page draws and every export it offers."""
    return palette.VariantColors(tuple(variant_order()))


def session_sources(session_id: str) -> pd.DataFrame:
    """Every throughput source of one session (``data.variant_sources`` narrowed to it)."""
    return variant_sources([], [], [session_id])


@st.cache_data(show_spinner=False, max_entries=64)
def _evidence(db: str, change_id: str | None, session_ids: tuple[str, ...], baseline: str | None, metric: str) -> dict[str, Any]:
    return evidence.compute_evidence(as_store(db), list(session_ids), baseline, metric)


def compute_evidence(session_ids: list[str], baseline: str | None, metric: str) -> dict[str, Any]:
    return _evidence(db_path(), change_id(), tuple(sorted(session_ids)), baseline, metric)


@st.cache_data(show_spinner=False, max_entries=16)
def _checks(db: str, change_id: str | None) -> dict[str, evidence.Check]:
    table = data.decisions(db)
    return {row["decision_id"]: evidence.check_decision(as_store(db), row) for _, row in table.iterrows()}


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
