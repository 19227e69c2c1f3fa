"""Write the demo input files in data/demo/ from the figures documented in data/README.md.

Deterministic (fixed seed, fixed clock): running it twice writes the same bytes, and a
test holds the committed files to that. The K2 drafter's five runs are exactly the
seed's; everything else is illustrative. Run: ``python data/make_demo.py``.
"""
from __future__ import annotations

import importlib.util
import json
import random
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

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
class Variant:
    name: str
    start: datetime
    tokens_per_step: float | None  # bonus-inclusive accept length the log averages to; None = no speculation
    runs: tuple[Run, ...]
    draft_model: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None


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
WARMUP_RUN = Run(256, 0.0, 24)  # seconds derived from the variant's rate


def stamp(moment: datetime, with_ms: bool = False) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if with_ms else moment.strftime("%Y-%m-%d %H:%M:%S")


def server_args_line(variant: Variant, at: datetime) -> str:
    spec = variant.tokens_per_step is not None
    fields = [
        ("model_path", repr(MODEL)), ("tokenizer_path", repr(MODEL)), ("tokenizer_mode", "'auto'"),
        ("load_format", "'auto'"), ("trust_remote_code", "True"), ("dtype", "'auto'"),
        ("kv_cache_dtype", "'auto'"), ("context_length", "None"), ("served_model_name", "'kimi-k2.5'"),
        ("host", "'0.0.0.0'"), ("port", "8000"), ("mem_fraction_static", "0.85"),
        ("max_running_requests", "8"), ("chunked_prefill_size", "8192"), ("schedule_policy", "'fcfs'"),
        ("tp_size", "8"), ("dp_size", "1"), ("ep_size", "1"), ("random_seed", "42"),
        ("log_level", "'info'"), ("decode_log_interval", str(DECODE_LOG_INTERVAL)),
        ("attention_backend", "'flashinfer'"), ("sampling_backend", "'flashinfer'"),
        ("speculative_algorithm", "'EAGLE3'" if spec else "None"),
        ("speculative_draft_model_path", repr(variant.draft_model)),
        ("speculative_num_steps", repr(variant.num_steps)),
        ("speculative_eagle_topk", repr(variant.topk)),
        ("speculative_num_draft_tokens", repr(variant.num_draft_tokens)),
        ("speculative_accept_threshold_single", "1.0"), ("speculative_accept_threshold_acc", "1.0"),
        ("disable_cuda_graph", "False"), ("cuda_graph_max_bs", "8"), ("enable_dp_attention", "False"),
        ("disable_custom_all_reduce", "False"), ("enable_torch_compile", "False"),
        ("json_model_override_args", "'{}'"), ("lora_paths", "None"), ("watchdog_timeout", "300"),
    ]
    body = ", ".join(f"{key}={value}" for key, value in fields)
    return f"[{stamp(at)}] server_args=ServerArgs({body})"


def startup_lines(variant: Variant, at: datetime) -> list[str]:
    lines = [server_args_line(variant, at)]
    for rank in range(8):
        lines.append(f"[{stamp(at + timedelta(seconds=3))} TP{rank}] Load weight begin. avail mem=94.52 GB")
    lines.append(f"[{stamp(at + timedelta(seconds=95))} TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=23.80 GB, mem usage=70.72 GB.")
    lines.append(f"[{stamp(at + timedelta(seconds=97))} TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=12.41 GB")
    lines.append("Capturing batches (bs=8 avail_mem=12.41 GB):   0%|          | 0/4 [00:00<?, ?it/s]")
    lines.append("Capturing batches (bs=1 avail_mem=11.95 GB): 100%|██████████| 4/4 [00:41<00:00, 10.30s/it]")
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
        fields = [f"#running-req: 1", f"#token: {generated}", "token usage: 0.01"]
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
    rng = random.Random(f"specdash-demo-{variant.name}")
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
        "phase": PHASE,
        "variant": variant.name,
        "max_tokens": MAX_TOKENS,
        "warmup": WARMUP_RUNS,
        "started_at": (server_up + timedelta(seconds=155)).isoformat(timespec="seconds"),
        "runs": bench_runs,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(session, indent=2) + "\n", encoding="utf-8")
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
    """Benchmark JSON and server log per variant, plus the illustrative profiler traces."""
    written = []
    for variant in VARIANTS:
        folder = out / PHASE / variant.name
        write_variant(variant, folder)
        written += [folder / "bench.json", folder / "server.log"]
    return written + sibling("make_demo_traces").write_demo_traces(out)


if __name__ == "__main__":
    for path in write_demo():
        print(path.relative_to(OUT.parent))
