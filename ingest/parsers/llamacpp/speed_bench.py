"""The tables of llama.cpp's SPEED-Bench client: per-category speed of one run, or baseline vs speculative.

Where it comes from: tools/server/bench/speed-bench/ (ggml-org/llama.cpp#23869, 2026-05) benchmarks a running
llama-server on nvidia/SPEED-Bench. ``speed_bench.py`` prints ``Summary (elapsed=…s)`` and a table with one row
per category plus ``overall``::

    category  samples  avg_prompt_t/s  avg_pred_t/s  avg_latency  accept_rate
    --------  -------  --------------  ------------  -----------  -----------
    coding    8        1523.41         118.62        7.214s       0.7125

and ``speed_bench_compare.py --baseline A.json --speculative B.json`` prints ``Comparison: baseline=…
speculative=…`` and ``category  base_avg_pred_t/s  spec_avg_pred_t/s  decode_speedup  base_avg_latency
spec_avg_latency  latency_speedup  accept_rate``. Cells are left-justified and joined by two spaces; ``n/a``
marks a missing figure (``accept_rate`` when nothing was drafted). The speed is the mean over the category's
requests of llama.cpp's ``timings.predicted_per_second`` (decode only), the latency the client's wall time.

What lands where: ``sweep_points``, one per (table row, side), ``dataset`` = the category (``overall`` is the
script's aggregate row, kept with ``extra.aggregate``), ``sweep`` = ``SPEED-Bench`` plus the bench name when
the file names it. A compare table gives a baseline point (``is_baseline``) and a speculative point per
category; a summary table gives one point per category, a baseline when no category drafted anything
(every ``accept_rate`` is ``n/a``). The table has no batch size, concurrency or accept length (its
``accept_rate`` is accepted ÷ drafted tokens): those stay empty, and the rest goes to ``extra``.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput, UnrecognizedFormat
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.llamacpp.common import (
    ENGINE,
    check_engine,
    extra_json,
    number,
    text_head,
)
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "llamacpp_speed_bench_text"
SUMMARY_COLUMNS = ("category", "samples", "avg_prompt_t/s", "avg_pred_t/s", "avg_latency", "accept_rate")
COMPARE_COLUMNS = ("category", "base_avg_pred_t/s", "spec_avg_pred_t/s", "decode_speedup", "base_avg_latency",
                   "spec_avg_latency", "latency_speedup", "accept_rate")
THROUGHPUT_KIND = "mean per-request decode tok/s (llama.cpp timings.predicted_per_second)"
CELLS = re.compile(r"\s{2,}")
DASHES = re.compile(r"^-+(?:\s{2,}-+)*$")
BENCH = re.compile(r"\bbench=(?P<bench>\S+)")
AGGREGATE = "overall"


def cells_of(line: str) -> tuple[str, ...]:
    return tuple(CELLS.split(line.strip()))


def sniff(head: bytes) -> bool:
    return any(cells_of(line) in (SUMMARY_COLUMNS, COMPARE_COLUMNS) for line in text_head(head).splitlines())


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    check_engine(path, options)
    points: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    columns: tuple[str, ...] | None = None
    table: list[tuple[int, dict[str, str]]] = []
    tables: list[tuple[tuple[str, ...], list[tuple[int, dict[str, str]]]]] = []
    bench: str | None = None
    lines_read = 0
    with text_lines(path) as lines:
        for line_no, line in enumerate(lines, start=1):
            lines_read = line_no
            cells = cells_of(line)
            if cells in (SUMMARY_COLUMNS, COMPARE_COLUMNS):
                columns, table = cells, []
                tables.append((columns, table))
            elif columns is not None and DASHES.match(line.strip()):
                skipped["table rule"] += 1
            elif columns is not None and len(cells) == len(columns) and line.strip():
                table.append((line_no, dict(zip(columns, cells, strict=True))))
            else:
                columns = None  # a table ends at the first line that is not one of its rows
                found = BENCH.search(line)
                bench = found["bench"] if found else bench
                skipped["blank" if not line.strip() else "other line"] += 1
    sweep = f"SPEED-Bench {bench}" if bench else "SPEED-Bench"
    for columns_of_table, rows in tables:
        reader = _compare_points if columns_of_table == COMPARE_COLUMNS else _summary_points
        points += reader(path, sweep, rows)
    if not points:
        raise UnrecognizedFormat(path, "a SPEED-Bench table header without rows",
                                 hint="pass the whole output of speed_bench.py or speed_bench_compare.py")
    for index, point in enumerate(points):
        point["point_index"] = index
    return ParsedSource(kind=KIND, engine=ENGINE, tables={"sweep_points": table_from_rows("sweep_points", points)},
                        skipped=+skipped, lines_read=lines_read)


def _figure(path: Path, line_no: int, row: dict[str, str], column: str, suffix: str = "") -> float | None:
    """A cell's number (``7.214s``, ``1.90x``); ``n/a`` is None; anything else is a broken table."""
    text = row[column]
    if text == "n/a":
        return None
    value = number(text.removesuffix(suffix)) if text.endswith(suffix) else None
    if value is None or value < 0:
        raise MalformedInput(path, f"{column} {text!r} is not a number", line=line_no, key=column,
                             hint="speed_bench prints numbers or n/a in this column; fix the cell or drop the row")
    return value


def _point(sweep: str, line_no: int, category: str, variant: str, baseline: bool, throughput: float | None,
           extra: dict[str, Any]) -> dict[str, Any]:
    if category == AGGREGATE:
        extra = {**extra, "aggregate": "every category of the run (the script's overall row)"}
    return {"session_key": 0, "line_no": line_no, "sweep": sweep, "dataset": category, "variant": variant,
            "is_baseline": baseline, "throughput": throughput, "throughput_kind": THROUGHPUT_KIND,
            "simulated": False, "extra": extra_json({"engine": ENGINE, **{k: v for k, v in extra.items() if v is not None}})}


def _summary_points(path: Path, sweep: str, rows: list[tuple[int, dict[str, str]]]) -> list[dict[str, Any]]:
    rates = {line_no: _figure(path, line_no, row, "accept_rate") for line_no, row in rows}
    baseline = all(rate is None for rate in rates.values())
    variant = "baseline" if baseline else "speculative"
    points = []
    for line_no, row in rows:
        samples = number(row["samples"])
        extra = {"samples": None if samples is None else int(samples),
                 "avg_prompt_t/s": _figure(path, line_no, row, "avg_prompt_t/s"),
                 "avg_latency_s": _figure(path, line_no, row, "avg_latency", "s"),
                 "accept_rate": rates[line_no], "table": "speed_bench.py summary"}
        points.append(_point(sweep, line_no, row["category"], variant, baseline,
                             _figure(path, line_no, row, "avg_pred_t/s"), extra))
    return points


def _compare_points(path: Path, sweep: str, rows: list[tuple[int, dict[str, str]]]) -> list[dict[str, Any]]:
    points = []
    for line_no, row in rows:
        shared = {"decode_speedup": _figure(path, line_no, row, "decode_speedup", "x"),
                  "latency_speedup": _figure(path, line_no, row, "latency_speedup", "x"),
                  "table": "speed_bench_compare.py"}
        base = {**shared, "avg_latency_s": _figure(path, line_no, row, "base_avg_latency", "s")}
        spec = {**shared, "avg_latency_s": _figure(path, line_no, row, "spec_avg_latency", "s"),
                "accept_rate": _figure(path, line_no, row, "accept_rate")}
        points.append(_point(sweep, line_no, row["category"], "baseline", True,
                             _figure(path, line_no, row, "base_avg_pred_t/s"), base))
        points.append(_point(sweep, line_no, row["category"], "speculative", False,
                             _figure(path, line_no, row, "spec_avg_pred_t/s"), spec))
    return points


FORMAT = Format(
    kind=KIND,
    description="llama.cpp SPEED-Bench tables (speed_bench.py summary, speed_bench_compare.py baseline vs speculative)",
    sniff=sniff,
    signs=(
        Sign(r"^category\s{2,}", "a table header starting 'category'"),
        Sign(r"avg_pred_t/s", "an 'avg_pred_t/s' column"),
        Sign(r"accept_rate\s*$", "an 'accept_rate' column"),
    ),
    parse=parse,
    example="category  base_avg_pred_t/s  spec_avg_pred_t/s  decode_speedup  base_avg_latency  spec_avg_latency  latency_speedup  accept_rate",
    precedence=128,
)

FORMATS = (FORMAT,)
