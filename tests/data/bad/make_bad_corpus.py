"""Write the generated half of the bad-input corpus: ``tests/data/bad/gen/`` and ``gen/expected.json``.

Run ``python tests/data/bad/make_bad_corpus.py`` after changing it; the output is
deterministic (fixed seed, gzip mtime 0), and ``tests/test_bad_input.py`` checks
that the committed files are what this script writes today.

Every case starts from a small *valid* sample written here (not copied from
anywhere): a canonical benchmark JSON, sglang.bench_serving JSONL, a vLLM
``--save-result`` JSON, a Kineto trace, an SGLang and a vLLM server log, a cycle
timing CSV. Then it is damaged the way files are damaged in the wild: cut at many
byte offsets (plain and gzipped), a value replaced by NaN/Infinity/a negative/a
huge number/a wrong type, bytes that are not UTF-8, NUL runs, broken gzip, and
logs whose lines are duplicated, shuffled, glued together, interleaved across
ranks or whose clock jumps. The expected outcome of each case is stated here, as
a rule of the format, next to the damage (see ``expect_*`` and the value tables):
either an ``error`` (class, message substring, and the line or key it must name)
or ``partial`` (the rows that must load, the reasons that must be counted as
skipped, a warning that must name ``file:line``). Hand-made cases live in
``hand/`` with their expectations in ``expected.json``.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import shutil
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "gen"
MANIFEST = "expected.json"
SEED = 20260301

Expect = dict[str, Any]


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    expect: Expect


def error(error_class: str, message: str, what: str, *, line: int | None = None, key: str | None = None) -> Expect:
    """The file must fail with ``error_class`` whose message contains ``message`` (and names ``line``/``key``)."""
    expect: Expect = {"what": what, "outcome": "error", "error": error_class, "message": message}
    if line is not None:
        expect["line"] = line
    if key is not None:
        expect["key"] = key
    return expect


def partial(
    kind: str,
    what: str,
    *,
    rows: int | None = None,
    min_rows: int | None = None,
    tables: dict[str, int] | None = None,
    skipped: dict[str, int] | None = None,
    warning: str | None = None,
    warnings: int | None = None,
) -> Expect:
    """The file must load as ``kind``: ``rows`` exactly (or at least ``min_rows``), ``tables`` rows per table,
    at least the ``skipped`` counts per reason, a warning containing ``warning`` (``file:line: ...``), and
    exactly ``warnings`` warnings (0: a clean load)."""
    expect: Expect = {"what": what, "outcome": "partial", "kind": kind}
    values = (("rows", rows), ("min_rows", min_rows), ("tables", tables), ("skipped", skipped), ("warning", warning), ("warnings", warnings))
    for name, value in values:
        if value is not None:
            expect[name] = value
    return expect


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


# --- valid samples ------------------------------------------------------------------------------------

PHASE0_RUNS = [  # DOMAIN.md §1: the K2 drafter's five measured runs
    (1, 32, 2048, 40.50), (2, 31, 2048, 39.46), (3, 26, 2048, 41.69), (4, 28, 1963, 35.95), (5, 34, 2048, 38.51),
]
VALUE = '"@@VALUE@@"'  # where a value mutation goes


def bench_json_sample(run2_field: str | None = None, session_field: str | None = None) -> bytes:
    """specdash.bench/1, pretty-printed; a field of run 2 (or of the session) may be a placeholder."""
    runs = []
    for index, prompt, tokens, seconds in PHASE0_RUNS:
        run: dict[str, Any] = {"index": index, "prompt_tokens": prompt, "output_tokens": tokens, "duration_s": seconds,
                               "finish_reason": "length" if tokens == 2048 else "stop"}
        if index == 2 and run2_field:
            run[run2_field] = "@@VALUE@@"
        runs.append(run)
    session: dict[str, Any] = {
        "format": "specdash.bench/1", "endpoint": "http://localhost:30000/v1/completions", "model": "/models/Kimi-K2.5",
        "phase": "phase-0", "variant": "k2-drafter", "max_tokens": 2048, "warmup": 2,
        "started_at": "2026-02-10T10:00:00Z", "runs": runs,
    }
    if session_field:
        session[session_field] = "@@VALUE@@"
    return (json.dumps(session, indent=2) + "\n").encode()


BENCH_JSON_ROWS = 1 + len(PHASE0_RUNS)  # a sessions row and the runs


def serving_record(n: int) -> dict[str, Any]:
    """One sglang.bench_serving record, keys in the tool's own order (flat: no details, no server_info)."""
    spec = n > 0
    return {
        "backend": "sglang", "dataset_name": "random", "request_rate": float("inf"), "max_concurrency": 1,
        "sharegpt_output_len": None, "random_input_len": 32, "random_output_len": 2048, "random_range_ratio": 1.0,
        "duration": 124.9 + n, "completed": 5, "total_input_tokens": 160, "total_output_tokens": 10240,
        "request_throughput": 0.04, "input_throughput": 1.28, "output_throughput": [81.98, 51.78, 60.1][n],
        "mean_e2e_latency_ms": 39000.0, "median_e2e_latency_ms": 39460.0, "mean_ttft_ms": 210.0,
        "median_ttft_ms": 205.0, "p99_ttft_ms": 240.0, "mean_tpot_ms": 19.3, "median_tpot_ms": 19.2,
        "mean_itl_ms": 30.5, "median_itl_ms": 30.1, "p99_itl_ms": 38.0, "concurrency": 1.0,
        "accept_length": 1.58 if spec else None, "tag": ["baseline", "k2-drafter", "from-scratch"][n],
    }


def bench_serving_sample(mutated_record: int | None = None, mutated_key: str | None = None) -> bytes:
    lines = []
    for n in range(3):
        record = serving_record(n)
        if n == mutated_record and mutated_key:
            record[mutated_key] = "@@VALUE@@"
        lines.append(json.dumps(record))  # bare Infinity, as the tool writes
    return ("\n".join(lines) + "\n").encode()


def vllm_bench_sample() -> bytes:
    """``vllm bench serve --save-result``, keys in vLLM's order, pretty-printed as older versions wrote it."""
    result = {
        "date": "20251020-101500", "endpoint_type": "openai-chat", "backend": "vllm", "label": "eagle3",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": 3, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 2,
        "duration": 6.5, "completed": 3, "total_input_tokens": 96, "total_output_tokens": 384,
        "request_throughput": 0.4615, "output_throughput": 59.08, "total_token_throughput": 73.85,
        "mean_ttft_ms": 40.2, "median_ttft_ms": 39.9, "p99_ttft_ms": 43.0, "mean_tpot_ms": 16.1,
        "median_tpot_ms": 16.0, "mean_itl_ms": 16.1, "median_itl_ms": 15.9, "p99_itl_ms": 22.0,
        "mean_e2el_ms": 2085.0, "spec_decode_acceptance_length": 2.37, "spec_decode_acceptance_rate": 45.6,
        "spec_decode_num_drafts": 975, "spec_decode_draft_tokens": 2925, "spec_decode_accepted_tokens": 1336,
        "spec_decode_per_position_acceptance_rates": [0.738, 0.462, 0.169],
    }
    return (json.dumps(result, indent=4) + "\n").encode()


TRACE_ORIGIN_US = 1_767_225_600_000_000  # 2026-01-01, absolute epoch µs
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "nvjet_tst_128x256_64x4_2x1_v_bz_TNN"
ATTENTION = "flash::flash_fwd_splitkv_mla_kernel<576, 64>(Flash_fwd_mla_params)"
DRAFT_KERNEL = "triton_poi_fused_topk_draft_0"


def trace_events(cycles: int = 2, *, gpu: bool = True) -> list[dict[str, Any]]:
    """One rank of an EAGLE-3 decode: step[DRAFT]/step[TARGET_VERIFY]/step[DRAFT_EXTEND] spans on the CPU,
    their launches, and the kernels (draft, GEMM, attention, a 600 µs NCCL all-reduce) on stream 7."""
    events: list[dict[str, Any]] = []
    correlation = 100

    def cpu(cat: str, name: str, start: float, dur: float, **args: Any) -> None:
        event = {"ph": "X", "cat": cat, "name": name, "pid": 4242, "tid": 4242, "ts": TRACE_ORIGIN_US + start, "dur": dur}
        if args:
            event["args"] = args
        events.append(event)

    def launch(at: float, name: str, start: float, dur: float) -> None:
        nonlocal correlation
        correlation += 1
        cpu("cuda_runtime", "cudaLaunchKernel", at, 4, correlation=correlation)
        if gpu:
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": TRACE_ORIGIN_US + start,
                           "dur": dur, "args": {"device": 0, "stream": 7, "correlation": correlation}})

    for i in range(cycles):
        t = 1000 + 2000 * i
        cpu("user_annotation", "step[DRAFT bs=1]", t, 100)
        launch(t + 10, DRAFT_KERNEL, t + 50, 80)
        cpu("user_annotation", "step[TARGET_VERIFY bs=1]", t + 120, 1500)
        launch(t + 130, GEMM, t + 200, 200)
        launch(t + 140, ATTENTION, t + 400, 100)
        launch(t + 150, NCCL, t + 500, 600)
        cpu("user_annotation", "step[DRAFT_EXTEND bs=1]", t + 1650, 200)
        launch(t + 1660, GEMM, t + 1700, 100)
    cpu("cpu_op", "aten::copy_", 5000, 3, **{"External id": 7})
    return events


def kineto_document(events: list[dict[str, Any]], *, event_text: Callable[[int, str], str] | None = None) -> bytes:
    """Laid out as Kineto writes it: metadata, then ``traceEvents`` one event per line, then the trailer."""
    lines = [
        "{",
        '  "schemaVersion": 1,',
        '  "deviceProperties": [{"id": 0, "name": "NVIDIA RTX PRO 6000 Blackwell", "totalGlobalMem": 102000000000}],',
        '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},',
        '  "traceEvents": [',
    ]
    texts = [json.dumps(event) for event in events]
    if event_text is not None:
        texts = [event_text(i, text) for i, text in enumerate(texts)]
    lines.append(",\n".join("  " + text for text in texts))
    lines += ["  ],", '  "traceName": "1767225600-TP-0.trace.json",', '  "displayTimeUnit": "ms"', "}"]
    return ("\n".join(lines) + "\n").encode()


def kineto_sample() -> bytes:
    return kineto_document(trace_events())


SERVER_ARGS = (
    "server_args=ServerArgs(model_path='/models/Kimi-K2.5', tokenizer_path='/models/Kimi-K2.5', tp_size=8, dp_size=1, "
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='/models/kimi-k2-eagle3', speculative_num_steps=2, "
    "speculative_eagle_topk=1, speculative_num_draft_tokens=3, decode_log_interval=40, device='cuda')"
)


def sglang_lines(decodes: int = 8, *, tag: str = " TP0", start_s: int = 0) -> list[str]:
    """An SGLang EAGLE-3 server log: config dump, a prefill, decode lines, an HTTP access line and a tqdm bar."""
    lines = [f"[2026-02-10 10:00:00] {SERVER_ARGS}",
             "Capturing batches (bs=1 avail_mem=13.56 GB): 100%|██████████| 4/4 [00:02<00:00,  1.90it/s]",
             f"[2026-02-10 10:01:00{tag}] Prefill batch, #new-seq: 1, #new-token: 32, #cached-token: 0, "
             "token usage: 0.00, #running-req: 0, #queue-req: 0"]
    for i in range(decodes):
        second = start_s + 1 + i
        lines.append(
            f"[2026-02-10 10:01:{second:02d}{tag}] Decode batch, #running-req: 1, #token: {100 + 40 * i}, "
            f"token usage: 0.00, accept len: {1.50 + i / 100:.2f}, accept rate: 0.53, cuda graph: True, "
            f"gen throughput (token/s): {51.0 + i / 10:.2f}, #queue-req: 0"
        )
        if i == 3:
            lines.append(f'[2026-02-10 10:01:{second:02d}] INFO:     127.0.0.1:41460 - "POST /generate HTTP/1.1" 200 OK')
    return lines


SGLANG_ROWS = 1 + 1 + 8  # config, prefill, decodes
MUTATED = [i for i, line in enumerate(sglang_lines()) if "Decode batch" in line][4]  # the fifth decode line
MUTATED_LINE = MUTATED + 1  # its line number in the file


def sglang_sample() -> bytes:
    return ("\n".join(sglang_lines()) + "\n").encode()


VLLM_CONFIG = (
    "(EngineCore_0 pid=4301) INFO 08-04 20:49:11 [core.py:74] Initializing a V1 LLM engine (v0.10.1) with config: "
    "model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=SpeculativeConfig(method='eagle3', "
    "model='yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', num_spec_tokens=3), tensor_parallel_size=1, seed=0"
)


def vllm_lines(intervals: int = 4) -> list[str]:
    lines = ["(APIServer pid=4117) INFO 08-04 20:49:02 [api_server.py:1805] vLLM API server version 0.10.1", VLLM_CONFIG]
    for i in range(intervals):
        stamp = f"08-04 20:51:{8 + 10 * i:02d}"
        lines.append(
            f"(APIServer pid=4117) INFO {stamp} [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
            f"Avg generation throughput: {150.0 + i:.1f} tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: 0.9%, Prefix cache hit rate: 0.0%"
        )
        lines.append(
            f"(APIServer pid=4117) INFO {stamp} [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.{37 + i}, "
            "Accepted throughput: 91.50 tokens/s, Drafted throughput: 180.60 tokens/s, Accepted: 915 tokens, "
            "Drafted: 1806 tokens, Per-position acceptance rate: 0.786, 0.485, 0.249, Avg Draft acceptance rate: 50.7%"
        )
    return lines


def cycle_csv_lines() -> list[str]:
    lines = ["cycle,phase,ms,rank,variant,session"]
    for cycle in range(3):
        lines += [f"{cycle},draft,0.3{cycle},0,k2-drafter,probe-1", f"{cycle},verify,29.9{cycle},0,k2-drafter,probe-1",
                  f"{cycle},draft_extend,0.1{cycle},0,k2-drafter,probe-1", f"{cycle},total,30.50,0,k2-drafter,probe-1"]
    return lines


def text(lines: list[str], newline: str = "\n") -> bytes:
    return (newline.join(lines) + newline).encode()


# --- truncation ----------------------------------------------------------------------------------------

def offsets(rng: random.Random, size: int, count: int, *, low: int = 1) -> list[int]:
    """``count`` distinct cut points in [low, size), spread over the file (one per stratum), plus size-1."""
    picked = {size - 1}
    step = (size - 1 - low) / count
    for n in range(count - 1):
        picked.add(low + int(step * n) + rng.randrange(max(1, int(step))))
    return sorted(picked)


def expect_cut_bench_json(prefix: bytes) -> Expect:
    what = f"canonical benchmark JSON cut after {len(prefix)} bytes"
    if b'"specdash.bench/1"' in prefix:  # its format marker makes it recognizable
        return error("MalformedInput", "invalid JSON", what, line=prefix.count(b"\n") + 1)
    return error("UnrecognizedFormat", "no format reads it", what)


# bench_serving is recognized once three of its result keys are in view (bench_serving.MIN_RESULT_KEYS).
SERVING_RECOGNIZED_AFTER = b'"total_input_tokens":'


def expect_cut_bench_serving(prefix: bytes) -> Expect:
    what = f"bench_serving JSONL (3 records, one per line) cut after {len(prefix)} bytes"
    complete = prefix.count(b"}")  # flat records: each "}" closes one
    tail = prefix[prefix.rfind(b"}") + 1:] if complete else prefix
    if complete and not tail.strip():
        return partial("bench_serving_jsonl", what, rows=complete, warnings=0)
    if complete:
        return partial("bench_serving_jsonl", what, rows=complete, skipped={"truncated JSON record": 1},
                       warning=f":{complete + 1}: truncated JSON record")
    if SERVING_RECOGNIZED_AFTER in prefix:
        return error("MalformedInput", "no complete sglang.bench_serving record found", what, line=1)
    return error("UnrecognizedFormat", "no format reads it", what)


VLLM_RECOGNIZED_AFTER = b'"completed":'  # model_id/endpoint_type plus two result keys (vllm_bench.sniff_json)


def expect_cut_vllm_bench(prefix: bytes) -> Expect:
    what = f"pretty-printed vllm bench serve result JSON cut after {len(prefix)} bytes"
    if VLLM_RECOGNIZED_AFTER in prefix:
        return error("MalformedInput", "no complete vllm bench serve result found", what, line=1)
    return error("UnrecognizedFormat", "no format reads it", what)


def expect_cut_kineto(prefix: bytes, document: bytes) -> Expect:
    what = f"Kineto trace JSON cut after {len(prefix)} bytes"
    array_end = document.index(b"  ],\n")
    if b'"deviceProperties"' not in prefix:  # schemaVersion + deviceProperties make it a trace
        return error("UnrecognizedFormat", "no format reads it", what)
    if b'"traceEvents": [' not in prefix:
        return error("MalformedInput", "no traceEvents array found", what)
    if len(prefix) <= array_end + 2:
        return error("MalformedInput", "truncated: the traceEvents array never closes", what)
    return error("MalformedInput", "the JSON around traceEvents is broken or truncated", what)


def expect_cut_sglang(prefix: bytes) -> Expect:
    complete_lines = prefix[: prefix.rfind(b"\n") + 1].decode().splitlines()
    stats = sum(1 for line in complete_lines if "Decode batch," in line or "Prefill batch," in line or "server_args=" in line)
    return partial("sglang_log", f"SGLang server log cut after {len(prefix)} bytes (mid-line)", min_rows=stats)


def truncation_cases(rng: random.Random) -> Iterator[Case]:
    bench = bench_json_sample()
    for cut in offsets(rng, len(bench.rstrip()), 20):  # rstrip: cutting only the final newline leaves it whole
        yield Case(f"cut-bench-json-{cut:05d}.json", bench[:cut], expect_cut_bench_json(bench[:cut]))
    serving = bench_serving_sample()
    cuts = offsets(rng, len(serving), 20) + [serving.index(b"}\n") + 1]  # right after the first record's brace
    for cut in sorted(set(cuts)):
        yield Case(f"cut-bench-serving-{cut:05d}.jsonl", serving[:cut], expect_cut_bench_serving(serving[:cut]))
    vllm = vllm_bench_sample()
    for cut in offsets(rng, len(vllm.rstrip()), 14):
        yield Case(f"cut-vllm-bench-{cut:05d}.json", vllm[:cut], expect_cut_vllm_bench(vllm[:cut]))
    trace = kineto_sample()
    array_end = trace.index(b"  ],\n")
    cuts = offsets(rng, len(trace.rstrip()), 18) + [trace.index(b"[\n") + 1, array_end + 3, array_end + 10]
    for cut in sorted(set(cuts)):
        yield Case(f"cut-kineto-{cut:05d}-TP-0.trace.json", trace[:cut], expect_cut_kineto(trace[:cut], trace))
    packed = gz(trace)
    for cut in offsets(rng, len(packed), 10, low=2):
        what = f"gzipped Kineto trace ({len(packed)} bytes) cut after {cut} bytes"
        yield Case(f"cut-gz-kineto-{cut:05d}-TP-0.trace.json.gz", packed[:cut],
                   error("MalformedInput", "corrupt or truncated gzip", what))
    log = sglang_sample()
    first_line_end = log.index(b"\n") + 1
    for cut in offsets(rng, len(log), 10, low=first_line_end):
        yield Case(f"cut-sglang-log-{cut:05d}.log", log[:cut], expect_cut_sglang(log[:cut]))
    packed_log = gz(log)
    for cut in offsets(rng, len(packed_log), 5, low=2):
        what = f"gzipped SGLang log ({len(packed_log)} bytes) cut after {cut} bytes"
        yield Case(f"cut-gz-sglang-log-{cut:05d}.log.gz", packed_log[:cut],
                   error("MalformedInput", "corrupt or truncated gzip", what))
    packed_bench = gz(bench)
    for cut in offsets(rng, len(packed_bench), 4, low=2):
        what = f"gzipped benchmark JSON cut after {cut} bytes"
        yield Case(f"cut-gz-bench-json-{cut:05d}.json.gz", packed_bench[:cut],
                   error("MalformedInput", "corrupt or truncated gzip", what))


# --- values: NaN, Infinity, negatives, huge numbers, wrong types --------------------------------------------

HUGE_INT = "99999999999999999999999"  # beyond int64: JSON has no limit, Arrow and DuckDB do

# run 2's field -> [(JSON literal, expected outcome)]. Key names the field as the error must.
RUN2 = "runs[1]"
BENCH_JSON_VALUES: list[tuple[str, str, Expect]] = [
    ("output_tokens", "NaN", error("MalformedInput", "expected a finite number", "output_tokens NaN", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "Infinity", error("MalformedInput", "expected a finite number", "output_tokens Infinity", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "-Infinity", error("MalformedInput", "expected a finite number", "output_tokens -Infinity", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "1e400", error("MalformedInput", "expected a finite number", "output_tokens 1e400 (overflows to inf)", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "-5", error("MalformedInput", "expected a whole non-negative number", "negative output_tokens", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "2048.5", error("MalformedInput", "expected a whole non-negative number", "fractional output_tokens", key=f"{RUN2}.output_tokens")),
    ("output_tokens", HUGE_INT, error("MalformedInput", "too large", "output_tokens beyond int64", key=f"{RUN2}.output_tokens")),
    ("output_tokens", '"lots"', error("MalformedInput", "expected a number", "output_tokens is text", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "true", error("MalformedInput", "expected a number", "output_tokens is a boolean", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "[2048]", error("MalformedInput", "expected a number", "output_tokens is a list", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "{}", error("MalformedInput", "expected a number", "output_tokens is an object", key=f"{RUN2}.output_tokens")),
    ("output_tokens", "null", error("MalformedInput", "a run needs output tokens", "output_tokens null", key=RUN2)),
    ("duration_s", "0", error("MalformedInput", "wall time must be positive", "zero wall time", key=f"{RUN2}.duration_s")),
    ("duration_s", "-39.46", error("MalformedInput", "wall time must be positive", "negative wall time", key=f"{RUN2}.duration_s")),
    ("duration_s", "NaN", error("MalformedInput", "expected a finite number", "wall time NaN", key=f"{RUN2}.duration_s")),
    ("duration_s", "1e-320", error("MalformedInput", "too small", "denormal wall time: tok/s would be infinite", key=f"{RUN2}.duration_s")),
    ("duration_s", '"39.46"', partial("bench_json", "wall time as numeric text is read", rows=BENCH_JSON_ROWS)),
    ("duration_s", "1e308", partial("bench_json", "a huge but finite wall time loads (tok/s tiny)", rows=BENCH_JSON_ROWS)),
    ("prompt_tokens", "-1", error("MalformedInput", "expected a whole non-negative number", "negative prompt tokens", key=f"{RUN2}.prompt_tokens")),
    ("prompt_tokens", HUGE_INT, error("MalformedInput", "too large", "prompt tokens beyond int64", key=f"{RUN2}.prompt_tokens")),
    ("index", HUGE_INT, error("MalformedInput", "too large", "run index beyond int64", key=f"{RUN2}.index")),
    ("started_at", '"2026-13-45T99:00:00"', error("MalformedInput", "expected an ISO 8601 time", "impossible date", key=f"{RUN2}.started_at")),
    ("started_at", "1e20", error("MalformedInput", "expected an ISO 8601 time", "epoch seconds beyond year 9999", key=f"{RUN2}.started_at")),
    ("started_at", "-1e12", error("MalformedInput", "expected an ISO 8601 time", "epoch seconds before year 1", key=f"{RUN2}.started_at")),
    ("started_at", "NaN", error("MalformedInput", "expected an ISO 8601 time", "epoch seconds NaN", key=f"{RUN2}.started_at")),
    ("finish_reason", "{\"type\": \"length\"}", partial("bench_json", "a finish reason that is an object is kept as text", rows=BENCH_JSON_ROWS)),
]
SESSION_VALUES: list[tuple[str, str, Expect]] = [
    ("max_tokens", "NaN", error("MalformedInput", "expected a finite number", "max_tokens NaN", key="max_tokens")),
    ("max_tokens", "-2048", error("MalformedInput", "expected a whole non-negative number", "negative max_tokens", key="max_tokens")),
    ("max_tokens", HUGE_INT, error("MalformedInput", "too large", "max_tokens beyond int64", key="max_tokens")),
    ("warmup", "1e400", error("MalformedInput", "expected a finite number", "warmup count inf", key="warmup")),
    ("started_at", '"yesterday"', error("MalformedInput", "expected an ISO 8601 time", "session start is prose", key="started_at")),
    ("phase", "42", partial("bench_json", "a numeric phase label is kept as text", rows=BENCH_JSON_ROWS)),
    ("runs", '{"1": {"output_tokens": 2048, "duration_s": 40.5}}', error("MalformedInput", "no runs found", "runs is an object, not a list", key="runs")),
    ("runs", "[]", error("MalformedInput", "no runs found", "runs is empty", key="runs")),
    ("runs", "[2048, 40.5]", error("MalformedInput", "expected an object, got int", "runs holds numbers", key="runs[0]")),
]

# key of record 2 (line 2) -> [(literal, expected)]: a bad value is kept in extra with a warning, the record loads.
SERVING_WARNS = "bench_serving_jsonl"
BENCH_SERVING_VALUES: list[tuple[str, str, Expect]] = [
    ("completed", "NaN", partial(SERVING_WARNS, "NaN count reads as null (no value)", rows=3)),
    ("completed", HUGE_INT, partial(SERVING_WARNS, "count beyond int64: kept in extra", rows=3, warning=':2: key "completed"')),
    ("completed", "1e400", partial(SERVING_WARNS, "count overflowing to inf", rows=3, warning=':2: key "completed"')),
    ("completed", "-5", partial(SERVING_WARNS, "a negative count is stored as written", rows=3)),
    ("completed", '"lots"', partial(SERVING_WARNS, "count is prose", rows=3, warning=':2: key "completed": expected a number')),
    ("completed", "[5]", partial(SERVING_WARNS, "count is a list", rows=3, warning=':2: key "completed": expected a number')),
    ("completed", "true", partial(SERVING_WARNS, "count is a boolean", rows=3, warning=':2: key "completed": expected a number')),
    ("duration", "-Infinity", partial(SERVING_WARNS, "duration -Infinity is stored as written", rows=3)),
    ("duration", "1e999", partial(SERVING_WARNS, "duration 1e999 reads as Infinity", rows=3)),
    ("output_throughput", '"81.98 tok/s"', partial(SERVING_WARNS, "a throughput with its unit glued on", rows=3, warning=':2: key "output_throughput"')),
    ("accept_length", "NaN", partial(SERVING_WARNS, "accept length NaN reads as null", rows=3)),
    ("accept_length", "-1", partial(SERVING_WARNS, "accept length -1 (not speculative) reads as null", rows=3)),
    ("total_output_tokens", "1.5", partial(SERVING_WARNS, "a fractional token count", rows=3, warning=':2: key "total_output_tokens": expected a whole number')),
    ("max_concurrency", "-9223372036854775809", partial(SERVING_WARNS, "one below int64's minimum", rows=3, warning=':2: key "max_concurrency"')),
    ("backend", '{"name": "sglang"}', partial(SERVING_WARNS, "backend is an object", rows=3, warning=':2: key "backend": expected text')),
    ("tag", "12345678901234567890123456789", partial(SERVING_WARNS, "a huge number where text is expected is kept as text", rows=3)),
]

# SGLang decode line 5 with one value replaced: a bad value makes the line malformed (skipped with a warning).
SGLANG_BAD_LINE = "malformed stats line"
SGLANG_VALUES: list[tuple[str, str, Expect]] = [
    ("#running-req", "NaN", partial("sglang_log", "#running-req NaN", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
    ("#running-req", "-1", partial("sglang_log", "a negative request count is stored as printed", rows=SGLANG_ROWS)),
    ("#token", HUGE_INT, partial("sglang_log", "#token beyond int64", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
    ("#token", "1e400", partial("sglang_log", "#token in float notation", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
    ("#token", "", partial("sglang_log", "#token with no value", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
    ("accept len", "nan", partial("sglang_log", "accept len nan is stored as printed", rows=SGLANG_ROWS)),
    ("accept len", "inf", partial("sglang_log", "accept len inf is stored as printed", rows=SGLANG_ROWS)),
    ("accept len", "1e400", partial("sglang_log", "accept len 1e400", rows=SGLANG_ROWS)),
    ("accept len", "-0.58", partial("sglang_log", "a negative accept len is stored as printed", rows=SGLANG_ROWS)),
    ("accept len", "1.5.8", partial("sglang_log", "accept len with two dots", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
    ("gen throughput (token/s)", "1" * 400, partial("sglang_log", "a 400-digit throughput", rows=SGLANG_ROWS)),
    ("cuda graph", "1", partial("sglang_log", "cuda graph 1 instead of True", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
    ("token usage", "0,00", partial("sglang_log", "a decimal comma splits the pair list", rows=SGLANG_ROWS - 1, skipped={SGLANG_BAD_LINE: 1}, warning=f":{MUTATED_LINE}: Decode batch line skipped")),
]

# Kineto: kernel event 1 (the first draft kernel) with one field replaced.
KINETO_EVENT = 2  # index in trace_events(): the first kernel
KINETO_MALFORMED = "malformed event"
KINETO_VALUES: list[tuple[str, str, Expect]] = [
    ("dur", "NaN", partial("kineto_trace", "kernel dur NaN (not JSON): event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1}, warning="malformed trace event skipped")),
    ("dur", "-80", partial("kineto_trace", "negative kernel duration", min_rows=3)),
    ("dur", "1e400", partial("kineto_trace", "kernel dur 1e400", min_rows=3)),
    ("dur", '"80"', partial("kineto_trace", "kernel dur as text: event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1})),
    ("ts", "1e300", partial("kineto_trace", "one kernel at ts 1e300", min_rows=3)),
    ("ts", "-1767225600001050", partial("kineto_trace", "one kernel at a negative epoch", min_rows=3)),
    ("ts", "null", partial("kineto_trace", "kernel without ts is not used", min_rows=3)),
    ("ts", "[]", partial("kineto_trace", "kernel ts is a list: event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1})),
    ("pid", "{}", partial("kineto_trace", "kernel pid is an object: event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1})),
    ("name", "7", partial("kineto_trace", "kernel name is a number: event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1})),
    ("args", '{"correlation": 1e30, "stream": 7}', partial("kineto_trace", "correlation id beyond int64: event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1})),
    ("args", '{"correlation": -1, "stream": -7, "device": 99}', partial("kineto_trace", "negative correlation and stream ids", min_rows=3)),
    ("args", '"none"', partial("kineto_trace", "kernel args is text: event skipped", min_rows=3, skipped={KINETO_MALFORMED: 1})),
]
KINETO_DOCUMENT_VALUES: list[tuple[str, str, Expect]] = [
    ('"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}', '"distributedInfo": "rank0"',
     error("MalformedInput", "unexpected trace metadata", "distributedInfo is text")),
    ('"displayTimeUnit": "ms"', '"displayTimeUnit": "ms", "baseTimeNanoseconds": 99999999999999999999999',
     partial("kineto_trace", "baseTimeNanoseconds beyond int64: the start time is left empty", min_rows=3,
             warning="outside the calendar")),
    ('"displayTimeUnit": "ms"', '"displayTimeUnit": "ms", "baseTimeNanoseconds": 9223372036854775807',
     partial("kineto_trace", "baseTimeNanoseconds at int64's maximum (year 2262)", min_rows=3)),
    ('"displayTimeUnit": "ms"', '"displayTimeUnit": "ns"',
     partial("kineto_trace", "displayTimeUnit ns with plausible µs durations", min_rows=3)),
    ('"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}', '"distributedInfo": {"rank": "zero", "world_size": -1}',
     partial("kineto_trace", "distributedInfo with a textual rank", min_rows=3)),
    ('"deviceProperties": [{"id": 0, "name": "NVIDIA RTX PRO 6000 Blackwell", "totalGlobalMem": 102000000000}]', '"deviceProperties": [{"id": [0]}, 5]',
     error("MalformedInput", "unexpected trace metadata", "deviceProperties holds a number")),
]

CYCLE_ROW = "malformed row"
# line 3 (cycle 0's verify row) with one cell replaced
CYCLE_VALUES: list[tuple[str, str, Expect]] = [
    ("cycle", "inf", partial("cycle_timing", "cycle index inf", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("cycle", "nan", partial("cycle_timing", "cycle index nan", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("cycle", HUGE_INT, partial("cycle_timing", "cycle index beyond int64", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("cycle", "-1", partial("cycle_timing", "negative cycle index", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("ms", "NaN", partial("cycle_timing", "duration NaN", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("ms", "-29.9", partial("cycle_timing", "negative duration", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("ms", "1e400", partial("cycle_timing", "duration inf", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("rank", "1e400", partial("cycle_timing", "rank inf", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
    ("rank", HUGE_INT, partial("cycle_timing", "rank beyond int32", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":3:")),
]


def replace_value(data: bytes, literal: str) -> bytes:
    return data.replace(VALUE.encode(), literal.encode(), 1)


def value_cases() -> Iterator[Case]:
    for field_name, literal, expect in BENCH_JSON_VALUES:
        data = replace_value(bench_json_sample(run2_field=field_name), literal)
        yield Case(f"value-bench-json-run-{slug(field_name)}-{slug(literal)}.json", data, expect)
    for field_name, literal, expect in SESSION_VALUES:
        data = replace_value(bench_json_sample(session_field=field_name), literal)
        yield Case(f"value-bench-json-session-{slug(field_name)}-{slug(literal)}.json", data, expect)
    for key, literal, expect in BENCH_SERVING_VALUES:
        data = replace_value(bench_serving_sample(mutated_record=1, mutated_key=key), literal)
        yield Case(f"value-bench-serving-{slug(key)}-{slug(literal)}.jsonl", data, expect)
    for key, literal, expect in SGLANG_VALUES:
        lines = sglang_lines()
        changed = re.sub(rf"{re.escape(key)}: [^,]*", f"{key}: {literal}", lines[MUTATED], count=1)
        assert changed != lines[MUTATED], key
        lines[MUTATED] = changed
        yield Case(f"value-sglang-{slug(key)}-{slug(literal)}.log", text(lines), expect)
    for key, literal, expect in KINETO_VALUES:
        def mutate(index: int, event_text: str, key: str = key, literal: str = literal) -> str:
            if index != KINETO_EVENT:
                return event_text
            event = json.loads(event_text)
            event[key] = "@@VALUE@@"
            return json.dumps(event).replace(VALUE, literal)
        data = kineto_document(trace_events(), event_text=mutate)
        yield Case(f"value-kineto-{slug(key)}-{slug(literal)}-TP-0.trace.json", data, expect)
    for index, (old, new, expect) in enumerate(KINETO_DOCUMENT_VALUES):
        sample = kineto_sample()
        assert old.encode() in sample, old
        yield Case(f"value-kineto-document-{index}-TP-0.trace.json", sample.replace(old.encode(), new.encode()), expect)
    for column, literal, expect in CYCLE_VALUES:
        lines = cycle_csv_lines()
        header = lines[0].split(",")
        cells = lines[2].split(",")
        cells[header.index(column)] = literal
        lines[2] = ",".join(cells)
        yield Case(f"value-cycle-{slug(column)}-{slug(literal)}.csv", text(lines), expect)


def slug(literal: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9.+-]+", "_", literal).strip("_") or "empty"
    return cleaned if len(cleaned) <= 24 else f"{cleaned[:12]}_{len(literal)}chars"


# --- encodings and NUL bytes ------------------------------------------------------------------------------

def encoding_cases(rng: random.Random) -> Iterator[Case]:
    lines = sglang_lines()
    # invalid UTF-8 in every part of a decode line: the timestamp, the rank tag, a key, a value, the stem
    spots = [("timestamp", "10:01:05", "10:01:0\x99"), ("rank-tag", " TP0]", " TP\xff0]"), ("key", "#token:", "#to\xc3ken:"),
             ("value", "accept rate: 0.53", "accept rate: 0.5\xe2"), ("stem", "Decode batch,", "Dec\xf0de batch,"),
             ("after-stem", "Decode batch,", "Decode batch,\xa0")]
    for label, old, new in spots:
        damaged = list(lines)
        assert old in damaged[MUTATED], old
        damaged[MUTATED] = damaged[MUTATED].replace(old, "@@BAD@@", 1)
        data = text(damaged).replace(b"@@BAD@@", new.encode("latin-1"))
        expect = partial("sglang_log", f"a byte that is not UTF-8 in a decode line's {label}", min_rows=SGLANG_ROWS - 1)
        yield Case(f"utf8-sglang-{label}.log", data, expect)
    # random bytes sprinkled over a whole log (not NUL: that is binary), then the same gzipped
    data = bytearray(sglang_sample())
    for _ in range(40):
        data[rng.randrange(len(data))] = rng.choice([0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf4, 0xf8, 0xfe, 0xff])
    yield Case("utf8-sglang-sprinkled.log", bytes(data), partial("sglang_log", "40 random non-UTF-8 bytes over a log", min_rows=1))
    yield Case("utf8-sglang-sprinkled.log.gz", gz(bytes(data)), partial("sglang_log", "the same, gzipped", min_rows=1))
    latin1 = sglang_sample().replace(b"/models/Kimi-K2.5'", "/models/Kimi-K2.5-café'".encode("latin-1"), 1)
    yield Case("utf8-sglang-latin1-model-path.log", latin1, partial("sglang_log", "a Latin-1 model path in server_args", rows=SGLANG_ROWS))
    vllm = text(vllm_lines()).replace(b"Mean acceptance length: 2.38", b"Mean acceptance length: 2.3\xff8")
    yield Case("utf8-vllm-value.log", vllm, partial("vllm_log", "a non-UTF-8 byte inside a vLLM metric value", min_rows=4))
    serving = bench_serving_sample().replace(b'"tag": "k2-drafter"', b'"tag": "k2-\xe9drafter"')
    yield Case("utf8-bench-serving-tag.jsonl", serving, partial("bench_serving_jsonl", "a Latin-1 byte in a tag string", rows=3))
    bench = bench_json_sample().replace(b'"variant": "k2-drafter"', b'"variant": "k2-\xff\xfe"')
    yield Case("utf8-bench-json-variant.json", bench, partial("bench_json", "non-UTF-8 bytes in the variant label", rows=BENCH_JSON_ROWS))
    trace = kineto_sample().replace(b"triton_poi_fused_topk_draft_0", b"triton_poi_fused_topk_dr\xe4ft_0")
    yield Case("utf8-kineto-kernel-name-TP-0.trace.json", trace,
               partial("kineto_trace", "a Latin-1 byte in kernel names: those events are skipped", min_rows=3, skipped={KINETO_MALFORMED: 2}))
    # a UTF-16 log, as PowerShell's ">" writes it: NUL bytes everywhere
    yield Case("utf16-sglang.log", b"\xff\xfe" + sglang_sample().decode().encode("utf-16-le"),
               error("UnrecognizedFormat", "UTF-16", "a UTF-16 log (PowerShell redirection)"))
    # NUL bytes
    yield Case("nul-at-start.log", b"\x00" * 16 + sglang_sample(), error("UnrecognizedFormat", "binary content", "a log that starts with NUL bytes"))
    long_log = text(sglang_lines(decodes=50)[:2] + sglang_lines(decodes=50)[2:] * 3)
    holed = long_log[:9000] + b"\x00" * 4096 + long_log[9000:]
    yield Case("nul-run-after-8k.log", holed, partial("sglang_log", "a 4 KiB NUL run after 8 KiB (a log after a crash)", min_rows=100))
    tail = long_log + b"\x00" * 2048
    yield Case("nul-run-at-end.log", tail, partial("sglang_log", "a log ending in a NUL run (file preallocated, never written)", min_rows=150))
    csv_long = text(cycle_csv_lines() + [f"{c},verify,29.9,0,k2-drafter,probe-1" for c in range(3, 400)])
    inside_ms = csv_long.index(b",29.9,", 9000) + 4  # between "29." and "9" of a row past 8 KiB
    csv_nul = csv_long[:inside_ms] + b"\x00" + csv_long[inside_ms:]
    yield Case("nul-in-cycle-csv-after-8k.csv", csv_nul,
               partial("cycle_timing", "a NUL byte inside a CSV row after 8 KiB", min_rows=100, skipped={CYCLE_ROW: 1}))
    serving_long = b"".join(bench_serving_sample() for _ in range(12))
    cut = serving_long.index(b'"tag"', 9000)
    serving_nul = serving_long[:cut] + b"\x00" + serving_long[cut:]
    yield Case("nul-in-bench-serving-after-8k.jsonl", serving_nul,
               partial("bench_serving_jsonl", "a NUL byte between two keys of a record after 8 KiB", min_rows=35))


# --- gzip damage ----------------------------------------------------------------------------------------------

def gzip_cases() -> Iterator[Case]:
    log = sglang_sample()
    packed = gz(log)
    body = len(packed) // 2
    flipped = bytearray(packed)
    flipped[body] ^= 0xFF
    yield Case("gzip-flipped-byte.log.gz", bytes(flipped), error("MalformedInput", "corrupt or truncated gzip", "one byte of the deflate stream flipped"))
    bad_crc = packed[:-8] + struct.pack("<I", zlib.crc32(b"other") & 0xFFFFFFFF) + packed[-4:]
    yield Case("gzip-bad-crc.log.gz", bad_crc, error("MalformedInput", "corrupt or truncated gzip", "CRC-32 in the trailer is wrong"))
    bad_size = packed[:-4] + struct.pack("<I", len(log) + 1)
    yield Case("gzip-bad-length.log.gz", bad_size, error("MalformedInput", "corrupt or truncated gzip", "ISIZE in the trailer is wrong"))
    yield Case("gzip-header-only.log.gz", packed[:10], error("MalformedInput", "corrupt or truncated gzip", "a gzip header and nothing else"))
    yield Case("gzip-magic-then-text.log.gz", b"\x1f\x8b" + log, error("MalformedInput", "corrupt or truncated gzip", "gzip magic bytes in front of plain text"))
    yield Case("gzip-empty-content.log.gz", gz(b""), error("UnrecognizedFormat", "the file is empty", "a valid gzip of nothing"))
    yield Case("gzip-whitespace-content.json.gz", gz(b"\n\n   \n"), error("UnrecognizedFormat", "the file is empty", "a valid gzip of blank lines"))
    yield Case("gzip-two-members.log.gz", gz(log[:700]) + gz(log[700:]),
               partial("sglang_log", "two gzip members (gzip a >> b): one stream", rows=SGLANG_ROWS, warnings=0))
    yield Case("gzip-trailing-garbage.log.gz", packed + b"garbage after the member",
               error("MalformedInput", "corrupt or truncated gzip", "text appended after the gzip member"))
    yield Case("gzip-trailing-zeros.log.gz", packed + b"\x00" * 512,
               partial("sglang_log", "zero padding after the member (tape/block devices)", rows=SGLANG_ROWS))
    yield Case("gzip-double.log.gz.gz", gz(packed), error("UnrecognizedFormat", "gzip", "gzipped twice"))
    big = b"".join(bench_serving_sample() for _ in range(60))  # > 64 KiB decompressed: detection reads only the head
    big_packed = gz(big)
    yield Case("gzip-big-jsonl-cut.jsonl.gz", big_packed[: len(big_packed) * 3 // 4],
               error("MalformedInput", "corrupt or truncated gzip", "a >64 KiB gzipped JSONL cut: the head decompresses, the rest does not"))
    big_log = text(sglang_lines(decodes=600))
    big_log_packed = gz(big_log)
    yield Case("gzip-big-log-cut.log.gz", big_log_packed[: len(big_log_packed) * 3 // 4],
               error("MalformedInput", "corrupt or truncated gzip", "a >64 KiB gzipped log cut after its head"))
    big_trace = kineto_document(trace_events(cycles=120))
    big_trace_packed = gz(big_trace)
    yield Case("gzip-big-kineto-cut-TP-0.trace.json.gz", big_trace_packed[: len(big_trace_packed) * 3 // 4],
               error("MalformedInput", "corrupt or truncated gzip", "a >64 KiB gzipped trace cut after its head"))
    big_csv = text(cycle_csv_lines() + [f"{c},verify,29.9,0,k2-drafter,probe-1" for c in range(3, 3000)])
    big_csv_packed = gz(big_csv)
    yield Case("gzip-big-cycle-csv-cut.csv.gz", big_csv_packed[: len(big_csv_packed) * 3 // 4],
               error("MalformedInput", "corrupt or truncated gzip", "a >64 KiB gzipped cycle CSV cut after its head"))
    for name, magic in (("bzip2", b"BZh91AY&SY"), ("xz", b"\xfd7zXZ\x00\x00"), ("zstd", b"\x28\xb5\x2f\xfd"), ("zip", b"PK\x03\x04")):
        yield Case(f"compressed-{name}.log.{name}", magic + bytes(range(1, 200)),
                   error("UnrecognizedFormat", name, f"a {name} file: only gzip is read"))


# --- logs in disorder ------------------------------------------------------------------------------------------

def disorder_cases(rng: random.Random) -> Iterator[Case]:
    lines = sglang_lines()
    stats = [line for line in lines if "batch," in line]
    yield Case("log-every-line-twice.log", text([line for line in lines for _ in range(2)]),
               partial("sglang_log", "every line written twice (tee'd twice)", rows=2 * SGLANG_ROWS))
    yield Case("log-whole-file-twice.log", text(lines + lines),
               partial("sglang_log", "the whole log appended to itself: a restart-like second config", rows=2 * SGLANG_ROWS))
    shuffled = lines[:1] + rng.sample(lines[1:], len(lines) - 1)
    yield Case("log-shuffled.log", text(shuffled), partial("sglang_log", "lines out of order (timestamps go back and forth)", rows=SGLANG_ROWS))
    yield Case("log-reversed.log", text(lines[:1] + lines[:0:-1]), partial("sglang_log", "lines in reverse order", rows=SGLANG_ROWS))
    jumps = {"back-one-hour": "2026-02-10 09:01:05", "forward-one-year": "2027-02-10 10:01:05", "epoch": "1970-01-01 00:00:00",
             "year-9999": "9999-12-31 23:59:59", "impossible-date": "2026-02-30 10:01:05", "impossible-time": "2026-02-10 25:61:61",
             "year-0000": "0000-01-01 00:00:00"}
    for label, stamp in jumps.items():
        jumped = [line.replace("2026-02-10 10:01:05", stamp) for line in lines]
        yield Case(f"log-clock-{label}.log", text(jumped), partial("sglang_log", f"one decode line's clock: {stamp}", rows=SGLANG_ROWS))
    ranks = [f" DP{d} TP{d}" for d in range(4)]
    per_rank = [sglang_lines(tag=tag)[2:] for tag in ranks]
    interleaved = [lines[0]] + [line for group in zip(*per_rank) for line in group if "batch," in line]
    yield Case("log-interleaved-dp-ranks.log", text(interleaved),
               partial("sglang_log", "4 DP ranks logging into one file, interleaved", rows=1 + 4 * (SGLANG_ROWS - 1)))
    glued = []
    for a, b in zip(per_rank[0], per_rank[1]):
        if "Decode batch" in a and "Decode batch" in b:
            cut = len(a) // 2
            glued += [a[:cut] + b, a[cut:]]
        else:
            glued += [a, b]
    yield Case("log-ranks-glued-mid-line.log", text([lines[0]] + glued),
               partial("sglang_log", "two ranks writing at once: a line cut and the other glued into it", min_rows=1 + 2,
                       skipped={SGLANG_BAD_LINE: 1}))
    mixed = [lines[0]] + [x for pair in zip(stats, vllm_lines()) for x in pair]
    yield Case("log-sglang-then-vllm-lines.log", text(mixed),
               partial("vllm_log", "SGLang and vLLM lines alternating: read as vLLM (checked first); the SGLang lines are "
                       "counted and named in a warning", rows=8 + 9, skipped={"other log line": len(stats)},
                       warning=f":1: {len(stats) + 1} SGLang stats or server_args lines in a file read as a vLLM log"))
    vllm_first = vllm_lines() + lines
    yield Case("log-vllm-then-sglang-lines.log", text(vllm_first),
               partial("vllm_log", "a vLLM log with an SGLang log appended: read as vLLM, the rest counted and named",
                       min_rows=8, skipped={"other log line": 1}, warning=f":{len(vllm_lines()) + 1}: "))
    json_mixed = lines[:5] + [json.dumps(serving_record(1))] + lines[5:]
    yield Case("log-with-bench-record-inside.log", text(json_mixed),
               partial("bench_serving_jsonl", "a bench_serving record pasted into a server log near its top: the JSON record "
                       "wins detection, every log line is skipped with a file:line warning", rows=1,
                       skipped={"not JSON (preamble or note)": len(lines)}, warning=":1: not JSON"))
    yield Case("log-crlf.log", text(lines, newline="\r\n"), partial("sglang_log", "Windows line endings", rows=SGLANG_ROWS, warnings=0))
    yield Case("log-cr-only.log", text(lines, newline="\r"),
               partial("sglang_log", "classic-Mac/tqdm carriage returns only: one physical line", min_rows=1))
    yield Case("log-no-final-newline.log", text(lines)[:-1], partial("sglang_log", "no newline at the end", rows=SGLANG_ROWS, warnings=0))
    repeated_keys = [line.replace("#queue-req: 0", "#queue-req: 0, #queue-req: 3, accept len: 9.99") for line in lines]
    yield Case("log-repeated-keys.log", text(repeated_keys), partial("sglang_log", "keys repeated within a line", rows=SGLANG_ROWS))
    many_keys = ", ".join(f"k{i}: {i}" for i in range(1000))
    wide = [line + ", " + many_keys if "Decode batch" in line else line for line in lines]
    yield Case("log-1000-unknown-keys.log", text(wide), partial("sglang_log", "1,000 unknown keys per decode line, kept in extra", rows=SGLANG_ROWS))
    only_noise = [line for line in lines if "batch," not in line and "server_args" not in line] * 5
    yield Case("log-only-noise.log", text(["[2026-02-10 10:00:00] Decode batch, #running-req: 1"] + only_noise),
               partial("sglang_log", "one short decode line among noise", rows=1))
    restarts = []
    for n in range(3):
        restarts += sglang_lines(decodes=2, start_s=10 * n)
    yield Case("log-three-restarts.log", text(restarts), partial("sglang_log", "three server lifetimes in one file", rows=3 * 4,
                                                                  tables={"server_configs": 3}))
    cut_args = [lines[0][: len(lines[0]) // 2]] + lines[1:]
    yield Case("log-server-args-cut.log", text(cut_args), partial("sglang_log", "server_args cut in half (terminal scrollback)", rows=SGLANG_ROWS))
    vllm_bad = vllm_lines()
    vllm_bad[3] = vllm_bad[3].replace("Mean acceptance length: 2.37", "Mean acceptance length: nan").replace("Accepted: 915", "Accepted: -915")
    vllm_bad[5] = vllm_bad[5].replace("08-04 20:51:18", "02-30 25:61:18").replace("Accepted: 915", f"Accepted: {HUGE_INT}")
    yield Case("log-vllm-bad-values.log", text(vllm_bad), partial("vllm_log", "vLLM metrics with nan, negative and huge counts, an impossible date", min_rows=4))


# --- traces -----------------------------------------------------------------------------------------------------

def trace_cases() -> Iterator[Case]:
    yield Case("trace-cpu-only-TP-0.trace.json", kineto_document(trace_events(gpu=False)),
               error("MalformedInput", "no GPU kernel events", "a trace taken with activities=[CPU] only"))
    yield Case("trace-empty-events-TP-0.trace.json", kineto_document([]),
               error("MalformedInput", "no GPU kernel events", "an empty traceEvents array"))
    events = trace_events()
    yield Case("trace-events-reversed-TP-0.trace.json", kineto_document(events[::-1]),
               partial("kineto_trace", "events in reverse order", min_rows=3, tables={"trace_ranks": 1}))
    yield Case("trace-events-twice-TP-0.trace.json", kineto_document(events + events),
               partial("kineto_trace", "every event twice (a merged export gone wrong)", min_rows=3, tables={"trace_ranks": 1}))
    bare = ("[\n" + ",\n".join(json.dumps(event) for event in events) + "\n]\n").encode()
    yield Case("trace-bare-array-TP-0.trace.json", bare, partial("kineto_trace", "a Chrome-trace bare array", min_rows=3))
    yield Case("trace-bare-array-cut-TP-0.trace.json", bare[: len(bare) // 2],
               error("MalformedInput", "truncated: the traceEvents array never closes", "a bare-array trace cut in half"))
    odd = kineto_sample().replace(b'  "traceEvents": [', b'  "traceName0": "has \\"traceEvents\\": [ in a string",\n  "traceEvents": [')
    yield Case("trace-decoy-in-string-TP-0.trace.json", odd, partial("kineto_trace", '"traceEvents": [ quoted inside a string before the real one', min_rows=3))
    not_array = kineto_sample().replace(b'  "traceEvents": [', b'  "traceEvents": {"events": [').replace(b"  ],\n", b"  ]},\n")
    yield Case("trace-events-object-TP-0.trace.json", not_array, error("MalformedInput", "traceEvents", "traceEvents is an object, not an array"))
    no_gpu_markers = [event for event in events if event["cat"] != "user_annotation"]
    yield Case("trace-no-phase-markers-TP-0.trace.json", kineto_document(no_gpu_markers),
               partial("kineto_trace", "kernels but no step[...] markers: all unattributed", min_rows=3, warning="no phase markers"))
    zero = [dict(event, dur=0) for event in events]
    yield Case("trace-all-durations-zero-TP-0.trace.json", kineto_document(zero), partial("kineto_trace", "every duration 0", min_rows=1))
    same = [dict(event, ts=TRACE_ORIGIN_US) for event in events]
    yield Case("trace-all-same-ts-TP-0.trace.json", kineto_document(same), partial("kineto_trace", "every event at the same instant", min_rows=1))
    ns = [dict(event, ts=event["ts"] * 1000, dur=event["dur"] * 1000) for event in events]
    yield Case("trace-nanoseconds-TP-0.trace.json", kineto_document(ns),
               partial("kineto_trace", "an exporter that wrote ns: converted, with a warning", min_rows=3, warning="timestamps are in ns"))


# --- numbers and nesting beyond what Python, Arrow or DuckDB hold ---------------------------------------------------

DIGITS_5000 = "9" * 5000  # Python refuses to turn more than 4,300 digits into an int
DEEP = 5000  # nesting deeper than Python's recursion limit


def limits_cases() -> Iterator[Case]:
    deep = "[" * DEEP + "]" * DEEP
    yield Case("limit-bench-json-5000-digits.json", replace_value(bench_json_sample(run2_field="output_tokens"), DIGITS_5000),
               error("MalformedInput", "invalid JSON", "an output token count of 5,000 digits"))
    yield Case("limit-bench-json-deep-nesting.json", replace_value(bench_json_sample(run2_field="notes"), deep),
               error("MalformedInput", "invalid JSON", f"a run key nested {DEEP} lists deep"))
    yield Case("limit-bench-serving-5000-digits.jsonl",
               replace_value(bench_serving_sample(mutated_record=1, mutated_key="completed"), DIGITS_5000),
               partial("bench_serving_jsonl", "a record with a 5,000-digit count: that record is skipped", rows=2,
                       skipped={"malformed JSON record": 1}, warning=":2: malformed JSON record"))
    yield Case("limit-bench-serving-deep-nesting.jsonl",
               replace_value(bench_serving_sample(mutated_record=1, mutated_key="extra_args"), deep),
               partial("bench_serving_jsonl", f"a record with a value nested {DEEP} deep: that record is skipped", rows=2,
                       skipped={"malformed JSON record": 1}, warning=":2: malformed JSON record"))
    compact = '{"duration": 1.5, "completed": 1, "total_input_tokens": 32}'
    yield Case("limit-bench-serving-1200-records-one-line.jsonl", (compact * 1200 + "\n").encode(),
               partial("bench_serving_jsonl", "1,200 records run together on one line", rows=1200, warnings=0))
    yield Case("limit-cycle-jsonl-5000-digits.jsonl",
               text(['{"cycle": 0, "phase": "draft", "ms": 0.3}', f'{{"cycle": {DIGITS_5000}, "phase": "verify", "ms": 29.9}}',
                     '{"cycle": 0, "phase": "total", "ms": 30.5}']),
               partial("cycle_timing", "a cycle index of 5,000 digits", min_rows=1, skipped={CYCLE_ROW: 1}, warning=":2:"))
    yield Case("limit-cycle-jsonl-deep-first-line.jsonl",
               text([f'{{"cycle": {deep}, "phase": "draft", "ms": 0.3}}', '{"cycle": 0, "phase": "verify", "ms": 29.9}']),
               error("UnrecognizedFormat", "no format reads it", f"a cycle JSONL whose first record nests {DEEP} deep"))
    deep_trace = kineto_sample().replace(b'"name": "triton_poi_fused_topk_draft_0"',
                                         f'"name": "triton_poi_fused_topk_draft_0", "nested": {deep}'.encode(), 1)
    yield Case("limit-kineto-deep-nesting-TP-0.trace.json", deep_trace,
               partial("kineto_trace", f"one event with a field nested {DEEP} deep: that event is skipped", min_rows=3,
                       skipped={KINETO_MALFORMED: 1}))
    huge_rank = kineto_sample().replace(b'"rank": 0, "world_size": 8', b'"rank": 99999999999999999999, "world_size": 3000000000')
    yield Case("limit-kineto-huge-rank-TP-99999999999.trace.json", huge_rank,
               partial("kineto_trace", "a rank beyond int32 in distributedInfo and in the file name: rank 0 assumed",
                       min_rows=3, warning="assumed rank 0"))
    lines = sglang_lines()
    for label, tag in (("tp-beyond-int32", " TP3000000000"), ("tp-beyond-int64", " TP99999999999999999999"),
                       ("dp-5000-digits", " DP" + "9" * 5000)):
        tagged = [line.replace(" TP0]", tag + "]") if i == MUTATED else line for i, line in enumerate(lines)]
        yield Case(f"limit-sglang-rank-{label}.log", text(tagged),
                   partial("sglang_log", f"a rank tag {tag.strip()[:16]}…: not a rank, the row loads without it", rows=SGLANG_ROWS))
    gpu = [line.replace(" TP0] Decode", "] [gpu=99999999999999999999] Decode") for line in lines]
    yield Case("limit-sglang-gpu-id-beyond-int64.log", text(gpu),
               partial("sglang_log", "pre-2024-08 [gpu=N] prefixes with N beyond int64", rows=SGLANG_ROWS))
    huge_args = [lines[0].replace("tp_size=8", "tp_size=99999999999999999999999")
                 .replace("speculative_num_draft_tokens=3", "speculative_num_draft_tokens=3000000000")] + lines[1:]
    yield Case("limit-sglang-server-args-huge-sizes.log", text(huge_args),
               partial("sglang_log", "server_args with tp_size beyond int64 and 3e9 draft tokens: those columns stay empty, "
                       "args keeps them", rows=SGLANG_ROWS, tables={"server_configs": 1}))
    vllm = vllm_lines()
    engine = next(i for i, line in enumerate(vllm) if "Running: 1 reqs" in line)
    vllm[engine] = vllm[engine].replace("Running: 1 reqs", "Running: 1e400 reqs")
    vllm[1] = vllm[1].replace("num_spec_tokens=3", "num_spec_tokens=True")
    yield Case("limit-vllm-running-1e400.log", text(vllm),
               partial("vllm_log", "a vLLM engine line with 'Running: 1e400 reqs' and num_spec_tokens=True", rows=8 + 12,  # + acceptance_positions
                       skipped={"malformed engine line": 1}, warning=f":{engine + 1}: 'Running': '1e400 reqs' is not a whole number"))
    many = sglang_lines()[:2] + [line for line in sglang_lines()[2:] if "Decode" in line][:1] * 300
    yield Case("limit-sglang-300-identical-lines.log", text(many), partial("sglang_log", "one decode line repeated 300 times", rows=1 + 300))


# --- writing ------------------------------------------------------------------------------------------------------

def all_cases() -> list[Case]:
    rng = random.Random(SEED)
    cases = [*truncation_cases(rng), *value_cases(), *encoding_cases(rng), *gzip_cases(), *disorder_cases(rng),
             *trace_cases(), *limits_cases()]
    names = [case.name for case in cases]
    duplicates = {name for name in names if names.count(name) > 1}
    assert not duplicates, f"duplicate case names: {sorted(duplicates)}"
    return cases


def write(out: Path) -> list[Case]:
    cases = all_cases()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for case in cases:
        (out / case.name).write_bytes(case.data)
    manifest = {case.name: case.expect for case in cases}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder to (re)write; default: %(default)s")
    cases = write(parser.parse_args().out)
    size = sum(len(case.data) for case in cases)
    print(f"wrote {len(cases)} cases, {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
