"""Benchmark 7 — a directory of many small files: what the store adds per file.

Input: ``generate`` below, ``FILES`` small files in one folder (scaled by ``--scale``): copies of the demo's benchmark
JSON (a session with runs: the store re-derives run windows and trace links after it) and of its
``bench_speculative.py`` sweep (sweep points only: nothing derived from them), each copy made unique by trailing
newlines so that none is skipped as already ingested.

Measured, interleaved, each in its own process:

* ``specdash ingest FOLDER --db fresh.duckdb``: every file in one call;
* the reference: the same files detected and parsed in one process, no store (what reading them costs at least).

The ratio is the store's share per file: opening, migrating and closing the store, the transaction, the
derived tables (run windows and trace links, after a file with sessions). Target: at most 10× the parse alone.
Before consecutive loads shared a writer and a load the links never read skipped them (e1bc69b), the same 400
files took 39.2 s, about 22× the parse alone; after, 15.3 s (one A/B on this machine, in the same sitting).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from bench.harness import (
    PYTHON,
    ROOT,
    SPECDASH,
    Row,
    Section,
    checked,
    log,
    median,
    run_child,
    scratch_dir,
    spread,
)

FILES = 400
TARGET_RATIO = 10.0
TEMPLATES = (
    ROOT / "data" / "demo" / "phase-0" / "k2-drafter" / "bench.json",
    ROOT / "data" / "demo" / "phase-0" / "k2-drafter" / "bench_speculative.jsonl",
)
PARSE_ONLY = """
import sys
from pathlib import Path
from ingest.formats import ParseOptions
from ingest.registry import detect
for path in sorted(Path(sys.argv[1]).iterdir()):
    fmt = detect(path)
    parsed = (fmt.stream or fmt.parse)(path, ParseOptions())
    for _ in parsed.batches or ():
        pass
"""


def generate(folder: Path, files: int) -> None:
    """``files`` copies of the templates, in turn, into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = [template.read_text(encoding="utf-8") for template in TEMPLATES]
    for index in range(files):
        template = TEMPLATES[index % len(TEMPLATES)]
        text = texts[index % len(TEMPLATES)].rstrip("\n") + "\n" * (1 + index // len(TEMPLATES))
        (folder / f"{index:05d}-{template.name}").write_text(text, encoding="utf-8")


def run(scale: float, repeats: int) -> Section:
    files = max(20, int(FILES * scale))
    folder = scratch_dir("files-input") / "runs"  # small enough to write each time (cached_input keeps single files)
    generate(folder, files)
    scratch = scratch_dir("files")
    ingest_s, parse_s = [], []
    for attempt in range(repeats):
        log(f"files {attempt + 1}/{repeats}: specdash ingest of {files} files, parse only")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        ingest_s.append(checked(run_child([SPECDASH, "ingest", folder, "--db", scratch / "store.duckdb"]),
                                "specdash ingest (small files)").wall_s)
        parse_s.append(checked(run_child([PYTHON, "-c", PARSE_ONLY, folder]), "parse-only reference").wall_s)
    ratio = median(ingest_s) / median(parse_s)
    per_file_ms = [1000 * (i - p) / files for i, p in zip(ingest_s, parse_s, strict=True)]
    rows = [
        Row(f"ingest of {files} small files, one call (s)", f"{median(ingest_s):.2f}", spread(ingest_s),
            f"{median(parse_s):.2f} (parse only)", f"{ratio:.2f}×", f"≤ {TARGET_RATIO:g}× parse only", ratio <= TARGET_RATIO),
        Row("… the store's time per file (ms)", f"{median(per_file_ms):.1f}", spread(per_file_ms), "", "", "", None),
    ]
    notes = [
        f"input: {files} files, copies of {', '.join(t.relative_to(ROOT).as_posix() for t in TEMPLATES)} in turn "
        "(made unique by trailing newlines)",
        "both in their own process, interpreter start included; the store's time per file = (ingest − parse) ÷ files",
    ]
    return Section("7. A directory of small files — ingest vs parse alone", rows, notes)
