"""Write small ILLUSTRATIVE Kineto traces for the demo variants (not measurements).

One gzip trace per TP rank (2 of the story's 8, to keep the files small) and variant,
named as SGLang names them, under ``<out_dir>/<phase>/<variant>/``, so the demo builder
ingests them with the variant's bench and log files. Deterministic: same bytes every run.

The cycle shapes follow the story (DOMAIN.md §1-2), scaled to its throughputs:

* ``baseline``: plain decode steps of ≈ 12.2 ms (1/82 tok/s), tensor-parallel all-reduces included;
* ``from-scratch``: EAGLE-3 cycles of ≈ 33 ms (τ ≈ 2.0 at 60 tok/s), 3 draft steps;
* ``k2-drafter``: EAGLE-3 cycles of ≈ 30.5 ms (τ 1.58 at 51.8 tok/s), 2 draft steps, with a
  ≈ 30 ms verify of which ≈ 97 % is NCCL all-reduce - the story's shape.
* ``phase-2/k2-drafter-ft`` (beyond the story, invented): the fine-tuned drafter's cycle with the
  verify all-reduce cut from ≈ 29.1 ms of NCCL to ≈ 20.3 ms of custom all-reduce
  (``cross_device_reduce_2stage``): ≈ 21.7 ms per cycle, so τ 2.60 gives ≈ 120 tok/s, the
  figure of that phase's benchmark (cycle model: τ ÷ cycle time).

The EAGLE variants use both ways SGLang marks phases: ``from-scratch`` carries Python stack
events (older builds, ``with_stack``), ``k2-drafter`` only ``step[...]`` spans (2026 builds),
where the draft CUDA graph has no span and is recovered from its position before verify.
Run: ``python data/make_demo_traces.py`` (writes into data/demo/).
"""
from __future__ import annotations

import gzip
import io
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "demo"
PHASE = "phase-0"
CUSTOM_ALL_REDUCE = "void sglang::cross_device_reduce_2stage<__nv_bfloat16, 8>(sglang::RankData*, sglang::RankSignals, sglang::Signal*, __nv_bfloat16*, int, int)"
RANKS = (0, 1)
WORLD_SIZE = 8
CYCLES = 20
LAYER_GROUPS = 6  # the 61 layers, folded into a few groups of kernels to keep files small
CPU_PID = CPU_TID = 31337
MAIN_STREAM, COMM_STREAM = 7, 24
GPU = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
WORKER = "sglang/srt/speculative/eagle_worker.py"

KERNELS = {
    "gemm": "nvjet_tst_128x64_64x6_2x1_v_bz_TNT",
    "attention": "flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true>(Flash_fwd_mla_params)",
    "moe": "void fused_moe_kernel<__nv_bfloat16, 128, 64>(MoeParams)",
    "communication": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "elementwise/other": "triton_red_fused_add_rmsnorm_0",
}


@dataclass(frozen=True)
class Layer:
    """GPU ms of one layer group, in launch order."""

    gemm: float
    attention: float
    moe: float
    communication: float
    other: float

    def kernels(self) -> list[tuple[str, float]]:
        return [("gemm", self.gemm), ("attention", self.attention), ("moe", self.moe),
                ("communication", self.communication), ("elementwise/other", self.other)]


@dataclass(frozen=True)
class Shape:
    variant: str
    style: str  # "decode", "python_stack" or "step_annotations"
    forward: Layer  # per layer group of the target forward (decode step or verify)
    draft_steps: int = 0
    draft_step_ms: tuple[float, float, float] = (0.0, 0.0, 0.0)  # gemm, attention, other per draft step
    extend_ms: tuple[float, float] = (0.0, 0.0)  # gemm, other
    idle_ms: float = 0.0  # scheduler gap per cycle
    start: datetime = datetime(2026, 2, 9, 10, 30, tzinfo=UTC)
    phase: str = PHASE
    all_reduce: str = KERNELS["communication"]  # the target forward's all-reduce kernel

    @property
    def seed(self) -> str:
        # Phase 0's traces were generated before there were other phases: keep its seeds as they were.
        prefix = "" if self.phase == PHASE else f"{self.phase}-"
        return f"specdash-demo-trace-{prefix}{self.variant}"


SHAPES = (
    # 6 × 1.95 ms + 0.5 ms idle = 12.2 ms per decode step
    Shape("baseline", "decode", Layer(0.27, 0.08, 0.23, 1.27, 0.10), idle_ms=0.5,
          start=datetime(2026, 2, 9, 10, 30, tzinfo=UTC)),
    # draft 3 × 0.4 + verify 6 × 5.1667 (= 31.0, 94.8 % NCCL) + extend 0.6 + idle 0.2 = 33.0 ms
    Shape("from-scratch", "python_stack", Layer(0.015, 0.0067, 0.01, 4.9, 0.235), draft_steps=3,
          draft_step_ms=(0.15, 0.08, 0.17), extend_ms=(0.4, 0.2), idle_ms=0.2,
          start=datetime(2026, 2, 9, 16, 0, tzinfo=UTC)),
    # draft 2 × 0.15 + verify 6 × 5.0 (= 30.0, 97 % NCCL) + extend 0.15 + idle 0.05 = 30.5 ms
    Shape("k2-drafter", "step_annotations", Layer(0.05, 0.02, 0.03, 4.85, 0.05), draft_steps=2,
          draft_step_ms=(0.06, 0.04, 0.05), extend_ms=(0.1, 0.05), idle_ms=0.05,
          start=datetime(2026, 2, 10, 14, 20, tzinfo=UTC)),
    # Phase 2, illustrative: the same cycle as k2-drafter's but a verify all-reduce of 6 × 3.376 ms
    # (20.26 ms, was 29.1): draft 0.3 + verify 6 × 3.526 (= 21.16) + extend 0.15 + idle 0.05 = 21.66 ms
    Shape("k2-drafter-ft", "step_annotations", Layer(0.05, 0.02, 0.03, 3.376, 0.05), draft_steps=2,
          draft_step_ms=(0.06, 0.04, 0.05), extend_ms=(0.1, 0.05), idle_ms=0.05,
          start=datetime(2026, 3, 17, 10, 20, tzinfo=UTC), phase="phase-2", all_reduce=CUSTOM_ALL_REDUCE),
)


class Timeline:
    """Events of one rank; GPU work is laid out back to back, launches just before it."""

    def __init__(self, rank: int, rng: random.Random, all_reduce: str = KERNELS["communication"]) -> None:
        self.rank = rank
        self.rng = rng
        self.names = {**KERNELS, "communication": all_reduce}
        self.events: list[dict[str, Any]] = []
        self.gpu_us = 1000.0
        self.correlation = 100

    def cpu(self, cat: str, name: str, start: float, end: float, args: dict[str, Any] | None = None) -> None:
        event = {"ph": "X", "cat": cat, "name": name, "pid": CPU_PID, "tid": CPU_TID, "ts": round(start, 3), "dur": round(end - start, 3)}
        if args:
            event["args"] = args
        self.events.append(event)

    def launch(self, kernels: list[tuple[str, float]], api: str = "cudaLaunchKernel") -> tuple[float, float]:
        """Launch kernels (a CUDA graph when several) at the GPU cursor; returns their GPU span."""
        self.correlation += 1
        begin = self.gpu_us
        self.cpu("cuda_runtime", api, begin - 40, begin - 35, {"correlation": self.correlation})
        for kernel_class, ms in kernels:
            duration = ms * 1000
            stream = COMM_STREAM if kernel_class == "communication" else MAIN_STREAM
            self.events.append({
                "ph": "X", "cat": "kernel", "name": self.names[kernel_class], "pid": self.rank, "tid": stream,
                "ts": round(self.gpu_us, 3), "dur": round(duration, 3),
                "args": {"device": self.rank, "stream": stream, "correlation": self.correlation},
            })
            self.gpu_us += duration
        return begin, self.gpu_us

    def jitter(self, ms: float, spread: float = 0.015) -> float:
        return ms * (1 + self.rng.uniform(-spread, spread))


def forward_kernels(shape: Shape, line: Timeline) -> list[list[tuple[str, float]]]:
    """Layer groups of one target forward; rank 1 computes a little longer and so waits a little less."""
    skew = 0.02 * line.rank
    groups = []
    for _ in range(LAYER_GROUPS):
        compute = [(c, line.jitter(ms) * (1 + skew)) for c, ms in shape.forward.kernels() if c != "communication"]
        added = sum(ms for _, ms in compute) - sum(ms for c, ms in shape.forward.kernels() if c != "communication")
        comm = line.jitter(shape.forward.communication, 0.01) - added
        groups.append([*compute[:3], ("communication", comm), compute[3]])
    return groups


def add_decode_step(shape: Shape, line: Timeline) -> None:
    start = line.gpu_us
    for group in forward_kernels(shape, line):
        for kernel in group:
            line.launch([kernel])
    line.cpu("user_annotation", "step[DECODE bs=1]", start - 60, line.gpu_us - 50)
    line.gpu_us += shape.idle_ms * 1000


def add_eagle_cycle(shape: Shape, line: Timeline) -> None:
    stack = shape.style == "python_stack"
    gemm, attention, other = shape.draft_step_ms
    draft_kernels = [(c, line.jitter(ms)) for _ in range(shape.draft_steps)
                     for c, ms in (("gemm", gemm), ("attention", attention), ("elementwise/other", other))]
    begin, end = line.launch(draft_kernels, api="cudaGraphLaunch")
    if stack:
        line.cpu("python_function", f"{WORKER}(420): draft", begin - 60, begin - 20)
    verify_start = line.gpu_us
    for group in forward_kernels(shape, line):
        for kernel in group:
            line.launch([kernel])
    if stack:
        line.cpu("python_function", f"{WORKER}(512): verify", verify_start - 70, line.gpu_us - 62)
    line.cpu("user_annotation", "step[TARGET_VERIFY bs=1]", verify_start - 65, line.gpu_us - 64)
    extend_start = line.gpu_us
    line.launch([("gemm", line.jitter(shape.extend_ms[0])), ("elementwise/other", line.jitter(shape.extend_ms[1]))], api="cudaGraphLaunch")
    if stack:
        line.cpu("python_function", f"{WORKER}(640): forward_draft_extend_after_decode", extend_start - 58, extend_start - 20)
    line.cpu("user_annotation", "step[DRAFT_EXTEND bs=1]", extend_start - 55, extend_start - 25)
    line.gpu_us += shape.idle_ms * 1000


def trace_text(shape: Shape, rank: int) -> str:
    line = Timeline(rank, random.Random(f"{shape.seed}-{rank}"), shape.all_reduce)
    for _ in range(CYCLES):
        (add_decode_step if shape.style == "decode" else add_eagle_cycle)(shape, line)
    events = sorted(line.events, key=lambda e: (e["pid"] != CPU_PID, e["ts"]))
    document = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": i, "name": GPU, "totalGlobalMem": 102_005_473_280, "computeMajor": 12, "computeMinor": 0}
                             for i in range(WORLD_SIZE)],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": WORLD_SIZE},
        "traceEvents": events,
        "traceName": f"/tmp/sglang_profiles/{shape.variant}-TP-{rank}.trace.json",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": int(shape.start.timestamp()) * 1_000_000_000,
    }
    parts = []
    for key, value in document.items():
        if key == "traceEvents":
            parts.append('  "traceEvents": [\n' + ",\n".join("  " + json.dumps(e) for e in value) + "\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_gzip(path: Path, text: str) -> None:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as stream:
        stream.write(text.encode("utf-8"))
    path.write_bytes(buffer.getvalue())


def write_demo_traces(out_dir: Path) -> list[Path]:
    """One illustrative trace per TP rank and demo variant under ``out_dir/<phase>/<variant>/``."""
    written = []
    for shape in SHAPES:
        folder = out_dir / shape.phase / shape.variant
        folder.mkdir(parents=True, exist_ok=True)
        for rank in RANKS:
            path = folder / f"profile-{shape.variant}-TP-{rank}.trace.json.gz"
            write_gzip(path, trace_text(shape, rank))
            written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_demo_traces(OUT):
        print(written_path.relative_to(OUT.parent))
