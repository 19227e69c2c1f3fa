"""The summary ``llama-speculative`` and ``llama-speculative-simple`` print when they finish.

Where it comes from: examples/speculative/speculative.cpp and examples/speculative-simple/speculative-simple.cpp
end with (docs/llamacpp.md shows a real one)::

    encoded   14 tokens in    0.054 seconds, speed:  258.250 t/s
    decoded  673 tokens in   12.132 seconds, speed:   55.473 t/s

    n_draft   = 5
    n_predict = 673
    n_drafted = 730
    n_accept  = 526
    accept    = 72.055%

then ``draft:`` with the draft model's perf block (2026 builds: ``statistics <type>: …`` lines) and ``target:``.
The first version (2023-08) printed ``generated N tokens in S seconds, speed: X t/s`` instead of
``encoded``/``decoded``. People paste several runs into one file, sometimes with the ``decoded`` line after
the counts and a ``## heading`` per run: each ``n_draft`` starts a run; an ``encoded``/``decoded`` line
belongs to the run before it when that run has none yet, else to the next one.

What lands where: one session per file; per run one ``bench_runs`` row (decoded tokens, seconds, t/s as
printed; the prompt's ``encoded`` tokens) and one ``acceptance_requests`` row (origin ``llama-speculative
summary``: ``n_accept`` accepted of ``n_drafted`` drafted, their rate, ``n_draft`` as the draft length). The
tool prints no verify-step count, so the accept length stays empty (a warning says so). ``statistics`` lines
and the heading go to the run's ``extra`` (the speculative type under ``method``). Perf blocks and the
generated text are counted as other lines.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput, UnrecognizedFormat
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

KIND = "llamacpp_speculative_text"
ORIGIN = "llama-speculative summary"

COUNT = re.compile(r"^(?P<key>n_draft|n_predict|n_drafted|n_accept)\s*=\s*(?P<value>\S+)$")
ACCEPT = re.compile(r"^accept\s*=\s*(?P<percent>\S+?)%$")
SPEED = re.compile(
    r"^(?P<what>encoded|decoded|generated)\s+(?P<tokens>\d+) tokens in\s+(?P<seconds>\S+) seconds, speed:\s*(?P<speed>\S+) t/s$"
)
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+)$")
SNIFF_DRAFTED = re.compile(r"^(?:\S+\s+[DIWEN]\s+)?n_drafted\s*=\s*\d+\s*$", re.MULTILINE)
SNIFF_ACCEPT = re.compile(r"^(?:\S+\s+[DIWEN]\s+)?n_accept\s*=\s*\d+\s*$", re.MULTILINE)


def sniff(head: bytes) -> bool:
    text = text_head(head)
    return bool(SNIFF_DRAFTED.search(text) and SNIFF_ACCEPT.search(text))


@dataclass
class _Run:
    line_no: int
    counts: dict[str, int | None] = field(default_factory=dict)
    accept_percent: float | None = None
    speeds: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    statistics: list[dict[str, Any]] = field(default_factory=list)
    heading: str | None = None
    said: dict[str, Any] = field(default_factory=dict)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.runs: list[_Run] = []
        self.pending_speeds: dict[str, dict[str, float | int | None]] = {}
        self.pending_heading: str | None = None
        self.skipped: Counter[str] = Counter()
        self.warnings: list[str] = []
        self.lines_read = 0

    def read(self) -> None:
        with text_lines(self.path) as lines:
            for line_no, line in enumerate(lines, start=1):
                self.lines_read = line_no
                message, said = split_prefix(line)
                self.read_line(line_no, message, said)

    def read_line(self, line_no: int, message: str, said: dict[str, Any]) -> None:
        count, accept, speed = COUNT.match(message), ACCEPT.match(message), SPEED.match(message)
        statistics, heading = STATISTICS.match(message), HEADING.match(message)
        if count:
            if count["key"] == "n_draft" or not self.runs:
                self.start_run(line_no, said)
            self.runs[-1].counts[count["key"]] = self.whole_count(line_no, count["key"], count["value"])
        elif accept:
            if self.runs:
                self.runs[-1].accept_percent = number(accept["percent"])
        elif speed:
            self.read_speed(speed)
        elif statistics and self.runs:
            try:
                values = read_statistics(statistics["payload"])
            except ValueError as error:
                self.skipped["malformed llama.cpp statistics line"] += 1
                self.warnings.append(f"{self.path}:{line_no}: {error}")
                return
            self.runs[-1].statistics.append({"method": statistics["type"], "line_no": line_no, **values})
        elif heading:
            self.pending_heading = heading["title"].strip()
        else:
            self.skipped["blank" if not message else "other line (generated text, perf block)"] += 1

    def start_run(self, line_no: int, said: dict[str, Any]) -> None:
        run = _Run(line_no, heading=self.pending_heading, said=said)
        run.speeds.update(self.pending_speeds)
        self.pending_speeds, self.pending_heading = {}, None
        self.runs.append(run)

    def read_speed(self, speed: re.Match[str]) -> None:
        figures: dict[str, float | int | None] = {
            "tokens": whole(speed["tokens"]), "seconds": number(speed["seconds"]), "speed": number(speed["speed"]),
        }
        last = self.runs[-1] if self.runs else None
        if last is not None and _decoded(last) is None and not self.pending_speeds:
            last.speeds[speed["what"]] = figures  # pasted after its counts
        else:
            self.pending_speeds[speed["what"]] = figures

    def whole_count(self, line_no: int, key: str, text: str) -> int:
        value = whole(text)
        if value is None or value < 0:
            raise MalformedInput(self.path, f"{key} = {text!r} is not a token count", line=line_no, key=key,
                                 hint="the llama-speculative summary prints whole numbers; fix or remove the line")
        return value


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    check_engine(path, options)
    reader = _Reader(path)
    reader.read()
    runs = [run for run in reader.runs if run.counts.get("n_drafted") is not None or run.counts.get("n_accept") is not None]
    if not runs:
        raise UnrecognizedFormat(
            path, f"no llama-speculative summary (n_drafted = …, n_accept = …) in {reader.lines_read} lines",
            hint="expected the summary llama-speculative prints at its end: 'n_draft   = 5', 'n_drafted = 730', 'n_accept  = 526', …",
        )
    reader.warnings.append(
        f"{path}:{runs[0].line_no}: llama-speculative prints accepted and drafted tokens but no verify-step count: "
        f"the acceptance rate of its {len(runs)} run(s) is stored, the accept length left empty"
    )
    session = {"session_key": 0, "engine": ENGINE, "extra": extra_json({"tool": "llama-speculative"})}
    return ParsedSource(
        kind=KIND, engine=ENGINE,
        tables={
            "sessions": table_from_rows("sessions", [session]),
            "bench_runs": table_from_rows("bench_runs", [_run_row(i, run) for i, run in enumerate(runs)]),
            "acceptance_requests": table_from_rows("acceptance_requests", [_acceptance_row(i, run) for i, run in enumerate(runs)]),
        },
        skipped=+reader.skipped, warnings=reader.warnings, lines_read=reader.lines_read,
    )


def _decoded(run: _Run) -> dict[str, float | int | None] | None:
    """The run's decode figures: ``decoded …`` (``generated …`` in the 2023 version)."""
    return run.speeds.get("decoded") or run.speeds.get("generated")


def _shared_extra(run: _Run) -> dict[str, Any]:
    methods = [s["method"] for s in run.statistics]
    extra: dict[str, Any] = {"line_no": run.line_no, **run.said}
    if run.heading:
        extra["heading"] = run.heading
    if methods:
        extra["method"] = "+".join(methods)
        extra["statistics"] = run.statistics
    return extra


def _run_row(index: int, run: _Run) -> dict[str, Any]:
    decoded, encoded = _decoded(run) or {}, run.speeds.get("encoded", {})
    tokens = decoded.get("tokens", run.counts.get("n_predict"))
    extra = {**_shared_extra(run), "n_predict": run.counts.get("n_predict"),
             "encoded_seconds": encoded.get("seconds"), "encoded_speed": encoded.get("speed"),
             "decode_line": "generated" if "generated" in run.speeds else None}
    return {
        "session_key": 0, "run_index": index + 1, "is_warmup": False,
        "prompt_tokens": encoded.get("tokens"), "output_tokens": tokens,
        "duration_s": decoded.get("seconds"), "tok_per_s": decoded.get("speed"),
        "extra": extra_json({k: v for k, v in extra.items() if v is not None}),
    }


def _acceptance_row(index: int, run: _Run) -> dict[str, Any]:
    accepted, drafted = run.counts.get("n_accept"), run.counts.get("n_drafted")
    extra = {**_shared_extra(run), "accept_percent_printed": run.accept_percent,
             "accept_length_note": "not printed: llama-speculative gives no verify-step count"}
    return {
        "record_index": index, "request_index": 0, "line_no": run.line_no, "engine": ENGINE, "origin": ORIGIN,
        "accepted_drafts": accepted, "draft_tokens": drafted, "accept_rate": ratio(accepted, drafted),
        "num_spec_tokens": run.counts.get("n_draft"), "output_tokens": run.counts.get("n_predict"),
        "input_tokens": run.speeds.get("encoded", {}).get("tokens"),
        "extra": extra_json({k: v for k, v in extra.items() if v is not None}),
    }


FORMAT = Format(
    kind=KIND,
    description="llama.cpp llama-speculative / llama-speculative-simple summary (n_draft, n_drafted, n_accept, decoded t/s)",
    sniff=sniff,
    signs=(
        Sign(r"^\s*n_drafted\s*=\s*\d+", "an 'n_drafted = N' line"),
        Sign(r"^\s*n_accept\s*=\s*\d+", "an 'n_accept = N' line"),
        Sign(r"^\s*(decoded|generated)\s+\d+ tokens in", "a 'decoded N tokens in S seconds, speed: X t/s' line"),
    ),
    parse=parse,
    example="n_draft   = 5 … n_drafted = 730 … n_accept  = 526 … accept    = 72.055%",
    precedence=126,
)

FORMATS = (FORMAT,)
