"""Write the demo input files in data/demo/ from the figures documented in data/README.md.

Deterministic (fixed seed, fixed clock): running it twice writes the same bytes, and a
test holds the committed files to that. The K2 drafter's five Phase 0 runs are exactly the
seed's; everything else is illustrative, Phases 1 and 2 entirely so. Run: ``python data/make_demo.py``.

* ``phase-0`` ("quick probe"): the team's benchmark JSON and a server log per variant.
* ``phase-1`` ("fine-tune the K2 drafter on K2.5 data"): only what a ``bench_serving`` user keeps,
  a server log and a ``python -m sglang.bench_serving --output-file`` JSONL with one record per
  max concurrency (1, 4, 16), each carrying ``server_info`` as late-2025 SGLang writes it. No
  benchmark JSON: the log and the records are the evidence.
* ``phase-2`` ("cut the verify step"): benchmark JSON and server log again, for the fine-tuned
  drafter with a cheaper verify all-reduce and a baseline re-run beside it; profiler traces are
  written by ``make_demo_traces.py``.
* ``bench_speculative*.jsonl`` in the Phase 0 folders: illustrative batch-size × drafter-config sweeps,
  written by ``make_demo_sweeps.py``.
"""
from __future__ import annotations

import importlib.util
import json
import math
import random
import statistics
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "demo"
PHASE = "phase-0"
MAX_TOKENS = 2048
WARMUP_RUNS = 2
DECODE_LOG_INTERVAL = 40
MODEL = "/models/Kimi-K2.5"
ENDPOINT = "http://localhost:8000/v1/completions"


@dataclass(frozen=True)
class Run:
    tokens: int
    seconds: float
    prompt_len: int


@dataclass(frozen=True)
class Load:
    """One ``bench_serving`` run: its ``--max-concurrency``, ``--num-prompts``, and what the server does at that batch.

    ``iteration_ms`` is one decode step (no speculation) or one speculative cycle with that many
    requests running: it grows with the batch, and faster for speculation, whose verify pass
    carries ``num_draft_tokens`` tokens per request (DOMAIN.md §9).
    """

    concurrency: int
    num_prompts: int
    iteration_ms: float
    ttft_ms: float


@dataclass(frozen=True)
class Variant:
    name: str
    start: datetime
    tokens_per_step: float | None  # bonus-inclusive accept length the log averages to; None = no speculation
    runs: tuple[Run, ...]
    draft_model: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    phase: str = PHASE
    max_running_requests: int = 8
    cuda_graph_max_bs: int = 8
    loads: tuple[Load, ...] = ()  # bench_serving runs instead of the team's benchmark (``runs`` is then empty)

    @property
    def seed(self) -> str:
        # Phase 0's files were generated before there were other phases: keep its seeds as they were.
        return f"specdash-demo-{self.name}" if self.phase == PHASE else f"specdash-demo-{self.phase}-{self.name}"


# The seed's Phase 0 probe, exactly (DOMAIN.md §1).
K2_RUNS = (Run(2048, 40.50, 32), Run(2048, 39.46, 31), Run(2048, 41.69, 26), Run(1963, 35.95, 28), Run(2048, 38.51, 34))
# Illustrative: ~82 tok/s without speculation, ~60 tok/s with the from-scratch drafter.
BASELINE_RUNS = (Run(2048, 24.81, 30), Run(2048, 25.12, 27), Run(2048, 24.96, 33), Run(2048, 25.30, 29), Run(2048, 24.70, 31))
SCRATCH_RUNS = (Run(2048, 34.38, 28), Run(2048, 33.71, 32), Run(2048, 34.02, 30), Run(2048, 34.66, 26), Run(2048, 33.95, 34))

VARIANTS = (
    Variant("baseline", datetime(2026, 2, 9, 10, 0, 0), None, BASELINE_RUNS),
    Variant(
        "from-scratch", datetime(2026, 2, 9, 15, 30, 0), 2.00, SCRATCH_RUNS,
        draft_model="/checkpoints/kimi-k25-eagle3-scratch/step-18000", num_steps=3, topk=1, num_draft_tokens=4,
    ),
    Variant(
        "k2-drafter", datetime(2026, 2, 10, 14, 0, 0), 1.58, K2_RUNS,
        draft_model="/models/AQ-MedAI/Kimi-K2-Instruct-eagle3", num_steps=2, topk=1, num_draft_tokens=3,
    ),
)

# Phases 1 and 2 are ILLUSTRATIVE (data/README.md): the story stops at Phase 0's verdict.
FT_DRAFTER = "/checkpoints/kimi-k2-eagle3-ft-k25/step-6000"  # the K2 drafter fine-tuned on K2.5 data
FT_TOKENS_PER_STEP = 2.60  # 1.60 accepted drafts of 2 per cycle, up from 0.58
LATER = {"max_running_requests": 32, "cuda_graph_max_bs": 32}  # the server now also takes 16 concurrent requests

# Phase 1: the same 32-token random prompts and 2,048 output tokens at max concurrency 1, 4 and 16.
# Baseline steps of 12.1 / 12.9 / 15.4 ms: 82.6 / 77.5 / 64.9 tok/s per stream. Fine-tuned drafter
# cycles of 27.3 / 30.2 / 43.5 ms at 2.60 tokens per cycle: 95.2 / 86.1 / 59.8 tok/s per stream, so
# the speedup shrinks from 1.15x to 1.11x and falls below the baseline (0.92x) at 16.
PHASE1 = (
    Variant(
        "baseline", datetime(2026, 3, 3, 9, 30, 0), None, (), phase="phase-1", **LATER,
        loads=(Load(1, 4, 12.1, 48.0), Load(4, 8, 12.9, 61.0), Load(16, 32, 15.4, 118.0)),
    ),
    Variant(
        "k2-drafter-ft", datetime(2026, 3, 3, 13, 0, 0), FT_TOKENS_PER_STEP, (), phase="phase-1", **LATER,
        draft_model=FT_DRAFTER, num_steps=2, topk=1, num_draft_tokens=3,
        loads=(Load(1, 4, 27.3, 57.0), Load(4, 8, 30.2, 72.0), Load(16, 32, 43.5, 139.0)),
    ),
)

# Phase 2: the same fine-tuned drafter with a verify all-reduce of ~20 ms instead of ~29 ms (the
# traces show it): cycles of 21.66 ms, so 2.60 tokens per cycle give ~120 tok/s. The baseline is
# re-run beside it: its decode steps do not verify, so it stays at ~82 tok/s.
FT_FAST_VERIFY_RUNS = (Run(2048, 17.12, 31), Run(2048, 16.98, 28), Run(2048, 17.25, 33), Run(2048, 17.04, 26), Run(2048, 16.91, 30))
PHASE2_BASELINE_RUNS = (Run(2048, 24.93, 29), Run(2048, 25.06, 32), Run(2048, 24.77, 27), Run(2048, 25.21, 30), Run(2048, 24.88, 34))
PHASE2 = (
    Variant("baseline", datetime(2026, 3, 17, 9, 0, 0), None, PHASE2_BASELINE_RUNS, phase="phase-2", **LATER),
    Variant(
        "k2-drafter-ft", datetime(2026, 3, 17, 10, 0, 0), FT_TOKENS_PER_STEP, FT_FAST_VERIFY_RUNS, phase="phase-2",
        **LATER, draft_model=FT_DRAFTER, num_steps=2, topk=1, num_draft_tokens=3,
    ),
)
WARMUP_RUN = Run(256, 0.0, 24)  # seconds derived from the variant's rate


def stamp(moment: datetime, with_ms: bool = False) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if with_ms else moment.strftime("%Y-%m-%d %H:%M:%S")


def server_args(variant: Variant) -> dict[str, Any]:
    """The server's resolved arguments, in ServerArgs order: the log prints them, bench_serving embeds them."""
    spec = variant.tokens_per_step is not None
    return {
        "model_path": MODEL, "tokenizer_path": MODEL, "tokenizer_mode": "auto",
        "load_format": "auto", "trust_remote_code": True, "dtype": "auto",
        "kv_cache_dtype": "auto", "context_length": None, "served_model_name": "kimi-k2.5",
        "host": "0.0.0.0", "port": 8000, "mem_fraction_static": 0.85,
        "max_running_requests": variant.max_running_requests, "chunked_prefill_size": 8192, "schedule_policy": "fcfs",
        "tp_size": 8, "dp_size": 1, "ep_size": 1, "random_seed": 42,
        "log_level": "info", "decode_log_interval": DECODE_LOG_INTERVAL,
        "attention_backend": "flashinfer", "sampling_backend": "flashinfer",
        "speculative_algorithm": "EAGLE3" if spec else None,
        "speculative_draft_model_path": variant.draft_model,
        "speculative_num_steps": variant.num_steps,
        "speculative_eagle_topk": variant.topk,
        "speculative_num_draft_tokens": variant.num_draft_tokens,
        "speculative_accept_threshold_single": 1.0, "speculative_accept_threshold_acc": 1.0,
        "disable_cuda_graph": False, "cuda_graph_max_bs": variant.cuda_graph_max_bs, "enable_dp_attention": False,
        "disable_custom_all_reduce": False, "enable_torch_compile": False,
        "json_model_override_args": "{}", "lora_paths": None, "watchdog_timeout": 300,
    }


def server_args_line(variant: Variant, at: datetime) -> str:
    # A dataclass repr: strings quoted, None/True as Python prints them (DOMAIN.md §4).
    body = ", ".join(f"{key}={value!r}" for key, value in server_args(variant).items())
    return f"[{stamp(at)}] server_args=ServerArgs({body})"


def startup_lines(variant: Variant, at: datetime) -> list[str]:
    graphs = 4 if variant.cuda_graph_max_bs <= 8 else 8  # batch sizes captured: 1, 2, 4, 8 (, 12, 16, 24, 32)
    lines = [server_args_line(variant, at)]
    for rank in range(8):
        lines.append(f"[{stamp(at + timedelta(seconds=3))} TP{rank}] Load weight begin. avail mem=94.52 GB")
    lines.append(f"[{stamp(at + timedelta(seconds=95))} TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=23.80 GB, mem usage=70.72 GB.")
    lines.append(f"[{stamp(at + timedelta(seconds=97))} TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=12.41 GB")
    lines.append(f"Capturing batches (bs={variant.cuda_graph_max_bs} avail_mem=12.41 GB):   0%|          | 0/{graphs} [00:00<?, ?it/s]")
    lines.append(f"Capturing batches (bs=1 avail_mem=11.95 GB): 100%|██████████| {graphs}/{graphs} [00:41<00:00, {41.2 / graphs:.2f}s/it]")
    lines.append(f"[{stamp(at + timedelta(seconds=140))} TP0] Capture cuda graph end. Time elapsed: 43.12 s. mem usage=0.46 GB. avail mem=11.95 GB.")
    lines.append(f"[{stamp(at + timedelta(seconds=142))}] INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
    lines.append(f"[{stamp(at + timedelta(seconds=150))}] INFO:     127.0.0.1:51234 - \"GET /v1/models HTTP/1.1\" 200 OK")
    return lines


def accept_lens(rng: random.Random, mean: float, count: int) -> list[float]:
    """Values around ``mean`` whose average is exactly ``mean`` once printed to two decimals."""
    deltas = [rng.randint(-12, 12) / 100 for _ in range(count // 2)]
    values = [round(mean + d, 2) for d in deltas] + [round(mean - d, 2) for d in deltas]
    if count % 2:
        values.append(round(mean, 2))
    rng.shuffle(values)
    return values


def run_log_lines(
    rng: random.Random, variant: Variant, run: Run, start: datetime, prev_line_at: datetime | None
) -> list[str]:
    """The prefill line, decode lines every DECODE_LOG_INTERVAL steps, and the access line of one run."""
    rate = run.tokens / run.seconds
    per_step = variant.tokens_per_step or 1.0
    tokens_per_line = DECODE_LOG_INTERVAL * per_step
    lines_in_run = max(2, int(run.tokens // tokens_per_line))
    lens = accept_lens(rng, variant.tokens_per_step, lines_in_run) if variant.tokens_per_step else []
    lines = [
        f"[{stamp(start + timedelta(milliseconds=40), True)} TP0] Prefill batch, #new-seq: 1, #new-token: {run.prompt_len}, "
        f"#cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, cuda graph: False"
    ]
    last = prev_line_at
    for i in range(lines_in_run):
        at = start + timedelta(seconds=run.seconds * (i + 1) / (lines_in_run + 0.5))
        generated = int(tokens_per_line * (i + 1)) + run.prompt_len
        measured = rate * (1 + rng.uniform(-0.02, 0.02))
        if last is None:
            measured = tokens_per_line / 100.0  # first line after the server idled: meaningless, as SGLang prints it
        fields = ["#running-req: 1", f"#token: {generated}", "token usage: 0.01"]
        if lens:
            accept = lens[i]
            # accept rate in the 2025-11 SGLang shape: tokens per step / num_draft_tokens
            fields += [f"accept len: {accept:.2f}", f"accept rate: {accept / variant.num_draft_tokens:.2f}"]
        fields += ["cuda graph: True", f"gen throughput (token/s): {measured:.2f}", "#queue-req: 0"]
        lines.append(f"[{stamp(at, True)} TP0] Decode batch, " + ", ".join(fields))
        last = at
    end = start + timedelta(seconds=run.seconds)
    lines.append(f"[{stamp(end)}] INFO:     127.0.0.1:51240 - \"POST /v1/completions HTTP/1.1\" 200 OK")
    return lines


def write_variant(variant: Variant, out: Path) -> None:
    """The team's benchmark JSON (warm-ups, then measured runs) and the server log they ran against."""
    rng = random.Random(variant.seed)
    rate = sum(r.tokens for r in variant.runs) / sum(r.seconds for r in variant.runs)
    warmups = [Run(WARMUP_RUN.tokens, round(WARMUP_RUN.tokens / rate + 0.8, 2), WARMUP_RUN.prompt_len)] * WARMUP_RUNS
    server_up = variant.start
    log = startup_lines(variant, server_up)
    clock = server_up + timedelta(seconds=155)
    bench_runs, last_line_at = [], None
    for position, run in enumerate([*warmups, *variant.runs]):
        is_warmup = position < WARMUP_RUNS
        log += run_log_lines(rng, variant, run, clock, last_line_at)
        last_line_at = clock + timedelta(seconds=run.seconds)
        entry = {
            "index": position - WARMUP_RUNS + 1 if not is_warmup else position + 1,
            "warmup": is_warmup,
            "prompt_tokens": run.prompt_len,
            "output_tokens": run.tokens,
            "duration_s": run.seconds,
            "tok_per_s": round(run.tokens / run.seconds, 1),
            "started_at": clock.isoformat(timespec="milliseconds"),
            "ended_at": (clock + timedelta(seconds=run.seconds)).isoformat(timespec="milliseconds"),
            "finish_reason": "length" if run.tokens >= MAX_TOKENS or is_warmup else "stop",
        }
        bench_runs.append(entry)
        clock += timedelta(seconds=run.seconds + 1.5)
    session = {
        "format": "specdash.bench/1",
        "endpoint": ENDPOINT,
        "model": MODEL,
        "phase": variant.phase,
        "variant": variant.name,
        "max_tokens": MAX_TOKENS,
        "warmup": WARMUP_RUNS,
        "started_at": (server_up + timedelta(seconds=155)).isoformat(timespec="seconds"),
        "runs": bench_runs,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(session, indent=2) + "\n", encoding="utf-8")
    (out / "server.log").write_text("\n".join(log) + "\n", encoding="utf-8")

# --- bench_serving (Phase 1) ---------------------------------------------------------------------

PROMPT_LEN = 32  # --dataset-name random --random-input-len 32 --random-range-ratio 1.0: every prompt 32 tokens
WARMUP_OUTPUT = 32  # bench_serving's warm-up request generates at most 32 tokens
KV_CAPACITY = 412_000  # tokens the KV cache holds: "token usage" = tokens in use / capacity
SGLANG_VERSION = "0.5.9"
BETWEEN_COMMANDS = timedelta(seconds=40)  # the user starts the next concurrency by hand


@dataclass
class LogState:
    """What SGLang's scheduler carries from one decode log line to the next, over the server's lifetime."""

    last_line_at: datetime
    iterations: int = 0  # forward iterations (spec: cycles) since start-up; a line every DECODE_LOG_INTERVAL
    tokens_since_line: float = 0.0  # `gen throughput` = these ÷ time since the previous line
    request_steps: int = 0  # Σ batch size over logged iterations: the accept length's denominator
    emitted_centitokens: int = 0  # Σ tokens emitted (bonus included) over them, in hundredths as the log prints them
    last_gen_throughput: float = 0.0


@dataclass(frozen=True)
class DecodeLine:
    at: datetime
    running: int
    tokens: int
    gen_throughput: float


@dataclass
class Batch:
    """Requests admitted together that decode in lock-step (equal prompts and outputs) until they all finish."""

    size: int
    output_len: int
    started: datetime
    ended: datetime = field(init=False)  # set by decode_batch
    decode_s: float = 0.0
    iterations: int = 0


def decode_batch(
    rng: random.Random, variant: Variant, state: LogState, batch: Batch, iteration_ms: float, ttft_ms: float
) -> list[tuple[datetime, str | DecodeLine]]:
    """The prefill line and the decode lines of one batch; sets ``batch.ended``.

    A line falls on every DECODE_LOG_INTERVAL-th iteration of the server, wherever that is in the
    batch, as SGLang counts iterations over its lifetime.
    """
    per_step = variant.tokens_per_step or 1.0
    iterations = math.ceil((batch.output_len - 1) / per_step)  # the first token comes from prefill
    events: list[tuple[datetime, str | DecodeLine]] = [(batch.started, (
        f"Prefill batch, #new-seq: {batch.size}, #new-token: {batch.size * PROMPT_LEN}, #cached-token: 0, "
        f"token usage: 0.00, #running-req: 0, #queue-req: 0, cuda graph: False"
    ))]
    at = batch.started + timedelta(milliseconds=ttft_ms)
    pace = 1 + rng.uniform(-0.015, 0.015)  # one draw per logged window: the step time wanders a little
    for i in range(1, iterations + 1):
        at += timedelta(milliseconds=iteration_ms * pace)
        state.iterations += 1
        state.tokens_since_line += batch.size * per_step
        if state.iterations % DECODE_LOG_INTERVAL:
            continue
        generated = min(batch.output_len, 1 + round(i * per_step))
        seconds = (at - state.last_line_at).total_seconds()
        state.last_gen_throughput = state.tokens_since_line / seconds  # after an idle gap this is meaningless, as in SGLang
        events.append((at, DecodeLine(at, batch.size, batch.size * (PROMPT_LEN + generated), state.last_gen_throughput)))
        state.last_line_at, state.tokens_since_line = at, 0.0
        pace = 1 + rng.uniform(-0.015, 0.015)
    batch.ended, batch.iterations = at, iterations
    batch.decode_s = (at - batch.started).total_seconds() - ttft_ms / 1000
    return events


def format_events(
    rng: random.Random, variant: Variant, state: LogState, events: list[tuple[datetime, str | DecodeLine]]
) -> list[str]:
    """Log lines of one bench_serving command; decode lines get accept lengths averaging the variant's exactly."""
    decode = [event for _, event in events if isinstance(event, DecodeLine)]
    lens = iter(accept_lens(rng, variant.tokens_per_step, len(decode)) if variant.tokens_per_step else [])
    lines = []
    for at, event in sorted(events, key=lambda e: e[0]):
        if isinstance(event, str):
            scheduler = not event.startswith("INFO:")  # Uvicorn's access lines carry no milliseconds and no rank
            lines.append(f"[{stamp(at, scheduler)}{' TP0' if scheduler else ''}] {event}")
            continue
        fields = [f"#running-req: {event.running}", f"#token: {event.tokens}", f"token usage: {event.tokens / KV_CAPACITY:.2f}"]
        if variant.tokens_per_step:
            accept = next(lens)
            # the server's lifetime average (what /get_server_info reports) is over request-steps
            state.request_steps += event.running * DECODE_LOG_INTERVAL
            state.emitted_centitokens += event.running * DECODE_LOG_INTERVAL * round(accept * 100)
            fields += [f"accept len: {accept:.2f}", f"accept rate: {accept / variant.num_draft_tokens:.2f}"]
        fields += ["cuda graph: True", f"gen throughput (token/s): {event.gen_throughput:.2f}", "#queue-req: 0"]
        lines.append(f"[{stamp(at, True)} TP0] Decode batch, " + ", ".join(fields))
    return lines


def percentile(values: list[float], q: float) -> float:
    """numpy's default (linear) percentile, as bench_serving computes it."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def access(at: datetime, port: int, request: str) -> tuple[datetime, str]:
    return at, f'INFO:     127.0.0.1:{port} - "{request} HTTP/1.1" 200 OK'


def bench_serving_command(
    rng: random.Random, variant: Variant, state: LogState, load: Load, start: datetime
) -> tuple[list[str], dict[str, Any], datetime]:
    """One ``python -m sglang.bench_serving --max-concurrency C --num-prompts N``: its log lines, its record, its end."""
    port = 40000 + 1000 * load.concurrency
    events = [access(start, port, "GET /v1/models")]
    warmup = Batch(1, WARMUP_OUTPUT, start + timedelta(seconds=4.2))  # after loading the tokenizer and sampling prompts
    first_load = variant.loads[0]
    events += decode_batch(rng, variant, state, warmup, first_load.iteration_ms, first_load.ttft_ms)
    events.append(access(warmup.ended, port + 1, "POST /generate"))
    bench_start = warmup.ended + timedelta(seconds=1.0)  # bench_serving sleeps 1 s before measuring
    clock = bench_start
    batches: list[Batch] = []
    ttfts: list[float] = []
    e2es: list[float] = []
    for wave in range(load.num_prompts // load.concurrency):
        batch = Batch(load.concurrency, MAX_TOKENS, clock + timedelta(milliseconds=3))
        events += decode_batch(rng, variant, state, batch, load.iteration_ms, load.ttft_ms)
        for request in range(batch.size):
            ttft = load.ttft_ms * (1 + rng.uniform(-0.04, 0.04))
            e2e = (batch.ended - clock).total_seconds() * 1000 - rng.uniform(0, 3)
            ttfts.append(ttft)
            e2es.append(e2e)
            events.append(access(batch.ended, port + 2 + wave * batch.size + request, "POST /generate"))
        batches.append(batch)
        clock = batch.ended
    duration = (clock - bench_start).total_seconds() + 0.012  # the /get_server_info call is inside the timed span
    events.append(access(clock + timedelta(milliseconds=8), port + 999, "GET /get_server_info"))
    lines = format_events(rng, variant, state, events)
    record = serving_record(rng, variant, state, load, duration, ttfts, e2es, batches)
    return lines, record, clock


def serving_record(
    rng: random.Random, variant: Variant, state: LogState, load: Load, duration: float,
    ttfts: list[float], e2es: list[float], batches: list[Batch],
) -> dict[str, Any]:
    """The JSON object bench_serving appends with --output-file, keys in its late-2025 order."""
    completed = load.num_prompts
    total_input, total_output = completed * PROMPT_LEN, completed * MAX_TOKENS
    tpots = [(e2e - ttft) / (MAX_TOKENS - 1) for e2e, ttft in zip(e2es, ttfts, strict=True)]
    # one streamed chunk per step or cycle: with speculation ITL is the cycle time, not TPOT (DOMAIN.md §5)
    itl = statistics.fmean(b.decode_s * 1000 / b.iterations for b in batches)
    decode_rate = sum(b.size * (b.output_len - 1) for b in batches) / sum(b.decode_s for b in batches)
    internal: dict[str, Any] = {"last_gen_throughput": round(state.last_gen_throughput, 2)}
    if variant.tokens_per_step:
        internal = {"avg_spec_accept_length": state.emitted_centitokens / (100 * state.request_steps), **internal}
    return {
        "backend": "sglang", "dataset_name": "random", "request_rate": float("inf"),
        "max_concurrency": load.concurrency, "sharegpt_output_len": None,
        "random_input_len": PROMPT_LEN, "random_output_len": MAX_TOKENS, "random_range_ratio": 1.0,
        "duration": duration, "completed": completed,
        "total_input_tokens": total_input, "total_output_tokens": total_output,
        "total_output_tokens_retokenized": total_output - rng.randint(0, 2 * completed),
        "request_throughput": completed / duration, "input_throughput": total_input / duration,
        "output_throughput": total_output / duration,
        "mean_e2e_latency_ms": statistics.fmean(e2es), "median_e2e_latency_ms": statistics.median(e2es),
        "std_e2e_latency_ms": statistics.pstdev(e2es), "p99_e2e_latency_ms": percentile(e2es, 99),
        "mean_ttft_ms": statistics.fmean(ttfts), "median_ttft_ms": statistics.median(ttfts),
        "std_ttft_ms": statistics.pstdev(ttfts), "p99_ttft_ms": percentile(ttfts, 99),
        "mean_tpot_ms": statistics.fmean(tpots), "median_tpot_ms": statistics.median(tpots),
        "std_tpot_ms": statistics.pstdev(tpots), "p99_tpot_ms": percentile(tpots, 99),
        # per-chunk ITLs are not simulated: their spread around the mean is a fixed, illustrative shape
        "mean_itl_ms": itl,
        "median_itl_ms": itl * 0.996, "std_itl_ms": itl * 0.061, "p95_itl_ms": itl * 1.087, "p99_itl_ms": itl * 1.214,
        "concurrency": sum(e2es) / 1000 / duration,
        "accept_length": internal.get("avg_spec_accept_length"),
        "tag": variant.name,
        "total_throughput": (total_input + total_output) / duration,
        "max_output_tokens_per_s": decode_rate * (1 + rng.uniform(0.02, 0.06)),
        "max_concurrent_requests": load.concurrency,
        "server_info": {**server_args(variant), "internal_states": [internal], "version": SGLANG_VERSION},
    }


def write_serving_variant(variant: Variant, out: Path) -> None:
    """A server log and the bench_serving JSONL of its three commands (no benchmark JSON: Phase 1's evidence)."""
    rng = random.Random(variant.seed)
    log = startup_lines(variant, variant.start)
    state = LogState(last_line_at=variant.start + timedelta(seconds=142))  # the scheduler's stats clock starts with it
    clock, records = variant.start + timedelta(minutes=4), []
    for load in variant.loads:
        lines, record, clock = bench_serving_command(rng, variant, state, load, clock)
        log += lines
        records.append(record)
        clock += BETWEEN_COMMANDS
    out.mkdir(parents=True, exist_ok=True)
    # json.dumps as bench_serving calls it: bare Infinity for the unbounded request rate
    (out / "bench_serving.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (out / "server.log").write_text("\n".join(log) + "\n", encoding="utf-8")


def sibling(name: str):  # type: ignore[no-untyped-def]
    """Load a script beside this one (data/ is not a package)."""
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def write_demo(out: Path = OUT) -> list[Path]:
    """Every phase's files under ``out/<phase>/<variant>/``, plus the illustrative profiler traces."""
    written = []
    for variant in (*VARIANTS, *PHASE2):
        folder = out / variant.phase / variant.name
        write_variant(variant, folder)
        written += [folder / "bench.json", folder / "server.log"]
    for variant in PHASE1:
        folder = out / variant.phase / variant.name
        write_serving_variant(variant, folder)
        written += [folder / "bench_serving.jsonl", folder / "server.log"]
    acceptance = sibling("make_demo_acceptance").write_demo_acceptance(out)
    return written + sibling("make_demo_traces").write_demo_traces(out) + sibling("make_demo_sweeps").write_demo_sweeps(out) + acceptance


if __name__ == "__main__":
    for path in write_demo():
        print(path.relative_to(OUT.parent))
    for path in sibling("make_demo_drafters").write_demo_drafters():  # data/drafters/, beside data/demo/
        print(path.relative_to(OUT.parent))
