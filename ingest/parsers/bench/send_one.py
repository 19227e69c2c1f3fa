"""SGLang's ``python/sglang/test/send_one.py`` output (Mar 2025 layout): ``acc_length=X`` / ``speed=Y token/s``.

send_one.py sends one request and prints, per call::

    acc_length=2.20
    speed=125.59 token/s

A file pasted from several calls (baseline, then a speculative server) becomes one
``bench_serving`` row per call (``tool`` "sglang send_one.py"): ``acc_length`` ->
``accept_length`` (kept raw: send_one prints 1.00 without speculation, and that
is what the server reported, so it is not nulled), ``speed`` ->
``output_throughput`` (tokens/s of that one request). A call starts where a key
repeats. Other ``key=value`` pairs on such lines go to ``extra``. Later send_one
versions print a table instead; that layout is not read here. Other lines are
counted in ``skipped``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import extra_json, map_record
from ingest.reader import text_lines
from ingest.tables import BENCH_SERVING, table_from_rows

KIND = "sglang_send_one_text"
TOOL = "sglang send_one.py"

PAIR = re.compile(r"^\s*(?P<key>[a-z_]+)\s*=\s*(?P<value>[-+0-9.eE]+|inf|nan)\s*(?P<unit>[A-Za-z/%]+)?\s*$")
SEND_ONE_ALIASES: dict[str, tuple[str, ...]] = {
    "accept_length": ("acc_length",),
    "output_throughput": ("speed",),
}
SNIFF = (re.compile(r"(?m)^\s*acc_length=\d"), re.compile(r"(?m)^\s*speed=[\d.]+\s*token/s"))
NOISE = "not a send_one result line"


@dataclass
class Call:
    line_no: int
    values: dict[str, str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    return all(pattern.search(text) for pattern in SNIFF)


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="sglang")
    with text_lines(path) as lines:
        calls = read_calls(lines, parsed)
    if not calls:
        raise MalformedInput(path, "no send_one.py result found", hint="expected lines like 'acc_length=2.20' and 'speed=125.59 token/s'")
    rows = [call_row(path, parsed, index, call) for index, call in enumerate(calls)]
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", rows)
    return parsed


def read_calls(lines: Iterable[str], parsed: ParsedSource) -> list[Call]:
    calls: list[Call] = []
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        pair = PAIR.match(raw)
        if pair is None:
            parsed.skipped[NOISE] += 1
            continue
        if not calls or pair["key"] in calls[-1].values:
            calls.append(Call(line_no))
        calls[-1].values[pair["key"]] = pair["value"]
        if pair["unit"]:
            calls[-1].units[pair["key"]] = pair["unit"]
    parsed.lines_read = line_no
    return calls


def call_row(path: Path, parsed: ParsedSource, record_index: int, call: Call) -> dict[str, Any]:
    mapped = map_record(call.values, SEND_ONE_ALIASES, BENCH_SERVING)
    for key, problem in mapped.problems:
        parsed.warnings.append(f'{path}:{call.line_no}: key "{key}": {problem}')
    extra: dict[str, Any] = dict(mapped.extra)
    if call.units:
        extra["units"] = call.units
    return {**mapped.row, "record_index": record_index, "line_no": call.line_no, "tool": TOOL, "extra": extra_json(extra)}


FORMAT = Format(
    kind=KIND,
    description="SGLang send_one.py output (acc_length=X / speed=Y token/s)",
    sniff=sniff,
    signs=(
        Sign('^\\s*acc_length=\\d', "an 'acc_length=' line"),
        Sign('^\\s*speed=[\\d.]+\\s*token/s', "a 'speed=… token/s' line"),
    ),
    parse=parse,
    example="acc_length=1.58",
    precedence=100,
)

FORMATS = (FORMAT,)
