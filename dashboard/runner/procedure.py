"""The team's procedure: warm-ups, then measured runs of ``max_tokens`` each, ``concurrency`` at a time.

Each run is one streamed request. Its output tokens come from the server's final ``usage``
chunk, not from counting chunks: with speculative decoding one chunk often carries several
accepted tokens, so counting chunks undercounts exactly the runs that are being compared. When
no usage arrives, the chunks are counted and the run says so (``usage_reported: false``).

Ctrl-C during the measured runs keeps the runs that finished: the requests in flight are cut,
the rest are never sent, and the outcome is marked interrupted.
"""
from __future__ import annotations

import http.client
import itertools
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.runner.client import API_PATHS, Streamed, stream

# Short prompts, as the team's script used (24-32 prompt tokens): decode speed is what is measured,
# so a long prefill would only add noise to the wall time.
BUILT_IN_PROMPTS = (
    "Write a detailed story about a lighthouse keeper who finds a message in a bottle.",
    "Explain, step by step, how a compiler turns source code into machine code.",
    "Describe the history of the printing press and its effects on European society.",
    "Write a long letter from a traveller describing a journey across a desert.",
    "Explain how speculative decoding speeds up inference of large language models.",
    "Write a detailed guide to growing tomatoes in a small city garden.",
    "Describe a day in the life of a software engineer on a large open-source project.",
    "Explain the causes and consequences of the fall of the Western Roman Empire.",
)


@dataclass(frozen=True)
class Plan:
    root: str
    api: str  # a key of API_PATHS
    model: str
    prompts: tuple[str, ...]
    max_tokens: int = 2048
    warmup: int = 2
    runs: int = 5
    concurrency: int = 1
    ignore_eos: bool = True
    seed: int = 0
    timeout_s: float = 600.0

    @property
    def path(self) -> str:
        return API_PATHS[self.api]

    @property
    def endpoint(self) -> str:
        return self.root + self.path


def request_body(plan: Plan, prompt: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": plan.model,
        "max_tokens": plan.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "seed": plan.seed,
    }
    if plan.ignore_eos:  # an extension SGLang, vLLM and llama.cpp accept: every run is max_tokens long
        body["ignore_eos"] = True
    if plan.api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


@dataclass(frozen=True)
class Run:
    index: int  # 1-based, warm-ups and measured runs counted apart
    warmup: bool
    prompt_tokens: int | None
    output_tokens: int
    duration_s: float
    ttft_s: float | None
    itl_p50_s: float | None
    itl_p90_s: float | None
    itl_p99_s: float | None
    started_at: datetime
    ended_at: datetime
    finish_reason: str | None
    usage_reported: bool
    max_tokens: int

    @property
    def tok_per_s(self) -> float:
        return self.output_tokens / self.duration_s

    @property
    def hit_max_tokens(self) -> bool:
        return self.output_tokens == self.max_tokens

    @property
    def short(self) -> bool:
        """Stopped before ``max_tokens``: an EOS, a stop string, or an abort; its tok/s is not like the others'."""
        return self.finish_reason != "length" or self.output_tokens < self.max_tokens


def measure(streamed: Streamed, index: int, warmup: bool, max_tokens: int) -> Run:
    usage = streamed.usage or {}
    reported = usage.get("completion_tokens")
    gaps = [later - earlier for earlier, later in itertools.pairwise(streamed.content_times)]
    return Run(
        index=index,
        warmup=warmup,
        prompt_tokens=whole_or_none(usage.get("prompt_tokens")),
        output_tokens=int(reported) if isinstance(reported, int) else len(streamed.content_times),
        duration_s=streamed.ended - streamed.started,
        ttft_s=streamed.content_times[0] - streamed.started if streamed.content_times else None,
        itl_p50_s=percentile(gaps, 50),
        itl_p90_s=percentile(gaps, 90),
        itl_p99_s=percentile(gaps, 99),
        started_at=streamed.started_at,
        ended_at=streamed.ended_at or streamed.started_at,
        finish_reason=streamed.finish_reason,
        usage_reported=isinstance(reported, int),
        max_tokens=max_tokens,
    )


def whole_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile, interpolated between the nearest ranks (numpy's default), None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    below = int(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)


# --- running the plan ---------------------------------------------------------------------------


class Stopped(Exception):
    """A queued run that was not sent because the benchmark is stopping."""


class InFlight:
    """The connections of requests under way, so an interruption can cut them instead of waiting."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.connections: set[http.client.HTTPConnection] = set()
        self.stopped = threading.Event()
        self.chunks = 0  # content chunks streamed so far, over every measured request (the live progress line)

    def chunk(self) -> None:
        with self.lock:
            self.chunks += 1

    def add(self, connection: http.client.HTTPConnection) -> None:
        with self.lock:
            if self.stopped.is_set():  # cut_all ran while this request was connecting
                raise Stopped
            self.connections.add(connection)

    def cut_all(self) -> None:
        self.stopped.set()
        with self.lock:
            for connection in self.connections:
                if connection.sock is not None:
                    try:
                        connection.sock.shutdown(socket.SHUT_RDWR)
                    except OSError:  # already closed: that request had finished
                        pass


RunHook = Callable[[Run], None]
# Called about every TICK_S while measured runs are under way: (runs finished, content chunks streamed, seconds).
TickHook = Callable[[int, int, float], None]
TICK_S = 0.2


def one_run(plan: Plan, position: int, warmup: bool, in_flight: InFlight | None = None) -> Run:
    if in_flight is not None and in_flight.stopped.is_set():
        raise Stopped
    prompt = plan.prompts[(position - 1) % len(plan.prompts)]
    streamed = stream(plan.root, plan.path, request_body(plan, prompt), plan.timeout_s,
                      on_open=in_flight.add if in_flight is not None else None,
                      on_chunk=in_flight.chunk if in_flight is not None else None)
    return measure(streamed, position, warmup, plan.max_tokens)


def run_warmups(plan: Plan, on_run: RunHook | None = None) -> list[Run]:
    """The warm-ups, one at a time (they only warm caches and CUDA graphs; they are recorded, not measured)."""
    warmups = []
    for position in range(1, plan.warmup + 1):
        warmups.append(one_run(plan, position, warmup=True))
        if on_run is not None:
            on_run(warmups[-1])
    return warmups


def measured_runs(plan: Plan, on_run: RunHook | None, on_tick: TickHook | None = None) -> tuple[list[Run], bool]:
    """``plan.runs`` requests, ``plan.concurrency`` in flight; (finished runs by index, interrupted)."""
    started = time.perf_counter()
    in_flight = InFlight()
    finished: list[Run] = []
    executor = ThreadPoolExecutor(max_workers=plan.concurrency, thread_name_prefix="specdash-bench")
    pending: set[Future[Run]] = {
        executor.submit(one_run, plan, position, False, in_flight) for position in range(1, plan.runs + 1)
    }
    try:
        while pending:
            done, pending = wait(pending, timeout=TICK_S, return_when=FIRST_COMPLETED)
            if on_tick is not None:
                on_tick(len(finished) + len(done), in_flight.chunks, time.perf_counter() - started)
            for future in done:
                finished.append(future.result())  # a failed run raises here: nothing is kept
                if on_run is not None:
                    on_run(finished[-1])
    except KeyboardInterrupt:
        stop(executor, in_flight)
        return sorted(finished, key=lambda run: run.index), True
    except BaseException:
        stop(executor, in_flight)
        raise
    executor.shutdown(wait=True)
    return sorted(finished, key=lambda run: run.index), False


def stop(executor: ThreadPoolExecutor, in_flight: InFlight) -> None:
    """Send nothing more and cut what is under way; the cut requests' errors are not reported."""
    in_flight.cut_all()
    executor.shutdown(wait=True, cancel_futures=True)
