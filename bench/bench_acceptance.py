"""Benchmark 5 — per-request acceptance at scale (issue #19 "Scale").

Input: ``generate`` below, 1,000,000 vLLM responses carrying ``metrics.speculative_decoding``
(one JSON object per line, every histogram summing to its steps), generated once and cached.

Measured, interleaved, each in its own process:

* ``specdash ingest FILE --db fresh.duckdb`` end to end (interpreter start, sha256, parse, DuckDB
  load), in MB/s; target ≥ 50 MB/s;
* the reference: ``json.loads`` of every line of the same file in a plain Python process (what any
  Python reader of the file pays at least), so the ratio survives a loaded machine.

Then the Acceptance page (``/acceptance``), in Debian's Chromium through Playwright with
``bench_dashboard``'s own helpers (``Server``, ``timed_load``: a new tab until fully rendered; cold =
the store's change id bumped first): on the demo store, and on the demo store with the million
requests ingested into it as the ``k2-drafter`` variant's per-request file. Target: within 1.5× of
the demo's time.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import duckdb
import numpy as np

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

FULL_RECORDS = 1_000_000
TARGET_MB_S = 50.0
TARGET_PAGE_RATIO = 1.5
PAGE = "acceptance"
VARIANT = "k2-drafter"
JSON_LOADS = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)\n"


# --- the input: vLLM responses with per-request spec-decode statistics ----------------------------
# One JSON object per line: a chat-completion response (id, object, created, model, a client `dataset` tag,
# one choice with a short message, usage) carrying `metrics.speculative_decoding` as vLLM's
# --per-request-spec-decode-metrics writes it (vllm PR #48915; corpus sample
# vllm_request_metrics/vllm-pr-48915-response-metrics-speculative_decoding.json.txt). Each request draws a
# per-position acceptance p; each step accepts k drafts with P(k) = p^k (1 - p) (k < 3), p^3 (k = 3), so every
# histogram sums to its steps and implies the accepted count, and ingest must load every record.

SEED = 19
SPEC_TOKENS = 3
CHUNK = 20_000
DATASETS = ("mt-bench", "gsm8k", "humaneval", "traffic")
WORDS = ("the", "draft", "model", "verify", "token", "accept", "step", "cycle", "server", "prompt")


def generate(path: Path, records: int) -> None:
    """``records`` JSONL responses into ``path``."""
    rng = np.random.default_rng(SEED)
    # A per-position conditional acceptance per request (drafters fail on some requests), then per step
    # the number of drafts accepted = the first rejected position.
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, records, CHUNK):
            count = min(CHUNK, records - start)
            quality = rng.beta(2.0, 3.0, size=count)
            steps = rng.integers(8, 400, size=count)
            prompt = rng.integers(20, 2000, size=count)
            lines = []
            for i in range(count):
                p = float(quality[i])
                probs = np.array([p ** k * (1 - p) for k in range(SPEC_TOKENS)] + [p ** SPEC_TOKENS])
                histogram = rng.multinomial(int(steps[i]), probs / probs.sum()).tolist()
                n_steps = int(steps[i])
                accepted = sum(k * c for k, c in enumerate(histogram))
                drafted = n_steps * SPEC_TOKENS
                completion = n_steps + accepted
                index = start + i
                text = " ".join(WORDS[(index + j) % len(WORDS)] for j in range(8))
                record = {
                    "id": f"chatcmpl-{index:012x}",
                    "object": "chat.completion",
                    "created": 1_790_000_000 + index // 50,
                    "model": "meta-llama/Llama-3.1-8B-Instruct",
                    "dataset": DATASETS[index % len(DATASETS)],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "length" if index % 7 else "stop"}],
                    "usage": {"prompt_tokens": int(prompt[i]), "completion_tokens": completion,
                              "total_tokens": int(prompt[i]) + completion},
                    "metrics": {"speculative_decoding": {
                        "mean_acceptance_length": 1 + accepted / n_steps,
                        "draft_acceptance_rate": accepted / drafted,
                        "acceptance_histogram": histogram,
                        "num_spec_steps": n_steps,
                        "num_accepted_draft_tokens": accepted,
                        "num_draft_tokens": drafted,
                        "num_spec_tokens": SPEC_TOKENS,
                    }},
                }
                lines.append(json.dumps(record))
            out.write("\n".join(lines) + "\n")


def requests_input(records: int) -> Path:
    return cached_input(f"vllm-requests-{records}.jsonl", [BENCH / "bench_acceptance.py"], lambda path: generate(path, records))


def ingest_rows(path: Path, repeats: int, scratch: Path) -> tuple[list[Row], list[str]]:
    size = path.stat().st_size
    ingest_s, loads_s, rss = [], [], []
    for attempt in range(repeats):
        log(f"acceptance {attempt + 1}/{repeats}: specdash ingest, json.loads")
        for stale in scratch.glob("store.duckdb*"):
            stale.unlink()
        run = checked(run_child([SPECDASH, "ingest", path, "--db", scratch / "store.duckdb"]), "specdash ingest (requests)")
        ingest_s.append(run.wall_s)
        rss.append(run.peak_rss_mb)
        loads_s.append(checked(run_child([PYTHON, "-c", JSON_LOADS, path]), "json.loads reference").wall_s)
    with duckdb.connect(str(scratch / "store.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT count(*), count(histogram) FROM acceptance_requests").fetchone() or (0, 0)
    rate = [size / MB / s for s in ingest_s]
    loads_rate = [size / MB / s for s in loads_s]
    ratio = median(rate) / median(loads_rate)
    rows = [
        Row(f"ingest throughput, {size / MB:,.0f} MB (MB/s)", f"{median(rate):.1f}", spread(rate), "", "", f"≥ {TARGET_MB_S:g}",
            median(rate) >= TARGET_MB_S),
        Row("… vs `json.loads` of every line (MB/s)", f"{median(rate):.1f}", spread(rate),
            f"{median(loads_rate):.1f} ({spread(loads_rate)})", f"{ratio:.2f}×", "", None),
        Row(f"ingest wall time, {size / MB:,.0f} MB (s)", f"{median(ingest_s):.2f}", spread(ingest_s), f"{median(loads_s):.2f} (json.loads)",
            "", "", None),
        Row("peak RSS of the ingest (MB, max of runs)", f"{max(rss):,.0f}", spread(rss), "", "", "", None),
    ]
    notes = [f"rows stored: {stored[0]:,} requests, {stored[1]:,} with a histogram"]
    return rows, notes


def page_rows(path: Path, repeats: int, folder: Path) -> tuple[list[Row], list[str]]:
    """The Acceptance page on the demo store and on the demo store plus the million requests."""
    if not Path("/usr/bin/chromium").exists():
        return [], ["Debian's chromium is not installed (`make browser` installs it): the page was not timed"]
    # lazily: the dashboard side (playwright, tests.browser) is imported only here
    from bench import bench_dashboard

    demo = bench_dashboard.demo_store(folder)
    big_db = folder / "demo-1M-requests.duckdb"
    shutil.copy(demo.db, big_db)
    loaded = checked(run_child([SPECDASH, "ingest", path, "--db", big_db, "--variant", VARIANT]), "specdash ingest into the demo copy")
    log(f"acceptance page store: {loaded.stdout.strip().splitlines()[-1] if loaded.stdout.strip() else 'loaded'}")
    big = dataclasses.replace(demo, label=f"demo + {records_in(path):,} requests", db=big_db)
    timings = {demo.label: measure_page(demo, repeats), big.label: measure_page(big, repeats)}
    rows = []
    for kind in ("cold", "warm"):
        small, large = timings[demo.label], timings[big.label]
        rows.append(bench_dashboard.figure_row(f"Acceptance page load, {kind} caches (s)", small[kind], large[kind],
                                               bool(small["timed_out"]), bool(large["timed_out"])))
    with duckdb.connect(str(big_db), read_only=True) as con:
        counted = con.execute("SELECT count(*) FROM acceptance_requests").fetchone() or (0,)
    notes = [
        f"stores: the demo (`specdash demo`) and a copy of it with `{path.name}` ingested as `--variant {VARIANT}` "
        f"({counted[0]:,} acceptance_requests rows, {big_db.stat().st_size / MB:,.0f} MB); page `/{PAGE}` opened as it opens "
        "(its default selection); cold = store change id bumped first, warm = a new tab after a cold load; "
        "`bench_dashboard`'s Server/timed_load/READY (heading, every plotly chart drawn, no spinner)",
    ]
    for label, found in timings.items():
        if found["problems"]:
            notes.append(f"{label}: {'; '.join(str(p) for p in found['problems'])[:800]}")
    return rows, notes


def records_in(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(1 for _ in lines)


def measure_page(target: object, repeats: int) -> dict[str, list]:
    """Cold and warm loads of the page; as in ``bench_dashboard``, a load that fails twice is a timeout, not repeated."""
    from playwright.sync_api import sync_playwright

    from bench import bench_dashboard

    found: dict[str, list] = {"cold": [], "warm": [], "problems": [], "timed_out": []}
    with sync_playwright() as playwright:
        server = bench_dashboard.Server(target, playwright)  # type: ignore[arg-type]
        try:
            server.start()
            url = f"{server.base}/{PAGE}"
            try:
                bench_dashboard.timed_load(server.context, url)  # first contact with this page: not measured
            except (bench_dashboard.StepTimeout, bench_dashboard.RenderError) as error:
                found["problems"].append(f"first load: {error}")
                server.restart()
            for repeat in range(repeats):
                log(f"acceptance page {getattr(target, 'label', '')} {repeat + 1}/{repeats}")
                server.bump_change_id()
                try:
                    found["cold"].append(bench_dashboard.timed_load(server.context, url))
                    found["warm"].append(bench_dashboard.timed_load(server.context, url))
                except (bench_dashboard.StepTimeout, bench_dashboard.RenderError) as error:
                    found["problems"].append(str(error))
                    server.restart()
                    if len(found["problems"]) >= 2:
                        found["timed_out"].append(True)
                        break
        finally:
            server.close()
    return found


def run(scale: float, repeats: int) -> Section:
    records = max(1_000, int(FULL_RECORDS * scale))
    path = requests_input(records)
    section = Section(f"5. Per-request acceptance — {records:,} vLLM responses ({path.stat().st_size / MB:,.0f} MB JSONL): "
                      "ingest vs json.loads, Acceptance page vs demo")
    scratch = scratch_dir("acceptance")
    load_before = os.getloadavg()
    rows, notes = ingest_rows(path, repeats, scratch)
    section.rows += rows
    section.notes += notes
    page, page_notes = page_rows(path, repeats, scratch)
    section.rows += page
    section.notes += page_notes
    section.notes += [
        "input: `bench/bench_acceptance.py`'s generator (vLLM `metrics.speculative_decoding` per response, 3 draft tokens, "
        "histograms summing to the steps, 4 dataset names); read from the page cache",
        "reference: `python -c` reading the file line by line with `json.loads` (no store, nothing kept)",
        f"load average (1 min / 15 min) before this benchmark {load_before[0]:.1f} / {load_before[2]:.1f}, after it "
        f"{os.getloadavg()[0]:.1f} / {os.getloadavg()[2]:.1f} (2 CPUs; other sessions' tests share them)",
    ]
    shutil.rmtree(scratch, ignore_errors=True)
    return section
