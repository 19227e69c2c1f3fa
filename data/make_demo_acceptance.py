"""Illustrative per-request acceptance for the demo's drafters (data/README.md, "Acceptance").

Each drafter folder gets ``requests.jsonl``: one SGLang response per line as a client keeps it
(``meta_info`` with the spec fields SGLang returns: ``spec_verify_ct``, ``spec_accept_length``,
``spec_accept_rate``, ``spec_num_correct_drafts``, ``spec_num_proposed_drafts``,
``spec_correct_drafts_histogram``), tagged by the client with the ``dataset`` the prompt came from.
Pooled over a variant's requests the histograms give exactly the variant's logged accept length
(the K2 drafter's 1.58 tokens per step = 1 + P(≥1 accepted) + P(≥2 accepted)); datasets differ
(code accepts more than chat), and a few requests accept almost nothing.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

DATASETS = ("mt-bench", "gsm8k", "humaneval")
# variant folder -> (draft steps, P(≥k accepted) for k = 1..steps pooled, dataset shifts, requests)
PLANS: dict[str, tuple[int, tuple[float, ...], dict[str, float], int]] = {
    "phase-0/k2-drafter": (2, (0.45, 0.13), {"mt-bench": -0.06, "gsm8k": 0.02, "humaneval": 0.05}, 36),
    "phase-0/from-scratch": (3, (0.62, 0.27, 0.11), {"mt-bench": -0.05, "gsm8k": 0.03, "humaneval": 0.04}, 36),
    "phase-1/k2-drafter-ft": (2, (0.88, 0.72), {"mt-bench": -0.04, "gsm8k": 0.01, "humaneval": 0.03}, 36),
}
STEPS_PER_REQUEST = (300, 900)


def survival_to_buckets(survival: list[float], steps: int) -> list[int]:
    """Steps with exactly i drafts accepted (i = 0..k) for a survival curve P(≥k), rounded to whole steps."""
    shares = [1.0 - survival[0]] + [survival[i] - survival[i + 1] for i in range(len(survival) - 1)] + [survival[-1]]
    counts = [int(round(share * steps)) for share in shares]
    counts[0] += steps - sum(counts)
    return counts


def request_histograms(plan: tuple[int, tuple[float, ...], dict[str, float], int], rng: random.Random) -> list[tuple[str, list[int]]]:
    k, pooled, shifts, count = plan
    out: list[tuple[str, list[int]]] = []
    for index in range(count):
        dataset = DATASETS[index % len(DATASETS)]
        bad = index % 11 == 7  # a request the drafter fails on (long tool output, another language)
        factor = 0.25 if bad else 1.0 + rng.uniform(-0.12, 0.12)
        survival = [min(0.98, max(0.0, (p + shifts[dataset]) * factor)) for p in pooled]
        survival = [min(survival[: i + 1]) for i in range(k)]  # P(≥k) never grows with k
        out.append((dataset, survival_to_buckets(survival, rng.randint(*STEPS_PER_REQUEST))))
    # make the pooled accepted drafts per step exactly the variant's: move steps between buckets 0 and 1
    steps = sum(sum(h) for _, h in out)
    target = round(sum(pooled) * steps)
    accepted = sum(i * c for _, h in out for i, c in enumerate(h))
    order = [i for i in range(count) if i % 11 != 7]
    turn = 0
    while accepted != target:
        hist = out[order[turn % len(order)]][1]
        if accepted < target and hist[0] > 0:
            hist[0] -= 1
            hist[1] += 1
            accepted += 1
        elif accepted > target and hist[1] > 0:
            hist[1] -= 1
            hist[0] += 1
            accepted -= 1
        turn += 1
    return out


def response(variant: str, index: int, dataset: str, histogram: list[int], rng: random.Random) -> dict[str, object]:
    steps = sum(histogram)
    correct = sum(i * c for i, c in enumerate(histogram))
    k = len(histogram) - 1
    completion = steps + correct  # each verify step emits its accepted drafts plus one token
    rid = f"{variant.replace('/', '-')}-{index:03d}"
    return {
        "id": rid,
        "dataset": dataset,
        "text": "…",
        "meta_info": {
            "id": rid,
            "finish_reason": {"type": "length", "length": completion},
            "prompt_tokens": rng.randint(26, 420),
            "completion_tokens": completion,
            "cached_tokens": 0,
            "spec_verify_ct": steps,
            "spec_accept_length": completion / steps,
            "spec_accept_rate": correct / (steps * k),
            "spec_num_correct_drafts": correct,
            "spec_num_proposed_drafts": steps * k,
            "spec_correct_drafts_histogram": histogram,
        },
    }


def write_demo_acceptance(out: Path) -> list[Path]:
    written = []
    for folder, plan in PLANS.items():
        rng = random.Random(f"specdash-demo-acceptance-{folder}")
        lines = [json.dumps(response(folder, i, dataset, hist, rng))
                 for i, (dataset, hist) in enumerate(request_histograms(plan, rng))]
        path = out / folder / "requests.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
    return written
