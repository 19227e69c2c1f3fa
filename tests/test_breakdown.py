"""The breakdown as a spec: intervals, phase attribution, cycles, time accounting, rules, the cycle model.

Events are built by hand here (times in µs), so every expected number can be checked on paper.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ingest.derive.breakdown import (
    CLASS_CODES,
    M_GPU,
    M_LAUNCH,
    M_NONE,
    M_POSITION,
    PHASE_CODES,
    Attribution,
    Kernels,
    Launches,
    Markers,
    RankEvents,
    account_time,
    analyze_rank,
    attribute_phases,
    estimate_cycle,
    find_cycles,
    merge_intervals,
    outermost_segments,
    summarize_across_ranks,
    union_length,
)
from ingest.derive.trace_rules import TraceRules, default_rules, load_user_rules
from ingest.errors import MalformedInput

RULES = default_rules()
P = {name: code for code, name in enumerate(PHASE_CODES)}
C = {name: code for code, name in enumerate(CLASS_CODES)}
WORKER = "sglang/srt/speculative/eagle_worker.py"


# --- builders -------------------------------------------------------------------------------------

def gpu(*rows: tuple[float, float, int, int, str]) -> tuple[Kernels, list[str]]:
    """(start, end, stream, correlation, name) per kernel."""
    names = sorted({row[4] for row in rows})
    return (
        Kernels(
            start=np.array([r[0] for r in rows], dtype=float),
            end=np.array([r[1] for r in rows], dtype=float),
            stream=np.array([r[2] for r in rows]),
            correlation=np.array([r[3] for r in rows]),
            name=np.array([names.index(r[4]) for r in rows]),
            category=np.zeros(len(rows), dtype=np.int64),
        ),
        names,
    )


def launches(*rows: tuple[int, float]) -> Launches:
    """(correlation, ts) per launch, all on thread 0."""
    return Launches(
        correlation=np.array([r[0] for r in rows]), thread=np.zeros(len(rows), dtype=np.int64), ts=np.array([r[1] for r in rows], dtype=float)
    )


def markers(*rows: tuple[str, float, float], lane: int = 0, category: str = "python_function") -> Markers:
    """(name, start, end) per range; phase and priority come from the built-in rules."""
    found = [RULES.phase_marker(name, category) for name, _, _ in rows]
    assert all(found), [name for (name, _, _), rule in zip(rows, found) if rule is None]
    return Markers(
        lane=np.full(len(rows), lane),
        start=np.array([r[1] for r in rows], dtype=float),
        end=np.array([r[2] for r in rows], dtype=float),
        phase=np.array([P[rule.phase] for rule in found]),
        priority=np.array([rule.priority for rule in found]),
        source=[rule.source for rule in found],
    )


def attribution(phases: list[str], instances: list[int] | None = None) -> Attribution:
    n = len(phases)
    return Attribution(
        phase=np.array([P[p] for p in phases]),
        method=np.full(n, M_LAUNCH),
        instance=np.array(instances if instances is not None else [-1] * n),
        launches_found=n,
        kernel_class=np.full(n, C["gemm"]),
    )


def back_to_back(n: int, length: float = 10.0) -> Kernels:
    kernels, _ = gpu(*[(i * length, (i + 1) * length, 7, i, "k") for i in range(n)])
    return kernels


# --- intervals ------------------------------------------------------------------------------------

def test_overlapping_kernels_count_once_as_a_union_not_a_sum() -> None:
    starts, ends = np.array([0.0, 5.0, 20.0, 25.0]), np.array([10.0, 15.0, 30.0, 26.0])
    merged_start, merged_end = merge_intervals(starts, ends)
    assert merged_start.tolist() == [0.0, 20.0] and merged_end.tolist() == [15.0, 30.0]
    assert union_length(starts, ends) == 25.0  # a sum would say 31


def test_touching_and_empty_intervals() -> None:
    assert union_length(np.array([0.0, 10.0, 40.0]), np.array([10.0, 20.0, 40.0])) == 20.0
    assert union_length(np.array([]), np.array([])) == 0.0


def test_outermost_segments_of_nested_ranges() -> None:
    # [0,100] holds [10,20] and [30,40]; [150,160] holds [150,155] (same start: the longer is outer);
    # [200,210] and [205,230] overlap partially: the later owns only what sticks out; [300,300] is empty
    seg_start, seg_end, label = outermost_segments(
        np.array([30.0, 0.0, 10.0, 150.0, 150.0, 205.0, 200.0, 300.0]),
        np.array([40.0, 100.0, 20.0, 155.0, 160.0, 230.0, 210.0, 300.0]),
    )
    assert list(zip(seg_start.tolist(), seg_end.tolist(), label.tolist())) == [
        (0, 100, 1), (150, 160, 4), (200, 210, 6), (210, 230, 5),
    ]
    assert [a.size for a in outermost_segments(np.array([]), np.array([]))] == [0, 0, 0]


# --- phase attribution --------------------------------------------------------------------------------

def test_worker_markers_beat_the_generic_model_runner_markers_they_enclose() -> None:
    kernels, names = gpu((200, 210, 7, 1, "k1"), (300, 310, 7, 2, "k2"))
    events = RankEvents(
        rank=0,
        kernels=kernels,
        launches=launches((1, 50), (2, 150)),
        cpu_markers=markers(
            (f"{WORKER}(512): verify", 0, 100),
            ("sglang/srt/model_executor/model_runner.py(1800): forward_extend", 10, 90),  # verify's target forward
            ("sglang/srt/model_executor/model_runner.py(1800): forward_extend", 120, 180),  # a real prefill
        ),
        names=names,
    )
    result = attribute_phases(events, RULES)
    assert [PHASE_CODES[p] for p in result.phase] == ["verify", "target_prefill"]
    assert result.method.tolist() == [M_LAUNCH, M_LAUNCH]


RUNNER = "sglang/srt/model_executor/model_runner.py"


def combined(*sets: Markers) -> Markers:
    """Markers of several categories on one thread (``markers`` builds one category at a time)."""
    return Markers(
        lane=np.concatenate([m.lane for m in sets]),
        start=np.concatenate([m.start for m in sets]),
        end=np.concatenate([m.end for m in sets]),
        phase=np.concatenate([m.phase for m in sets]),
        priority=np.concatenate([m.priority for m in sets]),
        source=[source for m in sets for source in m.source],
    )


def phases_of(events: RankEvents) -> list[str]:
    return [PHASE_CODES[p] for p in attribute_phases(events, RULES).phase]


@pytest.mark.parametrize("helper", ["draft_forward", "draft", "_draft_one_step"])
def test_a_drafter_helper_called_from_draft_extend_is_draft_extend_time(helper: str) -> None:
    # the same helper, called from draft-extend and from draft: the outermost worker function decides,
    # and the model runner's forward_extend/forward_decode inside it never does
    kernels, names = gpu((500, 510, 7, 1, "extend kernel"), (600, 610, 7, 2, "draft kernel"))
    events = RankEvents(
        0, kernels, launches((1, 30), (2, 230)),
        markers(
            (f"{WORKER}(640): forward_draft_extend_after_decode", 0, 100),
            (f"{WORKER}(470): {helper}", 10, 90),
            (f"{RUNNER}(1800): forward_extend", 20, 80),
            (f"{WORKER}(420): draft", 200, 300),
            (f"{WORKER}(470): {helper}", 210, 290),
            (f"{RUNNER}(1700): forward_decode", 220, 280),
        ),
        names=names,
    )
    assert phases_of(events) == ["draft_extend", "draft"]


def test_a_step_span_decides_over_any_python_function_around_or_inside_it() -> None:
    kernels, names = gpu((500, 510, 7, 1, "a"), (600, 610, 7, 2, "b"), (700, 710, 7, 3, "c"))
    stack = markers(
        (f"{WORKER}(470): draft_forward", 10, 90),  # inside step[DRAFT_EXTEND_V2 ...]
        (f"{WORKER}(420): draft", 200, 300),  # around step[VERIFY ...]: the span names the forward
        (f"{WORKER}(512): verify", 400, 480),  # no span here: the worker function decides
    )
    steps = markers(("step[DRAFT_EXTEND_V2 bs=1]", 0, 100), ("step[VERIFY bs=1]", 210, 290), category="user_annotation")
    events = RankEvents(0, kernels, launches((1, 30), (2, 230), (3, 430)), combined(stack, steps), names=names)
    assert phases_of(events) == ["draft_extend", "verify", "verify"]


def test_of_nested_step_spans_the_outermost_decides() -> None:
    # a worker-level span around the model runner's step[decode bs=N] forwards
    kernels, names = gpu(*[(500 + 10 * i, 505 + 10 * i, 7, i, "k") for i in range(4)])
    events = RankEvents(
        0, kernels, launches((0, 20), (1, 60), (2, 220), (3, 260)),
        markers(
            ("step[DRAFT_EXTEND_V2 bs=1]", 0, 100), ("step[decode bs=1]", 10, 40), ("step[decode bs=1]", 50, 90),
            ("step[DRAFT bs=1]", 200, 300), ("step[decode bs=1]", 210, 240), ("step[decode bs=1]", 250, 290),
            category="user_annotation",
        ),
        names=names,
    )
    result = attribute_phases(events, RULES)
    assert [PHASE_CODES[p] for p in result.phase] == ["draft_extend", "draft_extend", "draft", "draft"]
    assert result.instance.tolist() == [0, 0, 3, 3]  # one step each, not one per inner forward


def test_generic_model_runner_markers_decide_only_where_no_speculative_marker_encloses_the_launch() -> None:
    kernels, names = gpu((500, 510, 7, 1, "a"), (600, 610, 7, 2, "b"))
    stack = markers((f"{RUNNER}(1800): forward_extend", 0, 100), (f"{RUNNER}(1800): forward_extend", 200, 300))
    steps = markers(("step[DRAFT_EXTEND bs=1]", 210, 290), category="user_annotation")
    events = RankEvents(0, kernels, launches((1, 30), (2, 230)), combined(stack, steps), names=names)
    assert phases_of(events) == ["target_prefill", "draft_extend"]


def test_a_kernel_takes_the_phase_of_its_launch_not_of_when_it_ran() -> None:
    # launched inside draft (CPU 10..20), but the GPU ran it long after, while the CPU was in verify
    kernels, names = gpu((500, 600, 7, 1, "late"))
    events = RankEvents(0, kernels, launches((1, 15)), markers((f"{WORKER}(420): draft", 10, 20), (f"{WORKER}(512): verify", 30, 900)), names=names)
    assert PHASE_CODES[attribute_phases(events, RULES).phase[0]] == "draft"


def test_all_kernels_of_a_cuda_graph_replay_share_its_launch() -> None:
    kernels, names = gpu((100, 110, 7, 9, "a"), (110, 120, 7, 9, "b"), (120, 130, 8, 9, "c"))
    events = RankEvents(0, kernels, launches((9, 5)), markers((f"{WORKER}(420): draft", 0, 10)), names=names)
    result = attribute_phases(events, RULES)
    assert [PHASE_CODES[p] for p in result.phase] == ["draft"] * 3
    assert result.launches_found == 3


def test_decode_steps_in_a_speculative_trace_are_draft_forwards() -> None:
    kernels, names = gpu((100, 110, 7, 1, "d"), (200, 210, 7, 2, "v"))
    events = RankEvents(
        0, kernels, launches((1, 5), (2, 25)),
        markers(("step[DECODE bs=4]", 0, 10), ("step[TARGET_VERIFY bs=4]", 20, 30), category="user_annotation"), names=names,
    )
    assert [PHASE_CODES[p] for p in attribute_phases(events, RULES).phase] == ["draft", "verify"]


def test_without_launches_the_gpu_envelope_decides_and_the_draft_is_found_by_position() -> None:
    kernels, names = gpu(
        (0, 10, 7, -1, "draft graph kernel"),
        (20, 30, 7, -1, "verify kernel"),
        (25, 28, 22, -1, "side stream, no envelope"),
        (29, 35, 7, -1, "verify kernel"),
        (40, 50, 7, -1, "extend kernel"),
    )
    envelopes = markers(("step[TARGET_VERIFY bs=1]", 20, 35), ("step[DRAFT_EXTEND bs=1]", 40, 50), lane=7, category="gpu_user_annotation")
    result = attribute_phases(RankEvents(0, kernels, gpu_markers=envelopes, names=names), RULES)
    assert [PHASE_CODES[p] for p in result.phase] == ["draft", "verify", "unattributed", "verify", "draft_extend"]
    assert result.method.tolist() == [M_POSITION, M_GPU, M_NONE, M_GPU, M_GPU]


def test_time_no_rule_claims_stays_unattributed() -> None:
    kernels, names = gpu((0, 10, 7, 1, "a"), (20, 30, 7, 2, "b"))
    result = attribute_phases(RankEvents(0, kernels, launches((1, 0), (2, 5)), names=names), RULES)
    assert [PHASE_CODES[p] for p in result.phase] == ["unattributed", "unattributed"]


# --- cycles ------------------------------------------------------------------------------------------

def test_draft_verify_extend_make_one_cycle_each() -> None:
    cycles = find_cycles(back_to_back(7), attribution(["draft", "draft", "verify", "draft_extend", "draft", "verify", "draft_extend"], [1, 2, 3, 4, 5, 6, 7]))
    assert [(c.index, c.kind, c.start, c.end, c.complete) for c in cycles] == [
        (0, "speculative", 0, 40, True),
        (1, "speculative", 40, 70, True),
    ]


def test_consecutive_verify_steps_are_separate_cycles_when_the_trace_has_no_draft() -> None:
    cycles = find_cycles(back_to_back(3), attribution(["verify", "verify", "verify"], [1, 1, 2]))
    assert [(c.start, c.end, c.complete) for c in cycles] == [(0, 20, True), (20, 30, True)]


def test_each_decode_step_is_a_cycle_and_a_partial_first_cycle_is_incomplete() -> None:
    steps = find_cycles(back_to_back(3), attribution(["decode"] * 3, [4, 5, 6]))
    assert [(c.kind, c.start) for c in steps] == [("decode", 0), ("decode", 10), ("decode", 20)]
    # the profiler started mid-cycle: the first cycle has no draft although the trace shows drafts
    partial = find_cycles(back_to_back(5), attribution(["verify", "draft_extend", "draft", "verify", "draft_extend"], [1, 2, 3, 4, 5]))
    assert [(c.start, c.complete) for c in partial] == [(0, False), (20, True)]


def test_gpu_time_before_the_first_cycle_is_cycle_minus_one() -> None:
    cycles = find_cycles(back_to_back(3), attribution(["unattributed", "draft", "verify"]))
    assert [(c.index, c.kind, c.start, c.end) for c in cycles] == [(-1, "outside", 0, 10), (0, "speculative", 10, 30)]


def test_a_trace_without_phases_is_one_whole_trace_cycle() -> None:
    cycles = find_cycles(back_to_back(2), attribution(["unattributed", "unattributed"]))
    assert [(c.index, c.kind, c.start, c.end) for c in cycles] == [(0, "whole_trace", 0, 20)]


# --- time accounting -----------------------------------------------------------------------------------

def test_exclusive_time_by_priority_union_per_class_and_idle() -> None:
    # verify: NCCL [0,100] on stream 7, gemm [50,150] on stream 22, then idle until the next cycle at 200
    kernels, names = gpu((0, 100, 7, 1, "ncclDevKernel_AllReduce"), (50, 150, 22, 2, "nvjet_gemm"), (200, 210, 7, 3, "nvjet_gemm"))
    result = Attribution(
        phase=np.array([P["verify"], P["verify"], P["verify"]]),
        method=np.full(3, M_LAUNCH), instance=np.array([1, 1, 2]), launches_found=3,
        kernel_class=np.array([C["communication"], C["gemm"], C["gemm"]]),
    )
    cycles = find_cycles(kernels, result)
    times = account_time(kernels, result, cycles)
    first = times.exclusive[0]
    assert first[P["verify"], C["communication"]] == 100  # communication first
    assert first[P["verify"], C["gemm"]] == 50  # only what sticks out of the NCCL kernel
    assert times.union[0][P["verify"], C["gemm"]] == 100
    assert times.idle.tolist() == [50, 0]  # 200 − 150; the last cycle ends with its last kernel
    assert first.sum() + times.idle[0] == cycles[0].end - cycles[0].start


def test_analyze_rank_rows_add_up_to_each_cycle() -> None:
    kernels, names = gpu((0, 100, 7, 1, "ncclDevKernel_AllReduce_Sum"), (50, 150, 22, 2, "nvjet_gemm"), (300, 320, 7, 3, "nvjet_gemm"))
    events = RankEvents(3, kernels, launches((1, 0), (2, 1), (3, 250)), markers(("step[TARGET_VERIFY bs=1]", -5, 10), ("step[TARGET_VERIFY bs=1]", 240, 260), category="user_annotation"), names=names)
    columns = analyze_rank(events, RULES).cycle_columns
    for cycle in set(columns["cycle_idx"].tolist()):
        mine = columns["cycle_idx"] == cycle
        assert columns["duration_ms"][mine].sum() == pytest.approx(columns["cycle_ms"][mine][0])
    assert columns["rank"].tolist() == [3] * len(columns["rank"])


# --- summaries --------------------------------------------------------------------------------------------

def test_the_slowest_rank_sets_the_pace() -> None:
    summary = summarize_across_ranks({
        0: {"median_cycle_ms": 30.4, "median_verify_ms": 29.9, "median_verify_comm_ms": 29.0, "verify_comm_share": 0.97},
        1: {"median_cycle_ms": 30.6, "median_verify_ms": 30.1, "median_verify_comm_ms": 28.1, "verify_comm_share": 0.93},
        2: {"median_cycle_ms": 30.5, "median_verify_ms": None, "median_verify_comm_ms": None, "verify_comm_share": None},
    })
    assert summary["slowest_rank"] == 1
    assert summary["median_cycle_ms_median"] == 30.5 and summary["median_cycle_ms_max"] == 30.6
    assert summary["median_verify_comm_ms_median"] == pytest.approx(28.55)


def test_of_ranks_tied_on_the_slowest_cycle_the_lowest_is_named() -> None:
    tied = {rank: {"median_cycle_ms": 2.5 if rank != 1 else 2.0} for rank in (3, 1, 0, 2)}
    assert summarize_across_ranks(tied)["slowest_rank"] == 0  # as the cycle_pace view says (migration 010)


# --- the cycle model, without a trace -------------------------------------------------------------------

def test_cycle_model_for_the_k2_drafter() -> None:
    k2 = estimate_cycle(tokens_per_step=1.58, tok_per_s=51.8, baseline_tok_per_s=82)
    assert round(k2.cycle_ms, 1) == 30.5
    assert round(k2.baseline_step_ms, 1) == 12.2
    assert round(k2.cost_ratio, 2) == 2.50
    assert round(k2.break_even_tokens_per_step, 2) == 2.50
    assert round(k2.break_even_accepted_drafts, 2) == 1.50
    assert k2.speedup == pytest.approx(51.8 / 82)  # S = τ / r is the throughput ratio
    assert k2.break_even_cycle_ms == pytest.approx(1.58 / 82 * 1000)  # 19.3 ms: the cycle τ baseline steps buy


def test_cycle_model_for_the_from_scratch_drafter() -> None:
    scratch = estimate_cycle(2.0, 60.0, 82.0)
    assert round(scratch.cycle_ms, 1) == 33.3
    assert scratch.speedup == pytest.approx(60 / 82)


@pytest.mark.parametrize("args", [(0.58, 51.8, 82), (1.58, 0, 82), (1.58, 51.8, float("nan")), (1.58, -1, 82)])
def test_cycle_model_rejects_impossible_inputs(args: tuple[float, float, float]) -> None:
    with pytest.raises(ValueError):
        estimate_cycle(*args)


# --- rules --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "category", "expected"),
    [
        ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "kernel", "communication"),
        ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "kernel", "communication"),
        ("void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "kernel", "communication"),
        ("NCCLDEVKERNEL_SOMETHING_NEW", "kernel", "communication"),  # the prefix decides, whatever the suffix
        ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "kernel", "communication"),
        ("void sglang::cross_device_reduce_2stage<float, 4>(...)", "kernel", "communication"),
        ("void two_shot_all_reduce_kernel<bf16>(...)", "kernel", "communication"),
        ("oneshot_allreduce_kernel", "kernel", "communication"),
        ("flash::flash_fwd_splitkv_mla_kernel<...>", "kernel", "attention"),
        ("void flashinfer::BatchDecodeWithPagedKVCacheKernel<...>", "kernel", "attention"),
        ("void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u>(...)", "kernel", "elementwise/other"),
        ("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(...)", "kernel", "elementwise/other"),
        ("void fused_moe_kernel<__nv_bfloat16>(...)", "kernel", "moe"),
        ("nvjet_tst_128x256_64x4_2x1_v_bz_TNN", "kernel", "gemm"),
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_cublas", "kernel", "gemm"),
        ("volta_sgemm_128x64_nn", "kernel", "gemm"),
        ("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)", "kernel", "elementwise/other"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(...)", "kernel", "elementwise/other"),
        ("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", "memcpy"),
        ("Memset (Device)", "gpu_memset", "memcpy"),
    ],
)
def test_kernel_classes(name: str, category: str, expected: str) -> None:
    assert RULES.kernel_class(name, category) == expected


@pytest.mark.parametrize(
    ("name", "category", "phase", "priority"),
    [
        ("step[TARGET_VERIFY bs=8]", "user_annotation", "verify", 3),
        ("step[VERIFY bs=8]", "user_annotation", "verify", 3),
        ("step[DRAFT_EXTEND_V2 bs=8]", "user_annotation", "draft_extend", 3),
        ("step[DRAFT bs=8]", "user_annotation", "draft", 3),
        ("draft step[DECODE bs=8]", "user_annotation", "draft", 3),
        ("draft step[EXTEND bs=8 toks=100]", "user_annotation", "draft_extend", 3),
        ("step[decode bs=1]", "user_annotation", "decode", 3),
        ("step[DECODE bs=2 g_sq=2 g_sqsq=2 g_sqsk=30 g_sk=30]", "user_annotation", "decode", 3),
        ("step[EXTEND bs=2 toks=12]", "user_annotation", "target_prefill", 3),
        ("step[IDLE bs=0]", "user_annotation", "other", 3),
        ("step[TARGET_VERIFY bs=8]", "gpu_user_annotation", "verify", 3),
        (f"{WORKER}(420): draft", "python_function", "draft", 2),
        (f"{WORKER}(512): verify", "python_function", "verify", 2),
        (f"{WORKER}(640): forward_draft_extend_after_decode", "python_function", "draft_extend", 2),
        ("sglang/srt/speculative/eagle_worker_v2.py(300): _draft_extend_for_decode", "python_function", "draft_extend", 2),
        (f"{WORKER}(350): forward_target_extend", "python_function", "target_prefill", 2),
        ("sglang/srt/model_executor/model_runner.py(1700): forward_decode", "python_function", "decode", 1),
        ("sglang/srt/model_executor/cuda_graph_runner.py(700): replay", "python_function", "decode", 1),
    ],
)
def test_phase_markers(name: str, category: str, phase: str, priority: int) -> None:
    rule = RULES.phase_marker(name, category)
    assert rule is not None and (rule.phase, rule.priority) == (phase, priority)


@pytest.mark.parametrize(
    "name",
    [f"{WORKER}(310): forward_batch_speculative_generation", "ProfilerStep#3", "## forward ##", "aten::mm", "stepper[VERIFY]"],
)
def test_other_ranges_are_not_phase_markers(name: str) -> None:
    assert RULES.phase_marker(name, "user_annotation") is None
    assert RULES.phase_marker(name, "python_function") is None


def test_a_user_rules_file_adds_patterns_ahead_of_the_built_in_ones(tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.toml"
    rules_file.write_text(
        '[[kernel_class]]\nclass = "communication"\npattern = "^my_fused_allgather_gemm"\n\n'
        '[[phase]]\nphase = "verify"\npattern = "my_team.py\\\\(\\\\d+\\\\): check_drafts$"\n'
    )
    rules = default_rules().with_user_rules(rules_file)
    assert rules.kernel_class("my_fused_allgather_gemm_kernel") == "communication"  # built-ins would say gemm
    rule = rules.phase_marker("my_team.py(12): check_drafts", "python_function")
    assert rule is not None and (rule.phase, rule.source) == ("verify", "user_rule")
    assert rule.priority > max(built_in.priority for built_in in rules.phase_rules if built_in.source != "user_rule")
    same_as_json = tmp_path / "rules.json"
    same_as_json.write_text(json.dumps({"kernel_class": [{"class": "moe", "pattern": "^expert_router"}]}))
    assert default_rules().with_user_rules(same_as_json).kernel_class("expert_router_v2") == "moe"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"kernel_class": [{"class": "network", "pattern": "x"}]}', "unknown class 'network'"),
        ('{"phase": [{"phase": "verify", "pattern": "("}]}', "invalid regular expression"),
        ('{"phase": [{"phase": "sampling", "pattern": "x"}]}', "unknown phase 'sampling'"),
        ('{"kernels": []}', "unknown sections"),
        ("[1, 2]", "must hold an object"),
        ("{not json", "not valid JSON"),
    ],
)
def test_a_bad_rules_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "rules.json"
    path.write_text(content)
    with pytest.raises(MalformedInput, match=message.replace("(", r"\(")):
        load_user_rules(path)


def test_rules_are_data_with_a_reason_each() -> None:
    rules = TraceRules()
    assert all(rule.pattern for rule in rules.kernel_rules)
    assert {rule.phase for rule in rules.phase_rules} == {"draft", "verify", "draft_extend", "target_prefill", "decode", "other"}
