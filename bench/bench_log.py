"""Benchmark 1 — log ingest: ``specdash ingest server.log`` end to end into a fresh store.

References, timed in the same run and interleaved with it: the line-by-line
Python ``re`` parser in ``bench/ref_log_parser.py`` (same fields, no database) and
``grep -c 'Decode batch'`` (reading the file once: the practical I/O limit). Peak
RSS is the ingest process's own (``wait4``), at the full size and at a tenth of it,
to show whether memory grows with the input.

The log reader is compiled by numba on its first use after an install and cached beside the
package (``ingest/parsers/__pycache__``); the cache is cleared once before the timed runs and that
first run is reported on its own, so the medians are of runs as a user has them every day after.
"""
from __future__ import annotations

import json
from pathlib import Path

import duckdb

import ingest.parsers.sglang
from bench import gen_log
from bench.harness import (
    BENCH,
    MB,
    PYTHON,
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

FULL_BYTES = 1_000_000_000
SMALL_BYTES = 100_000_000
TARGET_MB_S = 300.0
TARGET_VS_PYTHON = 4.0
TARGET_RSS_MB = 500.0
SAME_RSS_TOLERANCE = 1.25  # "the same" peak RSS at 10× the input: within 25 %
LIFETIMES = 1_898  # a CI box that restarts the server per run: each lifetime starts with a server_args dump
TARGET_VS_NO_DUMPS = 1.5  # reading the dumps may cost at most half again the rest (3.4× before the fast path)


def log_input(size: int) -> Path:
    return cached_input(f"sglang-server-{size // MB}MB.log", [BENCH / "gen_log.py"], lambda path: gen_log.generate(path, size))


def lifetimes_input(lifetimes: int, dumps: bool) -> Path:
    name = f"sglang-{lifetimes}-lifetimes{'' if dumps else '-no-dumps'}.log"
    return cached_input(name, [BENCH / "gen_log.py"], lambda path: gen_log.generate_lifetimes(path, lifetimes, dumps=dumps))


def lifetimes_rows(scale: float, repeats: int, scratch: Path) -> list[Row]:
    """A log of many short lifetimes, against the same log without its server_args dumps."""
    lifetimes = max(10, int(LIFETIMES * scale))
    with_dumps, without = lifetimes_input(lifetimes, True), lifetimes_input(lifetimes, False)
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for attempt in range(repeats):
        for dumps, path in ((True, with_dumps), (False, without)):
            log(f"log ingest, {lifetimes:,} lifetimes {attempt + 1}/{repeats}: {'with' if dumps else 'without'} dumps")
            for stale in scratch.glob("lifetimes.duckdb*"):
                stale.unlink()
            seconds[dumps].append(checked(run_child([SPECDASH, "ingest", path, "--db", scratch / "lifetimes.duckdb"]), "specdash ingest").wall_s)
    mb, dumps_mb = with_dumps.stat().st_size / MB, (with_dumps.stat().st_size - without.stat().st_size) / MB
    ratio = median(seconds[True]) / median(seconds[False])
    return [
        Row(f"ingest of {lifetimes:,} server lifetimes, {mb:,.0f} MB ({dumps_mb:,.0f} MB of server_args dumps) (s)",
            f"{median(seconds[True]):.2f}", spread(seconds[True]), f"{median(seconds[False]):.2f} without the dumps",
            f"{ratio:.2f}×", f"≤ {TARGET_VS_NO_DUMPS}× without", ratio <= TARGET_VS_NO_DUMPS),
    ]


def clear_compiled_reader() -> int:
    """Remove numba's cached log reader, so the next ingest compiles it as after an install; how many files."""
    cached = list((Path(ingest.parsers.sglang.__file__).parent / "__pycache__").glob("log_kernels.*.nb[ic]"))
    for path in cached:
        path.unlink()
    return len(cached)


def store_rows(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in ("decode_stats", "prefill_stats", "server_configs")}


def run(scale: float, repeats: int) -> Section:
    full_bytes, small_bytes = int(FULL_BYTES * scale), int(SMALL_BYTES * scale)
    full, small = log_input(full_bytes), log_input(small_bytes)
    full_mb, small_mb = full.stat().st_size / MB, small.stat().st_size / MB
    scratch = scratch_dir("log")
    db = scratch / "store.duckdb"
    ingest_s, ingest_rss, small_s, small_rss, python_s, grep_s = [], [], [], [], [], []
    reference_counts: dict[str, object] = {}
    stored: dict[str, int] = {}
    cleared = clear_compiled_reader()
    log(f"log ingest: first use after install ({cleared} cached files of the compiled reader removed), {small_mb:,.0f} MB")
    for stale in scratch.glob("first-use.duckdb*"):
        stale.unlink()
    first_use = checked(run_child([SPECDASH, "ingest", small, "--db", scratch / "first-use.duckdb"]), "specdash ingest (first use)")
    for attempt in range(repeats):
        log(f"log ingest {attempt + 1}/{repeats}: specdash {full_mb:,.0f} MB")
        for stale in scratch.glob("store.duckdb*"):
            stale.unlink()
        run_ = checked(run_child([SPECDASH, "ingest", full, "--db", db]), "specdash ingest")
        ingest_s.append(run_.wall_s)
        ingest_rss.append(run_.peak_rss_mb)
        if attempt == 0:
            stored = store_rows(db)
        log(f"log ingest {attempt + 1}/{repeats}: python reference")
        reference = checked(run_child([PYTHON, BENCH / "ref_log_parser.py", full]), "reference parser")
        python_s.append(reference.wall_s)
        reference_counts = json.loads(reference.stdout)
        grep_s.append(checked(run_child(["grep", "-c", "Decode batch", full]), "grep").wall_s)
        for stale in scratch.glob("store.duckdb*"):
            stale.unlink()
        small_run = checked(run_child([SPECDASH, "ingest", small, "--db", db]), "specdash ingest (small)")
        small_s.append(small_run.wall_s)
        small_rss.append(small_run.peak_rss_mb)
    section = report(full_mb, small_mb, ingest_s, ingest_rss, small_s, small_rss, python_s, grep_s, stored, reference_counts)
    section.rows.append(
        Row(f"first ingest after install, {small_mb:,.0f} MB (s; numba compiles the reader once)", f"{first_use.wall_s:.2f}", "",
            f"{median(small_s):.2f} (every later run)", "", "", None)
    )
    section.rows.append(Row("… its peak RSS (MB)", f"{first_use.peak_rss_mb:,.0f}", "", "", "", "", None))
    section.rows += lifetimes_rows(scale, repeats, scratch)
    return section


def report(
    full_mb: float, small_mb: float, ingest_s: list[float], ingest_rss: list[float], small_s: list[float],
    small_rss: list[float], python_s: list[float], grep_s: list[float], stored: dict[str, int], reference: dict[str, object],
) -> Section:
    rate = [full_mb / s for s in ingest_s]
    small_rate = [small_mb / s for s in small_s]
    python_rate = [full_mb / s for s in python_s]
    grep_rate = [full_mb / s for s in grep_s]
    speed, python_speed, grep_speed = median(rate), median(python_rate), median(grep_rate)
    rss_full, rss_small = max(ingest_rss), max(small_rss)
    growth = rss_full / rss_small
    section = Section(f"1. Log ingest — `specdash ingest` of a {full_mb:,.0f} MB SGLang log into a fresh store")
    section.rows = [
        Row(f"ingest throughput, {full_mb:,.0f} MB (MB/s)", f"{speed:,.1f}", spread(rate), "", "", f"≥ {TARGET_MB_S:.0f}", speed >= TARGET_MB_S),
        Row("… vs Python `re` reference (MB/s)", f"{speed:,.1f}", spread(rate), f"{python_speed:,.1f} ({spread(python_rate)})",
            f"{speed / python_speed:.2f}×", f"≥ {TARGET_VS_PYTHON:.0f}×", speed / python_speed >= TARGET_VS_PYTHON),
        Row("… vs `grep -c 'Decode batch'` (MB/s)", f"{speed:,.1f}", spread(rate), f"{grep_speed:,.0f} ({spread(grep_rate)})",
            f"{speed / grep_speed:.3f}×", "(I/O limit)", None),
        Row(f"ingest wall time, {full_mb:,.0f} MB (s)", f"{median(ingest_s):.2f}", spread(ingest_s), f"{median(python_s):.2f} (Python)", "", "", None),
        Row(f"ingest throughput, {small_mb:,.0f} MB (MB/s)", f"{median(small_rate):,.1f}", spread(small_rate), "", "", "", None),
        Row(f"peak RSS, {full_mb:,.0f} MB input (MB, max of runs)", f"{rss_full:,.0f}", spread(ingest_rss), "", "", f"≤ {TARGET_RSS_MB:.0f}", rss_full <= TARGET_RSS_MB),
        Row(f"peak RSS, {small_mb:,.0f} MB input (MB, max of runs)", f"{rss_small:,.0f}", spread(small_rss), "", "", f"≤ {TARGET_RSS_MB:.0f}", rss_small <= TARGET_RSS_MB),
        Row(f"peak RSS growth {small_mb:,.0f} → {full_mb:,.0f} MB", f"{growth:.2f}×", "", f"{rss_small:,.0f} MB", "", f"≤ {SAME_RSS_TOLERANCE}× (same)", growth <= SAME_RSS_TOLERANCE),
    ]
    section.notes = [
        f"rows stored: {stored.get('decode_stats', 0):,} decode, {stored.get('prefill_stats', 0):,} prefill, "
        f"{stored.get('server_configs', 0)} server configs; the reference found {reference.get('decode_stats', 0):,} decode, "
        f"{reference.get('prefill_stats', 0):,} prefill, {reference.get('server_configs', 0)} configs"
        + (" (agree)" if stored.get("decode_stats") == reference.get("decode_stats") and stored.get("prefill_stats") == reference.get("prefill_stats") else " (**disagree**)"),
        "input: `bench/gen_log.py` (4 server lifetimes: `Decode batch.`/`,`/`[N],`, TP/DP/EP rank tags, docker-compose and custom "
        "logging prefixes, 2026 keys, trailing commas, both server_args shapes; ≈80 % decode lines, HTTP access lines, tqdm, tracebacks); "
        "read from the page cache (the file was just written or read)",
        "wall time is the whole `specdash ingest` process: interpreter start, sha256 of the file, parse, DuckDB load",
    ]
    return section
