"""The ``timings`` object of llama-server completion responses, saved by a client.

Where it comes from: every llama-server completion response (``/completion``, ``/v1/completions``,
``/v1/chat/completions``; the last chunk of a stream) carries ``timings``: ``prompt_n``, ``prompt_ms``,
``prompt_per_second``, ``predicted_n``, ``predicted_ms``, ``predicted_per_token_ms``,
``predicted_per_second``, since 2025-03 (ggml-org/llama.cpp#12603) ``draft_n`` and ``draft_n_accepted``
when the server drafts, and later ``cache_n``. Read: one response object, a JSON list or JSONL of them, a
saved SSE stream (``data: {…}`` lines; chunks without ``timings`` are counted and skipped), or the bare
``timings`` object as ``jq .timings`` prints it. docs/llamacpp.md shows examples.

What lands where: one session per file, one ``bench_runs`` row per response (``predicted_n`` tokens in
``predicted_ms``, ``predicted_per_second`` as printed: decode only, prompt processing excluded), and for each
response with ``draft_n`` one ``acceptance_requests`` row (origin ``llama.cpp completion timings``):
``draft_n_accepted`` of ``draft_n``, their rate. ``timings`` holds no step count, so it gives an acceptance
*rate*, not a length: the accept length stays empty and a warning says so. The response's other keys
(``usage``, ``id``, ``model``, finish reason) fill what they name; the rest of ``timings`` goes to ``extra``.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput, UnrecognizedFormat
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.llamacpp.common import ENGINE, check_engine, extra_json, ratio
from ingest.reader import decode_text, read_all
from ingest.tables import table_from_rows

KIND = "llamacpp_timings_json"
ORIGIN = "llama.cpp completion timings"

# A llama.cpp timings object: both decode figures, with JSON's double-quoted keys.
SNIFF_KEYS = (b'"predicted_n"', b'"predicted_ms"')
SSE_DATA = re.compile(r"^data:\s*")
# speed_bench.py --output also holds these keys (summed over a sample's turns): not a response
NOT_RESPONSES = (b'"selected_samples"', b'"completed_samples"')
TIMING_KEYS = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "predicted_per_second", "draft_n")


def sniff(head: bytes) -> bool:
    text = head.lstrip()
    if not (text[:1] in (b"{", b"[") or text.startswith(b"data:")):
        return False
    return all(key in head for key in SNIFF_KEYS) and not any(key in head for key in NOT_RESPONSES)


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    check_engine(path, options)
    skipped: Counter[str] = Counter()
    objects = _objects(path, decode_text(path, read_all(path)), skipped)
    responses = [(line_no, value, timings) for line_no, value in objects if (timings := _timings(value)) is not None]
    skipped["JSON object without timings"] += len(objects) - len(responses)
    if not responses:
        raise UnrecognizedFormat(
            path, "no llama.cpp `timings` object (predicted_n, predicted_ms, …) in the file",
            hint="save the whole completion response, or its `timings` object",
        )
    runs: list[dict[str, Any]] = []
    accepts: list[dict[str, Any]] = []
    for index, (line_no, response, timings) in enumerate(responses):
        runs.append(_run_row(index, line_no, response, timings))
        if timings.get("draft_n") is not None:
            accepts.append(_acceptance_row(path, len(accepts), line_no, response, timings))
    warnings = []
    if accepts:
        warnings.append(
            f"{path}:{accepts[0]['line_no']}: llama.cpp `timings` give draft_n and draft_n_accepted but no verify-step "
            f"count: the acceptance rate of {len(accepts)} response(s) is stored, the accept length left empty"
        )
    model = next((r.get("model") for _, r, _ in responses if isinstance(r.get("model"), str)), None)
    session = {"session_key": 0, "engine": ENGINE, "model": model,
               "extra": extra_json({"source": "llama.cpp completion timings"})}
    tables = {
        "sessions": table_from_rows("sessions", [session]),
        "bench_runs": table_from_rows("bench_runs", runs),
    }
    if accepts:
        tables["acceptance_requests"] = table_from_rows("acceptance_requests", accepts)
    return ParsedSource(kind=KIND, engine=ENGINE, tables=tables, skipped=+skipped, warnings=warnings,
                        lines_read=max((line_no for line_no, _ in objects), default=0))


def _objects(path: Path, text: str, skipped: Counter[str]) -> list[tuple[int, dict[str, Any]]]:
    """Every JSON object of the file with the line it starts on: one document, or one per line (JSONL, SSE)."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as error:  # not one document; or a 5,000-digit number, nested too deep
            if not _one_object_per_line(text):
                error_line = error.lineno if isinstance(error, json.JSONDecodeError) else None
                raise MalformedInput(path, f"not a JSON document ({_reason(error)})", line=error_line,
                                     hint="save the whole response (or its `timings` object) as JSON, or one object per line") from error
        else:
            first_line = text[: len(text) - len(stripped)].count("\n") + 1
            items = document if isinstance(document, list) else [document]
            return [(first_line, item) for item in items if isinstance(item, dict)]
    found: list[tuple[int, dict[str, Any]]] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        body = SSE_DATA.sub("", line.strip(), count=1)
        if not body:
            skipped["blank"] += 1
        elif body == "[DONE]":
            skipped["stream end ([DONE])"] += 1
        elif body[0] != "{":
            skipped["other line"] += 1
        else:
            try:
                value = json.loads(body)
            except (ValueError, RecursionError) as error:
                raise MalformedInput(path, f"not a JSON object ({_reason(error)})", line=line_no,
                                     hint="each line must hold one whole JSON object (JSONL) or `data: {…}` (a saved stream)") from error
            if isinstance(value, dict):
                found.append((line_no, value))
    return found


def _one_object_per_line(text: str) -> bool:
    lines = [SSE_DATA.sub("", line.strip(), count=1) for line in text.splitlines() if line.strip()]
    return len(lines) > 1 and all(line.startswith("{") and line.endswith("}") or line == "[DONE]" for line in lines)


def _reason(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deep"
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno} column {error.colno}"
    return str(error).split(";")[0]


def _timings(value: dict[str, Any]) -> dict[str, Any] | None:
    timings = value.get("timings")
    if isinstance(timings, dict) and any(key in timings for key in TIMING_KEYS):
        return timings
    if "predicted_n" in value and "predicted_ms" in value:  # the bare object (`jq .timings`)
        return value
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _figure(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _finish_reason(response: dict[str, Any]) -> str | None:
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) else None
    stop_type = response.get("stop_type")  # the native /completion endpoint
    return stop_type if isinstance(stop_type, str) else None


def _usage(response: dict[str, Any]) -> dict[str, Any]:
    usage = response.get("usage")
    return usage if isinstance(usage, dict) else {}


def _run_row(index: int, line_no: int, response: dict[str, Any], timings: dict[str, Any]) -> dict[str, Any]:
    ms = _figure(timings.get("predicted_ms"))
    settings = response.get("generation_settings")
    max_tokens = _count(settings.get("n_predict")) if isinstance(settings, dict) else None
    tokens = _count(timings.get("predicted_n"))
    extra = {"line_no": line_no, "id": response.get("id"),
             "duration_is": "decode time (timings.predicted_ms); prompt processing is in prompt_ms",
             **{key: value for key, value in timings.items() if key not in ("predicted_n", "predicted_ms", "predicted_per_second")}}
    return {
        "session_key": 0, "run_index": index + 1, "is_warmup": False,
        "prompt_tokens": _count(_usage(response).get("prompt_tokens")) or _count(timings.get("prompt_n")),
        "output_tokens": tokens, "duration_s": None if ms is None else round(ms / 1000.0, 9),
        "tok_per_s": _figure(timings.get("predicted_per_second")), "max_tokens": max_tokens,
        "hit_max_tokens": None if max_tokens is None or max_tokens < 0 or tokens is None else tokens >= max_tokens,
        "finish_reason": _finish_reason(response),
        "extra": extra_json({k: v for k, v in extra.items() if v is not None}),
    }


def _acceptance_row(path: Path, index: int, line_no: int, response: dict[str, Any], timings: dict[str, Any]) -> dict[str, Any]:
    drafted, accepted = _count(timings.get("draft_n")), _count(timings.get("draft_n_accepted"))
    if drafted is not None and accepted is not None and accepted > drafted:
        raise MalformedInput(path, f"draft_n_accepted {accepted} is more than draft_n {drafted}", line=line_no,
                             key="timings.draft_n_accepted", hint="llama.cpp counts accepted drafts among the drafted ones; check the file")
    usage = _usage(response)
    extra = {"accept_length_note": "timings give no verify-step count: the accept length cannot be computed"}
    return {
        "record_index": index, "request_index": 0, "line_no": line_no,
        "request_id": response.get("id") if isinstance(response.get("id"), str) else None,
        "engine": ENGINE, "origin": ORIGIN, "accepted_drafts": accepted, "draft_tokens": drafted,
        "accept_rate": ratio(accepted, drafted),
        "input_tokens": _count(usage.get("prompt_tokens")) or _count(timings.get("prompt_n")),
        "output_tokens": _count(usage.get("completion_tokens")) or _count(timings.get("predicted_n")),
        "extra": extra_json(extra),
    }


FORMAT = Format(
    kind=KIND,
    description="llama.cpp completion response `timings` (predicted_n/ms, draft_n, draft_n_accepted): JSON, JSONL or a saved stream",
    sniff=sniff,
    signs=(
        Sign(r'"predicted_n"\s*:', "a 'predicted_n' key"),
        Sign(r'"predicted_ms"\s*:', "a 'predicted_ms' key"),
        Sign(r'"draft_n_accepted"\s*:', "a 'draft_n_accepted' key"),
    ),
    parse=parse,
    example='"predicted_n": 200, … "draft_n": 347, "draft_n_accepted": 65',
    precedence=127,
)

FORMATS = (FORMAT,)
