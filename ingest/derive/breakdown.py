"""Where a speculative cycle's GPU time goes: per cycle, per rank, per phase, per kernel class.

Pure functions over the normalized events of one rank (``RankEvents``, built by
``ingest/parsers/traces/kineto.py`` or by hand in tests). No file, no database.

1. **Phase of each kernel** (``attribute_phases``): the kernel's ``correlation``
   id finds its CPU launch (``cuda_runtime``/``cuda_driver``; every kernel of a
   CUDA-graph replay shares the replay's id); of the phase markers around that
   launch on the launching thread, the highest priority present decides (an
   explicit ``step[...]`` span over speculative-worker functions over generic
   model-runner functions, see ``ingest/derive/trace_rules.py``) and, within it, the
   outermost: a draft-forward helper called from inside draft-extend is
   draft-extend time, as the code's call structure says. Fallbacks,
   in order: the ``gpu_user_annotation`` envelope on the kernel's stream; in a
   trace with verify steps, a kernel right before a verify (and not after one)
   is the draft replayed as a CUDA graph. ``DECODE`` forwards in a trace that
   has verify steps are draft forwards. Anything else stays ``unattributed``.
2. **Cycles** (``find_cycles``): draft → verify → draft_extend is one cycle;
   each decode step (baseline) or prefill is its own. A cycle runs from its
   first kernel to the next cycle's first kernel, so scheduler gaps count as idle.
   GPU time before the first cycle is cycle ``-1`` (kind ``outside``); a trace
   with no phase at all is one ``whole_trace`` cycle ``0``.
3. **Time** (``account_time``): kernels on several streams overlap, so time is a
   union of intervals, never a sum. Each instant of GPU time is given to exactly
   one (phase, kernel class) by priority (phases in ``PHASES`` order, then
   classes in ``KERNEL_CLASSES`` order: communication first, so the verify
   step's communication share is the plain union of its communication kernels).
   ``duration_ms`` (exclusive) + ``idle`` add up to the cycle; ``union_ms`` is
   the class's own union inside the phase, overlap included.

``estimate_cycle`` is the cycle model without a trace (DOMAIN.md §2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise
from statistics import median
from typing import Any

import numpy as np

from ingest.derive.trace_rules import (
    COMMUNICATION,
    DECODE,
    DRAFT,
    DRAFT_EXTEND,
    IDLE,
    KERNEL_CLASSES,
    OTHER_PHASE,
    PHASES,
    TARGET_PREFILL,
    UNATTRIBUTED,
    VERIFY,
    TraceRules,
)

PHASE_CODES: tuple[str, ...] = (*PHASES, UNATTRIBUTED)  # index = phase code = overlap priority
CLASS_CODES: tuple[str, ...] = KERNEL_CLASSES
P_UNATTRIBUTED = PHASE_CODES.index(UNATTRIBUTED)
P_VERIFY, P_DRAFT, P_DRAFT_EXTEND = PHASE_CODES.index(VERIFY), PHASE_CODES.index(DRAFT), PHASE_CODES.index(DRAFT_EXTEND)
P_DECODE, P_PREFILL, P_OTHER = PHASE_CODES.index(DECODE), PHASE_CODES.index(TARGET_PREFILL), PHASE_CODES.index(OTHER_PHASE)

NO_MARKER = -1
METHODS = ("none", "launch_marker", "gpu_annotation", "position")  # how a kernel got its phase
M_NONE, M_LAUNCH, M_GPU, M_POSITION = range(4)

KERNEL_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")

SPECULATIVE, DECODE_STEP, PREFILL, OTHER_CYCLE, OUTSIDE, WHOLE_TRACE = (
    "speculative", "decode", "prefill", "other", "outside", "whole_trace",
)
MEASURED = "measured"  # kernel_class of hand-timed cycle rows (cycle_timing files)


# --- normalized events -----------------------------------------------------------------------

def _f64(values: Any = ()) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def _i64(values: Any = ()) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


@dataclass
class Kernels:
    """GPU activity: kernels, memcpys and memsets. Times in µs on the rank's clock."""

    start: np.ndarray = field(default_factory=_f64)
    end: np.ndarray = field(default_factory=_f64)
    stream: np.ndarray = field(default_factory=_i64)
    correlation: np.ndarray = field(default_factory=_i64)  # -1: none
    name: np.ndarray = field(default_factory=_i64)  # index into RankEvents.names
    category: np.ndarray = field(default_factory=_i64)  # index into KERNEL_CATEGORIES

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class Launches:
    """CPU-side launches (cuda_runtime/cuda_driver events that carry a correlation id)."""

    correlation: np.ndarray = field(default_factory=_i64)
    thread: np.ndarray = field(default_factory=_i64)
    ts: np.ndarray = field(default_factory=_f64)

    def __len__(self) -> int:
        return len(self.ts)


@dataclass
class Markers:
    """Phase-marker ranges on a lane: a CPU thread (launch markers) or a GPU stream (envelopes)."""

    lane: np.ndarray = field(default_factory=_i64)
    start: np.ndarray = field(default_factory=_f64)
    end: np.ndarray = field(default_factory=_f64)
    phase: np.ndarray = field(default_factory=_i64)  # index into PHASE_CODES
    priority: np.ndarray = field(default_factory=_i64)
    source: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class RankEvents:
    rank: int
    kernels: Kernels
    launches: Launches = field(default_factory=Launches)
    cpu_markers: Markers = field(default_factory=Markers)
    gpu_markers: Markers = field(default_factory=Markers)
    names: list[str] = field(default_factory=list)


# --- intervals ---------------------------------------------------------------------------------

def merge_intervals(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, disjoint intervals covering exactly the union of the given ones."""
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if starts.size == 0:
        return _f64(), _f64()
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new_group = np.empty(starts.size, dtype=bool)
    new_group[0] = True
    new_group[1:] = starts[1:] > reach[:-1]
    group = np.cumsum(new_group) - 1
    merged_start = starts[new_group]
    merged_end = np.zeros(merged_start.size)
    np.maximum.at(merged_end, group, ends)
    return merged_start, merged_end


def union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    merged_start, merged_end = merge_intervals(_f64(starts), _f64(ends))
    return float(np.sum(merged_end - merged_start))


def outermost_segments(
    starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flatten ranges of one lane into sorted, disjoint segments labelled with the outermost range.

    Ranges of one thread nest (Chrome-trace complete events), so the outermost range
    around an instant is the first one, by start (the longest on equal starts), that
    contains it. A partial overlap is read as nesting of the later range: it owns only
    what sticks out past the earlier one. Vectorised: each range's segment starts where
    every earlier range has ended (the running maximum of their ends), no Python loop.
    """
    starts, ends = _f64(starts), _f64(ends)
    order = np.lexsort((-ends, starts))
    ordered_start, ordered_end = starts[order], ends[order]
    reach = np.maximum.accumulate(np.r_[-math.inf, ordered_end[:-1]]) if order.size else _f64()
    seg_start = np.maximum(ordered_start, reach)
    keep = ordered_end > seg_start  # nested ranges (and empty ones) leave no segment of their own
    return seg_start[keep], ordered_end[keep], order[keep].astype(np.int64)


def lookup_segments(
    seg_start: np.ndarray, seg_end: np.ndarray, seg_label: np.ndarray, at: np.ndarray
) -> np.ndarray:
    """For each time in ``at``, the label of the segment containing it, else NO_MARKER."""
    if seg_start.size == 0 or at.size == 0:
        return np.full(at.size, NO_MARKER, dtype=np.int64)
    index = np.searchsorted(seg_start, at, side="right") - 1
    safe = np.clip(index, 0, seg_start.size - 1)
    inside = (index >= 0) & (at < seg_end[safe])
    return np.where(inside, seg_label[safe], NO_MARKER)


def marker_at(markers: Markers, lanes: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The marker (index) around each (lane, time): the outermost of the highest priority present.

    Priorities rank kinds of marker (``step[...]`` spans over speculative-worker functions over
    generic model-runner functions, see ``ingest/derive/trace_rules.py``); within one, the outermost
    decides because it is the phase the code was in: a draft-forward helper called from inside
    draft-extend is draft-extend work.
    """
    found = np.full(times.size, NO_MARKER, dtype=np.int64)
    if len(markers) == 0 or times.size == 0:
        return found
    for priority in sorted(set(markers.priority.tolist()), reverse=True):
        for lane in np.unique(markers.lane[markers.priority == priority]):
            chosen = np.flatnonzero((markers.priority == priority) & (markers.lane == lane))
            seg_start, seg_end, seg_label = outermost_segments(markers.start[chosen], markers.end[chosen])
            ask = np.flatnonzero((lanes == lane) & (found == NO_MARKER))
            hit = lookup_segments(seg_start, seg_end, seg_label, times[ask])
            hit_index = np.flatnonzero(hit != NO_MARKER)
            found[ask[hit_index]] = chosen[hit[hit_index]]
    return found


# --- 1. phase of each kernel ------------------------------------------------------------------

@dataclass
class Attribution:
    phase: np.ndarray  # per kernel, index into PHASE_CODES
    method: np.ndarray  # per kernel, index into METHODS
    instance: np.ndarray  # per kernel: which marker range (distinct steps split cycles); -1 none
    launches_found: int
    kernel_class: np.ndarray  # per kernel, index into CLASS_CODES


def classify_kernels(events: RankEvents, rules: TraceRules) -> np.ndarray:
    """Class code per kernel; the rules run once per distinct (name, category), not per kernel."""
    kernels = events.kernels
    pair = kernels.name * len(KERNEL_CATEGORIES) + kernels.category
    distinct, inverse = np.unique(pair, return_inverse=True)
    lookup = _i64(
        [
            CLASS_CODES.index(rules.kernel_class(events.names[code // len(KERNEL_CATEGORIES)], KERNEL_CATEGORIES[code % len(KERNEL_CATEGORIES)]))
            for code in distinct.tolist()
        ]
    )
    return lookup[inverse] if lookup.size else np.zeros(0, dtype=np.int64)


def find_launches(kernels: Kernels, launches: Launches) -> np.ndarray:
    """Index of each kernel's launch (same correlation id), or -1."""
    result = np.full(len(kernels), -1, dtype=np.int64)
    if len(launches) == 0 or len(kernels) == 0:
        return result
    order = np.argsort(launches.correlation, kind="stable")
    sorted_ids = launches.correlation[order]
    index = np.searchsorted(sorted_ids, kernels.correlation)
    safe = np.clip(index, 0, sorted_ids.size - 1)
    matched = (kernels.correlation >= 0) & (index < sorted_ids.size) & (sorted_ids[safe] == kernels.correlation)
    result[matched] = order[safe[matched]]
    return result


def attribute_phases(events: RankEvents, rules: TraceRules) -> Attribution:
    kernels = events.kernels
    count = len(kernels)
    phase = np.full(count, P_UNATTRIBUTED, dtype=np.int64)
    method = np.full(count, M_NONE, dtype=np.int64)
    instance = np.full(count, NO_MARKER, dtype=np.int64)

    launch = find_launches(kernels, events.launches)
    launched = np.flatnonzero(launch >= 0)
    by_launch = marker_at(
        events.cpu_markers, events.launches.thread[launch[launched]], events.launches.ts[launch[launched]]
    )
    hit = by_launch != NO_MARKER
    phase[launched[hit]] = events.cpu_markers.phase[by_launch[hit]]
    method[launched[hit]] = M_LAUNCH
    instance[launched[hit]] = by_launch[hit]

    apply_gpu_envelopes(events, phase, method, instance)
    if np.any(phase == P_VERIFY):
        phase[phase == P_DECODE] = P_DRAFT  # forward_mode DECODE in a speculative run is the drafter
        recover_draft_by_position(kernels.start, phase, method)
    return Attribution(phase, method, instance, int(launched.size), classify_kernels(events, rules))


def apply_gpu_envelopes(events: RankEvents, phase: np.ndarray, method: np.ndarray, instance: np.ndarray) -> None:
    """Fallback: the gpu_user_annotation span around the kernel on its own stream."""
    pending = np.flatnonzero(phase == P_UNATTRIBUTED)
    if pending.size == 0 or len(events.gpu_markers) == 0:
        return
    kernels = events.kernels
    middle = (kernels.start[pending] + kernels.end[pending]) / 2
    found = marker_at(events.gpu_markers, kernels.stream[pending], middle)
    hit = found != NO_MARKER
    phase[pending[hit]] = events.gpu_markers.phase[found[hit]]
    method[pending[hit]] = M_GPU
    instance[pending[hit]] = len(events.cpu_markers) + found[hit]


def recover_draft_by_position(start: np.ndarray, phase: np.ndarray, method: np.ndarray) -> None:
    """Unattributed kernels right before a verify, and not after one, are the draft (a CUDA graph with no span)."""
    order = np.argsort(start, kind="stable")
    ordered = phase[order]
    attributed = ordered != P_UNATTRIBUTED
    positions = np.arange(ordered.size)
    last_seen = np.maximum.accumulate(np.where(attributed, positions, -1))
    next_seen = np.minimum.accumulate(np.where(attributed, positions, ordered.size)[::-1])[::-1]
    previous = np.where(last_seen >= 0, ordered[np.clip(last_seen, 0, None)], P_UNATTRIBUTED)
    following = np.where(next_seen < ordered.size, ordered[np.clip(next_seen, None, ordered.size - 1)], P_UNATTRIBUTED)
    draft = ~attributed & (following == P_VERIFY) & (previous != P_VERIFY)
    phase[order[draft]] = P_DRAFT
    method[order[draft]] = M_POSITION


# --- 2. cycles ------------------------------------------------------------------------------

@dataclass
class Cycle:
    index: int
    kind: str
    start: float
    end: float
    phases: set[int]
    complete: bool = True


CYCLE_PHASES = (P_DRAFT, P_VERIFY, P_DRAFT_EXTEND, P_DECODE, P_PREFILL)


def starts_new_cycle(current: int, previous: int | None) -> bool:
    """Does a run of phase ``current`` after a run of ``previous`` open a new cycle?"""
    if previous is None or current in (P_DECODE, P_PREFILL):
        return True
    if current == P_DRAFT:
        return previous != P_DRAFT
    if current == P_VERIFY:
        return previous != P_DRAFT
    return previous == P_DECODE  # draft_extend continues a speculative or prefill cycle


def phase_runs(start: np.ndarray, phase: np.ndarray, instance: np.ndarray) -> list[tuple[int, float]]:
    """(phase, start time) of each run of kernels with the same phase and marker, in GPU order."""
    relevant = np.flatnonzero(np.isin(phase, CYCLE_PHASES))
    order = relevant[np.argsort(start[relevant], kind="stable")]
    if order.size == 0:
        return []
    run_phase, run_instance = phase[order], instance[order]
    changed = np.empty(order.size, dtype=bool)
    changed[0] = True
    changed[1:] = (run_phase[1:] != run_phase[:-1]) | (run_instance[1:] != run_instance[:-1])
    return [(int(p), float(t)) for p, t in zip(run_phase[changed], start[order][changed], strict=True)]


def find_cycles(kernels: Kernels, attribution: Attribution) -> list[Cycle]:
    runs = phase_runs(kernels.start, attribution.phase, attribution.instance)
    trace_start = float(kernels.start.min()) if len(kernels) else 0.0
    trace_end = float(kernels.end.max()) if len(kernels) else 0.0
    if not runs:
        return [Cycle(0, WHOLE_TRACE, trace_start, trace_end, set(), complete=True)]
    cycles: list[Cycle] = []
    previous: int | None = None
    for run_phase, run_start in runs:
        if starts_new_cycle(run_phase, previous):
            cycles.append(Cycle(len(cycles), "", run_start, math.nan, set()))
        cycles[-1].phases.add(run_phase)
        previous = run_phase
    for current, following in pairwise(cycles):
        current.end = following.start
    cycles[-1].end = trace_end
    seen = set().union(*(cycle.phases for cycle in cycles))
    for cycle in cycles:
        cycle.kind = cycle_kind(cycle.phases)
        cycle.complete = is_complete(cycle.kind, cycle.phases, seen)
    if trace_start < cycles[0].start:
        cycles.insert(0, Cycle(-1, OUTSIDE, trace_start, cycles[0].start, set(), complete=False))
    return cycles


def cycle_kind(phases: set[int]) -> str:
    if P_PREFILL in phases:
        return PREFILL
    if phases & {P_DRAFT, P_VERIFY}:
        return SPECULATIVE
    if P_DECODE in phases:
        return DECODE_STEP
    return OTHER_CYCLE


def is_complete(kind: str, phases: set[int], phases_in_trace: set[int]) -> bool:
    """A speculative cycle is complete when it has every speculative phase the trace shows at all."""
    if kind != SPECULATIVE:
        return kind in (DECODE_STEP, PREFILL)
    expected = {P_DRAFT, P_VERIFY, P_DRAFT_EXTEND} & phases_in_trace
    return P_VERIFY in phases and expected <= phases


# --- 3. time ------------------------------------------------------------------------------------

@dataclass
class CycleTimes:
    """Per (cycle, phase, class): exclusive and union time (µs), kernel count, attribution methods."""

    cycles: list[Cycle]
    exclusive: np.ndarray  # [cycle, phase, class]
    union: np.ndarray  # [cycle, phase, class]
    kernel_count: np.ndarray  # [cycle, phase, class]
    method_bits: np.ndarray  # [cycle, phase, class]: bit m set when some kernel got its phase by METHODS[m]
    idle: np.ndarray  # [cycle]


def account_time(kernels: Kernels, attribution: Attribution, cycles: list[Cycle]) -> CycleTimes:
    n_cycles, n_phases, n_classes = len(cycles), len(PHASE_CODES), len(CLASS_CODES)
    cells = n_cycles * n_phases * n_classes
    edges = _f64([cycle.start for cycle in cycles] + [cycles[-1].end])
    bounds = np.unique(np.concatenate([kernels.start, kernels.end, edges]))
    seg_start, seg_length = bounds[:-1], np.diff(bounds)
    seg_cell = np.clip(np.searchsorted(edges, seg_start, side="right") - 1, 0, n_cycles - 1) * (n_phases * n_classes)
    key = attribution.phase * n_classes + attribution.kernel_class
    assigned = np.full(seg_start.size, -1, dtype=np.int64)
    union = np.zeros(cells)
    for present in np.unique(key):  # ascending key = descending priority
        chosen = key == present
        covered = coverage(bounds, kernels.start[chosen], kernels.end[chosen])
        union += np.bincount(seg_cell[covered] + present, seg_length[covered], cells)
        assigned[covered & (assigned < 0)] = present
    mine = assigned >= 0
    exclusive = np.bincount(seg_cell[mine] + assigned[mine], seg_length[mine], cells)
    kernel_cell = np.clip(np.searchsorted(edges, kernels.start, side="right") - 1, 0, n_cycles - 1) * (n_phases * n_classes) + key
    method_bits = np.zeros(cells, dtype=np.int64)
    np.bitwise_or.at(method_bits, kernel_cell, np.left_shift(1, attribution.method))
    shape = (n_cycles, n_phases, n_classes)
    busy = exclusive.reshape(n_cycles, -1).sum(axis=1)
    return CycleTimes(
        cycles,
        exclusive.reshape(shape),
        union.reshape(shape),
        np.bincount(kernel_cell, minlength=cells).reshape(shape),
        method_bits.reshape(shape),
        np.maximum(np.diff(edges) - busy, 0.0),
    )


def coverage(bounds: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which elementary segments [bounds[i], bounds[i+1]) the intervals cover."""
    first = np.searchsorted(bounds, starts)
    stop = np.searchsorted(bounds, ends)
    size = bounds.size
    depth = np.cumsum(np.bincount(first, minlength=size) - np.bincount(stop, minlength=size))
    return depth[:-1] > 0


# --- putting one rank together --------------------------------------------------------------------

@dataclass
class RankBreakdown:
    rank: int
    attribution: Attribution
    times: CycleTimes
    cycle_columns: dict[str, Any]  # cycle_phase_times columns, one entry per row
    kernel_rows: list[dict[str, Any]]
    class_union_ms: dict[str, float]
    busy_ms: float
    span_ms: float
    trace_start_us: float
    summary: dict[str, Any]


def analyze_rank(events: RankEvents, rules: TraceRules) -> RankBreakdown:
    kernels = events.kernels
    attribution = attribute_phases(events, rules)
    cycles = find_cycles(kernels, attribution)
    times = account_time(kernels, attribution, cycles)
    trace_start = float(kernels.start.min())
    class_union = {
        name: union_length(kernels.start[attribution.kernel_class == code], kernels.end[attribution.kernel_class == code]) / 1000
        for code, name in enumerate(CLASS_CODES)
    }
    return RankBreakdown(
        rank=events.rank,
        attribution=attribution,
        times=times,
        cycle_columns=cycle_columns(events.rank, times, trace_start),
        kernel_rows=kernel_rows(events, attribution),
        class_union_ms=class_union,
        busy_ms=union_length(kernels.start, kernels.end) / 1000,
        span_ms=(float(kernels.end.max()) - trace_start) / 1000,
        trace_start_us=trace_start,
        summary=summarize_times(times),
    )


# attribution label for each bit pattern of METHODS present (bit m = METHODS[m])
METHOD_LABELS = tuple("+".join(METHODS[m] for m in range(len(METHODS)) if bits >> m & 1) for bits in range(1 << len(METHODS)))


def cycle_columns(rank: int, times: CycleTimes, trace_start: float) -> dict[str, Any]:
    """Rows of ``cycle_phase_times`` as columns: every (cycle, phase, class) with GPU work, then one idle row per cycle."""
    cycles = times.cycles
    n_cycles, idle_phase, idle_class = len(cycles), len(PHASE_CODES), len(CLASS_CODES)
    c, p, k = np.nonzero((times.kernel_count > 0) | (times.union > 0))
    is_idle = np.r_[np.zeros(c.size, dtype=bool), np.ones(n_cycles, dtype=bool)]
    c = np.r_[c, np.arange(n_cycles)]
    order = np.lexsort((is_idle, c))  # cycle by cycle, its idle row last
    c, p, k, is_idle = c[order], np.r_[p, np.full(n_cycles, idle_phase)][order], np.r_[k, np.full(n_cycles, idle_class)][order], is_idle[order]
    work = ~is_idle
    cw, pw, kw = c[work], p[work], k[work]
    starts = _f64([cycle.start for cycle in cycles])
    ends = _f64([cycle.end for cycle in cycles])
    duration = np.empty(c.size)
    duration[work] = times.exclusive[cw, pw, kw]
    duration[is_idle] = times.idle
    union = np.full(c.size, np.nan)
    union[work] = times.union[cw, pw, kw]
    kernels = np.zeros(c.size, dtype=np.int64)
    kernels[work] = times.kernel_count[cw, pw, kw]
    bits = np.zeros(c.size, dtype=np.int64)
    bits[work] = times.method_bits[cw, pw, kw]
    attribution = np.array(METHOD_LABELS, dtype=object)[bits]
    attribution[is_idle] = None
    return {
        "rank": np.full(c.size, rank, dtype=np.int64),
        "cycle_idx": _i64([cycle.index for cycle in cycles])[c],
        "cycle_kind": np.array([cycle.kind for cycle in cycles], dtype=object)[c],
        "complete": np.array([cycle.complete for cycle in cycles], dtype=bool)[c],
        "cycle_start_us": (starts - trace_start)[c],
        "cycle_ms": ((ends - starts) / 1000)[c],
        "cycle_phase": np.array([*PHASE_CODES, IDLE], dtype=object)[p],
        "kernel_class": np.array([*CLASS_CODES, IDLE], dtype=object)[k],
        "duration_ms": duration / 1000,
        "union_ms": union / 1000,
        "kernels": kernels,
        "attribution": attribution,
    }


def kernel_rows(events: RankEvents, attribution: Attribution) -> list[dict[str, Any]]:
    """Per (kernel name, class, phase): count and duration statistics (sums of durations, not unions)."""
    kernels = events.kernels
    if len(kernels) == 0:
        return []
    durations = (kernels.end - kernels.start) / 1000
    n_phases, n_classes = len(PHASE_CODES), len(CLASS_CODES)
    combined = (kernels.name * n_classes + attribution.kernel_class) * n_phases + attribution.phase
    distinct, group_of = np.unique(combined, return_inverse=True)
    groups = np.stack([distinct // (n_classes * n_phases), distinct // n_phases % n_classes, distinct % n_phases])
    order = np.lexsort((durations, group_of))
    sorted_durations = durations[order]
    counts = np.bincount(group_of, minlength=groups.shape[1])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    totals = np.bincount(group_of, durations, minlength=groups.shape[1])
    rows = []
    for g in range(groups.shape[1]):
        values = sorted_durations[offsets[g] : offsets[g] + counts[g]]
        name, class_code, phase_code = groups[:, g]
        rows.append(
            {
                "rank": events.rank,
                "name": events.names[name],
                "kernel_class": CLASS_CODES[class_code],
                "cycle_phase": PHASE_CODES[phase_code],
                "count": int(counts[g]),
                "total_ms": float(totals[g]),
                "mean_ms": float(totals[g] / counts[g]),
                "p50_ms": float(np.quantile(values, 0.5)),
                "p99_ms": float(np.quantile(values, 0.99)),
                "max_ms": float(values[-1]),
            }
        )
    rows.sort(key=lambda row: -row["total_ms"])
    return rows


# --- summaries -----------------------------------------------------------------------------------

STEP_KINDS = (SPECULATIVE, DECODE_STEP)
C_COMMUNICATION = CLASS_CODES.index(COMMUNICATION)


def summarize_times(times: CycleTimes) -> dict[str, Any]:
    """A rank's medians over its complete decode/speculative cycles."""
    steps = np.array([cycle.kind in STEP_KINDS for cycle in times.cycles], dtype=bool)
    counted = steps & np.array([cycle.complete for cycle in times.cycles], dtype=bool)
    cycle_ms = _f64([(cycle.end - cycle.start) / 1000 for cycle in times.cycles])
    verify_ms = times.exclusive[:, P_VERIFY, :].sum(axis=1) / 1000
    verify_comm_ms = times.exclusive[:, P_VERIFY, C_COMMUNICATION] / 1000
    return summarize_cycles(cycle_ms[counted], verify_ms[counted], verify_comm_ms[counted], cycles=int(steps.sum()))


def summarize_cycles(
    cycle_ms: np.ndarray, verify_ms: np.ndarray, verify_comm_ms: np.ndarray, *, cycles: int
) -> dict[str, Any]:
    """Medians over the given (complete) cycles; the SQL view ``cycle_rank_summary`` computes the same."""
    has_verify = bool(verify_ms.size and verify_ms.sum() > 0)

    def middle(values: np.ndarray) -> float | None:
        return float(np.median(values)) if values.size else None

    return {
        "cycles": cycles,
        "complete_cycles": int(cycle_ms.size),
        "median_cycle_ms": middle(cycle_ms),
        "max_cycle_ms": float(cycle_ms.max()) if cycle_ms.size else None,
        "median_verify_ms": middle(verify_ms) if has_verify else None,
        "median_verify_comm_ms": middle(verify_comm_ms) if has_verify else None,
        "verify_comm_share": float(verify_comm_ms.sum() / verify_ms.sum()) if has_verify else None,
    }


def summarize_across_ranks(rank_summaries: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Median and max across ranks of each per-rank median; the slowest rank sets the pace."""
    result: dict[str, Any] = {"ranks": len(rank_summaries)}
    for key in ("median_cycle_ms", "median_verify_ms", "median_verify_comm_ms", "verify_comm_share"):
        values = [s[key] for s in rank_summaries.values() if s.get(key) is not None]
        result[f"{key}_median"] = median(values) if values else None
        result[f"{key}_max"] = max(values) if values else None
    timed = {rank: s["median_cycle_ms"] for rank, s in rank_summaries.items() if s.get("median_cycle_ms") is not None}
    result["slowest_rank"] = max(sorted(timed), key=timed.__getitem__) if timed else None  # a tie: the lowest rank
    return result


# --- without a trace: the cycle model (DOMAIN.md §2) ----------------------------------------------

@dataclass(frozen=True)
class CycleEstimate:
    """An ESTIMATE from throughput and accept length alone, not a measurement.

    ``cycle_ms`` = τ ÷ tok/s; ``cost_ratio`` r = cycle ÷ baseline step (1 ÷ baseline tok/s);
    ``speedup`` S = τ ÷ r; speculation breaks even at τ = r (``break_even_tokens_per_step``,
    i.e. r − 1 accepted drafts per step), or, at this τ, when the cycle costs no more than
    τ baseline steps (``break_even_cycle_ms``).
    """

    tokens_per_step: float
    tok_per_s: float
    baseline_tok_per_s: float
    cycle_ms: float
    baseline_step_ms: float
    cost_ratio: float
    speedup: float
    break_even_tokens_per_step: float
    break_even_accepted_drafts: float
    break_even_cycle_ms: float


def estimate_cycle(tokens_per_step: float, tok_per_s: float, baseline_tok_per_s: float) -> CycleEstimate:
    """Estimate the speculative cycle from τ (bonus-inclusive tokens per step) and two throughputs.

    This is the cycle model of DOMAIN.md §2, an estimate: it assumes every cycle
    emits τ tokens and the measured tok/s is pure decode. E.g. the K2 drafter
    (τ 1.58, 51.8 tok/s, baseline 82) → cycle 30.5 ms, r 2.50, break-even τ 2.50.
    """
    for label, value in (("tok_per_s", tok_per_s), ("baseline_tok_per_s", baseline_tok_per_s), ("tokens_per_step", tokens_per_step)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{label} must be a positive number, got {value!r}")
    if tokens_per_step < 1:
        raise ValueError(
            f"tokens_per_step {tokens_per_step} < 1: it counts the bonus token, so a dead drafter gives 1.00; "
            "if this is accepted drafts per step, add 1"
        )
    cycle_ms = tokens_per_step / tok_per_s * 1000
    baseline_step_ms = 1000 / baseline_tok_per_s
    ratio = cycle_ms / baseline_step_ms
    return CycleEstimate(
        tokens_per_step=tokens_per_step,
        tok_per_s=tok_per_s,
        baseline_tok_per_s=baseline_tok_per_s,
        cycle_ms=cycle_ms,
        baseline_step_ms=baseline_step_ms,
        cost_ratio=ratio,
        speedup=tokens_per_step / ratio,
        break_even_tokens_per_step=ratio,
        break_even_accepted_drafts=ratio - 1,
        break_even_cycle_ms=tokens_per_step * baseline_step_ms,
    )
