"""A real HTTP server on 127.0.0.1 that speaks the OpenAI streaming protocol as SGLang and vLLM do.

Two personalities, each shaped after the engine's own code (read at the commits the search index
holds; the shapes have been stable across 2025):

- SGLang (sgl-project/sglang):
  ``python/sglang/srt/entrypoints/openai/serving_completions.py`` ``_generate_completion_stream``:
  content chunks are ``CompletionStreamResponse.model_dump_json()`` (no exclude: ``"usage": null``,
  ``"logprobs": null``, ``"matched_stop": null`` are present), the final usage chunk is dumped with
  ``exclude_none=True`` and ``"choices": []``; then ``data: [DONE]``.
  ``python/sglang/srt/entrypoints/openai/protocol.py``: ``UsageInfo`` (prompt_tokens, total_tokens,
  completion_tokens, reasoning_tokens), ``ErrorResponse`` (``{"object": "error", "message", "type",
  "param", "code"}``), ``ModelCard`` (``owned_by: "sglang"``, root, parent, max_model_len).
  ``python/sglang/srt/entrypoints/http_server.py``: ``/get_server_info`` (server args, scheduler info,
  ``internal_states`` with ``avg_spec_accept_length``, ``version``), ``/start_profile`` and
  ``/stop_profile`` answering plain text, ``/health``.
  ``/metrics`` names: ``python/sglang/srt/metrics/collector.py`` (``sglang:num_running_reqs``,
  ``sglang:gen_throughput``, ``sglang:spec_accept_length`` gauges; ``sglang:prompt_tokens_total``,
  ``sglang:generation_tokens_total``, ``sglang:num_requests_total`` counters; label ``model_name``),
  as in corpus ``new/prometheus/sglang-docs-metrics-example-apr2025.prom``.
- vLLM (vllm-project/vllm):
  ``vllm/entrypoints/openai/completion/serving.py`` ``completion_stream_generator``: content chunks
  dumped with ``exclude_unset=True`` (``"finish_reason"``, ``"stop_reason"``, ``"logprobs"``,
  ``"prompt_token_ids"``, ``"token_ids"`` present as set, no ``usage``), the final usage chunk with
  ``exclude_none=True``; errors mid-stream as an error event, then ``data: [DONE]``.
  ``vllm/entrypoints/openai/engine/protocol.py``: ``UsageInfo`` (prompt_tokens, total_tokens,
  completion_tokens), ``ErrorResponse`` = ``{"error": {"message", "type", "param", "code"}}``,
  ``ModelCard`` (``owned_by: "vllm"``, ``permission``). No server-info endpoint; ``/version``.
  ``/metrics`` spec counters: ``vllm/v1/spec_decode/metrics.py`` ``SpecDecodingProm``
  (``vllm:spec_decode_num_drafts_total``, ``…num_draft_tokens_total``, ``…num_accepted_tokens_total``,
  label ``engine``, ``model_name``) and ``vllm:num_requests_running``.

Chat streams (``/v1/chat/completions``) follow both engines' ``chat.completion.chunk``: a first
chunk with ``delta.role``, content in ``delta.content``, the finish reason on a last chunk with an
empty delta.

Timing is configurable (``seconds_per_token``) so that a 2,048-token run takes tens of milliseconds.
Each content chunk carries ``tokens_per_chunk`` tokens, as a speculative engine sends every verify
step's accepted tokens at once: counting chunks would undercount, which the tests rely on.
"""
from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SPEC_TOKENS = 3  # draft tokens per step (EAGLE-3 with 3 steps, top-k 1)


@dataclass
class Behaviour:
    """What the server does; tests change it between requests."""

    engine: str = "sglang"  # or "vllm"
    model: str = "/models/Kimi-K2.5"
    seconds_per_token: float = 0.00002
    tokens_per_chunk: int = 4  # 1 + accepted drafts per verify step
    short_requests: dict[int, int] = field(default_factory=dict)  # generation request number (1-based) → tokens it stops at
    fail_request: int | None = None  # this generation request gets fail_status
    fail_status: int = 500
    fail_message: str = "CUDA out of memory. Tried to allocate 2.00 GiB"
    cut_request: int | None = None  # this generation request's stream is cut after a few chunks
    send_usage: bool = True
    ready: bool = True  # False: /health answers 503 (still loading)
    has_metrics: bool = True
    profile_trace: Path | None = None  # copied into /start_profile's output_dir when the profiler stops, as a rank's trace


@dataclass
class Counters:
    """What /metrics reports: totals over every request served."""

    requests: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    drafts: int = 0
    draft_tokens: int = 0
    accepted_tokens: int = 0
    running: int = 0


class FakeEngine:
    """The server and its state; ``url`` is its root, e.g. ``http://127.0.0.1:40123``."""

    def __init__(self, behaviour: Behaviour | None = None) -> None:
        self.behaviour = behaviour or Behaviour()
        self.counters = Counters()
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []  # every generation request's JSON, in order
        self.paths: list[str] = []  # every request's method and path
        self.profile_dir: str | None = None  # /start_profile's output_dir
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeEngine:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def take_request(self, body: dict[str, Any]) -> int:
        with self.lock:
            self.bodies.append(body)
            self.counters.requests += 1
            return len(self.bodies)

    def metrics_text(self) -> str:
        with self.lock:
            c = Counters(**vars(self.counters))
        model = self.behaviour.model
        if self.behaviour.engine == "vllm":
            labels = f'engine="0",model_name="{model}"'
            return "".join([
                family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", labels, c.running),
                family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", labels, c.prompt_tokens),
                family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", labels, c.generation_tokens),
                family("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", labels, c.drafts),
                family("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", labels, c.draft_tokens),
                family("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", labels, c.accepted_tokens),
            ])
        labels = f'model_name="{model}"'
        accept_length = c.generation_tokens / c.drafts if c.drafts else 0.0
        return "".join([
            family("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", labels, c.prompt_tokens),
            family("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", labels, c.generation_tokens),
            family("sglang:num_requests_total", "counter", "Number of requests processed.", labels, c.requests),
            family("sglang:num_running_reqs", "gauge", "The number of running requests.", labels, c.running),
            family("sglang:gen_throughput", "gauge", "The generation throughput (token/s).", labels, 0.0),
            family("sglang:spec_accept_length", "gauge", "The average acceptance length of speculative decoding.", labels, accept_length),
        ])


def family(name: str, kind: str, text: str, labels: str, value: float) -> str:
    return f"# HELP {name} {text}\n# TYPE {name} {kind}\n{name}{{{labels}}} {float(value)!r}\n"


def prompt_tokens_of(body: dict[str, Any]) -> int:
    """A stand-in tokenizer: about 1.3 tokens per word plus the chat template's tokens."""
    if "messages" in body:
        words = sum(len(str(message.get("content", "")).split()) for message in body["messages"])
        return int(words * 1.3) + 10
    return int(len(str(body.get("prompt", "")).split()) * 1.3) + 1


def sglang_server_info(model: str) -> dict[str, Any]:
    """The shape of SGLang's /get_server_info: server args flattened, scheduler info, internal states, version."""
    return {
        "model_path": model, "tokenizer_path": model, "host": "127.0.0.1", "port": 30000, "tp_size": 8,
        "speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "/models/Kimi-K2-EAGLE3",
        "speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4,
        "cuda_graph_max_bs": 8, "max_total_num_tokens": 1_000_000, "max_req_input_len": 131_000,
        "internal_states": [{"avg_spec_accept_length": 2.9, "last_gen_throughput": 61.2}],
        "version": "0.5.2",
    }


def handler_for(engine: FakeEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def handle(self) -> None:
            try:
                super().handle()
            except (ConnectionResetError, BrokenPipeError):  # the client closed first: as an engine, say nothing
                pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            engine.paths.append(f"GET {self.path}")
            behaviour = engine.behaviour
            sglang = behaviour.engine == "sglang"
            if self.path == "/health":
                self.send_json(200 if behaviour.ready else 503, {} if behaviour.ready else {"status": "loading"})
            elif self.path == "/v1/models":
                self.send_json(200, model_list(behaviour))
            elif self.path in ("/get_server_info", "/server_info") and sglang:
                self.send_json(200, sglang_server_info(behaviour.model))
            elif self.path == "/version" and not sglang:
                self.send_json(200, {"version": "0.11.0"})
            elif self.path == "/metrics" and behaviour.has_metrics:
                self.send_text(200, engine.metrics_text(), "text/plain; version=0.0.4; charset=utf-8")
            else:
                self.send_error_body(404, "Not Found")

        def profile(self, body: dict[str, Any]) -> None:
            """SGLang's profiler (``ProfileReqInput``: ``output_dir``, ``num_steps``, ...): the trace is written
            into the output folder once it stops."""
            if self.path == "/start_profile":
                engine.profile_dir = body.get("output_dir")
                self.send_text(200, "Start profiling.\n", "text/plain")
                return
            trace = engine.behaviour.profile_trace
            if trace is not None and engine.profile_dir:
                shutil.copyfile(trace, Path(engine.profile_dir) / f"{time.time():.0f}-TP-0.trace.json.gz")
            self.send_text(200, "Stop profiling. This will take some time.\n", "text/plain")

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            engine.paths.append(f"POST {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path in ("/start_profile", "/stop_profile") and engine.behaviour.engine == "sglang":
                self.profile(json.loads(raw) if raw else {})
                return
            if self.path not in ("/v1/completions", "/v1/chat/completions"):
                self.send_error_body(404, "Not Found")
                return
            body = json.loads(raw or b"{}")
            number = engine.take_request(body)
            behaviour = engine.behaviour
            if body.get("model") != behaviour.model:
                self.send_error_body(404, f"The model `{body.get('model')}` does not exist.")
                return
            if number == behaviour.fail_request:
                self.send_error_body(behaviour.fail_status, behaviour.fail_message)
                return
            try:
                self.stream(number, body)
            except (BrokenPipeError, ConnectionResetError):  # the client cut the request (Ctrl-C)
                pass

        def stream(self, number: int, body: dict[str, Any]) -> None:
            behaviour = engine.behaviour
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chat = "messages" in body
            for position, event in enumerate(events(engine, number, body, chat)):
                if number == behaviour.cut_request and position == 5:
                    self.connection.shutdown(socket.SHUT_RDWR)  # the server died mid-stream: no last chunk, no [DONE]
                    return
                self.write_chunk(f"data: {event}\n\n".encode())
            self.write_chunk(b"")

        def write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def send_json(self, status: int, document: Any) -> None:
            self.send_text(status, json.dumps(document), "application/json")

        def send_text(self, status: int, text: str, content_type: str) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def send_error_body(self, status: int, message: str) -> None:
            kind = {400: "BadRequestError", 404: "NotFoundError", 500: "InternalServerError"}.get(status, "Error")
            if engine.behaviour.engine == "vllm":
                self.send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": status}})
            else:
                self.send_json(status, {"object": "error", "message": message, "type": kind, "param": None, "code": status})

    return Handler


def model_list(behaviour: Behaviour) -> dict[str, Any]:
    card: dict[str, Any] = {"id": behaviour.model, "object": "model", "created": int(time.time()),
                            "owned_by": behaviour.engine, "root": behaviour.model, "parent": None, "max_model_len": 131072}
    if behaviour.engine == "vllm":
        card["permission"] = []
    return {"object": "list", "data": [card]}


def token_budget(behaviour: Behaviour, number: int, body: dict[str, Any]) -> tuple[int, str]:
    """How many tokens this request generates and why it stops."""
    max_tokens = int(body.get("max_tokens") or 16)
    if number in behaviour.short_requests:
        return min(behaviour.short_requests[number], max_tokens), "stop"
    if not body.get("ignore_eos") and max_tokens > 100:
        return 100, "stop"  # without ignore_eos the model ends its answer early
    return max_tokens, "length"


def events(engine: FakeEngine, number: int, body: dict[str, Any], chat: bool) -> Iterator[str]:
    """The request's SSE payloads (without ``data: ``), generated in real time."""
    behaviour = engine.behaviour
    total, finish = token_budget(behaviour, number, body)
    prompt_tokens = prompt_tokens_of(body)
    request_id = f"{'chatcmpl' if chat else 'cmpl'}-{number:08x}"
    created = int(time.time())
    with engine.lock:
        engine.counters.running += 1
        engine.counters.prompt_tokens += prompt_tokens
    if chat:
        yield chunk_json(behaviour, request_id, created, chat, role_choice())
    sent = 0
    try:
        while sent < total:
            step = min(behaviour.tokens_per_chunk, total - sent)
            time.sleep(behaviour.seconds_per_token * step)
            sent += step
            count_step(engine, step)
            last = sent == total and not chat
            yield chunk_json(behaviour, request_id, created, chat, content_choice(behaviour, chat, " tok" * step, finish if last else None))
        if chat:
            yield chunk_json(behaviour, request_id, created, chat, finish_choice(behaviour, finish))
        if behaviour.send_usage:
            yield usage_json(behaviour, request_id, created, chat, prompt_tokens, sent)
        yield "[DONE]"
    finally:
        with engine.lock:
            engine.counters.running -= 1


def count_step(engine: FakeEngine, tokens: int) -> None:
    with engine.lock:
        engine.counters.generation_tokens += tokens
        engine.counters.drafts += 1
        engine.counters.draft_tokens += SPEC_TOKENS
        engine.counters.accepted_tokens += tokens - 1


def content_choice(behaviour: Behaviour, chat: bool, text: str, finish: str | None) -> dict[str, Any]:
    if chat:
        return {"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": None}
    if behaviour.engine == "vllm":
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish, "stop_reason": None,
                "prompt_token_ids": None, "token_ids": None}
    return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
            "matched_stop": 163586 if finish == "stop" else None}


def role_choice() -> dict[str, Any]:
    return {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}


def finish_choice(behaviour: Behaviour, finish: str) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}
    if behaviour.engine == "sglang":
        choice["matched_stop"] = 163586 if finish == "stop" else None
    return choice


def chunk_json(behaviour: Behaviour, request_id: str, created: int, chat: bool, choice: dict[str, Any]) -> str:
    chunk: dict[str, Any] = {"id": request_id, "object": "chat.completion.chunk" if chat else "text_completion",
                             "created": created, "model": behaviour.model, "choices": [choice]}
    if behaviour.engine == "sglang":
        chunk["usage"] = None  # model_dump_json() without exclude_none
    return json.dumps(chunk)


def usage_json(behaviour: Behaviour, request_id: str, created: int, chat: bool, prompt: int, completion: int) -> str:
    usage: dict[str, Any] = {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion}
    if behaviour.engine == "sglang":
        usage["reasoning_tokens"] = 0
    return json.dumps({"id": request_id, "object": "chat.completion.chunk" if chat else "text_completion",
                       "created": created, "model": behaviour.model, "choices": [], "usage": usage})
