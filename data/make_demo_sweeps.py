"""Write ILLUSTRATIVE bench_speculative.py sweeps for the Phase 0 variants (not measurements).

SGLang's ``scripts/playground/bench_speculative.py`` appends one JSON line per (batch size, drafter
config) to its ``--output`` file: ``batch_size, steps, topk, num_draft_tokens, acc_length,
step_time, speed, completion_tokens``, with ``step_time`` in seconds (the p20 of the server's
step times, rounded to 5 decimals), ``speed`` = acc_length ÷ step_time (rounded to 3) and
``(0, 0, 0)`` the run without speculation. Each Phase 0 variant folder gets the sweep it would
have run, at batch 1, 2, 4, 8, 16, 32, twice (``bench_speculative.jsonl`` and a rerun,
``bench_speculative-rerun.jsonl``, as a second call with another ``--output`` writes it), so the
points carry spread:

* ``baseline``: config (0, 0, 0) only; a decode step of 12.2 ms at batch 1 (the story's 82 tok/s),
  growing by 0.25 ms per extra request (compute starts to count);
* ``k2-drafter``: steps {1, 2, 3} × topk {1, 2} × draft tokens {2, 3, 4} (valid ones: draft tokens
  ≤ steps × topk + 1). Its Phase 0 config (2, 1, 3) at batch 1 is the story's figures exactly:
  accept length 1.58, cycle 30.5 ms, so 51.8 tok/s. Acceptance per position 0.41 (the wrong d2t), and a
  second candidate (topk 2) recovers only 5 % of the misses: every candidate sits on a shifted target token, so
  its accept length stays between 1.41 and 1.72 whatever the config;
* ``from-scratch``: the same grid; its Phase 0 config (3, 1, 4) at batch 1 is accept length 2.00 over
  a 33.3 ms cycle, so 60.0 tok/s. Acceptance per position 0.544.

Cycle model (invented, shaped like the story's PCIe box): a ~24 ms verify dominated by the NCCL
all-reduce, 2 ms per draft step (each all-reduces too), and a per-token verify cost that grows with the
batch; acceptance does not depend on the batch. The K2 drafter pays at no batch and no config (the
Phase 0 verdict). From-scratch's tree config (3 steps, topk 2, 4 draft tokens; accept length 2.92)
pays a little at batch 1 (≈ 1.03×) and stops paying near batch 8: its cycle grows faster with the
batch than a plain decode step. Deterministic: same bytes every run.
Run: ``python data/make_demo_sweeps.py`` (writes into data/demo/); ``make_demo.py`` calls it.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent / "demo"
PHASE = "phase-0"
BATCHES = (1, 2, 4, 8, 16, 32)
COMPLETION_TOKENS = 512.0  # bench_speculative.py asks for 512 output tokens per prompt
BASE_STEP_MS = 12.2
BASE_GROWTH_MS = 0.25
# variant -> (per-position acceptance of the top candidate, that of each further candidate (topk > 1), its Phase 0
# config, that config's batch-1 (accept length, cycle ms)). From-scratch's candidates are independent guesses over the
# right vocabulary (a second one hits as often as the first); the K2 drafter's wrong d2t puts every candidate on a
# shifted target token, so a second candidate adds almost nothing: no config lifts its accept length far above 1.58.
DRAFTERS = {
    "k2-drafter": (0.41, 0.05, (2, 1, 3), (1.58, 30.5)),
    "from-scratch": (0.544, 0.544, (3, 1, 4), (2.00, 33.3)),
}
FILES = ("bench_speculative.jsonl", "bench_speculative-rerun.jsonl")
NOISE = 0.015  # the rerun's step times differ by up to ±1.5 %


def grid() -> list[tuple[int, int, int]]:
    return [(s, k, n) for s in (1, 2, 3) for k in (1, 2) for n in (2, 3, 4) if n <= s * k + 1]


def accept_length(p: float, q: float, steps: int, topk: int, drafts: int) -> float:
    """1 bonus token + P(first i drafts accepted) summed over the drafts a chain of this config can hold; a
    position hits when the top candidate (p) or one of the topk − 1 others (q each) is right."""
    hit = 1 - (1 - p) * (1 - q) ** (topk - 1)
    return 1 + sum(hit**i for i in range(1, min(steps, drafts - 1) + 1))


def cycle_ms(steps: int, topk: int, drafts: int, batch: int) -> float:
    draft = steps * (2.0 + 0.3 * (topk - 1))  # each draft forward all-reduces too
    verify = 23.86 + 0.8 * drafts + 0.08 * batch * drafts * topk  # the NCCL all-reduce dominates
    return draft + verify + BASE_GROWTH_MS * (batch - 1)


def record(batch: int, config: tuple[int, int, int], accept: float, step_ms: float) -> dict[str, float | int]:
    step_s = round(step_ms / 1000, 5)
    return {"batch_size": batch, "steps": config[0], "topk": config[1], "num_draft_tokens": config[2],
            "acc_length": round(accept, 3), "step_time": step_s, "speed": round(accept / step_s, 3),
            "completion_tokens": COMPLETION_TOKENS}


def sweep(variant: str, rerun: bool) -> list[dict[str, float | int]]:
    rng = random.Random(f"{variant}-{rerun}")
    jitter = (lambda: 1 + rng.uniform(-NOISE, NOISE)) if rerun else (lambda: 1.0)
    if variant == "baseline":
        return [record(b, (0, 0, 0), 1.0, (BASE_STEP_MS + BASE_GROWTH_MS * (b - 1)) * jitter()) for b in BATCHES]
    p, q, story_config, (story_accept, story_cycle) = DRAFTERS[variant]
    lines = []
    for batch in BATCHES:
        for config in grid():
            accept = accept_length(p, q, *config)
            step = cycle_ms(*config, batch)
            if config == story_config:  # the story's figures at batch 1; the same growth with the batch
                accept = story_accept
                step = story_cycle + cycle_ms(*config, batch) - cycle_ms(*config, 1)
            lines.append(record(batch, config, accept, step * jitter()))
    return lines


def write_demo_sweeps(out: Path = OUT) -> list[Path]:
    written = []
    for variant in ("baseline", *DRAFTERS):
        for name, rerun in zip(FILES, (False, True), strict=True):
            path = out / PHASE / variant / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(line) + "\n" for line in sweep(variant, rerun)), encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    for path in write_demo_sweeps():
        print(path.relative_to(OUT.parent))
