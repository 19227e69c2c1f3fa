"""Build the demo store from ``data/demo/<phase>/<variant>/``, as a user would ingest their files.

Each phase ends with the decision the team took, recorded as a user would record it: evidence
frozen from that phase's sessions (``dashboard.analysis.data.sessions``), a note, a fixed date. Phase 0's is
the seed's verdict; Phases 1 and 2 and their decisions are illustrative (data/README.md).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ingest import store
from ingest.pipeline import FileReport, ingest_paths

DEMO_DIR = Path(__file__).resolve().parent.parent / "data" / "demo"


def build_demo_store(db_path: Path, demo_dir: Path = DEMO_DIR) -> list[FileReport]:
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


PHASE0_NOTE = """\
Serving Kimi-K2.5 with the public EAGLE-3 drafter trained for **Kimi-K2** (2-step, as-is) is slower than
plain decoding: **51.8 vs 82 tok/s**, 37% below baseline and 13% below our from-scratch drafter.

Why:
- Accept length is **0.58 accepted drafts per step** (SGLang prints `accept len: 1.58`): the drafter's `d2t`
  table disagrees with the K2.5 mapping at 31,748 of 32,000 positions, so its drafts land on the wrong target tokens.
- Each cycle costs about 2.5 baseline steps: the verify step is dominated by a ~30 ms NCCL all-reduce
  (97% of the cycle on 8× PCIe), so it would need 1.50 accepted drafts per step just to break even.

Next (Phase 1): fine-tune the K2 drafter on K2.5 data, or go after the verify step itself.
"""

# The figures below are those data/make_demo.py generates (data/README.md lists them).
PHASE1_NOTE = """\
*Illustrative phase: the seed story ends at Phase 0.*

Fine-tuned on K2.5 data, the K2 drafter now lands its drafts: accept length **2.60 tokens per cycle**
(1.60 of 2 drafts accepted, was 0.58). Single stream (`bench_serving`, max concurrency 1) it beats plain
decoding: **94.9 vs 82.4 tok/s** (+15%).

The gain does not survive batching. Per stream: +11% at 4 concurrent requests (85.7 vs 77.3 tok/s), and at
16 it is **slower than the baseline** (59.6 vs 64.7 tok/s, −8%): the verify pass carries 3 tokens per request
and grows with the batch, a plain decode step barely does. The crossover lies between 4 and 16.

Evidence: server logs and `bench_serving` records only, one record per concurrency, so no spread to test
against; the logs' `gen throughput` lines at 1 running request agree (≈ 95 tok/s).

Accepted for **single-stream** serving; batched traffic keeps speculation off. Next (Phase 2): the verify step.
"""

PHASE2_NOTE = """\
*Illustrative phase: the seed story ends at Phase 0.*

A custom all-reduce for the verify step (one that works on this 8× PCIe box) replaces NCCL there: in the
profiler trace the verify all-reduce takes **≈ 20 ms per cycle instead of ≈ 29 ms** (Phase 0's trace), and
a whole cycle of the fine-tuned drafter takes 21.7 ms. At 2.60 tokens per cycle that is **120.0 vs 82.0 tok/s**
single-stream (+46%, 5 runs each, the interval clear of zero) — what the cycle model predicts (2.60 ÷ 21.7 ms).
Plain decode steps do not verify, so the baseline re-run beside it is unchanged.

Accepted. Still open: Phase 1's concurrency sweep on this build, to see where the crossover moves.
"""

DECISIONS = (
    PhaseDecision("phase-0", "K2 drafter as-is", "rejected", PHASE0_NOTE, datetime(2026, 2, 10, 16, 30)),
    PhaseDecision("phase-1", "Fine-tuned K2 drafter", "accepted", PHASE1_NOTE, datetime(2026, 3, 4, 11, 0)),
    PhaseDecision("phase-2", "Custom all-reduce for verify", "accepted", PHASE2_NOTE, datetime(2026, 3, 17, 16, 0)),
)


def record_demo_decisions(db_path: Path, phases: set[str]) -> list[str]:
    """Each demo phase's decision, in phase order; returns the ids of those recorded."""
    recorded = []
    for decision in DECISIONS:
        if decision.phase not in phases:  # a demo folder without that phase: nothing to decide, nothing to warn about
            continue
        decision_id = record_phase_decision(db_path, decision)
        if decision_id is not None:
            recorded.append(decision_id)
    return recorded


def record_phase_decision(db_path: Path, decision: PhaseDecision) -> str | None:
    """Record ``decision`` with evidence frozen from its phase's sessions, as ``specdash decide --phase`` would.

    A phase with no sessions (a dashboard that only makes sessions of benchmark JSON, and a phase of
    server logs and bench_serving records) gets no decision and a warning: ``record_decision``
    refuses an empty session list, and ``compute_evidence`` with none would read every session in the store.
    """
    from dashboard.analysis import data, evidence
    from ingest.decisions import record_decision

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
