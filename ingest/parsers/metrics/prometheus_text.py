"""Prometheus ``/metrics`` text from SGLang and vLLM servers, and counter deltas between snapshots.

Where it comes from: ``curl http://host:port/metrics`` on an SGLang (``--enable-metrics``) or vLLM
server; people also paste a Prometheus UI query result (``series{labels} | value`` rows, vllm PR
#24049), which is read the same way. Each sample line is read by ``prometheus_client``'s own text
parser (``prometheus_client.parser``), one line at a time with its family's ``# TYPE`` line, so every
sample keeps its line number; a line it rejects refuses the file, naming the line.

What it stores:

* ``metric_samples``: every sample of every snapshot (``metric`` = the sample's name, e.g.
  ``vllm:spec_decode_num_drafts_total``; ``kind`` = the family's ``# TYPE``; without one — a UI paste —
  ``_total`` samples are counters, ``_created`` their creation time, anything else ``unknown``), its
  labels as JSON, the DP engine (vLLM's ``engine`` label, SGLang's ``dp_rank``) and a draft
  ``position`` label (vLLM's per-position counter, 0-based as exported).
* ``counter_deltas``: for each pair of consecutive snapshots in the file, each counter series' change.
  That is a per-window figure, unlike the counters themselves (totals since the server started) and
  unlike gauges such as ``sglang:spec_accept_length`` (the server's own averaging), which are never
  differenced. A counter that went down is a server restart when its ``_created`` time changed or the
  file has none (then the window counts from zero, ``reset`` is true, and a warning names the line);
  a counter that went down while ``_created`` stayed the same is refused as bad input.

* ``metric_snapshots``: one row per snapshot: its lines, its scrape time (the latest timestamp its
  samples print, usually none) and the file's modification time when read.

Snapshots: a file may hold several (``curl ... >> metrics.prom`` before and after a run); a new one
starts where a series, or a family's ``# TYPE`` line, appears again. Two snapshots saved as two files
(``curl ... > before.prom``, run, ``curl ... > after.prom``) are paired by the store's views
(``metric_file_deltas``, migration 018) from what each file stored here: this parser reads its own
file only. Ignored: ``# HELP`` text and blank lines.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "prometheus_text"
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
TYPE_LINE = re.compile(rf"^#\s*TYPE\s+(?P<name>{NAME})\s+(?P<kind>counter|gauge|histogram|summary|untyped|unknown|info|stateset|gaugehistogram)\s*$")
SAMPLE_START = re.compile(rf"^(?P<name>{NAME})\s*(?:\{{|\s)")
UI_ROW = re.compile(rf"^(?P<series>{NAME}(?:\{{.*\}})?)\s*\|\s*(?P<value>\S+)\s*$")
UI_SEPARATOR = re.compile(r"^\s*-+\s*\|\s*-+\s*$")
ENGINE_METRIC = re.compile(r"^(?:sglang|vllm):", re.M)
SUFFIXES = ("_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info")
ENGINE_LABELS = ("engine", "dp_rank", "engine_index")


def sniff(head: bytes) -> bool:
    """SGLang/vLLM metric samples: exposition text (``# TYPE`` lines) or a UI paste of ``series | value`` rows."""
    text = head.decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    engine_lines = [line for line in lines if ENGINE_METRIC.match(line) or line.startswith("# TYPE sglang:")
                    or line.startswith("# TYPE vllm:")]
    if not engine_lines:
        return False
    typed = any(TYPE_LINE.match(line) for line in lines)
    ui_rows = sum(1 for line in lines if UI_ROW.match(line))
    return typed or ui_rows >= 1 and ui_rows >= len(engine_lines) // 2


@dataclass
class Sample:
    line_no: int
    metric: str
    family: str
    kind: str
    labels: dict[str, str]
    value: float
    ts: datetime | None

    @property
    def series(self) -> tuple[str, str]:
        return self.metric, json.dumps(self.labels, sort_keys=True)


@dataclass
class Snapshot:
    samples: list[Sample] = field(default_factory=list)
    series: set[tuple[str, str]] = field(default_factory=set)
    typed: set[str] = field(default_factory=set)


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="sglang")
    snapshots = read_snapshots(path, parsed)
    if not any(s.samples for s in snapshots):
        raise MalformedInput(path, "no metric samples found", hint="pass the text `curl http://host:port/metrics` prints")
    deltas = counter_deltas(path, snapshots, parsed.warnings)
    names = {s.metric for snap in snapshots for s in snap.samples}
    parsed.engine = "vllm" if any(n.startswith("vllm:") for n in names) and not any(n.startswith("sglang:") for n in names) else "sglang"
    parsed.tables["metric_samples"] = table_from_rows("metric_samples", [
        {"snapshot": index, "line_no": s.line_no, "ts": s.ts, "metric": s.metric, "family": s.family, "kind": s.kind,
         "labels": json.dumps(s.labels, sort_keys=True, ensure_ascii=False), "engine_index": engine_index(s.labels),
         "position": position(s.labels), "value": s.value}
        for index, snap in enumerate(snapshots) for s in snap.samples
    ])
    parsed.tables["counter_deltas"] = table_from_rows("counter_deltas", deltas)
    mtime = file_mtime(path)
    parsed.tables["metric_snapshots"] = table_from_rows("metric_snapshots", [
        {"snapshot": index, "first_line": min(s.line_no for s in snap.samples), "last_line": max(s.line_no for s in snap.samples),
         "samples": len(snap.samples), "scraped_at": max((s.ts for s in snap.samples if s.ts is not None), default=None),
         "file_mtime": mtime}
        for index, snap in enumerate(snapshots) if snap.samples
    ])
    return parsed


def file_mtime(path: Path) -> datetime | None:
    """The file's modification time (UTC, naive like every store timestamp): the order of two snapshot files."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(tzinfo=None)
    except (OSError, OverflowError, ValueError):
        return None


def read_snapshots(path: Path, parsed: ParsedSource) -> list[Snapshot]:
    snapshots = [Snapshot()]
    types: dict[str, str] = {}
    line_no = 0
    with text_lines(path) as lines:
        for line_no, raw in enumerate(lines, start=1):
            line = raw.strip()
            if not line or UI_SEPARATOR.match(line):
                continue
            typed = TYPE_LINE.match(line)
            if typed:
                if typed["name"] in snapshots[-1].typed:
                    snapshots.append(Snapshot())
                snapshots[-1].typed.add(typed["name"])
                types[typed["name"]] = typed["kind"]
                continue
            if line.startswith("#"):
                parsed.skipped["comment"] += 1
                continue
            ui = UI_ROW.match(line)
            if ui:
                line = f"{ui['series']} {ui['value']}"
            start = SAMPLE_START.match(line)
            if start is None:
                parsed.skipped["not a metric sample"] += 1
                continue
            sample = read_sample(path, line_no, line, start["name"], types)
            if sample.series in snapshots[-1].series:
                snapshots.append(Snapshot())
            snapshots[-1].series.add(sample.series)
            snapshots[-1].samples.append(sample)
    parsed.lines_read = line_no
    return [s for s in snapshots if s.samples] or [Snapshot()]


def family_of(name: str, types: dict[str, str]) -> tuple[str, str]:
    """The sample's family and its declared kind (``untyped`` when no ``# TYPE`` line names it)."""
    if name in types:
        return name, types[name]
    for suffix in SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in types:
            return name[: -len(suffix)], types[name[: -len(suffix)]]
    return name, "untyped"


def read_sample(path: Path, line_no: int, line: str, name: str, types: dict[str, str]) -> Sample:
    family, declared = family_of(name, types)
    header = f"# TYPE {family} {declared}\n" if declared != "untyped" else ""
    try:
        families = list(text_string_to_metric_families(header + line + "\n"))
    except (ValueError, IndexError, TypeError) as error:
        raise MalformedInput(path, f"not a Prometheus sample line ({error})", line=line_no,
                             hint="each line is `name{label=\"value\",...} value [timestamp]`") from error
    samples = [s for f in families for s in f.samples]
    if len(samples) != 1:
        raise MalformedInput(path, "not a Prometheus sample line", line=line_no)
    sample = samples[0]
    kind = declared
    if declared in ("untyped", "unknown"):
        kind = "counter" if name.endswith("_total") else "created" if name.endswith("_created") else "unknown"
    elif name.endswith("_created"):
        kind = "created"
    elif declared == "counter" and not name.endswith("_total"):
        kind = "counter"
    ts = None
    if sample.timestamp is not None:
        ts = datetime.fromtimestamp(float(sample.timestamp), UTC).replace(tzinfo=None)  # a float or a Timestamp
    return Sample(line_no, sample.name, family, kind, dict(sample.labels), float(sample.value), ts)


def engine_index(labels: dict[str, str]) -> int | None:
    for key in ENGINE_LABELS:
        if key in labels and labels[key].lstrip("-").isdigit():
            return int(labels[key])
    return None


def position(labels: dict[str, str]) -> int | None:
    value = labels.get("position")
    return int(value) if value is not None and value.isdigit() else None


def counter_deltas(path: Path, snapshots: list[Snapshot], warnings: list[str]) -> list[dict[str, Any]]:
    """Each counter series' change between consecutive snapshots (``window`` = the later snapshot's index).

    A decrease is a restart (the window counts from zero, ``reset``) unless the series' ``_created``
    time is printed and unchanged: a counter never goes down within one server's life.
    """
    rows: list[dict[str, Any]] = []
    for window in range(1, len(snapshots)):
        before = {s.series: s for s in snapshots[window - 1].samples}
        created_before = created_times(snapshots[window - 1])
        created_after = created_times(snapshots[window])
        for sample in snapshots[window].samples:
            if sample.kind != "counter" or sample.series not in before:
                continue
            old = before[sample.series].value
            delta, reset = sample.value - old, False
            if delta < 0 or (math.isnan(delta)):
                key = created_key(sample)
                same_life = key in created_before and key in created_after and created_before[key] == created_after[key]
                if same_life:
                    raise MalformedInput(
                        path, f"counter {sample.metric} went down from {old:g} to {sample.value:g} between snapshots "
                              f"{window - 1} and {window} with the same _created time", line=sample.line_no,
                        key=sample.metric, hint="a counter only grows while the server runs: were two servers' outputs mixed?",
                    )
                warnings.append(f"{path}:{sample.line_no}: {sample.metric} went down ({old:g} → {sample.value:g}): "
                                "a server restart between the snapshots; the window counts from zero")
                delta, reset = sample.value, True
            rows.append({"window": window, "line_no": sample.line_no, "metric": sample.metric,
                         "labels": json.dumps(sample.labels, sort_keys=True, ensure_ascii=False),
                         "engine_index": engine_index(sample.labels), "position": position(sample.labels),
                         "value_before": old, "value_after": sample.value, "delta": delta, "reset": reset})
    return rows


def created_key(sample: Sample) -> tuple[str, str]:
    base = sample.metric[: -len("_total")] if sample.metric.endswith("_total") else sample.metric
    return base, json.dumps(sample.labels, sort_keys=True)


def created_times(snapshot: Snapshot) -> dict[tuple[str, str], float]:
    return {(s.metric[: -len("_created")], json.dumps(s.labels, sort_keys=True)): s.value
            for s in snapshot.samples if s.kind == "created"}


FORMAT = Format(
    kind=KIND,
    description="Prometheus /metrics text of an SGLang or vLLM server (or a Prometheus UI paste of its series)",
    sniff=sniff,
    signs=(
        Sign('^# (TYPE|HELP) ', "'# TYPE' / '# HELP' lines"),
        Sign('^(sglang|vllm):\\w+', 'sglang: or vllm: metric names'),
        Sign('^\\S*(spec_decode_num_(accepted|draft)_tokens|spec_accept_length|spec_accept_rate)\\S*(\\{[^}]*\\})? [-+\\d.eE]+$', 'spec-decode series with their values'),
    ),
    parse=parse,
    example='vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="…",position="0"} 750.0',
    precedence=60,
)

FORMATS = (FORMAT,)
