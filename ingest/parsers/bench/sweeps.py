"""Sweeps: speculative-decoding results over batch sizes and drafter configs, three writers' shapes.

Speculation pays at batch 1 and stops paying as the batch grows, so teams sweep
(batch size × steps × topk × draft tokens). Each format below becomes ``sweep_points`` rows,
one per (sweep, variant, batch, config) as the file gives it; ``session_key`` numbers the
sweeps of one file (a SpecBundle target × benchmark, a pasted table, a JSONL file).

- **``bench_speculative_jsonl``**: SGLang ``scripts/playground/bench_speculative.py``
  appends ``{"batch_size", "steps", "topk", "num_draft_tokens", "acc_length", "step_time",
  "speed", "completion_tokens"}`` per (batch, config). ``step_time`` is in seconds: the 20th
  percentile of the server's ``step_time_dict[batch]`` (``/get_server_info``, with
  ``SGLANG_RECORD_STEP_TIME=1``); ``speed`` = acc_length ÷ step_time is *modelled* per-request
  decode speed, not wall-clock tok/s (``throughput_kind`` 'modelled from step time').
  ``(steps, topk, num_draft_tokens) = (0, 0, 0)`` is the non-speculative baseline.
- **``specforge_bench_json``**: SpecForge ``benchmarks/bench_eagle3.py`` results
  (``{"model": drafter, <benchmark>: [{batch_size, steps, topk, num_draft_tokens,
  metrics: [{latency, output_throughput, accept_length, ...}], num_samples}]}``) and the
  SpecBundle dashboard's ``data.json`` (``{target: {benchmark: {benchmark_name, results:
  [{batch_size, steps, topk, num_draft_tokens, metrics: [{Name, output_throughput,
  accept_length}]}]}}}``, one metric per drafter plus the baseline "Wihtout EAGLE3" [sic]).
  ``output_throughput`` is measured wall-clock output tok/s over the benchmark's requests.
  The baseline, repeated in every config entry with the same figures, is kept once per batch.
- **``sweep_table_text``**: Markdown pipe (or whitespace-aligned) tables of a sweep as users
  post them (``bs | steps | topk | num_draft | throughput | acc len``); header spellings are
  data (``COLUMN_ALIASES``). A table without config columns under a heading that says
  "base"/"baseline"/"without" is the baseline. Tables the run-table format (``bench_table``)
  reads are not claimed here: each file has one format.

Simulated acceptance (``SGLANG_SIMULATE_ACC_LEN``, vLLM's synthetic rejection sampling) is
flagged (``simulated``, ``simulated_by``) wherever the file names it: a key or value of a
record, or a line of a pasted table's text. Such points measure cost, not a drafter.

Bad lines — a missing batch size, a step_time ≤ 0, a config repeated with different figures —
are reported as ``file:line`` warnings and skipped; the good lines are kept. A file with no
good point is a ``MalformedInput`` naming the first bad line. Unknown keys go to ``extra``.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench import bench_table
from ingest.parsers.bench.bench_fields import as_float, as_int, extra_json
from ingest.parsers.bench.json_records import read_json_records, sniff_keys
from ingest.reader import read_all, text_lines
from ingest.tables import table_from_rows

SPECULATIVE_KIND = "bench_speculative_jsonl"
SPECFORGE_KIND = "specforge_bench_json"
TABLE_KIND = "sweep_table_text"

MEASURED = "measured wall-clock"
MODELLED = "modelled from step time"
SERVER_REPORTED = "server-reported"
BASELINE = "baseline"

SPECULATIVE_SWEEP = "bench_speculative.py"
SPECULATIVE_KEYS = frozenset({"batch_size", "steps", "topk", "num_draft_tokens", "acc_length", "step_time"})
CONFIG_KEYS = ("steps", "topk", "num_draft_tokens")
# SpecBundle's name for the run without a drafter ("Wihtout" as the file spells it) and its fixes.
BASELINE_NAMES = re.compile(r"^\s*(?:wi(?:th|ht)out\b.*|baseline|base|no[ _-]?spec.*|none)\s*$", re.IGNORECASE)
# Where a file says acceptance was simulated: SGLang's env var, vLLM's synthetic rejection sampler.
SIMULATED = re.compile(r"SIMULATE_ACC|simulate[_ ]acc|synthetic[_ ](?:acceptance|rejection|accept)", re.IGNORECASE)

BAD_BATCH = "point without a batch size"
BAD_STEP_TIME = "step_time not positive"
CONFLICT = "config repeated with different figures"
DUPLICATE = "config repeated with the same figures"
UNREADABLE = "not a sweep point"
MAX_DEPTH = 20  # configs and env dicts are shallow; deeper nesting is searched no further
JSON_HINT = "the file must be one whole JSON object: bench_eagle3.py results or SpecBundle data.json (docs/formats.md, 'Sweeps')"


@dataclass
class Point:
    """One sweep point before it becomes a row; ``where`` is its line (or JSON path) for messages."""

    line_no: int | None
    where: str
    sweep: str
    variant: str
    is_baseline: bool
    batch_size: int | None
    concurrency: int | None = None
    steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    accept_length: float | None = None
    step_time_ms: float | None = None
    throughput: float | None = None
    throughput_kind: str = MEASURED
    latency_s: float | None = None
    model: str | None = None
    dataset: str | None = None
    simulated_by: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def key(self) -> tuple[Any, ...]:
        return (self.sweep, self.variant, self.batch_size, self.steps, self.topk, self.num_draft_tokens)

    def figures(self) -> tuple[Any, ...]:
        return tuple(None if v is None else round(v, 6) for v in (self.accept_length, self.step_time_ms, self.throughput))


class Points:
    """Collects a file's points: bad ones become ``file:line`` warnings, duplicates are checked."""

    def __init__(self, path: Path, parsed: ParsedSource) -> None:
        self.path, self.parsed = path, parsed
        self.kept: dict[tuple[Any, ...], Point] = {}
        self.sessions: dict[str, int] = {}
        self.first_problem: str | None = None

    def reject(self, point_where: str, reason: str, detail: str) -> None:
        message = f"{self.path}:{point_where}: {detail}; point skipped"
        self.parsed.skipped[reason] += 1
        self.parsed.warnings.append(message)
        self.first_problem = self.first_problem or message

    def add(self, point: Point) -> None:
        if point.batch_size is None:
            self.reject(point.where, BAD_BATCH, "no batch size (batch_size / bs)")
            return
        if point.step_time_ms is not None and not point.step_time_ms > 0:
            self.reject(point.where, BAD_STEP_TIME, f"step_time must be positive, got {point.step_time_ms / 1000:g} s")
            return
        earlier = self.kept.get(point.key())
        if earlier is not None:
            if earlier.figures() == point.figures():
                self.parsed.skipped[DUPLICATE] += 1
                return
            self.reject(point.where, CONFLICT,
                        f"batch {point.batch_size}, config {config_text(point)} of {point.variant!r} was already given at "
                        f"{'line ' if earlier.line_no is not None else ''}{earlier.where} with different figures (accept length, step time, throughput "
                        f"{earlier.figures()} vs {point.figures()})")
            return
        self.sessions.setdefault(point.sweep, len(self.sessions))
        self.kept[point.key()] = point

    def finish(self, kind: str) -> ParsedSource:
        if not self.kept:
            raise MalformedInput(
                self.path, self.first_problem or "no sweep point found",
                hint="a sweep point needs a batch size and a throughput, accept length or step time "
                     "(see docs/formats.md, 'Sweeps')",
            )
        rows = [row_of(self.sessions[p.sweep], index, p) for index, p in enumerate(self.kept.values())]
        self.parsed.tables["sweep_points"] = table_from_rows("sweep_points", rows)
        return self.parsed


def config_text(point: Point) -> str:
    return "(" + ", ".join("?" if v is None else str(v) for v in (point.steps, point.topk, point.num_draft_tokens)) + ")"


def row_of(session_key: int, index: int, p: Point) -> dict[str, Any]:
    extra = dict(p.extra)
    if p.latency_s is not None:
        extra["latency_s"] = p.latency_s
    return {
        "session_key": session_key, "point_index": index, "line_no": p.line_no, "sweep": p.sweep, "model": p.model,
        "dataset": p.dataset, "variant": p.variant, "is_baseline": p.is_baseline, "batch_size": p.batch_size,
        "concurrency": p.concurrency, "steps": p.steps, "topk": p.topk, "num_draft_tokens": p.num_draft_tokens,
        "accept_length": p.accept_length, "step_time_ms": p.step_time_ms, "throughput": p.throughput,
        "throughput_kind": p.throughput_kind, "simulated": p.simulated_by is not None, "simulated_by": p.simulated_by,
        "extra": extra_json(extra),
    }


def number(value: Any) -> float | None:
    """A finite number, else None: an infinite or NaN figure says nothing about a sweep point."""
    found, problem = as_float(value)
    return None if problem or found is None or not math.isfinite(found) else found


def whole(value: Any) -> int | None:
    """A whole number that fits the narrowest column it goes to (32 bits), else None (reported as missing)."""
    found, problem = as_int(value, bits=32)
    return None if problem else found


def simulated_in(value: Any, path: str = "", depth: int = 0) -> str | None:
    """Where ``value`` (a record, nested) names simulated acceptance: ``key=value`` of the first mention."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if SIMULATED.search(str(key)) and item not in (None, False, 0, "", "0", "false", "False"):
                return f"{path}{key}={item}"
            found = simulated_in(item, f"{path}{key}.", depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for item in value:
            found = simulated_in(item, path, depth + 1)
            if found:
                return found
    elif isinstance(value, str) and SIMULATED.search(value):
        return f"{path.rstrip('.')}={value[:80]}"
    return None


# --- bench_speculative.py JSONL ----------------------------------------------------------------

def sniff_speculative(head: bytes) -> bool:
    keys = sniff_keys(head)
    return keys is not None and SPECULATIVE_KEYS <= keys and "metrics" not in keys


def parse_speculative(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=SPECULATIVE_KIND, engine="sglang")
    points = Points(path, parsed)
    sweep = SPECULATIVE_SWEEP  # the file names no model: its sweeps are one sweep per --phase
    with text_lines(path) as lines:
        for record in read_json_records(path, lines, parsed):
            value = record.value
            if not SPECULATIVE_KEYS & value.keys():
                points.reject(str(record.line_no), UNREADABLE, "a JSON object without bench_speculative.py keys")
                continue
            config = tuple(whole(value.get(k)) for k in CONFIG_KEYS)
            step_s = number(value.get("step_time"))
            points.add(Point(
                line_no=record.line_no, where=str(record.line_no), sweep=sweep,
                variant=BASELINE if config == (0, 0, 0) else "speculative",
                is_baseline=config == (0, 0, 0), batch_size=whole(value.get("batch_size")),
                steps=config[0], topk=config[1], num_draft_tokens=config[2],
                accept_length=number(value.get("acc_length")),
                step_time_ms=None if step_s is None else round(step_s * 1000, 6),
                throughput=number(value.get("speed")), throughput_kind=MODELLED,
                model=value.get("model_path") if isinstance(value.get("model_path"), str) else None,
                simulated_by=simulated_in(value),
                extra={k: v for k, v in value.items()
                       if k not in {"batch_size", *CONFIG_KEYS, "acc_length", "step_time", "speed", "model_path"}},
            ))
    return points.finish(SPECULATIVE_KIND)


# --- SpecForge bench_eagle3.py results and SpecBundle data.json --------------------------------

def is_config_entry(value: Any) -> bool:
    return isinstance(value, dict) and "batch_size" in value and isinstance(value.get("metrics"), list)


def sniff_specforge(head: bytes) -> bool:
    text = head.lstrip()
    if text[:1] != b"{":
        return False
    return all(key in head for key in (b'"batch_size"', b'"num_draft_tokens"', b'"metrics"')) and (
        b'"output_throughput"' in head or b'"accept_length"' in head
    )


def parse_specforge(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=SPECFORGE_KIND, engine="sglang")
    data = read_all(path)
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:  # RecursionError: nesting deeper than Python recurses
        raise MalformedInput(path, f"not valid JSON ({type(error).__name__}: {str(error)[:120]})", hint=JSON_HINT) from error
    if not isinstance(document, dict):
        raise MalformedInput(path, "expected a JSON object of benchmarks (or targets) at the top", hint=JSON_HINT)
    parsed.lines_read = data.count(b"\n") + 1
    points = Points(path, parsed)
    drafter = document.get("model") if isinstance(document.get("model"), str) else None
    for target, benchmarks, entries_of in specforge_groups(document):
        for benchmark, entries in entries_of(benchmarks):
            sweep = f"{target} · {benchmark}" if target else f"bench_eagle3.py · {benchmark}"
            for position, entry in enumerate(entries):
                where = f"{target + '.' if target else ''}{benchmark}[{position}]"
                if not is_config_entry(entry):
                    points.reject(where, UNREADABLE, "an entry without batch_size and metrics")
                    continue
                for metric_index, metric in enumerate(entry["metrics"]):
                    points.add(specforge_point(entry, metric, sweep, f"{where}.metrics[{metric_index}]", target,
                                               benchmark, drafter))
    parsed.lines_read = max(parsed.lines_read, 1)
    return points.finish(SPECFORGE_KIND)


Groups = Iterator[tuple[str | None, Any, Any]]


def specforge_groups(document: dict[str, Any]) -> Groups:
    """(target, its benchmarks, how to list them): bench_eagle3 files have no target level."""

    def flat(benchmarks: dict[str, Any]) -> Iterator[tuple[str, list[Any]]]:
        for name, entries in benchmarks.items():
            if isinstance(entries, list):
                yield name, entries

    def bundled(benchmarks: dict[str, Any]) -> Iterator[tuple[str, list[Any]]]:
        for name, block in benchmarks.items():
            if isinstance(block, dict) and isinstance(block.get("results"), list):
                yield str(block.get("benchmark_name") or name), block["results"]

    if any(isinstance(v, list) for v in document.values()):
        yield None, document, flat
    for target, benchmarks in document.items():
        if isinstance(benchmarks, dict) and any(isinstance(b, dict) and "results" in b for b in benchmarks.values()):
            yield target, benchmarks, bundled


def specforge_point(entry: dict[str, Any], metric: Any, sweep: str, where: str, target: str | None,
                    benchmark: str, drafter: str | None) -> Point:
    metric = metric if isinstance(metric, dict) else {}
    name = metric.get("Name")
    config = tuple(whole(entry.get(k)) for k in CONFIG_KEYS)
    baseline = (isinstance(name, str) and BASELINE_NAMES.match(name) is not None) or config == (0, 0, 0)
    variant = BASELINE if baseline else " ".join(str(name).split()) if isinstance(name, str) else drafter or "EAGLE3"
    known = {"Name", "output_throughput", "accept_length", "latency"}
    extra = {k: v for k, v in metric.items() if k not in known}
    extra.update({k: v for k, v in entry.items() if k not in {"batch_size", *CONFIG_KEYS, "metrics"}})
    if isinstance(name, str) and " ".join(name.split()) != name:
        extra["name_as_written"] = name
    if baseline and isinstance(name, str):
        extra["baseline_name"] = name
    return Point(
        line_no=None, where=where, sweep=sweep, variant=variant, is_baseline=baseline,
        batch_size=whole(entry.get("batch_size")),
        steps=None if baseline else config[0], topk=None if baseline else config[1],
        num_draft_tokens=None if baseline else config[2],
        accept_length=number(metric.get("accept_length")), throughput=number(metric.get("output_throughput")),
        latency_s=number(metric.get("latency")), model=target, dataset=benchmark,
        simulated_by=simulated_in({**entry, "metrics": metric}), extra=extra,
    )


# --- Markdown / aligned sweep tables -------------------------------------------------------------

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "batch_size": ("bs", "batch_size", "batch", "bsz", "batchsize", "max_concurrency", "concurrency"),
    "steps": ("steps", "num_steps", "speculative_num_steps", "step"),
    "topk": ("topk", "top_k", "eagle_topk", "speculative_eagle_topk"),
    "num_draft_tokens": ("num_draft", "num_draft_tokens", "draft_tokens", "ndt", "speculative_num_draft_tokens",
                         "num_draft_token"),
    "throughput": ("throughput", "output_throughput", "tok/s", "tokens/s", "speed", "tps", "output_tok/s"),
    "accept_length": ("acc_len", "accept_len", "accept_length", "acc_length", "acceptance_length", "avg_accept_len",
                      "tau"),
    "step_time_ms": ("step_time_ms", "step_time", "cycle_ms"),
    "latency_s": ("latency", "latency_s", "e2e_latency"),
    "variant": ("variant", "method", "drafter", "model", "name"),
}
HEADER_OF = {alias: column for column, aliases in COLUMN_ALIASES.items() for alias in aliases}
FIGURES = frozenset({"throughput", "accept_length", "step_time_ms", "latency_s"})
BASE_HEADING = re.compile(r"\b(?:base(?:line)?|without|no[ -]spec\w*|autoregressive|vanilla)\b", re.IGNORECASE)


def cells_of(line: str) -> list[str]:
    """Pipe-separated cells (with or without outer pipes, as posted), else whitespace-aligned ones."""
    text = line.strip()
    if "|" in text:
        return [cell.strip() for cell in text.strip("|").split("|")]
    return bench_table.split_cells(line)[0]


def is_separator(line: str) -> bool:
    cells = cells_of(line)
    return bool(cells) and all(bench_table.SEPARATOR_CELL.match(cell) for cell in cells)


def table_header(line: str) -> list[str | None] | None:
    if len(line) > bench_table.MAX_HEADER_CHARS or bench_table.as_header(line) is not None:  # a run table: bench_table_text's
        return None
    cells = cells_of(line)
    if len(cells) < 2:
        return None
    columns = [HEADER_OF.get(bench_table.header_key(cell)) for cell in cells]
    if any(as_float(cell)[1] is None for cell in cells):  # a header has no numbers
        return None
    return columns if "batch_size" in columns and FIGURES & set(columns) else None


def sniff_table(head: bytes) -> bool:
    lines = head.decode("utf-8", errors="replace").splitlines()
    for position, line in enumerate(lines[:-1]):
        columns = table_header(line)
        if columns is None:
            continue
        following = [c for c in lines[position + 1:position + 3] if not is_separator(c)]
        if following and len(cells_of(following[0])) == len(columns):
            cells = cells_of(following[0])
            if number(cells[columns.index("batch_size")]) is not None:
                return True
    return False


def parse_table(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=TABLE_KIND, engine="custom")
    points = Points(path, parsed)
    with text_lines(path) as lines:
        read_table_points(path, lines, parsed, points)
    return points.finish(TABLE_KIND)


def read_table_points(path: Path, lines: Iterable[str], parsed: ParsedSource, points: Points) -> None:
    columns: list[str | None] | None = None
    names: list[str] = []
    heading: str | None = None
    simulated: str | None = None
    table_no = 0
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if SIMULATED.search(line):
            simulated = f"line {line_no}: {line.strip()[:80]}"
        if not line.strip():
            columns = None
            continue
        if columns is not None:
            if is_separator(line):
                continue
            cells = cells_of(line)
            if len(cells) == len(columns):  # a row; Points.add reports one without a batch size
                points.add(table_point(line_no, cells, columns, names, heading, table_no, simulated, path))
                continue
            columns = None
        found = table_header(line)
        if found is not None:
            columns, table_no = found, table_no + 1
            names = [bench_table.header_key(cell) for cell in cells_of(line)]
            continue
        if line.strip() and not line.lstrip().startswith("|"):
            heading = line.strip().strip("#*: ").strip() or heading
        parsed.skipped["not part of a sweep table"] += 1
    parsed.lines_read = line_no


FILLER = re.compile(r"^(?:and\s+)?(?:the\s+)?(?:results?|numbers|speed)\s+(?:of|for|with)\s+(?:the\s+)?", re.IGNORECASE)


def variant_of(heading: str) -> str:
    """A table's heading as a variant name: "And the results of EAGLE3 combined:" -> "EAGLE3 combined"."""
    return FILLER.sub("", heading).strip()[:60] or heading[:60]


def table_point(line_no: int, cells: list[str], columns: list[str | None], names: list[str], heading: str | None,
                table_no: int, simulated: str | None, path: Path) -> Point:
    values = {column: cell for column, cell in zip(columns, cells, strict=True) if column is not None}
    extra: dict[str, Any] = {name: cell for name, column, cell in zip(names, columns, cells, strict=True) if column is None}
    config = tuple(whole(values.get(k)) for k in CONFIG_KEYS)
    has_config = any(k in values for k in CONFIG_KEYS)
    named = values.get("variant")
    baseline = (named is not None and BASELINE_NAMES.match(named) is not None) or config == (0, 0, 0) or (
        not has_config and named is None and heading is not None and BASE_HEADING.search(heading) is not None)
    variant = BASELINE if baseline else named or (variant_of(heading) if heading else f"table {table_no}")
    step = number(values.get("step_time_ms"))
    if heading:
        extra["heading"] = heading
    return Point(
        line_no=line_no, where=str(line_no), sweep=path.stem, variant=variant, is_baseline=baseline,
        batch_size=whole(values.get("batch_size")), steps=None if baseline else config[0],
        topk=None if baseline else config[1], num_draft_tokens=None if baseline else config[2],
        accept_length=number(values.get("accept_length")), step_time_ms=step,
        throughput=number(values.get("throughput")), latency_s=number(values.get("latency_s")),
        simulated_by=simulated, extra=extra,
    )


SPECULATIVE_FORMAT = Format(
    kind=SPECULATIVE_KIND,
    description="SGLang scripts/playground/bench_speculative.py JSONL (one line per batch size × drafter config)",
    sniff=sniff_speculative,
    signs=(
        Sign('"batch_size"\\s*:', "a 'batch_size' key"),
        Sign('"(steps|topk|num_draft_tokens)"\\s*:', "drafter config keys ('steps', 'topk', 'num_draft_tokens')"),
        Sign('"(acc_length|step_time|speed)"\\s*:', "'acc_length', 'step_time' and 'speed' keys"),
    ),
    parse=parse_speculative,
    example='{"batch_size": 1, "steps": 3, "topk": 1, "num_draft_tokens": 4, "acc_length": 2.0, "step_time": 0.0333, "speed": 60.06, …}',
    precedence=35,
)
SPECFORGE_FORMAT = Format(
    kind=SPECFORGE_KIND,
    description="SpecForge benchmarks/bench_eagle3.py results JSON or SpecBundle data.json (per benchmark, per config)",
    sniff=sniff_specforge,
    signs=(
        Sign('"batch_size"\\s*:', "a 'batch_size' key"),
        Sign('"(steps|topk|num_draft_tokens)"\\s*:', "drafter config keys ('steps', 'topk', 'num_draft_tokens')"),
        Sign('"metrics"\\s*:\\s*\\[', "a 'metrics' list per config"),
    ),
    parse=parse_specforge,
    example='{"mtbench": [{"batch_size": 1, "steps": 0, "topk": 0, "num_draft_tokens": 0, "metrics": [{"latency": 30.1, "output_throughput": 170.2, "accept_length": 1.0, …',
    precedence=55,
)
TABLE_FORMAT = Format(
    kind=TABLE_KIND,
    description="a sweep pasted as a table (| bs | steps | topk | num_draft | throughput | acc len |)",
    sniff=sniff_table,
    signs=(
        Sign('^\\s*\\|.*\\b(bs|batch[ _-]?size)\\b', "a batch-size column ('BS')"),
        Sign('^\\s*\\|.*\\b(steps|topk|num[ _-]?draft)', "drafter config columns ('steps', 'topk', 'num draft')"),
        Sign('^\\s*\\|.*(throughput|tok/s|acc(ept)?[ _.-]?len)', 'a throughput or accept-length column'),
    ),
    parse=parse_table,
    example="| BS | Steps | TopK | Num Draft Tokens | Throughput (tok/s) | Accept Length | note |",
    precedence=95,
)

FORMATS = (SPECULATIVE_FORMAT, SPECFORGE_FORMAT, TABLE_FORMAT)
