"""The decision ledger as the CLI uses it: list, show and record decisions, as text.

No Streamlit: ``specdash decide`` calls these, and the Decisions page records through ``record`` too
(with the evidence it previewed), so a decision is recorded one way whichever door it comes through.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dashboard.analysis import data, evidence, summary
from ingest.storage.decisions import InvalidDecision, record_decision
from ingest.storage.location import StoreRef


def link_to(base_url: str | None, decision_id: str) -> str | None:
    return f"{base_url.rstrip('/')}/decisions?decision={decision_id}" if base_url else None


def ledger_lines(db: StoreRef) -> list[str]:
    """One line per decision, newest first, stale ones marked."""
    lines = []
    for _, row in data.decisions(db).iterrows():
        stale = " STALE" if evidence.check_decision(db, row).stale else ""
        lines.append(f"{row['decision_id']}  {str(row['created_at'])[:16]}  {row['verdict']:<12} "
                     f"{row['phase'] or '-':<10} {row['title']}{stale}")
    return lines


def decision_summary(db: StoreRef, decision_id: str, base_url: str | None = None) -> str:
    """An existing decision's Markdown summary, with the reasons if its evidence went stale."""
    ledger = data.decisions(db)
    ledger = ledger[ledger["decision_id"] == decision_id]
    if ledger.empty:
        raise InvalidDecision(db, f"no decision {decision_id!r}", key="decision", hint="`specdash decide --list` shows the ids")
    row = ledger.iloc[0].to_dict()
    check = evidence.check_decision(db, row)
    return summary.decision_markdown(row, evidence.frozen(row), link_to(base_url, decision_id),
                                     check.reasons if check.stale else None)


def record(
    db: StoreRef,
    *,
    title: str,
    verdict: str,
    phase: str | None = None,
    session_ids: Sequence[str] = (),
    variants: Sequence[str] = (),
    baseline: str | None = None,
    metric: str = "tokens_over_time",
    note_md: str = "",
    base_url: str | None = None,
    frozen: dict | None = None,
) -> tuple[str, str]:
    """Freeze the evidence of ``session_ids`` (default: the phase's sessions) and record the decision.

    ``frozen`` is evidence already computed for exactly these sessions (the page's preview, which the
    user read before pressing the button); without it the evidence is computed here.
    Returns (decision id, its Markdown summary).
    """
    sessions = list(session_ids) or (data.sessions(db, [phase], list(variants))["session_id"].tolist() if phase else [])
    if not sessions:
        raise InvalidDecision(db, "no evidence sessions", key="sessions",
                              hint="pass --session ID (see `specdash status`) or --phase PHASE with ingested sessions")
    if frozen is None:
        try:
            frozen = evidence.compute_evidence(db, sessions, baseline, metric)
        except evidence.NoEvidence as error:
            raise InvalidDecision(db, str(error), key="sessions", hint="check the session ids or the phase label") from error
    decision_id = record_decision(db, title=title, verdict=verdict, session_ids=sessions, evidence=frozen,
                                  phase=phase, note_md=note_md)
    row = data.decisions(db).set_index("decision_id").loc[decision_id]
    row = {**row.to_dict(), "decision_id": decision_id, "created_at": pd.Timestamp(row["created_at"])}
    return decision_id, summary.decision_markdown(row, frozen, link_to(base_url, decision_id))
