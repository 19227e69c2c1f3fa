"""Benchmark JSON: specdash's canonical session format, and the ad-hoc shapes team scripts write.

The canonical format (``"format": "specdash.bench/1"``, documented in
``docs/formats.md``) is one object per benchmark session: endpoint, model, phase,
variant, max_tokens, warmup and started_at, plus a ``runs`` list (index, prompt
tokens, output tokens, wall time, tok/s, start/end times, finish reason).
Warm-up runs are either in ``runs`` with ``"warmup": true`` or in ``warmup_runs``.

Ad-hoc shapes are read through the alias tables below: a bare list of runs, an
object with ``runs``/``results``, or several sessions under ``sessions``.
Keys nobody declared land in ``extra``; nothing is dropped.
"""
from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.reader import decode_text, read_all
from ingest.tables import table_from_rows

CANONICAL_FORMAT = "specdash.bench/1"
VALUE_HINT = "fix the value in the file; docs/formats.md lists every key and its unit"
JSON_HINT = "the file may be truncated; re-run the benchmark or fix the JSON"
INT32_KEYS = ("index", "warmup")  # keys whose column is int32 (run_index, warmup); the rest are int64

# Declared aliases: canonical column <- keys a team's script might have written.
RUN_ALIASES: dict[str, tuple[str, ...]] = {
    "run_index": ("index", "run_index", "run", "run_id", "i"),
    "prompt_tokens": ("prompt_tokens", "prompt_len", "prompt_length", "input_tokens", "input_len", "prompt_tokens_len"),
    "output_tokens": ("output_tokens", "tokens", "completion_tokens", "generated_tokens", "num_tokens", "output_len"),
    "duration_s": ("duration_s", "time", "elapsed", "elapsed_s", "duration", "wall_time", "time_s", "seconds", "latency_s"),
    "tok_per_s": ("tok_per_s", "throughput", "tokens_per_second", "tok/s", "tps", "tokens_per_sec", "speed"),
    "started_at": ("started_at", "start", "start_time", "started"),
    "ended_at": ("ended_at", "end", "end_time", "ended", "finished_at"),
    "finish_reason": ("finish_reason", "stop_reason"),
    "is_warmup": ("warmup", "is_warmup"),
}
SESSION_ALIASES: dict[str, tuple[str, ...]] = {
    "endpoint": ("endpoint", "url", "base_url", "server"),
    "model": ("model", "model_name", "model_path"),
    "phase": ("phase",),
    "variant": ("variant", "label", "name", "drafter"),
    "max_tokens": ("max_tokens", "max_new_tokens", "max_output_tokens"),
    "warmup": ("warmup", "num_warmup", "warmup_runs_count", "n_warmup"),
    "started_at": ("started_at", "timestamp", "date", "start_time"),
}
RUN_LIST_KEYS = ("runs", "results", "measurements")
WARMUP_LIST_KEYS = ("warmup_runs",)
SESSION_LIST_KEYS = ("sessions",)
NOT_EXTRA = {"format", *RUN_LIST_KEYS, *WARMUP_LIST_KEYS, *SESSION_LIST_KEYS}


def sniff(head: bytes) -> bool:
    text = head.lstrip()
    if text[:1] not in (b"{", b"["):
        return False
    if CANONICAL_FORMAT.encode() in head:
        return True
    has_runs = any(f'"{key}"'.encode() in head for key in RUN_LIST_KEYS) or text[:1] == b"["
    has_tokens = any(f'"{key}"'.encode() in head for key in RUN_ALIASES["output_tokens"])
    has_time = any(f'"{key}"'.encode() in head for key in RUN_ALIASES["duration_s"] + RUN_ALIASES["tok_per_s"])
    return has_runs and has_tokens and has_time


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    document = load_json(path)
    session_docs = session_documents(path, document)
    sessions, runs = [], []
    for key, session_doc in enumerate(session_docs):
        session, session_runs = read_session(path, key, session_doc)
        sessions.append(session)
        runs.extend(session_runs)
    return ParsedSource(
        kind="bench_json",
        engine="custom",
        tables={"sessions": table_from_rows("sessions", sessions), "bench_runs": table_from_rows("bench_runs", runs)},
        lines_read=len(runs),
    )


def load_json(path: Path) -> Any:
    text = decode_text(path, read_all(path))
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedInput(
            path, f"invalid JSON: {error.msg} (column {error.colno})", line=error.lineno, hint=JSON_HINT
        ) from error
    except (ValueError, RecursionError) as error:  # a number of 4,300+ digits; nesting deeper than Python recurses
        raise MalformedInput(path, f"invalid JSON: {type(error).__name__}: {str(error)[:120]}", hint=JSON_HINT) from error


def session_documents(path: Path, document: Any) -> list[dict[str, Any]]:
    if isinstance(document, list):
        return [{"runs": document}]
    if not isinstance(document, dict):
        raise MalformedInput(path, "expected a JSON object or a list of runs", hint="see docs/formats.md")
    for key in SESSION_LIST_KEYS:
        if isinstance(document.get(key), list):
            sessions = [session for session in document[key] if isinstance(session, dict)]
            if not sessions:
                raise MalformedInput(
                    path,
                    f"no session object in {key!r} ({len(document[key])} entries)",
                    key=key,
                    hint="each session is an object with its own runs list (see docs/formats.md)",
                )
            return sessions
    return [document]


def pick(document: dict[str, Any], aliases: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in aliases:
        if key in document and document[key] is not None:
            return key, document[key]
    return None, None


def read_session(path: Path, session_key: int, document: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    fields: dict[str, Any] = {}
    used: set[str] = set()
    for column, aliases in SESSION_ALIASES.items():
        key, value = pick(document, aliases)
        if key is not None and not isinstance(value, (list, dict)):
            fields[column] = value
            used.add(key)
    run_docs, warmup_docs = run_lists(path, document)
    max_tokens = as_int(path, "max_tokens", fields.get("max_tokens"))
    runs = [read_run(path, session_key, i, doc, max_tokens, forced_warmup=True) for i, doc in enumerate(warmup_docs)]
    runs += [read_run(path, session_key, i, doc, max_tokens, forced_warmup=False) for i, doc in enumerate(run_docs)]
    warmup = fields.get("warmup")
    if isinstance(warmup, bool) or warmup is None:
        warmup = sum(1 for run in runs if run["is_warmup"]) or None
    extra = {key: value for key, value in document.items() if key not in used and key not in NOT_EXTRA}
    session = {
        "session_key": session_key,
        "phase": as_text(fields.get("phase")),
        "variant": as_text(fields.get("variant")),
        "engine": as_text(document.get("engine")) or None,
        "endpoint": as_text(fields.get("endpoint")),
        "model": as_text(fields.get("model")),
        "max_tokens": max_tokens,
        "warmup": as_int(path, "warmup", warmup),
        "started_at": as_timestamp(path, "started_at", fields.get("started_at")),
        "extra": json.dumps(extra, sort_keys=True, default=str) if extra else None,
    }
    return session, runs


def run_lists(path: Path, document: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    _, runs = pick(document, RUN_LIST_KEYS)
    _, warmups = pick(document, WARMUP_LIST_KEYS)
    if not isinstance(runs, list) or not runs:
        raise MalformedInput(
            path,
            "no runs found",
            key="runs",
            hint=f"a session needs a non-empty list under one of {', '.join(RUN_LIST_KEYS)} (see docs/formats.md)",
        )
    return runs, warmups if isinstance(warmups, list) else []


def read_run(
    path: Path, session_key: int, position: int, document: Any, max_tokens: int | None, *, forced_warmup: bool
) -> dict[str, Any]:
    where = f"runs[{position}]"
    if not isinstance(document, dict):
        raise MalformedInput(path, f"expected an object, got {type(document).__name__}", key=where, hint="each run is an object")
    values: dict[str, Any] = {}
    used: set[str] = set()
    for column, aliases in RUN_ALIASES.items():
        key, value = pick(document, aliases)
        if key is not None:
            values[column] = value
            used.add(key)
    tokens = as_int(path, f"{where}.output_tokens", values.get("output_tokens"))
    duration = as_float(path, f"{where}.duration_s", values.get("duration_s"))
    reported_rate = as_float(path, f"{where}.tok_per_s", values.get("tok_per_s"))
    if tokens is None or (duration is None and reported_rate is None):
        known = ", ".join(sorted(document))
        raise MalformedInput(
            path,
            "a run needs output tokens and a wall time (or tok/s)",
            key=where,
            hint=f"accepted names: tokens {RUN_ALIASES['output_tokens']}, time {RUN_ALIASES['duration_s']}; this run has: {known}",
        )
    if duration is not None and duration <= 0:
        raise MalformedInput(path, f"wall time must be positive, got {duration}", key=f"{where}.duration_s", hint=VALUE_HINT)
    tok_per_s = reported_rate if reported_rate is not None else tokens / duration  # type: ignore[operator]
    if not math.isfinite(tok_per_s):
        raise MalformedInput(
            path, f"wall time {duration!r} is too small: tok/s would be infinite", key=f"{where}.duration_s", hint=VALUE_HINT
        )
    extra = {key: value for key, value in document.items() if key not in used}
    index = as_int(path, f"{where}.index", values.get("run_index"))
    return {
        "session_key": session_key,
        "run_index": index if index is not None else position + 1,
        "is_warmup": forced_warmup or bool(values.get("is_warmup")),
        "prompt_tokens": as_int(path, f"{where}.prompt_tokens", values.get("prompt_tokens")),
        "output_tokens": tokens,
        "duration_s": duration if duration is not None else tokens / tok_per_s,
        "tok_per_s": tok_per_s,
        "max_tokens": max_tokens,
        "hit_max_tokens": None if max_tokens is None else tokens >= max_tokens,
        "started_at": as_timestamp(path, f"{where}.started_at", values.get("started_at")),
        "ended_at": as_timestamp(path, f"{where}.ended_at", values.get("ended_at")),
        "finish_reason": as_text(values.get("finish_reason")),
        "extra": json.dumps(extra, sort_keys=True, default=str) if extra else None,
    }


def as_text(value: Any) -> str | None:
    return None if value is None else str(value)


def as_float(path: Path, key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):  # float(True) is 1.0: a flag where a number belongs is a mistake, not a 1
        raise MalformedInput(path, f"expected a number, got {value!r}", key=key, hint=VALUE_HINT)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise MalformedInput(path, f"expected a number, got {short(value)}", key=key, hint=VALUE_HINT) from None
    if not math.isfinite(number):
        raise MalformedInput(path, f"expected a finite number, got {short(value)}", key=key, hint=VALUE_HINT)
    return number


def as_int(path: Path, key: str, value: Any) -> int | None:
    number = as_float(path, key, value)
    if number is None:
        return None
    if number != int(number) or number < 0:
        raise MalformedInput(path, f"expected a whole non-negative number, got {short(value)}", key=key, hint=VALUE_HINT)
    whole = value if isinstance(value, int) else int(number)
    limit = 2**31 if key.rsplit(".", 1)[-1] in INT32_KEYS else 2**63
    if whole >= limit:
        raise MalformedInput(path, f"{short(value)} is too large (the limit is {limit - 1:,})", key=key, hint=VALUE_HINT)
    return whole


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text)} characters)"


def as_timestamp(path: Path, key: str, value: Any) -> datetime | None:
    """ISO 8601 text or epoch seconds; aware times are converted to UTC and stored naive."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(float(value), tz=UTC).replace(tzinfo=None)
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        raise MalformedInput(
            path, f"expected an ISO 8601 time or epoch seconds, got {short(value)}", key=key, hint=VALUE_HINT
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


FORMAT = Format(
    kind="bench_json",
    description="benchmark JSON (specdash.bench/1 or a list of runs with tokens/time keys)",
    sniff=sniff,
    signs=(
        Sign('"(runs|results|measurements)"\\s*:\\s*\\[|\\A\\s*\\[\\s*\\{', "a list of runs ('runs': […])"),
        Sign('"(output_tokens|completion_tokens|generated_tokens|tokens)"\\s*:', "an output-token count per run ('output_tokens')"),
        Sign('"(duration_s|duration|elapsed_s|latency_s|tok_per_s|tokens_per_second)"\\s*:', "a time or tok/s per run ('duration_s')"),
    ),
    parse=parse,
    example='{"format": "specdash.bench/1", … "runs": [{"index": 1, "prompt_tokens": 30, "output_tokens": 2048, "duration_s": 25.0}, …]}',
    precedence=60,
)

FORMATS = (FORMAT,)
