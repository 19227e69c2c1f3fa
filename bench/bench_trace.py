"""Benchmark 2 — trace breakdown vs Holistic Trace Analysis.

``specdash ingest TRACE.json.gz`` end to end (parse, breakdown, load into a fresh
store) against HTA on the same file in its own directory (``TraceAnalysis`` then
``get_temporal_breakdown``), each in its own process, interleaved. Both processes'
peak RSS come from ``wait4``. HTA runs from ``bench/.venv-hta`` (``bench/bench_env.py``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb

from bench import bench_env, gen_trace
from bench.harness import (
    BENCH,
    MB,
    SPECDASH,
    Row,
    Section,
    cached_input,
    checked,
    log,
    median,
    run_child,
    scratch_dir,
    spread,
)

FULL_BYTES = 500_000_000  # of JSON; the file itself is gzip, as SGLang writes it
TARGET_SPEEDUP = 5.0
TARGET_RSS_SHARE = 0.5


def trace_input(size: int) -> Path:
    """The generated trace, hard-linked under SGLang's file name into a directory of its own (HTA reads directories)."""
    made = cached_input(f"kineto-{size // MB}MB.trace.json.gz", [BENCH / "gen_trace.py"], lambda path: gen_trace.generate(path, size))
    folder = made.parent / made.name.removesuffix(".trace.json.gz")
    linked = folder / gen_trace.FILE_NAME
    if not linked.exists():
        folder.mkdir(exist_ok=True)
        for stale in folder.iterdir():
            stale.unlink()
        os.link(made, linked)
    return linked


def json_size(path: Path) -> int:
    """The uncompressed size, from the gzip trailer (ISIZE, modulo 2^32) checked against the requested size."""
    with open(path, "rb") as stream:
        stream.seek(-4, os.SEEK_END)
        return int.from_bytes(stream.read(4), "little")


def specdash_figures(db: Path) -> dict[str, float]:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT kernels, busy_ms, idle_ms, communication_ms, complete_cycles, median_cycle_ms, verify_comm_share FROM trace_ranks"
        ).fetchone()
    keys = ("kernels", "busy_ms", "idle_ms", "communication_ms", "complete_cycles", "median_cycle_ms", "verify_comm_share")
    return dict(zip(keys, row)) if row else {}


def run(scale: float, repeats: int) -> Section:
    trace = trace_input(int(FULL_BYTES * scale))
    gz_mb = trace.stat().st_size / MB
    raw_bytes = json_size(trace)
    raw_mb = (raw_bytes if raw_bytes > trace.stat().st_size else raw_bytes + (1 << 32)) / MB
    section = Section(f"2. Trace breakdown — `specdash ingest` of a {raw_mb:,.0f} MB Kineto trace ({gz_mb:,.0f} MB gzip) vs HTA")
    try:
        hta_python = bench_env.ensure()
    except bench_env.EnvUnavailable as error:
        hta_python = None
        section.notes.append(f"HTA could not be installed, so there is no reference: {error}")
    scratch = scratch_dir("trace")
    db = scratch / "store.duckdb"
    ours_s, ours_rss, hta_s, hta_rss, hta_load, hta_breakdown = [], [], [], [], [], []
    figures: dict[str, float] = {}
    hta_rows: list[dict[str, float]] = []
    hta_error = ""
    for attempt in range(repeats):
        log(f"trace {attempt + 1}/{repeats}: specdash ingest {raw_mb:,.0f} MB")
        for stale in scratch.glob("store.duckdb*"):
            stale.unlink()
        ours = checked(run_child([SPECDASH, "ingest", trace, "--db", db]), "specdash ingest (trace)")
        ours_s.append(ours.wall_s)
        ours_rss.append(ours.peak_rss_mb)
        if attempt == 0:
            figures = specdash_figures(db)
        if hta_python is None or hta_error:
            continue
        log(f"trace {attempt + 1}/{repeats}: HTA")
        hta = run_child([hta_python, BENCH / "hta_breakdown.py", trace.parent], env={**os.environ, "PYTHONWARNINGS": "ignore"})
        result_line = next((line for line in hta.stdout.splitlines() if line.startswith("HTA_RESULT ")), None)
        if hta.returncode != 0 or result_line is None:
            hta_error = f"HTA failed (exit {hta.returncode}): {(hta.stderr or hta.stdout).strip()[-1500:]}"
            section.notes.append(hta_error)
            continue
        result = json.loads(result_line.removeprefix("HTA_RESULT "))
        hta_s.append(hta.wall_s)
        hta_rss.append(hta.peak_rss_mb)
        hta_load.append(result["load_s"])
        hta_breakdown.append(result["breakdown_s"])
        hta_rows = result["rows"]
    ours_median = median(ours_s)
    rate = [raw_mb / s for s in ours_s]
    section.rows.append(Row("specdash ingest + breakdown, wall (s)", f"{ours_median:.2f}", spread(ours_s), "", "", "", None))
    section.rows.append(Row("… throughput (MB of JSON per s)", f"{median(rate):,.1f}", spread(rate), "", "", "", None))
    if hta_s:
        hta_median = median(hta_s)
        speedup = hta_median / ours_median
        rss_share = max(ours_rss) / max(hta_rss)
        section.rows += [
            Row("speed vs HTA (wall, whole process)", f"{ours_median:.2f} s", spread(ours_s), f"{hta_median:.2f} s ({spread(hta_s)})",
                f"{speedup:.2f}× faster", f"≥ {TARGET_SPEEDUP:.0f}×", speedup >= TARGET_SPEEDUP),
            Row("peak RSS vs HTA (MB, max of runs)", f"{max(ours_rss):,.0f}", spread(ours_rss), f"{max(hta_rss):,.0f} ({spread(hta_rss)})",
                f"{rss_share:.2f}", f"≤ {TARGET_RSS_SHARE}", rss_share <= TARGET_RSS_SHARE),
            Row("HTA inside its process: TraceAnalysis load / temporal breakdown (s)", f"{median(hta_load):.2f} / {median(hta_breakdown):.2f}",
                "", "", "", "", None),
        ]
    else:
        section.rows.append(Row("peak RSS (MB, max of runs)", f"{max(ours_rss):,.0f}", spread(ours_rss), "no HTA result", "", "", None))
    if figures:
        share = figures.get("verify_comm_share")
        section.notes.append(
            f"specdash found {int(figures['kernels']):,} GPU kernels, busy {figures['busy_ms']:,.0f} ms, idle {figures['idle_ms']:,.0f} ms, "
            f"communication {figures['communication_ms']:,.0f} ms, {figures['complete_cycles']} complete cycles, median cycle "
            f"{figures['median_cycle_ms']:.1f} ms, verify communication share {share:.0%}" if share is not None else "specdash: no verify share"
        )
    if hta_rows:
        row = hta_rows[0]
        section.notes.append(
            f"HTA temporal breakdown (rank {row.get('rank')}): idle {row.get('idle_time(us)', 0) / 1000:,.0f} ms, compute "
            f"{row.get('compute_time(us)', 0) / 1000:,.0f} ms, non-compute {row.get('non_compute_time(us)', 0) / 1000:,.0f} ms "
            f"(HTA counts NCCL as non-compute)"
        )
    section.notes.append(
        "input: `bench/gen_trace.py` — one rank of an EAGLE-3 decode profile of a 61-layer TP8 target: CUDA-graph replays "
        "(one correlation id per replay), 2 NCCL all-reduces per layer, shared-expert GEMMs overlapping on a second stream, "
        "memcpys on a third, python_function stacks (eagle_worker.py draft/verify/draft_extend) and step[...] annotations, "
        "cpu_op, cuda_runtime and ac2g flow events; gzip level 6, in the page cache"
    )
    return section
