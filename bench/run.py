"""Run specdash's speed benchmarks and append the results to bench/RESULTS.md.

    python bench/run.py                      # all eight, the issue's sizes
    python bench/run.py --scale 0.1          # a quick run: a tenth of every input
    python bench/run.py --only log,trace     # some of them
    python bench/run.py --only drafter       # the 2 GB drafter checkpoint inspection
    python bench/run.py --only acceptance    # 1 M per-request records: ingest vs json.loads, the Acceptance page
    python bench/run.py --only pages         # every dashboard page vs a minimal Streamlit page, demo store (≈8 min)
    python bench/run.py --only files         # a directory of 400 small files: ingest vs parsing them alone
    python bench/run.py --only lake          # every page on a DuckLake/PostgreSQL store vs the DuckDB file (≈12 min)
    SPECDASH_BENCH_SCALE=0.1 make bench      # the same knob from the environment

Not part of ``make test``: pytest's testpaths is ``tests``. Generated inputs are
cached in ``$SPECDASH_BENCH_DIR`` (default /tmp/specdash-bench), keyed by the
generator's source, and never committed.
"""
from __future__ import annotations

import argparse
import compileall
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    MIN_REPEATS,
    Section,
    append_results,
    bench_dir,
    free_disk_gb,
    log,
    run_header,
)

BENCHMARKS = ("log", "trace", "dashboard", "drafter", "acceptance", "pages", "files", "lake")
DISK_NEEDED_GB = 4.0  # 1 GB log + 0.1 GB log + trace + stores (+ 0.66 GB of requests and their stores), with room to spare


def compile_project() -> None:
    """Byte-compile specdash's own modules once, as a regular install does. ``pip install -e`` does
    not, and where PYTHONDONTWRITEBYTECODE is set (the machines we bench on set it) Python never
    writes them: every ``specdash`` process timed here would first compile the 37 modules a log
    ingest imports (0.08 s a run, measured)."""
    for package in ("ingest", "dashboard"):
        compileall.compile_dir(ROOT / package, quiet=1)


def run_one(name: str, scale: float, repeats: int) -> Section:
    if name == "log":
        from bench import bench_log

        return bench_log.run(scale, repeats)
    if name == "trace":
        from bench import bench_trace

        return bench_trace.run(scale, repeats)
    if name == "drafter":
        from bench import bench_drafter

        return bench_drafter.run(scale, repeats)
    if name == "acceptance":
        from bench import bench_acceptance

        return bench_acceptance.run(scale, repeats)
    if name == "pages":
        from bench import bench_pages

        return bench_pages.run(scale, repeats)
    if name == "files":
        from bench import bench_files

        return bench_files.run(scale, repeats)
    if name == "lake":
        from bench import bench_lake

        return bench_lake.run(scale, repeats)
    from bench import bench_dashboard

    return bench_dashboard.run(scale, repeats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="specdash speed benchmarks")
    parser.add_argument("--scale", type=float, default=float(os.environ.get("SPECDASH_BENCH_SCALE", "1")),
                        help="fraction of the issue's input sizes (default $SPECDASH_BENCH_SCALE or 1)")
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("SPECDASH_BENCH_REPEATS", str(MIN_REPEATS))),
                        help=f"runs per figure, median reported (at least {MIN_REPEATS})")
    parser.add_argument("--only", default=",".join(BENCHMARKS), help=f"comma-separated subset of {', '.join(BENCHMARKS)}")
    parser.add_argument("--no-record", action="store_true", help="print the tables, do not append to bench/RESULTS.md")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = set(chosen) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmark(s) {sorted(unknown)}; choose from {', '.join(BENCHMARKS)}")
    if args.repeats < MIN_REPEATS:
        parser.error(f"--repeats must be at least {MIN_REPEATS} (medians of fewer runs are noise here)")
    free = free_disk_gb(bench_dir())
    if free < DISK_NEEDED_GB * max(args.scale, 0.1):
        print(f"only {free:.1f} GB free under {bench_dir()}: set SPECDASH_BENCH_DIR to a roomier place", file=sys.stderr)
        return 1
    command = " ".join(shlex.quote(part) for part in ["python", "bench/run.py", *(argv if argv is not None else sys.argv[1:])])
    if os.environ.get("MAKELEVEL"):
        command = f"make bench ({command})"
    if os.environ.get("SPECDASH_BENCH_SCALE"):
        command = f"SPECDASH_BENCH_SCALE={os.environ['SPECDASH_BENCH_SCALE']} {command}"
    compile_project()
    started = time.perf_counter()
    sections: list[Section] = []
    for name in chosen:
        began = time.perf_counter()
        try:
            section = run_one(name, args.scale, args.repeats)
        except Exception as error:  # one broken benchmark must not lose the others' results
            section = Section(f"{name}: failed")
            section.notes.append(f"{type(error).__name__}: {str(error)[-2000:]}")
        section.notes.append(f"this benchmark took {(time.perf_counter() - began) / 60:.1f} min")
        print(section.markdown(), flush=True)
        sections.append(section)
    header = run_header(command, args.scale, args.repeats, time.perf_counter() - started)
    if not args.no_record:
        append_results(header, sections)
        log(f"appended to {Path('bench/RESULTS.md')}")
    return 0 if all(not section.title.endswith("failed") for section in sections) else 1


if __name__ == "__main__":
    sys.exit(main())
