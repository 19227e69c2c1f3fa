"""What every number on the pages means, written once: hover help, the Definitions panels, Markdown and HTML reports."""
from __future__ import annotations

TOK_PER_S = "tok/s per run = output tokens ÷ wall time of that run. Warm-up runs are excluded from every figure."
TOKENS_OVER_TIME = "Σtok/Σtime = total output tokens ÷ total wall time over the measured runs."
MEAN_OF_RUNS = "Mean of runs = average of the per-run tok/s; it differs from Σtok/Σtime (51.88 vs 51.78 for the K2 probe)."
CI = "95% CI (t) = mean of runs ± t(0.975, n−1)·sd/√n: Student's t, since sessions have 3–10 runs."
DELTA = ("Δ = mean of runs − the baseline's mean of runs; Δ% = Δ ÷ the baseline's mean. Its 95% CI is Welch's "
         "(unequal variances); 'within noise' when that interval spans 0.")
SPEEDUP = "Speedup = headline tok/s ÷ the baseline's headline tok/s."
TOKENS_PER_STEP = ("tokens/step (accept length as SGLang logs it) = tokens emitted per verify step, bonus token "
                   "included (floor 1.00). From the server-log decode lines inside measured runs' time windows "
                   "(run_log_stats; warm-ups and idle stretches excluded), weighted by #running-req.")
ACCEPTED_DRAFTS = "accepted drafts/step = tokens/step − 1: draft tokens accepted per step, bonus excluded (the story's 0.58)."
CYCLE_EST = ("est. cycle = tokens/step ÷ headline tok/s (baseline: 1 ÷ tok/s = one decode step). A cycle-model "
             "estimate, not a measurement; a profiler trace replaces it on the Break-even page.")
COST_RATIO = "r = cycle time ÷ baseline step time: how many baseline steps one speculative cycle costs."
TAU = "τ = tokens per cycle = accepted drafts + 1 bonus token (= tokens/step)."
BREAK_EVEN = "Speedup S = τ ÷ r. Speculation breaks even at S = 1, i.e. τ = r: accepted drafts per step ≥ r − 1."
SHORT_RUN = "Short run: a measured run that stopped before max_tokens; short runs skew tok/s."
LIKE_FOR_LIKE = ("Like-for-like: same model, version, parallelism, CUDA graph, max_tokens and prompt lengths as the "
                 "baseline; only the drafter and its speculation settings differ.")
HEADLINE_ORDER = ("Headline order: a variant's headline tok/s comes from the first source it has — 1 benchmark runs "
                  "(output tokens ÷ wall time per run), 2 bench records at max concurrency 1 (output throughput), "
                  "3 server-log `gen throughput` lines at 1 running request, 4 bench records at a higher or unrecorded "
                  "concurrency (all streams together), 5 server-log lines at several running requests. Log lines "
                  "right after an idle gap of more than 10 s are left out: they span the gap. See docs/metrics.md.")

BREAKDOWN = ("From PyTorch profiler traces: each GPU kernel is attributed to the draft, verify or draft-extend "
             "phase whose launch encloses it; kernels overlapping on several streams are merged as a union, never "
             "summed. Bars: the mean complete cycle of the pace-setting (slowest) rank. See docs/breakdown.md.")
COMMUNICATION_SHARE = ("Communication share = GPU time of communication kernels (NCCL all-reduce and custom "
                       "all-reduce, any phase) ÷ the mean complete cycle of the pace-setting rank.")
RANKS = ("The same all-reduce takes different wall time on each rank: the fastest rank's approximates the "
         "transfer, the rest is waiting for the slowest rank, which sets everyone's pace.")

ALL = (TOK_PER_S, TOKENS_OVER_TIME, MEAN_OF_RUNS, CI, DELTA, SPEEDUP, TOKENS_PER_STEP, ACCEPTED_DRAFTS, CYCLE_EST,
       TAU, COST_RATIO, BREAK_EVEN, SHORT_RUN, LIKE_FOR_LIKE, HEADLINE_ORDER)
