"""Kineto trace ingest as a spec.

* The real multi-GPU traces of the corpus, checked against an independent computation written
  here: json.load, then a plain sort-and-merge union of intervals per kernel class.
* Our EAGLE-shaped fixtures (tests/fixtures/traces/make_eagle_trace.py documents their layout),
  checked against times worked out by hand from that layout.
* Bad input: truncated gzip or JSON, not a trace, no GPU events, ns timestamps, a broken event.
"""
from __future__ import annotations

import functools
import gzip
import importlib.util
import io
import json
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import CORPUS, FIXTURES, ROOT, corpus_files
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.derive.trace_rules import default_rules
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.parsers.traces import cycle_timing, kineto
from ingest.parsers.traces.trace_stream import TraceEventStream
from ingest.pipeline import ingest_paths
from ingest.reader import read_head
from ingest.registry import detect

TRACES = FIXTURES / "traces"
RULES = default_rules()


def load_module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


GEN = load_module("make_eagle_trace", TRACES / "make_eagle_trace.py")


@functools.cache
def parsed(path: Path) -> ParsedSource:
    return kineto.parse(path, ParseOptions())


def rows(path: Path, table: str) -> list[dict[str, Any]]:
    return parsed(path).tables[table].to_pylist()


def rank_row(path: Path, rank: int = 0) -> dict[str, Any]:
    return next(row for row in rows(path, "trace_ranks") if row["rank"] == rank)


def cycle_table(path: Path, rank: int = 0) -> dict[int, dict[tuple[str, str], float]]:
    """cycle -> (phase, class) -> exclusive µs, plus ("window", "") -> cycle µs."""
    table: dict[int, dict[tuple[str, str], float]] = defaultdict(dict)
    for row in rows(path, "cycle_phase_times"):
        if row["rank"] == rank:
            cycle = table[row["cycle_idx"]]
            cycle[(row["cycle_phase"], row["kernel_class"])] = round(row["duration_ms"] * 1000, 6)
            cycle[("window", "")] = round(row["cycle_ms"] * 1000, 6)
    return dict(table)


def write_text_trace(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(GEN.kineto_text(document), encoding="utf-8")
    return path


# --- the independent computation for the corpus ---------------------------------------------------

@functools.cache
def raw_document(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return json.load(stream)


def merged_length(intervals: list[tuple[float, float]]) -> float:
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    return total + (current_end - current_start if current_end is not None else 0.0)


def independent_unions(document: dict[str, Any]) -> dict[str, float]:
    """ms of GPU time per class, straight from the raw events (name -> class is the rules' data)."""
    intervals: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for event in document["traceEvents"]:
        if event.get("ph") != "X" or event.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        if event["cat"] != "kernel":
            kernel_class = "memcpy"
        elif event["name"].lower().startswith("nccl"):
            kernel_class = "communication"
        else:
            kernel_class = RULES.kernel_class(event["name"])
        span = (event["ts"], event["ts"] + event["dur"])
        intervals[kernel_class].append(span)
        intervals["busy"].append(span)
    return {name: merged_length(spans) / 1000 for name, spans in intervals.items()}


CORPUS_FACTS = {
    "hta_nccl_data_rank0_ws2_a100.json.gz": (0, 2, "NVIDIA A100-PG509-200", 2700, 21, "relative to baseTimeNanoseconds"),
    "hta_df_index_resolver_rank1_ws2_v100.json.gz": (1, 2, "Tesla V100-SXM2-32GB", 19370, 2020, "absolute epoch µs"),
    "hta_sampled_rank-0.json.gz": (0, 128, None, 1154, 10, "absolute epoch µs"),
    "hta_sampled_rank-1.json.gz": (1, 128, None, 1104, 10, "absolute epoch µs"),
}
CORPUS_TRACES = corpus_files("traces", "*.json.gz")
CLASS_COLUMNS = {"communication": "communication_ms", "gemm": "gemm_ms", "attention": "attention_ms",
                 "moe": "moe_ms", "memcpy": "memcpy_ms", "elementwise/other": "other_kernel_ms", "busy": "busy_ms"}


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_TRACES, ids=lambda p: p.name)
def test_corpus_rank_world_size_gpu_and_counts(corpus_dir: Path, path: Path) -> None:
    rank, world_size, gpu, kernels, nccl, time_base = CORPUS_FACTS[path.name]
    row = rank_row(path, rank)
    assert (row["rank"], row["world_size"], row["gpu_name"], row["kernels"], row["time_base"]) == (rank, world_size, gpu, kernels, time_base)
    nccl_counts = [k["count"] for k in rows(path, "trace_kernels") if k["name"].startswith("nccl")]
    assert sum(nccl_counts) == nccl
    assert parsed(path).lines_read == len(raw_document(path)["traceEvents"])


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_TRACES, ids=lambda p: p.name)
def test_corpus_class_totals_match_an_independent_union(corpus_dir: Path, path: Path) -> None:
    expected = independent_unions(raw_document(path))
    row = rank_row(path, CORPUS_FACTS[path.name][0])
    for kernel_class, column in CLASS_COLUMNS.items():
        assert row[column] == pytest.approx(expected.get(kernel_class, 0.0), rel=1e-9, abs=1e-6), kernel_class
    assert row["communication_ms"] > 0
    # a training trace has no draft/verify: one whole-trace pseudo-cycle, all of it unattributed
    cycle_rows = rows(path, "cycle_phase_times")
    assert {(r["cycle_idx"], r["cycle_kind"]) for r in cycle_rows} == {(0, "whole_trace")}
    assert {r["cycle_phase"] for r in cycle_rows} == {"unattributed", "idle"}
    unions = {r["kernel_class"]: r["union_ms"] for r in cycle_rows if r["cycle_phase"] == "unattributed"}
    assert unions["communication"] == pytest.approx(expected["communication"], rel=1e-9)
    busy = sum(r["duration_ms"] for r in cycle_rows if r["cycle_phase"] != "idle")
    assert busy == pytest.approx(expected["busy"], rel=1e-9)
    assert sum(r["duration_ms"] for r in cycle_rows) == pytest.approx(row["span_ms"], rel=1e-9)


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_TRACES, ids=lambda p: p.name)
def test_corpus_time_base(corpus_dir: Path, path: Path) -> None:
    document = raw_document(path)
    first = min(e["ts"] for e in document["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    origin_us = document.get("baseTimeNanoseconds", 0) / 1000  # newer traces count from it, older from 1970
    expected = datetime(1970, 1, 1) + timedelta(microseconds=origin_us + first)
    row = rank_row(path, CORPUS_FACTS[path.name][0])
    assert abs(row["trace_start_at"] - expected) <= timedelta(microseconds=1)
    assert row["trace_start_at"].year in (2022, 2023, 2024)
    assert row["time_unit_note"] == "µs"


@pytest.mark.corpus
def test_corpus_sampled_pair_is_two_ranks_of_one_job(corpus_dir: Path) -> None:
    pair = [rank_row(CORPUS / "traces" / f"hta_sampled_rank-{r}.json.gz", r) for r in (0, 1)]
    assert [(row["rank"], row["world_size"]) for row in pair] == [(0, 128), (1, 128)]
    assert abs(pair[0]["trace_start_at"] - pair[1]["trace_start_at"]) < timedelta(milliseconds=1)


@pytest.mark.corpus
def test_corpus_54_mb_trace_parses_in_a_few_seconds(corpus_dir: Path) -> None:
    path = CORPUS / "traces" / "hta_df_index_resolver_rank1_ws2_v100.json.gz"
    started = time.perf_counter()
    kineto.parse(path, ParseOptions())
    assert time.perf_counter() - started < 8.0  # ~0.5 s measured; generous for a busy 2-core machine


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("bench") + corpus_files("logs"), ids=lambda p: p.name)
def test_trace_sniffers_leave_other_corpus_files_alone(corpus_dir: Path, path: Path) -> None:
    head = read_head(path)
    assert not kineto.sniff(head) and not cycle_timing.sniff(head)


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_TRACES, ids=lambda p: p.name)
def test_corpus_traces_are_detected_as_traces(corpus_dir: Path, path: Path) -> None:
    assert detect(path).kind == "kineto_trace"


# --- our EAGLE-shaped fixtures, by hand -------------------------------------------------------------

STACK = TRACES / "eagle-stack-TP-0.trace.json.gz"
STEPS = TRACES / "eagle-steps-TP-1-DECODE.trace.json.gz"
MERGED = TRACES / "merged-eagle.trace.json.gz"
BASELINE = TRACES / "baseline-TP-0.trace.json.gz"
NO_PHASES = TRACES / "no-phases-TP-0.trace.json.gz"
NESTED_STACK = TRACES / "eagle-nested-stack-TP-0.trace.json.gz"
NESTED_STEPS = TRACES / "eagle-nested-steps-TP-0.trace.json.gz"

PREFILL_CYCLE = {("window", ""): 1050, ("target_prefill", "gemm"): 400, ("draft_extend", "elementwise/other"): 50, ("idle", "idle"): 600}


def eagle_cycle(nccl: float, window: float, idle: float, scheduler_kernel: bool) -> dict[tuple[str, str], float]:
    """One cycle of the fixture layout: draft 200, verify [320, 640+N] + 60 on the side stream, extend 150."""
    cycle = {
        ("window", ""): window,
        ("draft", "gemm"): 100, ("draft", "attention"): 60, ("draft", "elementwise/other"): 40,
        ("verify", "communication"): nccl, ("verify", "attention"): 100, ("verify", "gemm"): 200,
        ("verify", "memcpy"): 20, ("verify", "elementwise/other"): 60,  # the add on stream 22 hides under gemm+attention
        ("draft_extend", "gemm"): 100, ("draft_extend", "elementwise/other"): 50,
        ("idle", "idle"): idle,
    }
    if scheduler_kernel:
        cycle[("unattributed", "elementwise/other")] = 20
    return cycle


def test_python_stack_trace_by_hand() -> None:
    # cycles start at the draft's first kernel, 2500 µs apart; busy 200 + 1380 + 150 + 20 (scheduler) = 1750
    assert cycle_table(STACK) == {
        0: PREFILL_CYCLE,
        1: eagle_cycle(1000, 2500, 750, True),
        2: eagle_cycle(1000, 2500, 750, True),
        3: eagle_cycle(1000, 2320, 570, True),  # the last cycle ends with its last kernel
    }
    by_phase = {(r["cycle_idx"], r["cycle_phase"]): r["attribution"] for r in rows(STACK, "cycle_phase_times")}
    assert by_phase[(1, "draft")] == "launch_marker"  # the CUDA graph's kernels share the launch inside draft()
    assert by_phase[(1, "unattributed")] == "none"
    kinds = {(r["cycle_idx"], r["cycle_kind"], r["complete"]) for r in rows(STACK, "cycle_phase_times")}
    assert kinds == {(0, "prefill", True), (1, "speculative", True), (2, "speculative", True), (3, "speculative", True)}


def test_python_stack_trace_rank_summary() -> None:
    row = rank_row(STACK)
    assert (row["rank"], row["world_size"], row["tp_rank"], row["profile_id"], row["stage"]) == (0, 2, 0, "eagle-stack", None)
    assert row["time_base"] == "absolute epoch µs"
    assert row["trace_start_at"] == datetime(2026, 1, 1, 0, 0, 0, 50)
    assert (row["kernels"], row["memory_ops"], row["launches_matched"]) == (35, 3, 38)
    assert row["attributed_share"] == pytest.approx(35 / 38)  # the 3 scheduler kernels have no phase
    assert row["phase_source"] == "python_stack+step_annotation"
    assert (row["cycles"], row["complete_cycles"]) == (3, 3)
    assert (row["median_cycle_ms"], row["max_cycle_ms"]) == (pytest.approx(2.5), pytest.approx(2.5))
    assert row["median_verify_ms"] == pytest.approx(1.38)
    assert row["median_verify_comm_ms"] == pytest.approx(1.0)
    assert row["verify_comm_share"] == pytest.approx(1000 / 1380)
    # whole-trace unions: 3 NCCL kernels of 1 ms; gemm 400 + 3 × (100 + 200 + 100); …
    assert (row["communication_ms"], row["gemm_ms"], row["attention_ms"], row["memcpy_ms"], row["other_kernel_ms"]) == (
        pytest.approx(3.0), pytest.approx(1.6), pytest.approx(0.48), pytest.approx(0.06), pytest.approx(1.01),
    )
    assert (row["busy_ms"], row["span_ms"], row["idle_ms"]) == (pytest.approx(5.7), pytest.approx(8.37), pytest.approx(2.67))


def test_kernel_statistics_per_name_class_and_phase() -> None:
    nccl = [k for k in rows(STACK, "trace_kernels") if k["kernel_class"] == "communication"]
    assert len(nccl) == 1
    assert nccl[0]["name"].startswith("ncclDevKernel_AllReduce_Sum_bf16")
    assert (nccl[0]["cycle_phase"], nccl[0]["count"]) == ("verify", 3)
    assert (nccl[0]["total_ms"], nccl[0]["mean_ms"], nccl[0]["p50_ms"], nccl[0]["max_ms"]) == (
        pytest.approx(3.0), pytest.approx(1.0), pytest.approx(1.0), pytest.approx(1.0),
    )
    scheduler = [k for k in rows(STACK, "trace_kernels") if k["cycle_phase"] == "unattributed"]
    assert [(k["count"], k["total_ms"]) for k in scheduler] == [(3, pytest.approx(0.06))]


def test_step_annotation_trace_recovers_the_draft_graph_from_its_position() -> None:
    # 2026 SGLang: no stack events; verify and extend have step[...] spans, the draft CUDA graph none
    table = cycle_table(STEPS, rank=1)
    assert table[0] == PREFILL_CYCLE
    assert table[1] == table[2] == eagle_cycle(1200, 2500, 570, False)  # busy 200 + 1580 + 150
    assert table[3] == eagle_cycle(1200, 2000, 70, False)
    methods = {r["cycle_phase"]: r["attribution"] for r in rows(STEPS, "cycle_phase_times") if r["cycle_idx"] == 1}
    assert methods["draft"] == "position" and methods["verify"] == "launch_marker"
    row = rank_row(STEPS, 1)
    assert (row["rank"], row["stage"], row["phase_source"], row["attributed_share"]) == (1, "decode", "step_annotation", 1.0)
    assert row["verify_comm_share"] == pytest.approx(1200 / 1580)


def test_relative_timestamps_count_from_base_time_written_after_the_events() -> None:
    head = gzip.decompress(STEPS.read_bytes()).decode()
    assert head.index('"traceEvents"') < head.index('"baseTimeNanoseconds"')  # as Kineto writes it
    row = rank_row(STEPS, 1)
    assert row["time_base"] == "relative to baseTimeNanoseconds"
    # base 2026-01-01T00:00:00Z + first kernel at 123456.789 + 50 µs
    assert row["trace_start_at"] == datetime(2026, 1, 1) + timedelta(microseconds=123506.789)


def test_merged_trace_keys_correlation_by_rank() -> None:
    # both ranks reuse the same correlation ids for different launches: joined by id alone,
    # rank 1's NCCL kernels would land on rank 0's draft launch
    assert {r["rank"]: (r["tp_rank"], r["merged"], r["profile_id"]) for r in rows(MERGED, "trace_ranks")} == {
        0: (0, True, "eagle"), 1: (1, True, "eagle"),
    }
    assert cycle_table(MERGED, 0)[1] == eagle_cycle(1000, 2500, 770, False)
    assert cycle_table(MERGED, 1)[1] == eagle_cycle(1200, 2500, 570, False)
    assert {r["rank"]: r["attributed_share"] for r in rows(MERGED, "trace_ranks")} == {0: 1.0, 1: 1.0}


def test_baseline_decode_steps() -> None:
    table = cycle_table(BASELINE)
    step = {("window", ""): 1500, ("decode", "gemm"): 200, ("decode", "attention"): 100,
            ("decode", "communication"): 600, ("decode", "elementwise/other"): 50, ("idle", "idle"): 550}
    assert table == {0: step, 1: step, 2: {**step, ("window", ""): 950, ("idle", "idle"): 0}}
    row = rank_row(BASELINE)
    assert (row["cycles"], row["median_cycle_ms"], row["median_verify_ms"], row["world_size"]) == (3, pytest.approx(1.5), None, 8)


def test_a_trace_without_phase_markers_is_all_unattributed_not_an_error() -> None:
    result = parsed(NO_PHASES)
    assert any("no phase markers" in w for w in result.warnings)
    table = cycle_table(NO_PHASES)
    assert list(table) == [0]
    assert table[0] == {
        ("window", ""): 8370, ("unattributed", "communication"): 3000, ("unattributed", "gemm"): 1600,
        ("unattributed", "attention"): 480, ("unattributed", "memcpy"): 60, ("unattributed", "elementwise/other"): 560,
        ("idle", "idle"): 2670,
    }
    assert rank_row(NO_PHASES)["phase_source"] == "none"


# --- nested phase functions: the outermost decides, a step[...] span over Python names -------------------

def launched_inside(document: dict[str, Any], function: str) -> list[list[tuple[float, float]]]:
    """Per call of a Python function (in time order): the GPU intervals of the kernels launched inside it.

    Straight from the raw events, not through the parser: a launch is inside a call when it sits on
    the call's thread within its range; a kernel belongs to the launch with its correlation id.
    """
    events = [e for e in document["traceEvents"] if e.get("ph") == "X"]
    calls = sorted(
        (e["ts"], e["ts"] + e["dur"], e["pid"], e["tid"])
        for e in events if e["cat"] == "python_function" and e["name"].endswith(f": {function}")
    )
    call_of_launch: dict[int, int] = {}
    for e in events:
        if e["cat"] in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            for index, (start, end, pid, tid) in enumerate(calls):
                if (e["pid"], e["tid"]) == (pid, tid) and start <= e["ts"] < end:
                    call_of_launch[e["args"]["correlation"]] = index
    intervals: list[list[tuple[float, float]]] = [[] for _ in calls]
    for e in events:
        if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset"):
            index = call_of_launch.get(e.get("args", {}).get("correlation"))
            if index is not None:
                intervals[index].append((e["ts"], e["ts"] + e["dur"]))
    return intervals


def phase_ms(path: Path, phase: str) -> list[float]:
    """Per cycle, the phase's time as the parser reports it (exclusive, all kernel classes)."""
    table = cycle_table(path)
    return [sum(us for (row_phase, _), us in table[cycle].items() if row_phase == phase) / 1000 for cycle in sorted(table)]


def nested_cycle(window: float, idle: float) -> dict[tuple[str, str], float]:
    """One cycle of the nested layout (make_eagle_trace.py): draft 200, verify 1200, draft-extend 180, scheduler 20."""
    return {
        ("window", ""): window,
        ("draft", "gemm"): 100, ("draft", "attention"): 60, ("draft", "elementwise/other"): 40,
        ("verify", "gemm"): 200, ("verify", "communication"): 1000,
        # the side-stream attention [2030, 2090] outranks the gemm and the graph kernel it overlaps
        ("draft_extend", "gemm"): 80, ("draft_extend", "attention"): 60, ("draft_extend", "elementwise/other"): 40,
        ("unattributed", "elementwise/other"): 20,
        ("idle", "idle"): idle,
    }


@pytest.mark.parametrize("path", [NESTED_STACK, NESTED_STEPS], ids=["without step spans", "with step spans"])
def test_a_drafter_helper_called_from_draft_extend_is_draft_extend_time(path: Path) -> None:
    # draft_forward runs under draft and under forward_draft_extend_after_decode: the outermost worker
    # function decides (or the step[...] span, where there is one), never the helper nor the model runner
    document = raw_document(path)
    extend = [merged_length(spans) / 1000 for spans in launched_inside(document, "forward_draft_extend_after_decode")]
    draft = [merged_length(spans) / 1000 for spans in launched_inside(document, "draft")]
    assert extend == pytest.approx([0.18] * 3) and draft == pytest.approx([0.2] * 3)  # the layout, by hand
    assert phase_ms(path, "draft_extend") == pytest.approx(extend, abs=1e-9)
    assert phase_ms(path, "draft") == pytest.approx(draft, abs=1e-9)
    assert cycle_table(path) == {0: nested_cycle(2500, 900), 1: nested_cycle(2500, 900), 2: nested_cycle(2320, 720)}
    row = rank_row(path)
    assert (row["cycles"], row["complete_cycles"], row["median_cycle_ms"]) == (3, 3, pytest.approx(2.5))
    assert (row["median_verify_ms"], row["verify_comm_share"]) == (pytest.approx(1.2), pytest.approx(1000 / 1200))
    assert {r["attribution"] for r in rows(path, "cycle_phase_times") if r["cycle_phase"] in ("draft", "draft_extend")} == {"launch_marker"}


def test_the_nested_traces_differ_only_in_their_markers() -> None:
    assert rank_row(NESTED_STACK)["phase_source"] == "python_stack"
    assert rank_row(NESTED_STEPS)["phase_source"] == "python_stack+step_annotation"
    assert rows(NESTED_STACK, "trace_kernels") == rows(NESTED_STEPS, "trace_kernels")


def test_committed_fixtures_are_what_the_generator_writes(tmp_path: Path) -> None:
    for path in GEN.write_fixtures(tmp_path):  # compared unzipped: another zlib may compress differently
        fresh, committed = gzip.decompress(path.read_bytes()), gzip.decompress((TRACES / path.name).read_bytes())
        assert fresh == committed, f"{path.name} is stale: run python tests/fixtures/traces/make_eagle_trace.py"


def test_store_views_agree_with_the_parser(isolated_store: Path) -> None:
    reports = ingest_paths([MERGED, STACK], isolated_store, phase="phase-0", variant="k2-drafter")
    assert [r.status for r in reports] == ["loaded", "loaded"]
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        summary = con.execute(
            "SELECT rank, s.median_cycle_ms, s.median_verify_ms, s.verify_comm_share, s.variant FROM cycle_rank_summary s "
            "JOIN trace_ranks t USING (source_id, rank) WHERE t.file_name = ? ORDER BY rank", [MERGED.name]
        ).fetchall()
        sql_vs_python = con.execute(
            "SELECT s.median_cycle_ms - t.median_cycle_ms, s.median_verify_comm_ms - t.median_verify_comm_ms, "
            "s.verify_comm_share - t.verify_comm_share, s.complete_cycles - t.complete_cycles "
            "FROM cycle_rank_summary s JOIN trace_ranks t USING (source_id, rank)"
        ).fetchall()
        pace = con.execute(
            "SELECT ranks, median_verify_ms_max, verify_comm_share_max, slowest_rank FROM cycle_pace WHERE profile_key = 'eagle'"
        ).fetchone()
        spread = con.execute("SELECT verify_comm_ms_min, verify_comm_ms_max FROM cycle_rank_spread WHERE profile_key = 'eagle' AND cycle_idx = 2").fetchone()
        public = con.execute("SELECT phase, kernel_class, duration_ms, experiment_phase FROM cycle_breakdown WHERE cycle_idx = 1 AND phase = 'verify' AND kernel_class = 'communication' AND rank = 1").fetchall()
    assert summary == [
        (0, pytest.approx(2.5), pytest.approx(1.38), pytest.approx(1000 / 1380), "k2-drafter"),
        (1, pytest.approx(2.5), pytest.approx(1.58), pytest.approx(1200 / 1580), "k2-drafter"),
    ]
    assert pace == (2, pytest.approx(1.58), pytest.approx(1200 / 1580), 0)  # both ranks 2.5 ms: the lower one
    assert len(sql_vs_python) == 3 and all(abs(d) < 1e-9 for row in sql_vs_python for d in row)
    assert spread == (pytest.approx(1.0), pytest.approx(1.2))  # the fastest rank ≈ the transfer, the rest is waiting
    assert public == [("verify", "communication", pytest.approx(1.2), "phase-0")]


# --- options -----------------------------------------------------------------------------------------------

def test_a_user_rules_file_given_in_options(tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.json"
    rules_file.write_text(json.dumps({"kernel_class": [{"class": "moe", "pattern": "^triton_red_fused_add_rmsnorm"}]}))
    result = kineto.parse(STACK, ParseOptions(extra={"trace_rules": str(rules_file), "variant": "k2-drafter"}))
    verify = {r["kernel_class"]: r["duration_ms"] for r in result.tables["cycle_phase_times"].to_pylist()
              if r["cycle_idx"] == 1 and r["cycle_phase"] == "verify"}
    # rmsnorm [1600, 1700] is now moe, which outranks the memcpy [1620, 1640] it overlaps
    assert (verify["moe"], verify["memcpy"], verify["elementwise/other"]) == (pytest.approx(0.08), 0, 0)
    assert set(result.tables["trace_ranks"].column("variant").to_pylist()) == {"k2-drafter"}


# --- bad input ---------------------------------------------------------------------------------------------

def test_truncated_gzip_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "cut-TP-0.trace.json.gz"
    broken.write_bytes(STACK.read_bytes()[: STACK.stat().st_size // 2])
    with pytest.raises(MalformedInput, match="truncated gzip"):
        kineto.parse(broken, ParseOptions())


def test_truncated_json_is_a_clear_error(tmp_path: Path) -> None:
    text = GEN.kineto_text(GEN.kineto_document(GEN.eagle_events(), rank=0))
    broken = tmp_path / "cut.json"
    broken.write_text(text[: len(text) // 2])
    with pytest.raises(MalformedInput, match="truncated: the traceEvents array never closes"):
        kineto.parse(broken, ParseOptions())


def test_json_that_is_not_a_trace(tmp_path: Path) -> None:
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"runs": [{"tokens": 2048, "time": 40.5}], "schema": "x"}))
    assert not kineto.sniff(bench.read_bytes())
    assert detect(bench).kind != "kineto_trace"
    with pytest.raises(MalformedInput, match="no traceEvents array"):
        kineto.parse(bench, ParseOptions())


def test_a_trace_with_no_gpu_events_says_how_to_profile(tmp_path: Path) -> None:
    cpu_only = [e for e in GEN.eagle_events() if e["cat"] not in ("kernel", "gpu_memcpy")]
    path = write_text_trace(tmp_path / "cpu-TP-0.trace.json", GEN.kineto_document(cpu_only, rank=0))
    with pytest.raises(MalformedInput, match=r"no GPU kernel events: was the profiler run with activities=\['CPU','GPU'\]\?"):
        kineto.parse(path, ParseOptions())


def in_ns(events: list[dict[str, Any]], offset_ns: float = 0) -> list[dict[str, Any]]:
    return [{**e, "ts": e["ts"] * 1000 + offset_ns, **({"dur": e["dur"] * 1000} if "dur" in e else {})} for e in events]


def test_nanosecond_timestamps_are_converted_and_said_so(tmp_path: Path) -> None:
    events = GEN.eagle_events(origin_us=0)
    micro = write_text_trace(tmp_path / "us-TP-0.trace.json", GEN.kineto_document(events, rank=0))
    nano = write_text_trace(tmp_path / "ns-TP-0.trace.json", GEN.kineto_document(in_ns(events), rank=0, display_unit="ns"))
    expected, result = kineto.parse(micro, ParseOptions()), kineto.parse(nano, ParseOptions())
    assert any("timestamps are in ns" in w for w in result.warnings)
    assert result.tables["trace_ranks"].column("time_unit_note")[0].as_py().startswith("read as ns")
    got, want = result.tables["cycle_phase_times"].to_pylist(), expected.tables["cycle_phase_times"].to_pylist()
    assert [(r["cycle_idx"], r["cycle_phase"], r["kernel_class"]) for r in got] == [(r["cycle_idx"], r["cycle_phase"], r["kernel_class"]) for r in want]
    assert [r["duration_ms"] for r in got] == pytest.approx([r["duration_ms"] for r in want])


def test_nanoseconds_since_1970_are_recognised_by_magnitude(tmp_path: Path) -> None:
    events = in_ns(GEN.eagle_events(origin_us=0), offset_ns=1_767_225_600_000_000_000)
    path = write_text_trace(tmp_path / "epoch-ns-TP-0.trace.json", GEN.kineto_document(events, rank=0))
    row = kineto.parse(path, ParseOptions()).tables["trace_ranks"].to_pylist()[0]
    assert row["time_unit_note"].startswith("read as ns")
    assert row["median_cycle_ms"] == pytest.approx(2.5, abs=1e-3)
    assert abs(row["trace_start_at"] - datetime(2026, 1, 1, 0, 0, 0, 50)) < timedelta(microseconds=2)


def test_implausible_durations_without_a_unit_hint_are_kept_with_a_warning(tmp_path: Path) -> None:
    events = in_ns(GEN.eagle_events(origin_us=0))
    path = write_text_trace(tmp_path / "odd-TP-0.trace.json", GEN.kineto_document(events, rank=0))
    result = kineto.parse(path, ParseOptions())
    assert any("implausible" in w for w in result.warnings)
    assert result.tables["trace_ranks"].to_pylist()[0]["median_cycle_ms"] == pytest.approx(2500)


def test_a_malformed_event_is_skipped_and_the_rest_loads(tmp_path: Path) -> None:
    events = GEN.eagle_events()
    victim = next(i for i, e in enumerate(events) if e["cat"] == "kernel" and e["name"].startswith("triton_red"))
    events[victim] = {**events[victim], "ts": "soon"}
    path = write_text_trace(tmp_path / "bad-event-TP-0.trace.json", GEN.kineto_document(events, rank=0))
    result = kineto.parse(path, ParseOptions())
    assert result.skipped["malformed event"] == 1
    assert any("malformed trace event skipped" in w and "byte" in w for w in result.warnings)
    assert parsed_count(result) == 31  # the layout's 32 kernels − the broken one


def parsed_count(result: ParsedSource) -> int:
    return result.tables["trace_ranks"].to_pylist()[0]["kernels"]


def test_a_bare_event_array_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(GEN.eagle_events()))
    assert kineto.sniff(path.read_bytes())
    row = kineto.parse(path, ParseOptions()).tables["trace_ranks"].to_pylist()[0]
    assert (row["rank"], row["median_verify_comm_ms"]) == (0, pytest.approx(1.0))


# --- the stream: chunk boundaries anywhere, strings that look like structure ------------------------------

TRICKY_NAMES = [
    'void k<{lambda(float)#1}>(), {"not": "json"}',
    'quote \\" inside, then }, { and ] and [',
    "backslash at the end \\\\",
    "unicode: µs — ✓",
]


def tricky_document() -> bytes:
    events = GEN.eagle_events(cycles=2)
    for i, name in enumerate(TRICKY_NAMES):
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 9, "ts": GEN.EPOCH_US + 9000 + i * 10, "dur": 5,
                       "args": {"stream": 9, "correlation": 90 + i, "nested": [{"a": "}, {"}, {"b": [1, {"c": "]"}]}]}})
    return GEN.kineto_text(GEN.kineto_document(events, rank=0, relative=True)).encode()


def stream_events(data: bytes, block_bytes: int) -> list[tuple[str, str, float]]:
    parsed_source = ParsedSource(kind="test")
    stream = TraceEventStream(Path("t.json"), io.BytesIO(data), parsed_source, block_bytes=block_bytes)
    events = [(e.cat, e.name, e.ts) for chunk in stream.chunks() for e in chunk]
    assert stream.metadata().baseTimeNanoseconds == GEN.BASE_NS
    assert not parsed_source.warnings
    return events


@settings(max_examples=40, deadline=None)
@given(block_bytes=st.integers(min_value=1, max_value=4096))
def test_any_block_size_gives_the_same_events(block_bytes: int) -> None:
    data = tricky_document()
    whole = [(e["cat"], e["name"], e["ts"]) for e in json.loads(data)["traceEvents"]]
    assert stream_events(data, block_bytes) == whole


def test_tricky_kernel_names_survive_parsing(tmp_path: Path) -> None:
    path = tmp_path / "tricky-TP-0.trace.json"
    path.write_bytes(tricky_document())
    names = {k["name"] for k in kineto.parse(path, ParseOptions()).tables["trace_kernels"].to_pylist()}
    assert set(TRICKY_NAMES) <= names


# --- the demo traces --------------------------------------------------------------------------------------

DEMO = load_module("make_demo_traces", ROOT / "data" / "make_demo_traces.py")


@functools.lru_cache(maxsize=1)
def demo_rows(folder: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in DEMO.write_demo_traces(Path(folder)):
        found[path.parent.name] += kineto.parse(path, ParseOptions()).tables["trace_ranks"].to_pylist()
    return dict(found)


def test_demo_traces_tell_the_story(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("demo")
    variants = demo_rows(str(folder))
    assert set(variants) == {"baseline", "from-scratch", "k2-drafter", "k2-drafter-ft"}  # k2-drafter-ft: phase-2
    cycle = {name: max(r["median_cycle_ms"] for r in ranks) for name, ranks in variants.items()}  # the slowest rank's
    assert cycle["baseline"] == pytest.approx(1000 / 82, abs=0.05)  # 12.2 ms
    assert cycle["from-scratch"] == pytest.approx(2.0 / 60 * 1000, abs=0.4)  # ≈ 33 ms
    assert cycle["k2-drafter"] == pytest.approx(1.58 / 51.8 * 1000, abs=0.1)  # 30.5 ms
    k2 = variants["k2-drafter"]
    assert all(r["median_verify_ms"] == pytest.approx(30.0, abs=0.2) for r in k2)
    assert all(r["verify_comm_share"] == pytest.approx(0.97, abs=0.005) for r in k2)
    assert all(r["attributed_share"] == 1.0 for ranks in variants.values() for r in ranks)
    total = sum(p.stat().st_size for p in folder.rglob("*.trace.json.gz"))
    assert total < 400_000


def test_demo_traces_are_deterministic(tmp_path: Path) -> None:
    first = DEMO.write_demo_traces(tmp_path / "a")
    second = DEMO.write_demo_traces(tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert [p.relative_to(tmp_path / "a").as_posix() for p in first][0] == "phase-0/baseline/profile-baseline-TP-0.trace.json.gz"
