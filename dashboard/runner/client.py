"""HTTP to an OpenAI-compatible server: readiness, optional engine endpoints, streamed generations.

Plain ``http.client``: a streamed response is read line by line as the server sends it, so each
content chunk gets its own arrival time (TTFT, inter-token gaps). The engines' streaming protocol
(SGLang ``serving_completions.py``, vLLM ``completion/serving.py``): ``text/event-stream`` of
``data: {json}\\n\\n`` events, one choice per content chunk, a finish reason on the last one, then,
with ``stream_options.include_usage``, a chunk with ``"choices": []`` and ``usage``, then
``data: [DONE]``. An error after the stream started arrives as an event holding an error object.
"""
from __future__ import annotations

import http.client
import json
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO
from urllib.parse import urlsplit

from ingest.errors import SpecdashError
from ingest.storage.store import utc_now

API_PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
READY_POLL_S = 0.5
ERROR_BODY_CHARS = 300  # an HTML error page stays one line
OPTIONAL_TIMEOUT_S = 10.0


class BenchError(SpecdashError):
    """The benchmark could not run: the server is unreachable, not ready, or answered with an error."""

    title = "Benchmark failed"


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8", errors="replace"))


def server_root(url: str) -> str:
    """``http://host:8000`` from what a user types: the root, ``…/v1`` or a full endpoint URL."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BenchError(None, f"{url!r} is not an http(s) URL", hint="pass the server's address, e.g. http://127.0.0.1:30000")
    path = parts.path.rstrip("/")
    for suffix in (*API_PATHS.values(), "/v1"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    return f"{parts.scheme}://{parts.netloc}{path}"


def connect(root: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(root)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(parts.netloc, timeout=timeout)


def base_path(root: str) -> str:
    return urlsplit(root).path


def fetch(root: str, method: str, path: str, payload: Any = None, timeout: float = OPTIONAL_TIMEOUT_S) -> Reply:
    """One whole request; an HTTP error status is a ``Reply``, a network failure an ``OSError``."""
    connection = connect(root, timeout)
    try:
        body = None if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, base_path(root) + path, body=body, headers=headers)
        response = connection.getresponse()
        return Reply(response.status, response.read())
    finally:
        connection.close()


def error_message(body: bytes) -> str:
    """The message in an error body: SGLang ``{"message": …}`` (protocol.py ErrorResponse), vLLM
    ``{"error": {"message": …}}`` (engine/protocol.py ErrorResponse), FastAPI ``{"detail": …}``, else the text."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        document = json.loads(text)
    except ValueError:
        return text[:ERROR_BODY_CHARS] or "(empty body)"
    return message_of(document) or text[:ERROR_BODY_CHARS]


def message_of(document: Any) -> str | None:
    if not isinstance(document, dict):
        return None
    inner = document.get("error")
    if isinstance(inner, dict):
        return str(inner.get("message") or inner)
    if isinstance(inner, str):
        return inner
    for key in ("message", "detail"):
        if document.get(key):
            return str(document[key])
    return None


def network_problem(error: OSError) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.timeout):
        return "no answer (timed out)"
    return error.strerror or type(error).__name__


# --- readiness ----------------------------------------------------------------------------------


@dataclass
class Readiness:
    """What the last poll saw, for the progress line and the timeout's error."""

    last: str = "no answer yet"
    models: list[str] = field(default_factory=list)


def wait_until_ready(root: str, timeout_s: float, stream: TextIO | None = None) -> list[str]:
    """Poll ``/v1/models`` (and ``/health`` where the engine has it) until the server serves a model.

    Connection refused is waited out, as a server that is still loading refuses; only a name that
    does not resolve fails at once. Returns the served model ids. On a terminal the wait redraws one
    line; in a log it is one line, not one per poll.
    """
    out = stream or sys.stderr
    started = time.monotonic()
    state = Readiness()
    polls = 0
    while not poll_once(root, state):
        waited = time.monotonic() - started
        if waited >= timeout_s:
            end_wait_line(out, polls)
            raise not_ready(root, timeout_s, state.last)
        if out.isatty():
            out.write(f"\rwaiting for {root} to serve a model: {waited:4.0f} s of {timeout_s:.0f} s ({state.last})   ")
        elif polls == 0:
            out.write(f"waiting for {root} to serve a model (up to {timeout_s:g} s; {state.last})\n")
        out.flush()
        polls += 1
        time.sleep(min(READY_POLL_S, max(timeout_s - waited, 0.01)))
    end_wait_line(out, polls)
    return state.models


def end_wait_line(out: TextIO, polls: int) -> None:
    if polls and out.isatty():
        out.write("\n")


def poll_once(root: str, state: Readiness) -> bool:
    try:
        models = fetch(root, "GET", "/v1/models", timeout=READY_POLL_S * 4)
        health = fetch(root, "GET", "/health", timeout=READY_POLL_S * 4) if models.status == 200 else None
    except socket.gaierror as error:
        raise BenchError(root, f"cannot resolve the host ({error.strerror})", hint="check the URL") from error
    except OSError as error:
        state.last = network_problem(error)
        return False
    if models.status != 200:
        state.last = f"/v1/models answered {models.status}: {error_message(models.body)}"
        return False
    if health is not None and health.status not in (200, 404):
        state.last = f"/health answered {health.status}"
        return False
    state.models = model_ids(root, models)
    if not state.models:
        state.last = "/v1/models lists no model"
        return False
    return True


def model_ids(root: str, reply: Reply) -> list[str]:
    try:
        document = reply.json()
        return [str(card["id"]) for card in document["data"]]
    except (ValueError, KeyError, TypeError) as error:
        raise BenchError(root, "/v1/models did not answer an OpenAI model list",
                         hint="is this an OpenAI-compatible server? (SGLang, vLLM, llama.cpp server, TensorRT-LLM)") from error


def not_ready(root: str, timeout_s: float, last: str) -> BenchError:
    if last == "connection refused":
        return BenchError(root, f"no server answers (connection refused for {timeout_s:g} s)",
                          hint="start the server, check the host and port, or wait longer with --ready-timeout SECONDS")
    return BenchError(root, f"the server was not ready within {timeout_s:g} s (last: {last})",
                      hint="check the server's log, or wait longer with --ready-timeout SECONDS")


def pick_model(root: str, served: list[str], wanted: str | None) -> str:
    """The model to benchmark: ``wanted`` if served, else the only one served."""
    if wanted is not None and wanted in served:
        return wanted
    listed = ", ".join(served)
    if wanted is not None:
        raise BenchError(root, f"the server does not serve model {wanted!r}; it serves: {listed}",
                         hint="pass one of those to --model")
    if len(served) > 1:
        raise BenchError(root, f"the server serves {len(served)} models: {listed}", hint="pick one with --model")
    return served[0]


# --- optional engine endpoints --------------------------------------------------------------------


@dataclass(frozen=True)
class EngineAnswer:
    """An endpoint an engine may not have: its answer, or why there is none (404 is quietly noted)."""

    path: str
    status: int | None
    body: bytes = b""
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def record(self) -> dict[str, Any]:
        if self.ok:
            return {"path": self.path, "status": self.status, "answer": parsed_or_text(self.body)}
        return {"path": self.path, "status": self.status, "note": self.note}


def parsed_or_text(body: bytes) -> Any:
    text = body.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def optional(root: str, method: str, path: str, payload: Any = None) -> EngineAnswer:
    try:
        reply = fetch(root, method, path, payload)
    except OSError as error:
        return EngineAnswer(path, None, note=network_problem(error))
    if reply.status == 404:
        return EngineAnswer(path, 404, note="not offered by this engine")
    if reply.status >= 400:
        return EngineAnswer(path, reply.status, reply.body, note=error_message(reply.body))
    return EngineAnswer(path, reply.status, reply.body)


def first_offered(root: str, paths: tuple[str, ...]) -> EngineAnswer:
    """The first of ``paths`` the engine answers (SGLang renamed ``/get_server_info`` to ``/server_info``)."""
    answer = EngineAnswer(paths[0], None, note="not tried")
    for path in paths:
        answer = optional(root, "GET", path)
        if answer.ok:
            return answer
    return answer


# --- one streamed generation ----------------------------------------------------------------------


@dataclass
class Streamed:
    """What one streamed request gave: arrival times of content chunks, finish reason, usage."""

    started: float  # time.perf_counter() when the request was sent
    started_at: datetime
    ended: float = 0.0
    ended_at: datetime | None = None
    content_times: list[float] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    done: bool = False


Opened = Callable[[http.client.HTTPConnection], None]


def stream(root: str, path: str, payload: dict[str, Any], timeout: float, on_open: Opened | None = None,
           on_chunk: Callable[[], None] | None = None) -> Streamed:
    """POST ``payload`` with ``stream: true`` and read the events as they arrive (``on_chunk``: after each content chunk)."""
    connection = connect(root, timeout)
    result = Streamed(started=time.perf_counter(), started_at=utc_now())
    try:
        try:
            connection.connect()  # before on_open: a caller that cuts connections finds a socket to cut
            if on_open is not None:
                on_open(connection)
            connection.request("POST", base_path(root) + path, body=json.dumps(payload).encode(),
                               headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
            response = connection.getresponse()
        except OSError as error:
            raise BenchError(root + path, f"cannot send the request ({network_problem(error)})",
                             hint="is the server still running? check its log") from error
        if response.status >= 400:
            raise BenchError(root + path, f"the server answered {response.status} {response.reason}: "
                             f"{error_message(response.read())}", hint="check the request options and the server's log")
        read_events(root + path, response, result, on_chunk)
    finally:
        connection.close()
    result.ended, result.ended_at = time.perf_counter(), utc_now()
    check_complete(root + path, result)
    return result


def read_events(where: str, response: http.client.HTTPResponse, result: Streamed,
                on_chunk: Callable[[], None] | None = None) -> None:
    data: list[str] = []
    try:
        for raw in response:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif line == "" and data:
                chunks = len(result.content_times)
                if take_event(where, "\n".join(data), result):
                    return
                if on_chunk is not None and len(result.content_times) > chunks:
                    on_chunk()
                data = []
        if data:  # a last event without its blank line
            take_event(where, "\n".join(data), result)
    except (http.client.HTTPException, OSError) as error:
        raise stopped_midway(where, result, type(error).__name__) from error


def take_event(where: str, data: str, result: Streamed) -> bool:
    """Fold one event into ``result``; True at ``[DONE]``."""
    if data.strip() == "[DONE]":
        result.done = True
        return True
    try:
        chunk = json.loads(data)
    except ValueError:
        raise BenchError(where, f"the stream sent an event that is not JSON: {data[:80]!r}",
                         hint="is this an OpenAI-compatible server?") from None
    if not isinstance(chunk, dict):
        return False
    if "error" in chunk or chunk.get("object") == "error":
        raise BenchError(where, f"the server reported an error mid-stream: {message_of(chunk)}",
                         hint="check the server's log")
    now = time.perf_counter()
    for choice in chunk.get("choices") or []:
        if chunk_text(choice):
            result.content_times.append(now)
        if choice.get("finish_reason"):
            result.finish_reason = str(choice["finish_reason"])
    if isinstance(chunk.get("usage"), dict):  # SGLang sends "usage": null on content chunks
        result.usage = chunk["usage"]
    return False


def chunk_text(choice: dict[str, Any]) -> str:
    """Completions carry ``text``; chat carries ``delta.content`` (or ``reasoning_content`` for thinking models)."""
    if choice.get("text"):
        return str(choice["text"])
    delta = choice.get("delta") or {}
    return str(delta.get("content") or delta.get("reasoning_content") or "")


def check_complete(where: str, result: Streamed) -> None:
    if not result.done:
        raise stopped_midway(where, result, "no [DONE]")
    if result.finish_reason is None:
        raise stopped_midway(where, result, "[DONE] without a finish reason")


def stopped_midway(where: str, result: Streamed, why: str) -> BenchError:
    return BenchError(where, f"the stream stopped mid-way after {len(result.content_times)} content chunks ({why})",
                      hint="the server may have crashed or dropped the connection; check its log")

