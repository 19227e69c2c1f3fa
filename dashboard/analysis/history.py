"""A lake's past versions (DuckLake snapshots) as the pages offer them: which can be read, and how each is named.

Every write to a lake commits one snapshot, with its author (``user@host``) and a message saying what it changed
(``ingest.storage.store.describe_commit``). The Run page reads the store as of one of them; a decision links to
the snapshot that recorded it, so its evidence can be opened as it was.
"""
from __future__ import annotations

import re

import pandas as pd

MESSAGE_SHOWN = 90  # characters of a commit message in a picker's label
DECISION_MESSAGE = re.compile(r"^decision (?P<decision_id>\w+):")
# A path of more than two parts in a message, shown by its last two: the folder names the variant or phase, and a
# picker's label has room for little more.
LONG_PATH = re.compile(r"(?:[^\s/]*/)+(?P<tail>[^\s/]+/[^\s/]+)")


def past_snapshots(history: pd.DataFrame) -> pd.DataFrame:
    """The snapshots before the newest that this specdash can read (same tables and views as now), newest first.
    ``history`` is ``data.lake_history``'s frame."""
    return history.iloc[1:][history["same_schema"].iloc[1:].astype(bool)]


def unreadable_count(history: pd.DataFrame) -> int:
    """Snapshots written before the store's last migration: their tables or views are not today's."""
    return int((~history["same_schema"].astype(bool)).sum())


def snapshot_label(row: pd.Series) -> str:
    """``#12 · 2026-12-07 20:01:09 UTC · alice@gpu3 · ingest …/k2-drafter/bench.json (bench_json)``."""
    when = f"{pd.Timestamp(row['snapshot_time']):%Y-%m-%d %H:%M:%S} UTC"
    parts = [f"#{int(row['snapshot_id'])}", when]
    if isinstance(row["author"], str) and row["author"]:
        parts.append(row["author"])
    message = row["commit_message"] if isinstance(row["commit_message"], str) and row["commit_message"] else "(no message)"
    message = LONG_PATH.sub(lambda found: f"…/{found['tail']}", message)
    parts.append(message if len(message) <= MESSAGE_SHOWN else message[:MESSAGE_SHOWN - 1] + "…")
    return " · ".join(parts)


def decision_snapshot(history: pd.DataFrame, decision_id: str) -> int | None:
    """The snapshot that recorded ``decision_id`` (its commit message names it), None when none does: a DuckDB
    file, or a decision recorded before writers named their commits."""
    if history.empty:
        return None
    named = history["commit_message"].astype("string").str.extract(DECISION_MESSAGE)["decision_id"]
    found = history.loc[named == decision_id, "snapshot_id"]
    return None if found.empty else int(found.iloc[0])
