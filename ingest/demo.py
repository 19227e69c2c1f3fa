"""Build the demo store from ``data/demo/<phase>/<variant>/``, as a user would ingest their files."""
from __future__ import annotations

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
    return reports
