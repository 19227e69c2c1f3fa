"""llama-server logs: each request's timings and draft acceptance, and the speculative statistics lines.

Where it comes from: ``llama-server`` logs to stderr. When a request ends, ``server_slot::print_timings``
(tools/server) prints its prompt and decode times and, when the slot drafted, its draft acceptance; then
``common_speculative_print_stats`` (common/speculative.cpp) prints one ``statistics <type>:`` line per
speculative implementation of the slot (``draft``, ``draft-eagle3``, ``draft-mtp``, ``mtp``, ``ngram-mod``,
``ngram_simple``, …; several when types are chained, ``--spec-type draft-mtp,ngram-mod``). The wording
changed over time; every shape below is read (docs/llamacpp.md has an example of each):

* the timing block, either one multi-line message (``slot print_timing: id  3 | task 0 |`` then unprefixed
  ``prompt eval time = …``, ``eval time = …``, ``total time = …``, ``draft acceptance rate = R (A accepted /
  G generated)``; 2024 to mid 2026) or one prefixed line each (``… | task 0 | eval time = …``; 2026);
* ``draft acceptance = R (A accepted / G generated), mean acceptance length = L, acceptance rate per
  position = (p1, p2, …)`` (ggml-org/llama.cpp#24536, 2026-06);
* ``statistics <type>: #calls(b,g,a) = …, #gen drafts = …, #acc drafts = …, #gen tokens = …, #acc tokens =
  … [, #mean acc len = …, #acc rate/pos = (…)], dur(b,g,a) = … ms`` and the older ``#calls = N, …, dur = X ms``;
* any of these bare, behind the ``M.SS.mmm.uuu I`` elapsed-time prefix, or behind a ``[PID]`` prefix.

What lands where: each request whose block names an ``eval time`` → one ``bench_runs`` row (a session per
server lifetime): decode tokens, decode time, the printed tok/s. Each ``draft acceptance`` line → one
``acceptance_requests`` row (origin ``llama.cpp slot print_timing``): accepted and generated draft tokens,
their rate, and the mean acceptance length only where llama.cpp printed one (before mid-2026 it prints no
step count, so the length stays empty and a warning says so); its per-position rates → ``acceptance_positions``.
Each ``statistics`` line → one ``decode_stats`` row: its counters are the slot's totals since the slot was
created (not the request's), like vLLM's interval lines they chart acceptance over time. Each speculative
type of a server lifetime gets its own segment with a ``server_configs`` row whose
``speculative_algorithm`` is the type as printed, so types chained in one server show as separate variants.
The in-progress speed reports (``… | task 0 | n_decoded = 1081, tg = 12.93 t/s, tg_3s = 12.57 t/s``) → one
``decode_stats`` row each, ``gen_throughput`` = ``tg_3s`` (the slot's last 3 s) where printed, else ``tg``
(since the request started); they go to the lifetime's type's segment, to a segment of its types together
(``ngram-mod+draft-mtp``) when it chains several, or to a segment without config when it names none.
A server lifetime starts at a ``build: N (hash)`` or ``main: server is listening`` line.
Other lines (request routing, cache, sampling) are counted in ``skipped`` by kind.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.derive.variants import variant_label
from ingest.errors import UnrecognizedFormat
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.llamacpp.common import (
    ENGINE,
    STATISTICS,
    check_engine,
    extra_json,
    number,
    ratio,
    read_statistics,
    split_prefix,
    text_head,
    whole,
)
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "llamacpp_server_log"
REQUEST_ORIGIN = "llama.cpp slot print_timing"
POSITION_ORIGIN = "llama.cpp slot print_timing (per request)"

HEADER = re.compile(r"^slot print_timing: id\s+(?P<slot>-?\d+) \| task (?P<task>-?\d+) \|\s*(?P<rest>.*)$")
TIMING = re.compile(
    r"^(?P<what>prompt eval time|eval time|total time)\s*=\s*(?P<ms>\S+) ms /\s*(?P<tokens>\d+) (?:tokens|runs)"
    r"(?:\s*\(\s*(?P<per_token>\S+) ms per token,\s*(?P<per_second>\S+) tokens per second\))?$"
)
DRAFT = re.compile(
    r"^draft acceptance(?: rate)? = (?P<rate>\S+) \(\s*(?P<accepted>\d+) accepted /\s*(?P<generated>\d+) generated\)"
    r"(?:, mean acceptance length =\s*(?P<length>\S+?))?"
    r"(?:, acceptance rate per position = \((?P<positions>[^)]*)\))?$"
)
GRAPHS = re.compile(r"^graphs reused =\s*(?P<count>\d+)$")
PROGRESS = re.compile(r"^n_(?:decoded|gen) =\s*(?P<tokens>\d+), tg =\s*(?P<tg>\S+) t/s(?:, tg_3s =\s*(?P<tg_3s>\S+) t/s)?")
LIFETIME_START = re.compile(r"^(?:build: \d+ \(|main: (?:HTTP )?server is listening)")
# The summary of llama-speculative(-simple) also prints statistics lines: that file is the other format's.
SPECULATIVE_SUMMARY = re.compile(r"^n_drafted\s+=\s*\d+", re.MULTILINE)
SNIFF_LINES = 2000

EXPECTED_SHAPES = (
    "'slot print_timing: id  0 | task 0 | …', 'draft acceptance rate = 0.69953 (  149 accepted /   213 generated)' "
    "or 'statistics draft-mtp: #calls(b,g,a) = …, #gen drafts = …, #acc tokens = …'"
)


def sniff(head: bytes) -> bool:
    text = text_head(head)
    if SPECULATIVE_SUMMARY.search(text):
        return False
    for line in text.splitlines()[:SNIFF_LINES]:
        message, _ = split_prefix(line)
        if HEADER.match(message) or DRAFT.match(message) or STATISTICS.match(message):
            return True
    return False


@dataclass
class _Request:
    """One request's timing block, filled as its lines come."""

    lifetime: int
    slot: int | None
    task: int | None
    line_no: int
    said: dict[str, Any]
    timings: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    draft: dict[str, Any] | None = None
    draft_line: int | None = None
    positions: list[float] = field(default_factory=list)
    graphs_reused: int | None = None


@dataclass
class _Progress:
    """An in-progress speed report of one slot: ``n_decoded = 187, tg = 6.71 t/s[, tg_3s = 22.04 t/s]``."""

    lifetime: int
    line_no: int
    said: dict[str, Any]
    slot: int
    task: int
    tokens: int | None
    tg: float | None
    tg_3s: float | None


@dataclass
class _Statistics:
    lifetime: int
    method: str
    line_no: int
    said: dict[str, Any]
    values: dict[str, Any]


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lifetime = 0
        self.lifetime_has_rows = False
        self.requests: list[_Request] = []
        self.statistics: list[_Statistics] = []
        self.progress: list[_Progress] = []
        self.current: _Request | None = None  # the block unprefixed timing lines belong to
        self.skipped: Counter[str] = Counter()
        self.warnings: list[str] = []
        self.lines_read = 0

    def read(self) -> None:
        with text_lines(self.path) as lines:
            for line_no, line in enumerate(lines, start=1):
                self.lines_read = line_no
                message, said = split_prefix(line)
                try:
                    self.read_line(line_no, message, said)
                except ValueError as error:
                    self.skipped["malformed llama.cpp statistics line"] += 1
                    self.warnings.append(f"{self.path}:{line_no}: {error}")

    def read_line(self, line_no: int, message: str, said: dict[str, Any]) -> None:
        if not message:
            self.skipped["blank"] += 1
            return
        if LIFETIME_START.match(message):
            if self.lifetime_has_rows:
                self.lifetime += 1
                self.lifetime_has_rows = False
            self.current = None
            self.skipped["server start"] += 1
            return
        header = HEADER.match(message)
        progress = PROGRESS.match(header["rest"]) if header else None
        if header and progress:
            self.lifetime_has_rows = True
            self.progress.append(_Progress(
                self.lifetime, line_no, said, int(header["slot"]), int(header["task"]), whole(progress["tokens"]),
                number(progress["tg"]), number(progress["tg_3s"])))
            return
        if header:
            self.open_request(line_no, int(header["slot"]), int(header["task"]), said)
            message = header["rest"]
            if not message:
                return
        statistics = STATISTICS.match(message)
        if statistics:
            self.lifetime_has_rows = True
            values = read_statistics(statistics["payload"])
            self.statistics.append(_Statistics(self.lifetime, statistics["type"], line_no, said, values))
            return
        if self.read_request_line(line_no, message, said):
            return
        self.skipped["other llama.cpp line"] += 1

    def read_request_line(self, line_no: int, message: str, said: dict[str, Any]) -> bool:
        timing, draft, graphs = TIMING.match(message), DRAFT.match(message), GRAPHS.match(message)
        if not (timing or draft or graphs):
            return False
        request = self.current or self.open_request(line_no, None, None, said)
        self.lifetime_has_rows = True
        if timing:
            request.timings[timing["what"]] = {
                "ms": number(timing["ms"]), "tokens": whole(timing["tokens"]),
                "per_token_ms": number(timing["per_token"]), "per_second": number(timing["per_second"]),
            }
        elif draft:
            request.draft = draft.groupdict()
            request.draft_line = line_no
            request.positions = [float(p) for p in re.findall(r"[-+]?\d*\.?\d+", draft["positions"] or "")]
        elif graphs:
            request.graphs_reused = int(graphs["count"])
        return True

    def open_request(self, line_no: int, slot: int | None, task: int | None, said: dict[str, Any]) -> _Request:
        current = self.current
        if current is not None and (current.slot, current.task) == (slot, task) and current.lifetime == self.lifetime:
            return current  # one more line of the same block (2026 builds prefix each line)
        self.current = _Request(self.lifetime, slot, task, line_no, said)
        self.requests.append(self.current)
        return self.current


# --- from what was read to rows ---------------------------------------------------------------------------------


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    check_engine(path, options)
    reader = _Reader(path)
    reader.read()
    if not reader.requests and not reader.statistics and not reader.progress:
        raise UnrecognizedFormat(
            path, f"no llama-server request timings, draft acceptance or statistics line in {reader.lines_read} lines",
            hint=f"expected lines like {EXPECTED_SHAPES}",
        )
    segments = _segments(reader.statistics, reader.progress)
    decode_rows = [_decode_row(segments, s) for s in reader.statistics] + [_progress_row(segments, p) for p in reader.progress]
    tables = {
        "server_configs": table_from_rows("server_configs", _config_rows(segments, reader.statistics, reader.progress)),
        "decode_stats": table_from_rows("decode_stats", sorted(decode_rows, key=lambda row: row["line_no"])),
        **_request_tables(path, reader, segments),
    }
    return ParsedSource(
        kind=KIND, engine=ENGINE, tables=tables, skipped=+reader.skipped, warnings=reader.warnings,
        lines_read=reader.lines_read,
    )


def _segments(statistics: list[_Statistics], progress: list[_Progress]) -> dict[tuple[int, str], int]:
    """One segment per (server lifetime, speculative type), numbered in the order they first appear; a lifetime's
    speed reports go to its type's segment, to a segment of its types together when it chains several, or to a
    segment of its own (no config row: the log names no type) when it shows none."""
    segments: dict[tuple[int, str], int] = {}
    for line in statistics:
        segments.setdefault((line.lifetime, line.method), len(segments))
    for report in progress:
        segments.setdefault(_progress_key(segments, report.lifetime), len(segments))
    return segments


def _progress_key(segments: dict[tuple[int, str], int], lifetime: int) -> tuple[int, str]:
    return lifetime, "+".join(_methods(segments, lifetime))


def _methods(segments: dict[tuple[int, str], int], lifetime: int) -> list[str]:
    """The speculative types the statistics lines of ``lifetime`` name, in order."""
    return [method for (life, method) in segments if life == lifetime and method and "+" not in method]


def _config_rows(segments: dict[tuple[int, str], int], statistics: list[_Statistics],
                 progress: list[_Progress]) -> list[dict[str, Any]]:
    first_line: dict[tuple[int, str], int] = {}
    for line in statistics:
        first_line.setdefault((line.lifetime, line.method), line.line_no)
    for report in progress:
        first_line.setdefault(_progress_key(segments, report.lifetime), report.line_no)
    rows = []
    for (lifetime, method), segment in segments.items():
        if not method:
            continue  # speed reports of a lifetime whose log names no speculative type: no config to state
        args = {"speculative_type": method, "server_lifetime": lifetime,
                "types_in_lifetime": _methods(segments, lifetime),
                "note": "from the statistics lines: llama-server logs no configuration dump"}
        if "+" in method:
            args["note"] = "the speed reports of a server running these types together (statistics lines name each)"
        rows.append({
            "segment": segment, "line_no": first_line[(lifetime, method)], "ts": None,
            "variant": variant_label({"speculative_algorithm": method}), "speculative_algorithm": method,
            "args": extra_json(args),
        })
    return rows


def _decode_row(segments: dict[tuple[int, str], int], line: _Statistics) -> dict[str, Any]:
    values = line.values
    mean_length = values.get("mean_acc_len")
    tokens_per_step = float(mean_length) if isinstance(mean_length, (int, float)) else None
    accepted, generated = values.get("acc_tokens"), values.get("gen_tokens")
    extra = {"method": line.method, "source": "llama.cpp statistics line",
             "scope": "the slot's totals since it was created", **line.said, **values}
    return {
        "segment": segments[(line.lifetime, line.method)], "line_no": line.line_no, "ts": None,
        "accept_len_raw": tokens_per_step,
        "tokens_per_step": tokens_per_step,
        "accepted_drafts_per_step": None if tokens_per_step is None else tokens_per_step - 1.0,
        "accept_rate_drafts": ratio(accepted, generated) if isinstance(accepted, int) and isinstance(generated, int) else None,
        "extra": extra_json(extra),
    }


def _progress_row(segments: dict[tuple[int, str], int], report: _Progress) -> dict[str, Any]:
    """A speed report as a decode_stats row: ``tg_3s`` (the slot's last 3 s) as its gen throughput where printed,
    else ``tg`` (since the request started)."""
    extra = {"source": "llama.cpp progress line", "scope": "one slot (one request)", "slot": report.slot,
             "task": report.task, "n_decoded": report.tokens, "tg": report.tg, "tg_3s": report.tg_3s,
             "gen_throughput_from": "tg_3s" if report.tg_3s is not None else "tg", **report.said}
    return {
        "segment": segments[_progress_key(segments, report.lifetime)], "line_no": report.line_no, "ts": None,
        "gen_throughput": report.tg_3s if report.tg_3s is not None else report.tg,
        "extra": extra_json({k: v for k, v in extra.items() if v is not None}),
    }


def _request_tables(path: Path, reader: _Reader, segments: dict[tuple[int, str], int]) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    sessions: dict[int, dict[str, Any]] = {}
    accepts: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    no_length: list[int] = []
    runs_in_session: Counter[int] = Counter()
    for request in reader.requests:
        methods = _methods(segments, request.lifetime)
        if "eval time" in request.timings:
            session_key = sessions.setdefault(request.lifetime, _session_row(len(sessions), request.lifetime, methods))["session_key"]
            runs_in_session[session_key] += 1
            runs.append(_run_row(session_key, runs_in_session[session_key], request))
        if request.draft is None or request.draft_line is None:
            continue
        row = _acceptance_row(len(accepts), request, methods)
        accepts.append(row)
        if row["accept_length"] is None:
            no_length.append(request.draft_line)
        segment = segments.get((request.lifetime, methods[0] if methods else ""), 0)
        positions += [
            {"segment": segment, "line_no": request.draft_line, "ts": None,
             "position": index, "rate": rate, "drafts": None, "origin": POSITION_ORIGIN,
             "extra": extra_json({"request_id": row["request_id"], "methods": methods})}
            for index, rate in enumerate(request.positions, start=1)
        ]
    if no_length:
        reader.warnings.append(
            f"{path}:{no_length[0]}: {len(no_length)} request(s) print accepted and generated draft tokens but no "
            "mean acceptance length (llama.cpp before mid-2026): their acceptance rate is stored and their accept "
            "length left empty, since the log gives no verify-step count to compute it from"
        )
    tables: dict[str, Any] = {}
    if runs:
        tables["sessions"] = table_from_rows("sessions", list(sessions.values()))
        tables["bench_runs"] = table_from_rows("bench_runs", runs)
    if accepts:
        tables["acceptance_requests"] = table_from_rows("acceptance_requests", accepts)
    if positions:
        tables["acceptance_positions"] = table_from_rows("acceptance_positions", positions)
    return tables


def _session_row(session_key: int, lifetime: int, methods: list[str]) -> dict[str, Any]:
    extra = {"source": "llama-server request timings", "server_lifetime": lifetime, "methods": methods}
    return {"session_key": session_key, "variant": "+".join(methods) or None, "engine": ENGINE,
            "extra": extra_json(extra)}


def _run_row(session_key: int, run_index: int, request: _Request) -> dict[str, Any]:
    decode, prompt, total = (request.timings.get(k, {}) for k in ("eval time", "prompt eval time", "total time"))
    ms, tokens = decode.get("ms"), decode.get("tokens")
    duration = round(ms / 1000.0, 9) if ms is not None else None  # ms printed to 0.01: no float noise
    per_second = decode.get("per_second")
    if per_second is None and tokens is not None and duration:
        per_second = tokens / duration
    extra = {
        "slot": request.slot, "task": request.task, "line_no": request.line_no, **request.said,
        "duration_is": "decode time (llama.cpp 'eval time'); prompt processing is in prompt_eval_ms",
        "prompt_tokens_are": "prompt tokens processed (cached prompt tokens are not counted)",
        "prompt_eval_ms": prompt.get("ms"), "prompt_per_second": prompt.get("per_second"),
        "total_ms": total.get("ms"), "total_tokens": total.get("tokens"), "graphs_reused": request.graphs_reused,
    }
    return {
        "session_key": session_key, "run_index": run_index, "is_warmup": False,
        "prompt_tokens": prompt.get("tokens"), "output_tokens": tokens, "duration_s": duration,
        "tok_per_s": per_second, "extra": extra_json({k: v for k, v in extra.items() if v is not None}),
    }


def _acceptance_row(index: int, request: _Request, methods: list[str]) -> dict[str, Any]:
    draft = request.draft or {}
    accepted, generated = whole(draft.get("accepted")), whole(draft.get("generated"))
    length = number(draft.get("length"))
    decode, prompt = request.timings.get("eval time", {}), request.timings.get("prompt eval time", {})
    # the variant its lifetime's session gets (``_session_row``): the row's own label when the file is not labelled
    extra: dict[str, Any] = {"methods": methods, "variant": "+".join(methods) or None,
                             "rate_printed": number(draft.get("rate")), **request.said}
    if length is None:
        extra["accept_length_note"] = "not printed by this llama.cpp version; no step count to compute it from"
    request_id = f"slot {request.slot} task {request.task}" if request.slot is not None else None
    return {
        "record_index": index, "request_index": 0, "line_no": request.draft_line, "request_id": request_id,
        "engine": ENGINE, "origin": REQUEST_ORIGIN, "accept_length": length,
        "accepted_drafts": accepted, "draft_tokens": generated, "accept_rate": ratio(accepted, generated),
        # llama.cpp sizes the per-position list to the longest draft: its length is the draft length
        "num_spec_tokens": len(request.positions) or None,
        "input_tokens": prompt.get("tokens"), "output_tokens": decode.get("tokens"),
        "extra": extra_json(extra),
    }


FORMAT = Format(
    kind=KIND,
    description="llama.cpp llama-server log (request timings, draft acceptance, speculative statistics lines)",
    sniff=sniff,
    signs=(
        Sign(r"slot print_timing: id\s+\d+ \| task", "'slot print_timing: id N | task N |' lines"),
        Sign(r"draft acceptance( rate)? = [\d.]+ \(\s*\d+ accepted", "a 'draft acceptance rate = R (A accepted / G generated)' line"),
        Sign(r"statistics\s+\S+: #calls", "a 'statistics <type>: #calls …' line"),
    ),
    parse=parse,
    example="statistics draft-mtp: #calls(b,g,a) = 11 796 796, #gen drafts = 796, #acc drafts = 694, …",
    precedence=125,
)

FORMATS = (FORMAT,)
