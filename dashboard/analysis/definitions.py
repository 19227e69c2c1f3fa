"""What every number on the pages means and how it is shown, written once.

Two parts: the definitions (hover help, the Definitions panels, Markdown and HTML reports), and the
display declaration — each quantity's unit and decimals (``Quantity``) and each table column's label,
help and quantity (``COLUMNS``). Tables, chart hovers, captions, reports and summaries format numbers
only through these; values stay at full precision until shown, so exports carry every digit.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

TOK_PER_S = "tok/s per run = output tokens ÷ wall time of that run. Warm-up runs are excluded from every figure."
TOKENS_OVER_TIME = "Σtok/Σtime = total output tokens ÷ total wall time over the measured runs."
MEAN_OF_RUNS = ("Mean of runs = average of the per-run tok/s; it differs from Σtok/Σtime when runs differ in "
                "length (a long slow run weighs more in Σtok/Σtime).")
CI = "95% CI (t) = mean of runs ± t(0.975, n−1)·sd/√n: Student's t, since sessions have 3–10 runs."
DELTA = ("Δ = headline tok/s − the baseline's headline tok/s, by the same estimator as the headline above it "
         "(Σtok/Σtime or mean of runs); Δ% = Δ ÷ the baseline's headline = speedup − 1. Its 95% CI is Welch's "
         "(unequal variances) on each headline's standard error: for Σtok/Σtime the ratio estimator's, "
         "√(Σ(tokᵢ − R·timeᵢ)² ÷ (n−1)) ÷ (mean time·√n) with R = Σtok/Σtime; for the mean of runs sd/√n. "
         "'within noise' when that interval spans 0.")
SPEEDUP = "Speedup = headline tok/s ÷ the baseline's headline tok/s."
TOKENS_PER_STEP = ("τ = accept length = tokens/step (as SGLang logs it) = tokens emitted per verify step, bonus token "
                   "included (floor 1.00). From the server-log decode lines inside measured runs' time windows "
                   "(run_log_stats; warm-ups and idle stretches excluded), weighted by #running-req.")
ACCEPTED_DRAFTS = "accepted drafts/step = tokens/step − 1: draft tokens accepted per step, bonus excluded; 0 for a drafter whose every draft is rejected."
CYCLE_EST = ("est. cycle = tokens/step × requests decoding together ÷ headline tok/s (baseline: 1 ÷ tok/s = one decode "
             "step); a throughput of 16 concurrent requests is 16 streams' tokens. A cycle-model estimate, not a "
             "measurement; a profiler trace replaces it on the Break-even page.")
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

# Why a figure is outside its domain and is not shown as a result (issue #29). Placeholders take numbers already
# formatted by their Quantity.
TAU_BELOW_FLOOR = ("τ = {tau} is below 1.00, the floor of tokens per step (the bonus token is always emitted): the "
                   "source is not a bonus-inclusive accept length, or is broken, so no break-even is computed from it.")
R_BELOW_ONE = ("r = {r} < 1: one speculative cycle costs less than one baseline step, so speculation wins at every "
               "τ ≥ 1 (S = τ ÷ r > 1). Break-even would need τ = r, below the floor 1: there is no break-even accept length.")
ACCEPT_BELOW_FLOOR = ("accept length {value} is below 1.00, the floor of tokens per step (bonus included): not a "
                      "bonus-inclusive figure, or broken; left out")
RATE_OUTSIDE = "rate {value} is outside 0–100%: not an acceptance rate as read; left out"
SURVIVAL_OUTSIDE = "P(≥ k) = {value} at k = {k} is outside 0–100%"
SURVIVAL_RISES = ("survival rises from {before} at k = {k0} to {after} at k = {k1}: these per-position figures are not "
                  "one run's P(≥ k) (nor products of its conditional rates)")
CONDITIONAL_OUTSIDE = "P(k | k−1) = {value} at k = {k} is outside 0–100%"
SAMPLES_DROP = ("position {k1} pools {after} sample(s) and position {k0} pools {before}: samples that drafted fewer "
                "positions drop out, so the pooled positions are not one population")
SWEEP_POOLS_FILES = ("This sweep pools {files} files that no label or server config says are one system ({names}): "
                     "speedup is shown only where one file holds both the baseline and the speculative point; label "
                     "the files (`specdash label`) or ingest their server configs to pair them across files.")
SWEEP_LEFT_OUT = "{count} point(s) give no {axis} ({names}) and are left out of this sweep's figures."
SWEEP_NO_CONFIG = ("The drafter config (steps · topk · draft tokens) is unknown for these points: their files carry no "
                   "server config, so the grid shows '?' for it.")
SWEEP_NO_X = "{variant} has no point with a {axis}: nothing to place on the grid."


# --- how numbers are shown: one declaration per quantity -------------------------------------------

EMPTY = "—"  # what an empty cell or a missing number reads, everywhere (st.dataframe's placeholder too)
TIME_TEXT = "%Y-%m-%d %H:%M:%S"  # timestamps in sentences and reports (UTC, as stored)
TIME_COLUMN = "YYYY-MM-DD HH:mm:ss"  # the same for st.column_config.DatetimeColumn (moment.js tokens)


def missing(value: Any) -> bool:
    """None, NaN, NaT and pd.NA: the values a cell must never show as such."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists and other containers are values, not gaps
        return False


WHOLE_TICKS_UP_TO = 6  # a whole-number axis up to this value gets a tick per unit (Quantity.ticks)


@dataclass(frozen=True)
class Quantity:
    """One kind of number: its unit and decimals, the same in tables, chart hovers, captions and reports."""

    name: str
    unit: str  # after the number ("ms", "tok/s"); "%" and "×" stick to it; "" for counts
    decimals: int
    scale: float = 1.0  # shares are stored as 0..1 and shown ×100 as a percentage
    thousands: bool = True  # 12,345; off for token counts, written as max_tokens is (2048)

    @property
    def suffix(self) -> str:
        if not self.unit:
            return ""
        return self.unit if self.unit in ("%", "×") else f" {self.unit}"

    def number(self, value: Any, signed: bool = False) -> str:
        """The value at this quantity's decimals, thousands separated, without unit; EMPTY when missing."""
        if missing(value):
            return EMPTY
        scaled = float(value) * self.scale
        if math.isinf(scaled):
            return "∞"
        return f"{scaled:{'+' if signed else ''}{',' if self.thousands else ''}.{self.decimals}f}"

    def text(self, value: Any, signed: bool = False, unit: bool = True) -> str:
        """The value with its unit (``unit=False`` inside a column whose label carries it)."""
        number = self.number(value, signed)
        return number + self.suffix if unit and number not in (EMPTY, "∞") else number

    def interval(self, low: Any, high: Any, signed: bool = False, unit: bool = True) -> str:
        """A confidence interval as 'low – high', one unit at the end; EMPTY when an end is missing."""
        if missing(low) or missing(high):
            return EMPTY
        return f"{self.number(low, signed)} – {self.number(high, signed)}{self.suffix if unit else ''}"

    def shown(self, values: pd.Series) -> pd.Series:
        """A column's values as a table displays them (shares ×100); still numbers, at full precision."""
        return pd.to_numeric(values, errors="coerce") * self.scale if self.scale != 1 else values

    def printf(self, signed: bool = False) -> str:
        """The column format for st.column_config.NumberColumn (sprintf-js, ``,`` separates thousands)."""
        return f"%{'+' if signed else ''}{',' if self.thousands else ''}.{self.decimals}f" + ("%%" if self.unit == "%" else "")

    def d3(self, signed: bool = False) -> str:
        """The same number as a d3 format, for plotly hovertemplates, tick labels and text."""
        kind = "%" if self.scale == 100 else "f"
        return f"{'+' if signed else ''}{',' if self.thousands else ''}.{self.decimals}{kind}"

    def hover(self, variable: str, signed: bool = False) -> str:
        """A plotly hovertemplate piece, e.g. ``%{y:,.1f} tok/s``."""
        suffix = "" if self.scale == 100 else self.suffix  # d3's % already appends the sign
        return "%{" + variable + ":" + self.d3(signed) + "}" + suffix

    def ticks(self, largest: float | None = None) -> dict[str, Any]:
        """A plotly axis's tick labels at this quantity's precision (``fig.update_yaxes(**TOK_S.ticks())``).

        The unit stays in the axis title, except a percent sign on values already in percent: d3 appends it
        only to scaled shares. ``largest``, the axis's largest value: a whole-number quantity up to
        ``WHOLE_TICKS_UP_TO`` gets a tick per unit, where plotly's own would fall on halves and read "0, 1, 1, 1".
        """
        settings: dict[str, Any] = {"tickformat": self.d3()}
        if self.unit == "%" and self.scale != 100:
            settings["ticksuffix"] = "%"
        if self.decimals == 0 and largest is not None and largest <= WHOLE_TICKS_UP_TO:
            settings["dtick"] = 1
        return settings


TOK_S = Quantity("throughput", "tok/s", 1)
MS = Quantity("time", "ms", 2)
SECONDS = Quantity("duration", "s", 2)
ACCEPT = Quantity("accept length", "tokens/step", 2)  # tokens/step and accepted drafts/step alike
RATIO = Quantity("ratio", "", 2)  # r and the speedup S: dimensionless
PERCENT = Quantity("percent", "%", 1)  # values already in percent (Δ %)
SHARE = Quantity("share", "%", 0, scale=100)  # fractions 0..1 (communication share)
COUNT = Quantity("count", "", 0)  # runs, lines, tokens, calls
TOKENS = Quantity("tokens", "tokens", 0, thousands=False)  # a run's prompt and output, max_tokens
REQ_S = Quantity("request rate", "req/s", 2)
QUANTITIES = (TOK_S, MS, SECONDS, ACCEPT, RATIO, PERCENT, SHARE, COUNT, TOKENS, REQ_S)


# What the trace's cycle components are called, in stacking order: the breakdown chart's legend and its table
# say the same words (the store's names, like draft_extend, are not for people).
CYCLE_PARTS = {
    "draft": "draft",
    "verify compute": "verify: compute",
    "verify communication": "verify: communication (all-reduce)",
    "draft_extend": "draft-extend",
    "decode compute": "decode step: compute",
    "decode communication": "decode step: communication (all-reduce)",
    "other": "other",
    "unattributed": "unattributed (no phase marker)",
    "idle": "GPU idle",
}


# The trace's kernel classes (trace_ranks column → name, what it holds): the kernel-class chart's legend and
# its table say the same words.
KERNEL_CLASSES = {
    "communication_ms": ("communication", "GPU time of communication kernels (NCCL all-reduce and custom all-reduce)"),
    "gemm_ms": ("GEMM", "Matrix multiplications"),
    "attention_ms": ("attention", "Attention kernels"),
    "moe_ms": ("MoE", "Mixture-of-experts kernels"),
    "memcpy_ms": ("memcpy/memset", "Memory copies and sets"),
    "other_kernel_ms": ("other kernels", "Every other kernel"),
    "idle_ms": ("GPU idle", "No GPU work"),
}


# --- the label table: every column a page shows ----------------------------------------------------

Width = Literal["small", "medium", "large"] | int | None
TEXT_WIDTH = 160  # px: a column of long text gets this width and wraps (about 21 characters a line)
HEADER_CHAR_PX, HEADER_PADDING_PX = 7.5, 16  # a header's width per character of its label, generously, and padding


@dataclass(frozen=True)
class Column:
    """A table column as people read it: label in words with its unit, help, and the quantity of its numbers.

    Keys of ``COLUMNS`` are the column names the builders (frames.py) give; pages show ``label``.
    A column without ``quantity`` holds text (or booleans, datetimes: their type decides).
    """

    label: str
    help: str
    quantity: Quantity | None = None
    signed: bool = False
    width: Width = None


BLANK_BASELINE = f"{EMPTY} for the baseline: it is the reference."
BLANK_NO_SPECULATION = (f"{EMPTY} = no speculation (one token per step: the baseline) or no server log linked to the "
                        "runs (accept length comes only from the log).")
BLANK_NO_VERIFY = f"{EMPTY} = no verify phase: a baseline decode step."

COLUMNS: dict[str, Column] = {
    # --- who and when
    "variant": Column("variant", "The variant: its --variant label, or the name its server config implies "
                      "(drafter and speculation settings)."),
    "phase": Column("phase", f"Experiment phase (--phase at ingest); {EMPTY} = none given."),
    "method": Column("method", "The speculative method (EAGLE-3, EAGLE, MTP, n-gram, Medusa, lookahead, draft model; "
                     "none = no speculation), from the variant's server config or the file's own method column. "
                     f"{EMPTY} = no file says."),
    "session": Column("session", "Session id (what `specdash ingest --link-to` takes)."),
    "started": Column("started", "When the run began (as the benchmark recorded it)."),
    "ended": Column("ended", "When the run ended."),
    # --- Compare: speed
    "runs": Column("runs", "Measured runs (warm-ups excluded); for bench records and log lines, records or lines.",
                   COUNT),
    "Σtok/Σtime": Column("Σtok/Σtime (tok/s)", TOKENS_OVER_TIME, TOK_S),
    "mean of runs": Column("mean of runs (tok/s)", MEAN_OF_RUNS, TOK_S),
    "95% CI": Column("95% CI (tok/s)", CI + " n/a (n < 2): fewer than 2 runs, records or log lines; n/a (too few): "
                     "the interval would reach 0 tok/s or below, so these few samples bound nothing."),
    "Δ tok/s": Column("Δ tok/s", DELTA + " " + BLANK_BASELINE, TOK_S, signed=True),
    "Δ %": Column("Δ %", DELTA + " " + BLANK_BASELINE, PERCENT, signed=True),
    "Δ 95% CI": Column("Δ 95% CI (tok/s)", DELTA + " " + BLANK_BASELINE),
    "verdict": Column("verdict", "faster / slower: the Δ interval excludes 0; within noise: it spans 0."),
    "speedup": Column("speedup", SPEEDUP, RATIO),
    # --- Compare: why
    "tokens/step": Column("τ (tokens/step)", TOKENS_PER_STEP + " " + BLANK_NO_SPECULATION, ACCEPT),
    "drafts/step": Column("accepted drafts/step", ACCEPTED_DRAFTS + " " + BLANK_NO_SPECULATION, ACCEPT),
    "cycle ms (est.)": Column("est. cycle (ms)", CYCLE_EST + f" {EMPTY}: a variant that may speculate, with no "
                             "tokens/step to multiply by, or a throughput of an unrecorded number of requests.", MS),
    "short runs": Column("short runs", SHORT_RUN, COUNT),
    "like-for-like": Column("like-for-like", LIKE_FOR_LIKE),
    # --- throughput sources
    "throughput from": Column("throughput from", HEADLINE_ORDER, width=TEXT_WIDTH),
    "n": Column("n", "How many runs, records or log lines the figure is over.", COUNT),
    "of": Column("counted in", "What n counts: benchmark runs, bench records or server-log lines."),
    "tok/s": Column("tok/s", "Output tokens ÷ wall time: per run for a run; for a source, Σtokens ÷ Σtime over its "
                    "runs, records or log lines.", TOK_S),
    "sd": Column("sd (tok/s)", f"Sample standard deviation of the per-run (or per-record, per-line) tok/s; {EMPTY} "
                 "with a single value.", TOK_S),
    "headline": Column("headline", f"✓ = the variant's headline tok/s uses this source ({EMPTY}: another one does)."),
    # --- comparability
    "setting": Column("setting", "A server argument (server_args) or a benchmark setting."),
    "kind": Column("kind", "For a setting, what a difference in it means: drafter and speculation settings differ by "
                   "design; setup, benchmark and observed differences break like-for-like. For a file, the format that "
                   "read it (`specdash formats` lists them)."),
    "baseline": Column("baseline's value", f"The baseline's value of the setting; {EMPTY} = not set."),
    "this variant": Column("this variant's value", f"This variant's value of the setting; {EMPTY} = not set."),
    # --- runs of a session
    "run": Column("run", "W1, W2 … = warm-up runs (excluded from every figure); 1, 2 … = measured runs."),
    "warm-up": Column("warm-up", "Warm-up run: excluded from every figure."),
    "flag": Column("flag", SHORT_RUN + " ✓ full length: the run reached max_tokens. "
                   f"{EMPTY}: the file gives no max_tokens to tell. Warm-ups are excluded from every figure."),
    "prompt tokens": Column("prompt (tokens)", "Prompt length of the run.", TOKENS),
    "output tokens": Column("output (tokens)", "Tokens generated in the run.", TOKENS),
    "time (s)": Column("time (s)", "Wall time of the run.", SECONDS),
    "tokens/step (log)": Column("accept length (log, tokens/step)", TOKENS_PER_STEP + " " + BLANK_NO_SPECULATION, ACCEPT),
    "drafts/step (log)": Column("accepted drafts/step (log)", ACCEPTED_DRAFTS + " " + BLANK_NO_SPECULATION, ACCEPT),
    "gen tok/s (log)": Column("gen throughput (log, tok/s)", "Mean of the server's gen throughput over the run's window, "
                              f"the first (idle-spanning) line excluded; {EMPTY} = no server log linked.", TOK_S),
    "decode lines": Column("decode lines (log)", "Server-log decode lines inside the run's time window. When several "
                           "logs saw the run, the log with the most lines (of equal ones, the lowest source id); the "
                           f"row's other log figures come from it too. {EMPTY} = no server log linked.", COUNT),
    "finish": Column("finish reason", f"Why the run stopped (length = hit max_tokens, stop = end of sequence); {EMPTY} = "
                     "not recorded."),
    # --- a bench record's figures
    "figure": Column("figure", "A figure the bench record holds (only those it holds are listed)."),
    "value": Column("value", "As recorded, units in the figure's name."),
    # --- break-even
    "tokens/step τ": Column("τ now (tokens/step)", TOKENS_PER_STEP, ACCEPT),
    "drafts/step now": Column("accepted drafts/step now", ACCEPTED_DRAFTS, ACCEPT),
    "r": Column("r", COST_RATIO, RATIO),
    "cycle ms": Column("cycle (ms)", "One speculative cycle (a baseline: one decode step): measured in a profiler trace "
                       "when one was ingested (per rank the median complete cycle; the slowest rank sets the pace), else "
                       "the cycle model's estimate.", MS),
    "cycle from": Column("cycle from", "trace = measured in a profiler trace; cycle model = tokens/step × requests decoding together ÷ tok/s."),
    "cycle ms (cycle model)": Column("cycle model (ms)", CYCLE_EST, MS),
    "S = τ ÷ r": Column("S = τ ÷ r", BREAK_EVEN, RATIO),
    "observed speedup": Column("observed speedup", SPEEDUP, RATIO),
    "break-even τ": Column("break-even τ (tokens/step)", "Accept length (bonus incl.) at which S = 1 at this cycle "
                           "cost: τ = r.", ACCEPT),
    "break-even drafts/step": Column("break-even accepted drafts/step", "Accepted drafts per step at which S = 1 at "
                                     "this cycle cost: r − 1.", ACCEPT),
    "break-even cycle ms": Column("break-even cycle (ms)", "Cycle time at which S = 1 at this accept length: "
                                  "τ × baseline step.", MS),
    "baseline step ms": Column("baseline step (ms)", "One baseline decode step: measured in its trace, else 1 ÷ its tok/s.",
                               MS),
    "point from": Column("point from", "session = that session's tok/s and accept length (cycle model); trace = the "
                         "variant's measured cycle."),
    # --- breakdown
    "part": Column("part", "A part of the pace-setting (slowest) rank's mean complete cycle, as the chart names it; "
                   "the parts add up to the whole cycle. " + BREAKDOWN.split(" Bars:")[0]),
    "rank": Column("rank", "Tensor-parallel rank (from the trace's distributedInfo or its file name).", COUNT),
    "cycles": Column("cycles", "Complete cycles (baseline: decode steps) of the rank in the trace.", COUNT),
    "median cycle (ms)": Column("median cycle (ms)", "Median complete cycle of the rank. " + RANKS, MS),
    "slowest cycle (ms)": Column("slowest cycle (ms)", "The rank's longest complete cycle.", MS),
    "median verify (ms)": Column("median verify (ms)", "Median verify phase of the rank. " + BLANK_NO_VERIFY, MS),
    "communication per cycle (ms)": Column(
        "communication / cycle (ms)", "Speculative ranks: median communication inside verify. Baseline ranks (no "
        "verify): the rank's communication kernels over the whole trace ÷ its decode steps.", MS),
    "stage": Column("stage", f"Prefill or decode server in a disaggregated (PD) setup; {EMPTY} = not disaggregated."),
    "file": Column("file", "Trace file name (one per rank).", width=TEXT_WIDTH),
    "GPU": Column("GPU", f"GPU name from the trace; {EMPTY} = not recorded."),
    "span (ms)": Column("span (ms)", "First to last GPU event of the trace.", MS),
    "GPU busy (ms)": Column("GPU busy (ms)", "Union of all kernels and memcpys: time some GPU work ran.", MS),
    "GPU idle (ms)": Column("GPU idle (ms)", "Span − busy: no GPU work.", MS),
    "kernels": Column("kernels", "GPU kernels in the trace.", COUNT),
    **{f"{name} (ms)": Column(f"{name} (ms)", what + ", union over the trace (overlaps on several streams merged).", MS)
       for name, what in KERNEL_CLASSES.values() if name != "GPU idle"},
    "kernel": Column("kernel", "Kernel name as the trace records it (templates shortened by the profiler).", width=TEXT_WIDTH),
    "cycle phase": Column("cycle phase", "The part of the cycle the kernel ran in, as the breakdown chart names it (a "
                          "baseline: decode step)."),
    "class": Column("class", "Kernel class: communication (nccl*, custom all-reduce), gemm, attention, moe, memcpy, other."),
    "calls per rank": Column("calls / rank", "Launches of the kernel per rank (mean over ranks).", COUNT),
    "total per rank (ms)": Column("total / rank (ms)", "Summed durations per rank (overlaps not merged).", MS),
    "mean (ms)": Column("mean (ms)", "Mean duration of one launch.", MS),
    "p99 (ms)": Column("p99 (ms)", "99th percentile of one launch's duration (slowest rank).", MS),
    # --- phases
    "dates": Column("dates", "From the phase's earliest to its latest evidence (run, record, log line or trace)."),
    "sessions": Column("sessions", "Sessions of any origin: benchmarks, server lifetimes, bench records, trace sets.", COUNT),
    "measured runs": Column("measured runs", "Benchmark runs, warm-ups excluded (bench records and log lines are not "
                            "runs).", COUNT),
    "decisions": Column("decisions", f"Decisions recorded for the phase; {EMPTY} = none yet."),
    "headline per variant": Column("headline per variant (tok/s)",
                                   "Headline tok/s over measured runs, runs, records or log lines; τ = accept length "
                                   "(tokens/step, bonus incl.).", width=260),
    "mean": Column("mean of runs (tok/s)", MEAN_OF_RUNS, TOK_S),
    "95% CI low": Column("95% CI low (tok/s)", CI + f" {EMPTY}: fewer than 2 runs.", TOK_S),
    "95% CI high": Column("95% CI high (tok/s)", CI + f" {EMPTY}: fewer than 2 runs.", TOK_S),
    # --- decisions
    "decided (UTC)": Column("decided (UTC)", "When the decision was recorded."),
    "title": Column("title", "The decision's title."),
    "evidence": Column("evidence", "Stale: the evidence sessions' numbers have changed since the decision (re-ingest, "
                       "new runs)."),
    "numbers then": Column("numbers then", "The headline numbers frozen with the decision.", width=260),
    # --- files and provenance
    "role": Column("role", "What the file is to this session."),
    "path": Column("path", "Where the file was read from (relative to the folder named above the table).", width=TEXT_WIDTH),
    "on disk": Column("on disk", "present / changed since ingest (size differs) / gone."),
    "sha256": Column("sha256", "Content hash (first 12 hex digits): re-ingesting the same bytes is a no-op."),
    "linked by": Column("linked by", f"How a server log was linked to the session; {EMPTY} for the session's own file."),
    "ingested": Column("ingested (UTC)", "When the file was ingested."),
    "changed": Column("changed (UTC)", "When the label change was made (`specdash label` or Ingest → Label files)."),
    "change": Column("change", "What the label change did to the file: relabelled (a new variant name), re-phased, or deleted."),
    "labelled file": Column("file", "The file whose labels changed (`specdash label --history` gives whole paths).",
                            width=TEXT_WIDTH),
    "was": Column("was", "The variant the pages showed the file's evidence under, and its phase, before the change."),
    "now": Column("now", f"The file's variant and phase after the change; {EMPTY} for a deleted file. \"as the file "
                  "says\": a new phase only, the variant still named from the file's evidence."),
    "rows loaded": Column("rows loaded", "Rows the file added to the store's tables.", COUNT),
    "lines skipped": Column("lines skipped", "Lines (or events) read but not used: noise, other log lines, unused "
                            "trace events.", COUNT),
    "label": Column("variant label", f"--variant given at ingest; {EMPTY} = none: a log names its variants from its "
                    "server args, a benchmark from its own fields or its folder."),
    "what": Column("what", "What the format is.", width=240),
    "example line": Column("example line", "A line or record the format reads.", width=240),
    # --- Sweeps page (dashboard/analysis/sweeps.py: best_table; its definitions read these helps)
    "batch size": Column("batch size", "The batch size the sweep point was measured at (requests decoded together).",
                         COUNT),
    "max concurrency": Column("max concurrency", "bench_serving's --max-concurrency of the point's records.", COUNT),
    "draft depth": Column("draft depth", "Tokens drafted per cycle at most: llama.cpp's --spec-draft-n-max, vLLM's "
                          "num_speculative_tokens, SGLang's speculative_num_steps, as the sweep's file names it.", COUNT),
    "sweep acceptance rate": Column("acceptance rate (%)", "Accepted ÷ drafted tokens as the sweep's file gives it (a "
                                    "rate, not an accept length: without the verify-step count it cannot be turned "
                                    "into tokens/step).", SHARE),
    "request rate": Column("request rate (req/s)", "bench_serving's --request-rate of the point's records.", REQ_S),
    "best config": Column("steps · topk · draft", "The best config: speculative_num_steps · speculative_eagle_topk · "
                          "speculative_num_draft_tokens of the config with the highest speedup at this point."),
    "sweep tok/s": Column("tok/s", "The variant's tok/s at this point, of the sweep's throughput kind (modelled for "
                          "bench_speculative.py: accept length ÷ the server's p20 step time), mean over repeats.", TOK_S),
    "sweep speedup": Column("speedup (×)", "Speedup = the variant's tok/s ÷ the baseline's tok/s measured at the same "
                            "batch size (or concurrency) in the same sweep; never a baseline from another batch. "
                            "A file that gives speedups and no tok/s (a leaderboard): its own figure.", RATIO),
    "reported speedup": Column("reported speedup (×)", "The speedup the file itself gives (a leaderboard's column): "
                               "its own baseline and method, not recomputed here.", RATIO),
    "throughput kind": Column("throughput kind", "What the tok/s is: measured wall-clock, modelled from step time, "
                              "server-reported, or a decode rate from TPOT."),
    "sweep τ": Column("τ (tokens/step)", "Accept length = tokens per verify step, bonus token included, as the sweep "
                      "file gives it.", ACCEPT),
    "sweep cycle ms": Column("cycle (ms)", "Step / cycle time: the server's p20 step time where the sweep gives it "
                             "(bench_speculative.py: modelled), else estimated by the cycle model as τ × batch ÷ tok/s "
                             "(baseline: τ = 1).", MS),
    # --- Drafters page (dashboard/drafter_frames.py)
    "drafter": Column("drafter", "The checkpoint's folder name (or its file's name)."),
    "status": Column("status", "The worst of its verdicts: ok, SUSPICIOUS (worth a look) or WRONG (acceptance will "
                     "collapse); not checked = no mapping tensors were read (config.json alone)."),
    "mapping form": Column("mapping form", "How d2t is stored: offsets (target id = draft id + d2t[draft id], what "
                           "SGLang and vLLM expect), absolute ids wrongly stored as offsets, or none (full vocabulary)."),
    "worst finding": Column("worst finding", "The verdict that sets the status, with its reason (all verdicts below the "
                            "table).", width=TEXT_WIDTH),
    "target vocab": Column("target vocab", "vocab_size in config.json: the target model's vocabulary (token ids).", COUNT),
    "draft vocab": Column("draft vocab", f"draft_vocab_size in config.json (token ids); {EMPTY} = none set: the drafter "
                          "predicts over the full target vocabulary.", COUNT),
    "checkpoint size": Column("size (KB)", "Checkpoint size: the files the drafter consists of, summed: config.json, the "
                              "safetensors weights or shards, and model.safetensors.index.json.",
                              Quantity("file size", "KB", 0, scale=1e-3)),
    "token file": Column("token file", "Generated tokens from: the token-count or output-ids file of what the target generated."),
    "generated tokens": Column("tokens", "Tokens the target generated, as the file counts them.", COUNT),
    "distinct ids": Column("distinct ids", "Distinct target ids among the generated tokens.", COUNT),
    "in draft vocab": Column("in draft vocab", "In the draft vocabulary: generated tokens whose target id the draft "
                             "vocabulary holds.", COUNT),
    "coverage": Column("coverage (%)", "Share of the generated tokens the draft vocabulary can express at all: an upper "
                       "bound on acceptance at every draft position.", Quantity("coverage", "%", 1, scale=100)),
    "reading": Column("reading", "Position by position: does draft id i stand for the same target token in both? As "
                      "sets: which target tokens both vocabularies hold, wherever they sit."),
    "measure": Column("measure", "What is counted."),
    "comparison value": Column("value", "Draft ids or target tokens; Jaccard = shared ÷ union of the two vocabularies."),
    # --- Acceptance page (dashboard/views/acceptance.py; dashboard/analysis/acceptance.py reads its definitions here)
    "acceptance source": Column("source", "Which engine output the figures come from: a vLLM SpecDecoding metrics "
                                "line, a bench or spec_decode.py summary, Prometheus counters (deltas or since start), "
                                "per-request histograms or fields, a sweep file."),
    "acceptance scope": Column("scope", "per window: one log interval or one pair of /metrics snapshots · per run: one "
                               "benchmark run's summary · lifetime: counters since the server started (includes warm-up "
                               "and earlier traffic) · per request: pooled over the requests' own statistics · server "
                               "lifetime: bench_serving's accept_length is the server's average since start."),
    "draft positions": Column("positions", "Draft positions the source reports.", COUNT),
    "τ from positions": Column("τ (tokens/step)", "τ = 1 + Σ P(≥ k): the accept length from the per-position curve, 1 + the "
                               "sum over positions of P(≥ k accepted), bonus token included.", ACCEPT),
    "first below threshold": Column("first below threshold", "The first draft position whose conditional "
                                    f"rate P(k | k−1) falls below the threshold set above; {EMPTY} = none does.", COUNT),
    "acceptance samples": Column("samples", "Log intervals, snapshot deltas, runs or requests pooled.", COUNT),
    "position k": Column("k", "Draft position k: 1 = the first draft token after the verified prefix.", COUNT),
    "P(≥ k)": Column("P(≥ k) (%)", "P(≥ k accepted) = share of draft steps whose first k draft tokens were "
                     "all accepted. vLLM prints exactly this as its per-position acceptance rate (accepted at position k "
                     "÷ drafts); from a per-request histogram it is Σ_{i≥k} steps with i accepted ÷ all steps. Summed "
                     "over k, plus 1, it is the accept length.", SHARE),
    **{key: Column(label, "p10–p90 = the spread of the per-window (log interval, snapshot delta) or per-request values "
                   f"of P(≥ k accepted) around the pooled one; {EMPTY} = a single sample.", SHARE)
       for key, label in (("P(≥ k) p10", "p10 (%)"), ("P(≥ k) p90", "p90 (%)"))},
    "P(k | k−1)": Column("P(k | k−1) (%)", "P(k | k−1) = P(≥ k accepted) ÷ P(≥ k−1 accepted): the chance the k-th "
                         "draft survives given the ones before it did. Unlike the mean rate (accepted ÷ drafted), it "
                         "does not shrink when more tokens are drafted.", SHARE),
    "drafted tokens N": Column("drafted tokens N", "Draft tokens per cycle in the model (1 … the positions measured).",
                               COUNT),
    "τ(N)": Column("τ(N) (tokens/step)", "Cycle model: τ(N) = 1 + Σ_{k≤N} P(≥ k accepted); cycle(N) = N × draft step "
                   "+ verify + draft-extend (+ N × verify per extra token); speedup S = τ(N) × baseline step ÷ cycle(N). "
                   "An estimate: measured inputs come from profiler traces, the rest are assumptions you can change.",
                   ACCEPT),
    "model cycle ms": Column("cycle (ms)", "cycle(N) = N × draft step + verify + draft-extend (+ N × verify per extra "
                             "token), from the inputs above.", MS),
    "model speedup": Column("speedup S", "S = τ(N) × baseline step ÷ cycle(N): modelled, not measured.", RATIO),
    "best N": Column("best", f"✓ = the N with the highest modelled speedup; {EMPTY} = another N models better."),
    "requests": Column("requests", "Requests with a per-request accept length.", COUNT),
    "rate requests": Column("requests", "Requests that give an acceptance rate but no accept length: their file "
                            "counts drafted and accepted tokens, not verify steps.", COUNT),
    "request acceptance rate": Column("acceptance rate (%)", "Accepted ÷ drafted tokens, pooled over the requests' "
                                      "drafted tokens (else the mean of their rates). A rate, not an accept length: "
                                      "without the verify-step count it cannot be turned into tokens/step.", SHARE),
    "rate from": Column("from", "Which outputs gave the rates.", width=TEXT_WIDTH),
    "accept length": Column("accept length (tokens/step)", "Accept length = tokens emitted per verify step, bonus token "
                            "included (1 + accepted drafts per step). SGLang per request: completion tokens ÷ "
                            "spec_verify_ct; vLLM: 1 + accepted ÷ steps (or ÷ drafts).", ACCEPT),
    "request spread": Column("p10 · p50 · p90 (tokens/step)", "The per-request accept length (tokens per verify step, "
                             "bonus included) that 10%, 50% and 90% of the requests are at or below."),
    "requests mean CI": Column("mean (95% CI) (tokens/step)", "Mean of requests (each request counts once, unweighted), "
                               "with Student's t 95% interval over requests; n/a (n < 2): a single request."),
    "pooled": Column("pooled (tokens/step)", "Pooled = weighted by drafts (log intervals, counter deltas) or verify steps "
                     "(requests), never averaged per line or request.",
                     ACCEPT),
    "request id": Column("request id", f"The request's id as the engine or client wrote it; {EMPTY} = not recorded."),
    "dataset": Column("dataset", "The dataset or category, as the client or benchmark tagged it."),
    "request prompt": Column("prompt (tokens)", f"Prompt length of the request; {EMPTY} = not recorded.", TOKENS),
    "request output": Column("output (tokens)", f"Tokens generated for the request; {EMPTY} = not recorded.", TOKENS),
    "verify steps": Column("verify steps", f"Verify steps (forward passes of the target) of the request; {EMPTY} = not "
                           "recorded.", COUNT),
    "request file": Column("file", "The file the request's record was read from.", width=TEXT_WIDTH),
    "line": Column("line", "Its line in that file (1-based).", COUNT),
    "Δ accept length": Column("Δ (tokens/step)", "This variant's accept length − the reference's (chosen "
                              f"above), same dataset; {EMPTY} for the reference itself or a dataset it lacks.", ACCEPT,
                              signed=True),
    "output throughput": Column("output tok/s", f"Output throughput as the benchmark reported it; {EMPTY} = not reported "
                                "(per-request records carry none).", TOK_S),
    "records": Column("records", "Benchmark records or sweep configs behind the cell.", COUNT),
    "counter kind": Column("kind", "counter delta = between two snapshots (that window's figures); counters since start "
                           "= totals since the server started; gauge = the engine's own averaging, never differenced."),
    "metrics window": Column("window", "Which snapshots: 'snapshots a→b' (a delta) or 'snapshot N'; the data-parallel "
                             "engines summed into the row when several; 'server restarted inside' when a counter went "
                             "down (the window counts from zero).", width=TEXT_WIDTH),
    "drafts": Column("drafts", "Draft steps (vLLM: spec_decode_num_drafts) in the window.", COUNT),
    "accepted": Column("accepted", "Accepted draft tokens in the window.", COUNT),
    "window accept length": Column("τ (tokens/step)", "Accept length of the window: 1 + accepted draft tokens ÷ drafts "
                                   "(counters), or the engine's exported gauge.", ACCEPT),
    "mean rate": Column("mean rate (%)", "Mean acceptance rate = accepted draft tokens ÷ drafted tokens (a "
                        "fraction; vLLM's logs print it in percent).", SHARE),
    # --- training logs (Acceptance page, "Training: simulated vs served acceptance")
    "training file": Column("training log", "The training log the figures were read from.", width=TEXT_WIDTH),
    "trainer": Column("trainer", "The training framework whose console the log is (SpecForge, NeMo AutoModel)."),
    "last step": Column("last step", f"The last training step the log names; {EMPTY} = none named.", COUNT),
    "simulated τ (train)": Column("simulated τ, train (tokens/step)", "Simulated accept length at the last logged "
                                  "training step: 1 + Σ over draft steps of the share of positions whose draft prefix "
                                  "matches the target's tokens, as the trainer computed it — what training promises, "
                                  f"not a served figure. {EMPTY} = the trainer prints none (SpecForge).", ACCEPT),
    "simulated τ (eval)": Column("simulated τ, eval (tokens/step)", "The same on the held-out evaluation, at its last "
                                 f"logged evaluation; {EMPTY} = no evaluation logged.", ACCEPT),
    "training accuracy": Column("accuracy (%)", "The drafter's top-1 accuracy against the target at that step, as the "
                                f"trainer printed it (a fraction); {EMPTY} = not printed.", SHARE),
    "served τ": Column("served τ (tokens/step)", "The same variant's accept length as served (bonus included), from this "
                       f"page's readings; {EMPTY} = no served acceptance for the variant (label the log with the "
                       "variant its drafter was served as).", ACCEPT),
    "served τ from": Column("served τ from", "Which reading the served τ comes from: per-request (pooled), a "
                            "per-position curve, or the mean of per-dataset figures, in that order.", width=TEXT_WIDTH),
    "served − simulated": Column("served − simulated (tokens/step)", "Served τ − the simulated τ (eval when logged, "
                                 "else train): negative = serving accepts less than training promised.", ACCEPT,
                                 signed=True),
    "training split": Column("split", "train, eval (held-out evaluation) or decode (a real decode during training)."),
    "epoch": Column("epoch", "The training epoch.", COUNT),
    "training step": Column("step", f"The training step; {EMPTY} = the line names none (an end-of-epoch evaluation).",
                            COUNT),
    "training loss": Column("loss", "The loss as the trainer printed it (per position: that draft step's).", RATIO),
    "training acceptance rate": Column("acceptance rate (%)", "SpecForge's expected acceptance rate (per position, or "
                                       f"the mean over positions), a fraction; {EMPTY} = not printed.", SHARE),
    "simulated τ": Column("simulated τ (tokens/step)", "Simulated accept length the trainer printed at that step "
                          "(bonus included).", ACCEPT),
    "learning rate": Column("learning rate", "The learning rate at that step, in scientific notation as trainers "
                            "print it (the download carries every digit)."),
}

# Columns named after whose values they hold (the config side-by-sides, the breakdown's variants): the name
# is the label.
COLUMN_PATTERNS: tuple[tuple[re.Pattern[str], str, Quantity | None], ...] = (
    (re.compile(r".+ \(ms\)"), f"That variant's mean ms per cycle in the part; {EMPTY} = the variant has no such part.", MS),
    (re.compile(r"this \(.+\)"), f"This session's server argument; {EMPTY} = not set.", None),
    (re.compile(r"baseline \(.+\)"), f"The baseline's server argument; {EMPTY} = not set.", None),
    (re.compile(r"value in .+"), f"That drafter's speculation setting; {EMPTY} = not set.", None),
)


def column(name: str) -> Column | None:
    """The declared column for a builder's column name, or None (a page must not show it)."""
    if name in COLUMNS:
        return COLUMNS[name]
    for pattern, help_text, quantity in COLUMN_PATTERNS:
        if pattern.fullmatch(name):
            return Column(name, help_text, quantity)
    return None
