"""Build the demo store from ``data/demo/<phase>/<variant>/``, as a user would ingest their files.

Each phase ends with the decision the team took, recorded as a user would record it: evidence
frozen from that phase's sessions (``dashboard.analysis.data.sessions``), a note, a fixed date. The decisions
(title, verdict, date, note) live in ``data/demo_decisions.toml``, as the figures live in ``data/demo``: Phase 0's
is the seed's verdict; Phases 1 and 2 and their decisions are illustrative (data/README.md). Building the demo
again into the same store changes nothing: its files are already ingested (same sha256), its decisions recorded.
"""
from __future__ import annotations

import tomllib
import warnings
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ingest.pipeline import FileReport, ingest_paths
from ingest.storage import store
from ingest.storage.location import StoreRef

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEMO_DIR = DATA_DIR / "demo"
DECISIONS_FILE = DATA_DIR / "demo_decisions.toml"  # each phase's decision: title, verdict, date, note


def build_demo_store(db_path: StoreRef, demo_dir: Path = DEMO_DIR) -> list[FileReport]:
    """Ingest each ``<phase>/<variant>`` folder with those labels and mark the store as demo data."""
    if not demo_dir.is_dir():
        raise FileNotFoundError(f"demo data not found at {demo_dir}: run `python data/make_demo.py`")
    reports: list[FileReport] = []
    for phase_dir in sorted(p for p in demo_dir.iterdir() if p.is_dir()):
        for variant_dir in sorted(p for p in phase_dir.iterdir() if p.is_dir()):
            reports += ingest_paths([variant_dir], db_path, phase=phase_dir.name, variant=variant_dir.name)
    drafters = demo_dir.parent / "drafters"  # the two illustrative drafter checkpoints (data/make_demo_drafters.py)
    if drafters.is_dir():
        reports += ingest_paths([drafters], db_path)
    store.set_meta(db_path, "demo", "true")
    store.set_meta(db_path, "start_phase", "phase-0")  # the pages open where the seed's story starts
    if not any(report.failed for report in reports):
        record_demo_decisions(db_path, {p.name for p in demo_dir.iterdir() if p.is_dir()})
    return reports


@dataclass(frozen=True)
class PhaseDecision:
    phase: str
    title: str
    verdict: str
    note_md: str
    created_at: datetime


def demo_decisions(path: Path = DECISIONS_FILE) -> tuple[PhaseDecision, ...]:
    """The demo's decisions, in phase order, as ``data/demo_decisions.toml`` holds them."""
    with path.open("rb") as file:
        entries = tomllib.load(file)["decision"]
    return tuple(PhaseDecision(**entry) for entry in entries)


def record_demo_decisions(db_path: StoreRef, phases: set[str]) -> list[str]:
    """Each demo phase's decision, in phase order; returns the ids of those recorded now.

    A decision the store already holds (same phase and title: an earlier ``specdash demo``) is not recorded
    again, so building the demo into an existing store leaves it as it was.
    """
    from dashboard.analysis import data

    held = set(data.decisions(db_path)[["phase", "title"]].itertuples(index=False, name=None))
    recorded = []
    for decision in demo_decisions():
        if decision.phase not in phases:  # a demo folder without that phase: nothing to decide, nothing to warn about
            continue
        if (decision.phase, decision.title) in held:  # recorded by an earlier build of this store
            continue
        decision_id = record_phase_decision(db_path, decision)
        if decision_id is not None:
            recorded.append(decision_id)
    return recorded


def record_phase_decision(db_path: StoreRef, decision: PhaseDecision) -> str | None:
    """Record ``decision`` with evidence frozen from its phase's sessions, as ``specdash decide --phase`` would.

    A phase with no sessions (a dashboard that only makes sessions of benchmark JSON, and a phase of
    server logs and bench_serving records) gets no decision and a warning: ``record_decision``
    refuses an empty session list, and ``compute_evidence`` with none would read every session in the store.
    """
    from dashboard.analysis import data, evidence
    from ingest.storage.decisions import record_decision

    phase_sessions = data.sessions(db_path, [decision.phase])
    # The sessions whose figures decided: profiler traces explain a cycle, their numbers are no session's tok/s.
    sessions = phase_sessions[phase_sessions["origin"] != "trace_set"]["session_id"].tolist()
    if not sessions:
        warnings.warn(f"demo: {decision.phase} has no sessions, so its decision {decision.title!r} was not recorded",
                      stacklevel=2)
        return None
    return record_decision(
        db_path, title=decision.title, verdict=decision.verdict, phase=decision.phase, session_ids=sessions,
        evidence=evidence.compute_evidence(db_path, sessions), note_md=decision.note_md,
        created_at=decision.created_at,
    )
