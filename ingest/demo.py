"""Build the demo store from ``data/demo/<phase>/<variant>/``, as a user would ingest their files."""
from __future__ import annotations

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
    store.set_meta(db_path, "demo", "true")
    if not any(report.failed for report in reports):
        record_phase0_decision(db_path)
    return reports


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


def record_phase0_decision(db_path: Path) -> str:
    """The verdict the demo story reached, recorded as a user would, evidence frozen from the demo sessions."""
    from dashboard import data, evidence  # the dashboard's evidence code, importable without Streamlit
    from ingest.decisions import record_decision

    sessions = data.sessions(db_path, ["phase-0"])["session_id"].tolist()
    return record_decision(
        db_path, title="K2 drafter as-is", verdict="rejected", phase="phase-0", session_ids=sessions,
        evidence=evidence.compute_evidence(db_path, sessions), note_md=PHASE0_NOTE,
        created_at=datetime(2026, 2, 10, 16, 30),
    )
