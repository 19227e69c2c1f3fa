"""The decision ledger's writer: a verdict, its note, and the evidence numbers frozen when it was made.

The evidence (means, CIs, deltas, accept lengths of the evidence sessions) is
computed by ``dashboard.analysis.evidence`` (importable without Streamlit, so the CLI can
call it too) and stored here as canonical JSON with its hash. Recomputing the
evidence later and comparing hashes tells whether it has changed since (the
decision is then *stale*). Floats are rounded to 9 significant digits before
hashing, so float noise between two identical computations never counts as a change.

``ingest/storage/store.py`` stays the only module that opens a writable connection:
this module goes through ``store.writer``.
"""
from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb

from ingest.errors import DecisionError
from ingest.storage import store
from ingest.storage.location import StoreRef

VERDICTS = ("accepted", "rejected", "inconclusive")
SIGNIFICANT_DIGITS = 9


class InvalidDecision(DecisionError):
    """A decision is missing something it needs; nothing was written."""

    title = "Decision not recorded"


def normalized(value: Any) -> Any:
    """The value with floats rounded (NaN → None) and tuples as lists: what is stored and hashed."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, dict):
        return {str(key): normalized(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalized(item) for item in value]
    return value


def canonical_json(evidence: dict[str, Any]) -> str:
    return json.dumps(normalized(evidence), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def evidence_hash(evidence: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(evidence).encode("utf-8")).hexdigest()


def validate(db_path: StoreRef, title: str, verdict: str, session_ids: Sequence[str]) -> None:
    if not title.strip():
        raise InvalidDecision(db_path, "the decision has no title", key="title", hint="say what was decided, e.g. 'K2 drafter as-is'")
    if verdict not in VERDICTS:
        raise InvalidDecision(db_path, f"unknown verdict {verdict!r}" if verdict else "no verdict", key="verdict",
                              hint=f"pick one of: {', '.join(VERDICTS)}")
    if not session_ids:
        raise InvalidDecision(
            db_path, "no evidence sessions", key="sessions",
            hint="name the benchmark sessions the decision rests on (`specdash decide --session ID`, or --phase)",
        )


def record_decision(
    db_path: StoreRef,
    *,
    title: str,
    verdict: str,
    session_ids: Sequence[str],
    evidence: dict[str, Any],
    phase: str | None = None,
    note_md: str = "",
    created_at: datetime | None = None,
) -> str:
    """Write one decision with its frozen evidence; returns its id."""
    validate(db_path, title, verdict, session_ids)
    decision_id = uuid.uuid4().hex[:12]
    row = [decision_id, created_at or store.utc_now(), title.strip(), phase or None, verdict, note_md,
           json.dumps(sorted(session_ids)), canonical_json(evidence), evidence_hash(evidence)]
    store.retried_on_conflict(db_path, lambda con: _insert(con, row))
    return decision_id


def _insert(con: duckdb.DuckDBPyConnection, row: list[Any]) -> None:
    with store.transaction(con, f"decision {row[0]}: {row[2]}"):
        con.execute(
            """
            INSERT INTO decisions (decision_id, created_at, title, phase, verdict, note_md, session_ids,
                                   evidence, evidence_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            row,
        )
        store.touch_last_change(con)
