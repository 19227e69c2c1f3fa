"""A large, realistic SGLang server log, generated deterministically from a seed.

The file is four server lifetimes (segments), each a different SGLang era with
its own line shapes, as DOMAIN.md §4 and the corpus (``shared/corpus/logs``)
show them:

1. 2025-10, EAGLE-3 on TP8: ``[date time TP0] Decode batch. ...`` with accept len/rate,
   ``server_args=ServerArgs(...)``;
2. 2025-11, baseline (no speculation): ``[date time] Decode batch, ...`` without rank
   tags, trailing comma, ``server_args={...}`` (the ~18 KB dict shape);
3. 2026-05, DP attention behind docker compose: ``svc-1  | [date time.ms DP1 TP1 EP1]
   Decode batch [N], ...`` with every DP rank logging its own line and the 2026 keys
   (``cap len``, ``block accept len``, MFU/bandwidth suffixes);
4. a custom logging config: ``date time INFO pid [TP0 scheduler_metrics_mixin.py:287] Decode batch. ...``.

Around the stats lines: start-up chatter on every TP rank, tqdm bars, HTTP access
lines, prefill lines and the odd traceback, in roughly the proportions a busy
server shows (≈80 % decode lines).
"""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

SEED = 20260211
CHUNK_LINES = 5_000

# line kinds in steady state, and how often each occurs
DECODE, PREFILL, HTTP, CHATTER = range(4)
KIND_SHARES = (0.80, 0.09, 0.09, 0.02)
TRACEBACK_EVERY = 100_000  # lines between two tracebacks, on average


@dataclass(frozen=True)
class Era:
    name: str
    share: float  # of the file's bytes
    start: datetime
    prefix: str  # "bracket", "bracket_ms" or "custom"
    wrapper: str  # docker compose column, or ""
    stats_tags: tuple[str, ...]  # rank tags of the lines that carry stats (one per DP rank)
    tp_size: int
    stem_sep: str  # ".", "," or " [N],"
    speculative: bool
    config_shape: str  # "repr" or "dict"
    keys_2026: bool = False


ERAS = (
    Era("eagle3-tp8-2025-10", 0.35, datetime(2025, 10, 22, 10, 20, 0), "bracket", "", (" TP0",), 8, ".", True, "repr"),
    Era("baseline-2025-11", 0.20, datetime(2025, 11, 11, 4, 0, 0), "bracket", "", ("",), 8, ",", False, "dict"),
    Era(
        "dp-attention-2026-05", 0.30, datetime(2026, 5, 7, 5, 50, 0), "bracket_ms", "sglang-1  | ",
        (" DP0 TP0 EP0", " DP1 TP1 EP1", " DP2 TP2 EP2", " DP3 TP3 EP3"), 4, " [N],", True, "dict", keys_2026=True,
    ),
    Era("custom-logging-2025-12", 0.15, datetime(2025, 12, 4, 20, 30, 0), "custom", "", ("TP0 ",), 8, ".", True, "repr"),
)

TRACEBACK = [
    "ERROR:    Exception in ASGI application",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.11/site-packages/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi',
    "    result = await app(  # type: ignore[func-returns-value]",
    "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 512, in openai_v1_chat_completions',
    "    return await raw_request.app.state.openai_serving_chat.handle_request(request, raw_request)",
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/openai/serving_base.py", line 42, in handle_request',
    "    adapted_request, processed_request = self._convert_to_internal_request(request)",
    "ValueError: Requested token count exceeds the model's maximum context length of 262144 tokens.",
]
TQDM_BATCHES = (48, 32, 24, 16, 12, 8, 4, 2, 1)
CHATTER = (
    "Cache flushed successfully!",
    "The server is fired up and ready to roll!",
    "Scheduler hit an idle state; resetting timers.",
    "KV cache pool usage: 12.31%, watermark 0.85",
)


def server_args(era: Era, rng: np.random.Generator) -> str:
    """The config dump: a ServerArgs repr or, in recent builds, a dict of ~300 keys (~18 KB)."""
    known: dict[str, object] = {
        "model_path": "/models/Kimi-K2.5",
        "tokenizer_path": "/models/Kimi-K2.5",
        "trust_remote_code": True,
        "served_model_name": "kimi-k2.5",
        "host": "0.0.0.0",
        "port": 30000,
        "mem_fraction_static": 0.85,
        "max_running_requests": 48,
        "chunked_prefill_size": 8192,
        "tp_size": era.tp_size,
        "dp_size": len(era.stats_tags),
        "ep_size": era.tp_size if era.keys_2026 else 1,
        "enable_dp_attention": len(era.stats_tags) > 1,
        "decode_log_interval": 40,
        "speculative_algorithm": "EAGLE3" if era.speculative else None,
        "speculative_draft_model_path": "/models/AQ-MedAI/Kimi-K2-Instruct-eagle3" if era.speculative else None,
        "speculative_num_steps": 3 if era.speculative else None,
        "speculative_eagle_topk": 1 if era.speculative else None,
        "speculative_num_draft_tokens": 4 if era.speculative else None,
        "disable_cuda_graph": False,
        "cuda_graph_max_bs": 48,
        "json_model_override_args": "{}",
        "lora_paths": None,
        "cuda_graph_bs": [1, 2, 4, 8, 12, 16, 24, 32, 48],
        "disaggregation_transfer_backend": {"name": "mooncake", "ib_device": None},
    }
    filler_count = 280 if era.config_shape == "dict" else 120
    for index in range(filler_count):
        kind = index % 4
        known[f"option_{index:03d}_{['enable', 'max', 'ratio', 'backend'][kind]}"] = (
            [False, int(rng.integers(1, 4096)), round(float(rng.random()), 3), "auto"][kind]
        )
    if era.config_shape == "dict":
        return "server_args=" + repr(known)
    return "server_args=ServerArgs(" + ", ".join(f"{key}={value!r}" for key, value in known.items()) + ")"


class Clock:
    """Timestamps that advance a little per line, formatted only when the second changes."""

    def __init__(self, start: datetime) -> None:
        self.start = start
        self.seconds = 0.0
        self._second = -1
        self._text = ""

    def stamp(self, era: Era, advance: float) -> str:
        self.seconds += advance
        second = int(self.seconds)
        if second != self._second:
            self._second = second
            self._text = (self.start + timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S")
        if era.prefix == "bracket_ms":
            return f"{self._text}.{int((self.seconds - second) * 1000):03d}"
        return self._text


def prefix(era: Era, stamp: str, tags: str) -> str:
    """The wrapper and logging prefix of a line; ``tags`` like " TP0" (bracket) or "TP0 " (custom)."""
    if era.prefix == "custom":
        return f"{era.wrapper}{stamp} INFO 151972 [{tags}scheduler_metrics_mixin.py:287] "
    return f"{era.wrapper}[{stamp}{tags}] "


def startup(era: Era, clock: Clock, rng: np.random.Generator) -> list[str]:
    lines = [prefix(era, clock.stamp(era, 0.0), "") + server_args(era, rng)]
    tp_tags = [f" TP{rank}" if era.prefix != "custom" else f"TP{rank} " for rank in range(era.tp_size)]
    for message in ("Load weight begin. avail mem=94.52 GB", "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.49 GB, mem usage=73.03 GB.",
                    "KV Cache is allocated. #tokens: 220950, K size: 5.23 GB, V size: 5.23 GB", "Memory pool end. avail mem=10.63 GB",
                    "Capture cuda graph begin. This can take up to several minutes. avail mem=10.11 GB"):
        lines += [prefix(era, clock.stamp(era, 0.01), tag) + message for tag in tp_tags]
    lines.append("")
    lines.append("  0%|          | 0/9 [00:00<?, ?it/s]")
    for step, batch in enumerate(TQDM_BATCHES, start=1):
        percent = step * 100 // len(TQDM_BATCHES)
        bar = ("█" * (percent // 10)).ljust(10)
        lines.append(f"Capturing batches (bs={batch} avail_mem=10.1{step % 10} GB): {percent:3d}%|{bar}| {step}/9 [00:{step * 6:02d}<00:{(9 - step) * 6:02d},  6.1{step}s/it]")
    lines += [prefix(era, clock.stamp(era, 0.5), tag) + "Capture cuda graph end. Time elapsed: 59.12 s. mem usage=3.42 GB. avail mem=6.69 GB." for tag in tp_tags]
    head = prefix(era, clock.stamp(era, 0.2), era.stats_tags[0] if era.prefix != "custom" else era.stats_tags[0])
    lines.append(head + "max_total_num_tokens=220950, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=262144")
    lines.append(prefix(era, clock.stamp(era, 0.1), "") + "INFO:     Started server process [151972]")
    lines.append(prefix(era, clock.stamp(era, 0.1), "") + "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    lines.append(prefix(era, clock.stamp(era, 0.1), "") + 'INFO:     127.0.0.1:41452 - "GET /v1/models HTTP/1.1" 200 OK')
    return lines


def steady_lines(era: Era, clock: Clock, rng: np.random.Generator, count: int, forward_ct: list[int]) -> list[str]:
    """``count`` steady-state lines: decode and prefill stats, HTTP access lines, chatter, now and then a traceback."""
    kinds = rng.choice(4, size=count, p=KIND_SHARES)
    advance = rng.exponential(0.12, size=count)
    running = rng.integers(1, 49, size=count)
    per_req_tokens = rng.integers(80, 4000, size=count)
    accept_len = np.clip(rng.normal(1.62, 0.25, size=count), 1.0, 4.0) if era.speculative else np.ones(count)
    throughput = running * 52.0 * accept_len * rng.uniform(0.85, 1.15, size=count)
    queue = rng.poisson(0.4, size=count)
    new_tokens = rng.integers(20, 8192, size=count)
    cached = rng.integers(0, 4096, size=count)
    rank_pick = rng.integers(0, len(era.stats_tags), size=count)
    client_port = rng.integers(30000, 65000, size=count)
    traceback_at = rng.random(size=count) < 1.0 / TRACEBACK_EVERY
    sep_is_labelled = era.stem_sep == " [N],"
    trailing = rng.random(size=count) < 0.7
    lines: list[str] = []
    for i in range(count):
        stamp = clock.stamp(era, float(advance[i]))
        tags = era.stats_tags[rank_pick[i]]
        kind = kinds[i]
        if kind == DECODE:
            forward_ct[0] += 40
            sep = f" [{forward_ct[0]}]," if sep_is_labelled else era.stem_sep
            run_req = int(running[i])
            tokens = run_req * int(per_req_tokens[i])
            body = f"#running-req: {run_req}, #token: {tokens}, token usage: {tokens / 220950:.2f}, "
            if era.speculative:
                tau = float(accept_len[i])
                body += f"accept len: {tau:.2f}, accept rate: {(tau - 1) / 3:.2f}, "
                if era.keys_2026:
                    body += f"cap len: 4.00, block accept len: {tau * 0.97:.2f}, "
            body += f"cuda graph: {'True' if run_req <= 48 else 'False'}, gen throughput (token/s): {throughput[i]:.2f}, #queue-req: {queue[i]}"
            if era.keys_2026:
                body += f", est. decode TFLOPS/s (per GPU): {throughput[i] * 0.011:.2f}, est. read BW (GB/s per GPU): {throughput[i] * 0.9:.1f}"
            lines.append(f"{prefix(era, stamp, tags)}Decode batch{sep} {body}{', ' if trailing[i] else ''}")
        elif kind == PREFILL:
            sep = f" [{forward_ct[0]}]," if sep_is_labelled else era.stem_sep
            body = (
                f"#new-seq: 1, #new-token: {new_tokens[i]}, #cached-token: {cached[i]}, token usage: {new_tokens[i] / 220950:.2f}, "
                f"#running-req: {running[i]}, #queue-req: {queue[i]}"
            )
            lines.append(f"{prefix(era, stamp, tags)}Prefill batch{sep} {body}{', ' if trailing[i] else ''}")
        elif kind == HTTP:
            lines.append(f'{prefix(era, stamp, "")}INFO:     10.0.169.197:{client_port[i]} - "POST /v1/chat/completions HTTP/1.1" 200 OK')
        else:
            lines.append(prefix(era, stamp, tags) + CHATTER[int(client_port[i]) % len(CHATTER)])
        if traceback_at[i]:
            lines.append(prefix(era, stamp, "") + TRACEBACK[0])
            lines += [era.wrapper + text for text in TRACEBACK[1:]]
    return lines


def generate(path: Path, total_bytes: int, seed: int = SEED) -> None:
    """Write a log of about ``total_bytes`` (a little more: the last chunk is finished) to ``path``."""
    rng = np.random.default_rng(seed)
    with open(path, "wb", buffering=1 << 22) as out:
        for era in ERAS:
            budget = int(total_bytes * era.share)
            written = 0
            clock = Clock(era.start)
            forward_ct = [1000]
            for block in _era_blocks(era, clock, rng, forward_ct):
                data = ("\n".join(block) + "\n").encode()
                out.write(data)
                written += len(data)
                if written >= budget:
                    break


def _era_blocks(era: Era, clock: Clock, rng: np.random.Generator, forward_ct: list[int]) -> Iterator[list[str]]:
    yield startup(era, clock, rng)
    while True:
        yield steady_lines(era, clock, rng, CHUNK_LINES, forward_ct)


def generate_lifetimes(path: Path, lifetimes: int, lines_per_lifetime: int = 12, seed: int = SEED, dumps: bool = True) -> None:
    """A log of many short server lifetimes (a CI box restarting the server per run): each a start-up
    with its ``server_args`` dump, then a few stats lines. ``dumps=False`` leaves the dumps out, the
    reference that shows what reading them costs."""
    rng = np.random.default_rng(seed)
    with open(path, "wb", buffering=1 << 22) as out:
        for index in range(lifetimes):
            era = ERAS[index % len(ERAS)]
            clock = Clock(era.start + timedelta(hours=index))
            lines = startup(era, clock, rng)
            if not dumps:
                lines = [line for line in lines if "server_args=" not in line]
            lines += steady_lines(era, clock, rng, lines_per_lifetime, [1000])
            out.write(("\n".join(lines) + "\n").encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--mb", type=float, default=100.0, help="size in MB (10^6 bytes)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    generate(args.path, int(args.mb * 1e6), args.seed)


if __name__ == "__main__":
    main()
