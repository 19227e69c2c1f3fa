"""A large, realistic SGLang EAGLE-3 decode profile: one rank's Kineto trace, generated from a seed.

Shaped like what ``POST /start_profile`` with ``with_stack`` writes on a recent
SGLang (DOMAIN.md §6; event shapes copied from the real traces in
``shared/corpus/traces``): a ``traceEvents`` array between ``deviceProperties`` /
``distributedInfo`` and ``traceName`` / ``baseTimeNanoseconds``.

Every speculative cycle of a DeepSeek-V3-sized target (61 layers, TP8 over PCIe):

* CPU: the scheduler's Python stack (``python_function``): ``eagle_worker.py(N): draft``,
  ``...: verify``, ``...: forward_draft_extend_after_decode`` around
  ``cuda_graph_runner.py(N): replay`` and ordinary functions; ``step[DRAFT ...]``,
  ``step[TARGET_VERIFY ...]``, ``step[DRAFT_EXTEND_V2 ...]`` annotations
  (``user_annotation``); ``cpu_op`` events; ``cuda_runtime`` launches with
  correlation ids (``cudaGraphLaunch`` for CUDA-graph replays, ``cudaLaunchKernel``,
  ``cudaMemcpyAsync``, ``cudaStreamSynchronize``) and their ``ac2g`` flow events;
* GPU: the replayed graphs' kernels, all sharing the replay launch's correlation id,
  on the main stream, shared-expert GEMMs overlapping on a second stream, copies on
  a third; ``ncclDevKernel_AllReduce_Sum_bf16_RING_LL`` twice per layer (the verify
  step is ~90 % all-reduce, as in the story); ``gpu_user_annotation`` envelopes.
"""
from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

SEED = 20260212
LAYERS = 61
DRAFT_STEPS = 3
PID, MAIN_TID = 215043, 215043
DEVICE = 0
MAIN_STREAM, ALT_STREAM, COPY_STREAM = 7, 24, 20
FILE_NAME = "1778151234.5678-TP-0.trace.json.gz"  # SGLang's <profile_id>-TP-<rank> naming
BASE_TIME_NS = 1778151234000000000
SGL = "/sgl-workspace/sglang/python/sglang/srt"

NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
RMSNORM = "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)"
ADD_RMSNORM = "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float)"
GEMM = "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT"
GEMM_CUTLASS = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm120TmaWarpSpecialized<3, 2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<64> >, cutlass::bfloat16_t> > >(cutlass::gemm::kernel::GemmUniversal<...>::Params)"
ROPE = "void sgl_kernel::rotary_embedding_kernel<__nv_bfloat16, true>(long const*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16 const*, int, long, long, int, int, int)"
ATTENTION = "void flashinfer::mla::BatchMLAPagedAttentionKernel<flashinfer::mla::KernelTraits<2u, 64u, 64u, 512u, 64u, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::mla::Params<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)"
MOE_GATE = "void moe_fused_gate_kernel<float, 256, 8, 1, 32, 8, 4>(void*, void*, float*, int*, long, long, long, long, double)"
MOE_ALIGN = "void moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, unsigned long, int*)"
FUSED_MOE = "fused_moe_kernel"
ACT = "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> >(__nv_bfloat16*, __nv_bfloat16 const*, int)"
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)"
TOPK = "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int)"
ARGMAX = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4>)"
TREE = "void sgl_kernel::verify_tree_greedy<int, long>(int*, int*, int*, long*, long*, long*, long const*, long const*, long const*, unsigned int, unsigned int, unsigned int)"
INDEX = "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<8> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<8> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<...>)"

# (kernel name, stream, mean µs); nccl durations are drawn separately (they carry the PCIe wait)
VERIFY_LAYER = (
    (RMSNORM, MAIN_STREAM, 2.1), (GEMM, MAIN_STREAM, 3.4), (RMSNORM, MAIN_STREAM, 1.9), (GEMM, MAIN_STREAM, 4.2),
    (GEMM, MAIN_STREAM, 3.1), (RMSNORM, MAIN_STREAM, 1.8), (ROPE, MAIN_STREAM, 2.2), (ATTENTION, MAIN_STREAM, 9.5),
    (GEMM_CUTLASS, MAIN_STREAM, 5.3), (NCCL, MAIN_STREAM, 0.0), (ADD_RMSNORM, MAIN_STREAM, 2.4), (GEMM, MAIN_STREAM, 2.6),
    (MOE_GATE, MAIN_STREAM, 3.0), (MOE_ALIGN, MAIN_STREAM, 2.7), (GEMM_CUTLASS, ALT_STREAM, 6.1), (FUSED_MOE, MAIN_STREAM, 14.2),
    (ACT, MAIN_STREAM, 2.0), (FUSED_MOE, MAIN_STREAM, 11.8), (ADD, MAIN_STREAM, 1.6), (NCCL, MAIN_STREAM, 0.0),
)
DRAFT_STEP = (
    (ADD_RMSNORM, MAIN_STREAM, 2.0), (GEMM, MAIN_STREAM, 3.0), (ROPE, MAIN_STREAM, 2.0), (ATTENTION, MAIN_STREAM, 6.0),
    (GEMM, MAIN_STREAM, 3.2), (NCCL, MAIN_STREAM, 0.0), (ADD_RMSNORM, MAIN_STREAM, 2.0), (GEMM, MAIN_STREAM, 4.0),
    (ACT, MAIN_STREAM, 1.8), (GEMM, MAIN_STREAM, 3.9), (NCCL, MAIN_STREAM, 0.0), (GEMM_CUTLASS, MAIN_STREAM, 18.0),
    (TOPK, MAIN_STREAM, 4.5), (ADD, MAIN_STREAM, 1.5),
)
TREE_OPS = (  # the verify step's sampling/tree bookkeeping, launched one by one from Python
    ("aten::argmax", ARGMAX, 4.0), ("sgl_kernel::verify_tree_greedy", TREE, 6.0), ("aten::index", INDEX, 2.5),
    ("aten::add", ADD, 1.5), ("aten::index", INDEX, 2.5), ("aten::add", ADD, 1.5),
)
PLAIN_FUNCTIONS = (  # python_function events that are not phase markers
    "torch/utils/_contextlib.py(116): decorate_context",
    "torch/nn/modules/module.py(1751): _call_impl",
    "torch/nn/modules/module.py(1762): _wrapped_call_impl",
    f"{SGL}/managers/scheduler.py(1450): run_batch",
    f"{SGL}/managers/tp_worker.py(230): forward_batch_generation",
    f"{SGL}/speculative/eagle_utils.py(402): prepare_for_verify",
    f"{SGL}/layers/sampler.py(88): forward",
)


class Writer:
    """Formats events as Kineto writes them, one per line, into a gzip stream; counts ids like the profiler."""

    def __init__(self, out: gzip.GzipFile, rng: np.random.Generator) -> None:
        self.out = out
        self.rng = rng
        self.correlation = 100_000
        self.external = 5_000
        self.python_id = 1
        self.ev_idx = 0
        self.buffer: list[str] = []
        self.first = True
        self.bytes = 0

    def emit(self, text: str) -> None:
        self.buffer.append(text)

    def flush(self) -> None:
        if not self.buffer:
            return
        data = ("" if self.first else ",\n") + ",\n".join(self.buffer)
        encoded = data.encode()
        self.out.write(encoded)
        self.bytes += len(encoded)
        self.first = False
        self.buffer.clear()

    # --- CPU side ---------------------------------------------------------------------------

    def python(self, name: str, ts: float, dur: float, parent: int) -> int:
        self.python_id += 1
        self.ev_idx += 1
        self.emit(
            f'  {{"ph": "X", "cat": "python_function", "name": {json.dumps(name)}, "pid": {PID}, "tid": {MAIN_TID}, '
            f'"ts": {ts:.3f}, "dur": {dur:.3f}, "args": {{"Python parent id": {parent}, "Python id": {self.python_id}, '
            f'"Python thread": 0, "Ev Idx": {self.ev_idx}}}}}'
        )
        return self.python_id

    def annotation(self, name: str, ts: float, dur: float) -> None:
        self.external += 1
        self.ev_idx += 1
        self.emit(
            f'  {{"ph": "X", "cat": "user_annotation", "name": "{name}", "pid": {PID}, "tid": {MAIN_TID}, "ts": {ts:.3f}, '
            f'"dur": {dur:.3f}, "args": {{"External id": {self.external}, "Record function id": 0, "Ev Idx": {self.ev_idx}}}}}'
        )

    def cpu_op(self, name: str, ts: float, dur: float) -> None:
        self.external += 1
        self.ev_idx += 1
        self.emit(
            f'  {{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": {PID}, "tid": {MAIN_TID}, "ts": {ts:.3f}, "dur": {dur:.3f}, '
            f'"args": {{"External id": {self.external}, "Sequence number": {self.external * 3}, "Fwd thread id": 0, '
            f'"Record function id": 0, "Concrete Inputs": ["", "", ""], "Ev Idx": {self.ev_idx}}}}}'
        )

    def runtime(self, name: str, cbid: int, ts: float, dur: float, *, flow: bool) -> int:
        self.correlation += 1
        self.emit(
            f'  {{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": {PID}, "tid": {MAIN_TID}, "ts": {ts:.3f}, '
            f'"dur": {dur:.3f}, "args": {{"External id": {self.external}, "cbid": {cbid}, "correlation": {self.correlation}}}}}'
        )
        if flow:
            self.emit(f'  {{"ph": "s", "id": {self.correlation}, "pid": {PID}, "tid": {MAIN_TID}, "ts": {ts:.3f}, "cat": "ac2g", "name": "ac2g"}}')
        return self.correlation

    # --- GPU side ---------------------------------------------------------------------------

    def kernel(self, name: str, stream: int, ts: float, dur: float, correlation: int, *, flow: bool = False) -> None:
        grid = int(self.rng.integers(1, 264))
        self.emit(
            f'  {{"ph": "X", "cat": "kernel", "name": {json.dumps(name)}, "pid": {DEVICE}, "tid": {stream}, "ts": {ts:.3f}, '
            f'"dur": {dur:.3f}, "args": {{"External id": {self.external}, "queued": 0, "device": {DEVICE}, "context": 1, '
            f'"stream": {stream}, "correlation": {correlation}, "registers per thread": {32 + grid % 96}, "shared memory": {grid * 256}, '
            f'"blocks per SM": {grid / 188:.6f}, "warps per SM": {grid / 47:.6f}, "grid": [{grid}, 1, 1], "block": [256, 1, 1], '
            f'"est. achieved occupancy %": {grid % 100}}}}}'
        )
        if flow:
            self.emit(f'  {{"ph": "f", "id": {correlation}, "pid": {DEVICE}, "tid": {stream}, "ts": {ts:.3f}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}')

    def memcpy(self, name: str, ts: float, dur: float, correlation: int, size: int) -> None:
        self.emit(
            f'  {{"ph": "X", "cat": "gpu_memcpy", "name": "{name}", "pid": {DEVICE}, "tid": {COPY_STREAM}, "ts": {ts:.3f}, '
            f'"dur": {dur:.3f}, "args": {{"External id": {self.external}, "device": {DEVICE}, "context": 1, "stream": {COPY_STREAM}, '
            f'"correlation": {correlation}, "bytes": {size}, "memory bandwidth (GB/s)": {size / max(dur, 0.1) / 1000:.6f}}}}}'
        )

    def gpu_annotation(self, name: str, ts: float, dur: float) -> None:
        self.emit(
            f'  {{"ph": "X", "cat": "gpu_user_annotation", "name": "{name}", "pid": {DEVICE}, "tid": {MAIN_STREAM}, '
            f'"ts": {ts:.3f}, "dur": {dur:.3f}, "args": {{"External id": {self.external}}}}}'
        )


def graph_replay(w: Writer, kernels: tuple[tuple[str, int, float], ...], repeat: int, gpu_t: float, correlation: int, nccl_us: float) -> float:
    """The kernels of one CUDA-graph replay, back to back on the GPU; returns when the last one ends."""
    rng = w.rng
    count = len(kernels) * repeat
    jitter = rng.gamma(4.0, 0.25, size=count)
    gaps = rng.exponential(0.6, size=count)
    nccl = rng.gamma(9.0, nccl_us / 9.0, size=count)
    alt_end = gpu_t
    first = True
    index = 0
    for _ in range(repeat):
        for name, stream, mean in kernels:
            dur = nccl[index] if name is NCCL else mean * jitter[index]
            gpu_t += gaps[index]
            if stream == ALT_STREAM:  # shared experts overlap the routed experts on a second stream
                w.kernel(name, stream, gpu_t, dur, correlation)
                alt_end = gpu_t + dur
            else:
                w.kernel(name, stream, gpu_t, dur, correlation, flow=first)
                gpu_t += dur
                first = False
            index += 1
    return max(gpu_t, alt_end)


def cycle(w: Writer, cpu_t: float, gpu_t: float, batch: int, parent: int) -> tuple[float, float]:
    """One draft → verify → draft-extend cycle; returns the CPU and GPU clocks after it."""
    rng = w.rng
    cycle_start = cpu_t
    spec = f"{SGL}/speculative/eagle_worker.py"
    # draft: one graph replay covering every draft step
    draft_cpu = cpu_t + 4.0
    launch_t = draft_cpu + 30.0
    corr = w.runtime("cudaGraphLaunch", 311, launch_t, 18.0, flow=True)
    draft_gpu_start = max(gpu_t, launch_t + 6.0)
    draft_gpu_end = graph_replay(w, DRAFT_STEP, DRAFT_STEPS, draft_gpu_start, corr, 38.0)
    w.gpu_annotation(f"step[DRAFT bs={batch}]", draft_gpu_start, draft_gpu_end - draft_gpu_start)
    draft_cpu_end = launch_t + 60.0
    # verify: prepare on CPU, one graph replay of the 61-layer target, then tree bookkeeping and a sync
    verify_cpu = draft_cpu_end + 8.0
    prep = verify_cpu + 5.0
    for op in ("aten::empty", "aten::cat", "aten::copy_"):
        w.cpu_op(op, prep, 6.0)
        prep += 9.0
    copy_corr = w.runtime("cudaMemcpyAsync", 41, prep, 7.0, flow=False)
    w.memcpy("Memcpy HtoD (Pinned -> Device)", max(draft_gpu_end, prep + 4.0), 1.8, copy_corr, 4096)
    launch_t = prep + 20.0
    corr = w.runtime("cudaGraphLaunch", 311, launch_t, 22.0, flow=True)
    verify_gpu_start = max(draft_gpu_end + 2.0, launch_t + 6.0)
    verify_gpu_end = graph_replay(w, VERIFY_LAYER, LAYERS, verify_gpu_start, corr, 235.0)
    tree_t = launch_t + 40.0
    tree_gpu = verify_gpu_end
    for op_name, kernel_name, mean in TREE_OPS:
        w.cpu_op(op_name, tree_t, 14.0)
        corr = w.runtime("cudaLaunchKernel", 211, tree_t + 3.0, 5.0, flow=True)
        dur = mean * float(rng.gamma(4.0, 0.25))
        tree_gpu += float(rng.exponential(1.5))
        w.kernel(kernel_name, MAIN_STREAM, tree_gpu, dur, corr, flow=True)
        tree_gpu += dur
        tree_t += 16.0
    corr = w.runtime("cudaMemcpyAsync", 41, tree_t, 6.0, flow=False)
    w.memcpy("Memcpy DtoH (Device -> Pinned)", tree_gpu + 1.0, 1.5, corr, 64)
    sync_t = tree_t + 8.0
    sync_end = tree_gpu + 6.0
    w.runtime("cudaStreamSynchronize", 131, sync_t, sync_end - sync_t, flow=False)
    w.gpu_annotation(f"step[TARGET_VERIFY bs={batch}]", verify_gpu_start, tree_gpu - verify_gpu_start)
    verify_cpu_end = sync_end + 10.0
    # draft extend: one more graph replay
    extend_cpu = verify_cpu_end + 6.0
    launch_t = extend_cpu + 25.0
    corr = w.runtime("cudaGraphLaunch", 311, launch_t, 17.0, flow=True)
    extend_gpu_start = max(tree_gpu + 8.0, launch_t + 6.0)
    extend_gpu_end = graph_replay(w, DRAFT_STEP, 2, extend_gpu_start, corr, 38.0)
    w.gpu_annotation(f"step[DRAFT_EXTEND_V2 bs={batch}]", extend_gpu_start, extend_gpu_end - extend_gpu_start)
    extend_cpu_end = launch_t + 50.0
    cycle_end = max(extend_cpu_end, extend_gpu_end) + float(rng.exponential(40.0))
    # the Python stack and step annotations around it all (written after the launches, as Kineto does)
    top = w.python(PLAIN_FUNCTIONS[3], cycle_start, cycle_end - cycle_start, parent)
    worker = w.python(PLAIN_FUNCTIONS[4], cycle_start + 1.0, cycle_end - cycle_start - 2.0, top)
    spec_gen = w.python(f"{spec}(259): forward_batch_speculative_generation", cycle_start + 2.0, cycle_end - cycle_start - 4.0, worker)
    for name, start, end, inner in (
        (f"{spec}(512): draft", draft_cpu, draft_cpu_end, f"{SGL}/speculative/eagle_draft_cuda_graph_runner.py(301): replay"),
        (f"{spec}(690): verify", verify_cpu, verify_cpu_end, f"{SGL}/model_executor/cuda_graph_runner.py(781): replay"),
        (f"{spec}(790): forward_draft_extend_after_decode", extend_cpu, extend_cpu_end, f"{SGL}/speculative/eagle_draft_extend_cuda_graph_runner.py(288): replay"),
    ):
        outer = w.python(name, start, end - start, spec_gen)
        call = w.python(PLAIN_FUNCTIONS[1], start + 1.0, end - start - 2.0, outer)
        wrapped = w.python(PLAIN_FUNCTIONS[2], start + 1.5, end - start - 3.0, call)
        w.python(inner, start + 2.0, end - start - 4.0, wrapped)
        w.python(PLAIN_FUNCTIONS[0], start + 2.5, 3.0, wrapped)
    w.python(PLAIN_FUNCTIONS[5], verify_cpu + 1.0, 60.0, spec_gen)
    w.python(PLAIN_FUNCTIONS[6], tree_t - 40.0, 30.0, spec_gen)
    w.annotation(f"step[DRAFT bs={batch}]", draft_cpu, draft_cpu_end - draft_cpu)
    w.annotation(f"step[TARGET_VERIFY bs={batch}]", verify_cpu, verify_cpu_end - verify_cpu)
    w.annotation(f"step[DRAFT_EXTEND_V2 bs={batch}]", extend_cpu, extend_cpu_end - extend_cpu)
    return cycle_end, max(extend_gpu_end, tree_gpu)


def header() -> str:
    gpus = [
        {"id": index, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "totalGlobalMem": 102011207680, "computeMajor": 12,
         "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 1536, "regsPerBlock": 65536, "warpSize": 32,
         "sharedMemPerBlock": 49152, "numSms": 188, "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 101376,
         "sharedMemPerMultiprocessor": 102400}
        for index in range(8)
    ]
    info = {"backend": "nccl", "rank": 0, "world_size": 8, "pg_count": 2, "nccl_version": "2.27.3",
            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 8, "ranks": list(range(8))}]}
    metadata = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": MAIN_TID, "args": {"name": "thread 215043 (python3)"}},
        {"name": "process_name", "ph": "M", "ts": 0, "pid": DEVICE, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": DEVICE, "tid": 0, "args": {"labels": "GPU 0"}},
        *({"name": "thread_name", "ph": "M", "ts": 0, "pid": DEVICE, "tid": stream, "args": {"name": f"stream {stream}"}}
          for stream in (MAIN_STREAM, COPY_STREAM, ALT_STREAM)),
    ]
    head = (
        '{\n  "schemaVersion": 1,\n  "deviceProperties": ' + json.dumps(gpus) + ',\n  "distributedInfo": ' + json.dumps(info)
        + ',\n  "record_shapes": 0,\n  "with_stack": 1,\n  "profile_memory": 0,\n  "traceEvents": [\n'
    )
    return head + ",\n".join("  " + json.dumps(event) for event in metadata) + ",\n"


FOOTER = (
    '\n  ],\n  "traceName": "/tmp/sglang_profiles/' + FILE_NAME.removesuffix(".gz") + '",\n'
    '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": ' + str(BASE_TIME_NS) + "\n}\n"
)


def generate(path: Path, total_bytes: int, seed: int = SEED, compresslevel: int = 6) -> int:
    """Write a gzip trace whose JSON is about ``total_bytes``; returns the uncompressed size."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as raw, gzip.GzipFile(filename=FILE_NAME.removesuffix(".gz"), mode="wb", fileobj=raw, compresslevel=compresslevel, mtime=0) as out:
        head = header().encode()
        out.write(head)
        w = Writer(out, rng)
        w.bytes = len(head)
        cpu_t, gpu_t = 1_000_000.0, 1_000_050.0
        loop = 1  # the scheduler's event loop, written last once its duration is known
        while w.bytes < total_bytes - len(FOOTER):
            batch = int(rng.choice([1, 1, 1, 2, 4]))
            cpu_t, gpu_t = cycle(w, cpu_t, gpu_t, batch, loop)
            w.flush()
        w.emit(
            f'  {{"ph": "X", "cat": "python_function", "name": "{SGL}/managers/scheduler.py(1012): event_loop_normal", "pid": {PID}, '
            f'"tid": {MAIN_TID}, "ts": 999500.000, "dur": {cpu_t - 999000.0:.3f}, "args": {{"Python parent id": 0, "Python id": {loop}, '
            f'"Python thread": 0, "Ev Idx": 0}}}}'
        )
        w.emit(f'  {{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": {cpu_t + 1000.0:.3f}}}')
        w.flush()
        out.write(FOOTER.encode())
        return w.bytes + len(FOOTER)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--mb", type=float, default=50.0, help="uncompressed size in MB (10^6 bytes)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    print(generate(args.path, int(args.mb * 1e6), args.seed))


if __name__ == "__main__":
    main()
