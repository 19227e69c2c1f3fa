"""What a benchmark leaves: the canonical JSON (``specdash.bench/1``), the ``/metrics`` snapshots, the table.

The JSON is the format ``ingest/parsers/bench/bench_json.py`` reads (docs/formats.md); what it has no
column for (TTFT, inter-token gaps, seed, concurrency, the API, ``ignore_eos``, ``incomplete``, the
server's answers) lands in the ``extra`` JSON of ``sessions`` and ``bench_runs``, nothing dropped.

The two snapshots go into a folder of their own beside the JSON: the store pairs consecutive
``/metrics`` files of one folder into a window (view ``metric_file_pairs``), so a folder per session
keeps one session's "after" from being paired with the next session's "before". Each file's
modification time is set to its scrape time (the order the store uses when the text prints no
timestamps, as SGLang's and vLLM's do not), and the names sort in the same order.
"""
from __future__ import annotations

import json
import os
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dashboard.runner.procedure import Plan, Run

FORMAT = "specdash.bench/1"
TABLE_HEADER = "| Run | Tokens | Time (s) | Throughput (tok/s) | Prompt Length |"


@dataclass(frozen=True)
class Snapshot:
    """One ``/metrics`` scrape: its text and when it was taken."""

    text: str
    taken_at: datetime


@dataclass(frozen=True)
class Session:
    plan: Plan
    phase: str | None
    variant: str | None
    started_at: datetime
    warmups: list[Run]
    runs: list[Run]
    incomplete: bool
    server: dict[str, Any]  # what the engine's optional endpoints answered
    profile: dict[str, Any] | None = None


def document(session: Session, metrics_files: Sequence[Path] = ()) -> dict[str, Any]:
    plan = session.plan
    return {
        "format": FORMAT,
        "endpoint": plan.endpoint,
        "model": plan.model,
        "phase": session.phase,
        "variant": session.variant,
        "max_tokens": plan.max_tokens,
        "warmup": plan.warmup,
        "started_at": iso(session.started_at),
        "runs": [run_record(run) for run in [*session.warmups, *session.runs]],
        "runs_planned": plan.runs,
        "incomplete": session.incomplete,
        "seed": plan.seed,
        "concurrency": plan.concurrency,
        "api": plan.api,
        "ignore_eos": plan.ignore_eos,
        "server": session.server,
        "profile": session.profile,
        "metrics_snapshots": [str(path) for path in metrics_files],
        "tool": "specdash bench",
    }


def run_record(run: Run) -> dict[str, Any]:
    return {
        "index": run.index,
        "warmup": run.warmup,
        "prompt_tokens": run.prompt_tokens,
        "output_tokens": run.output_tokens,
        "duration_s": run.duration_s,
        "tok_per_s": run.tok_per_s,
        "started_at": iso(run.started_at),
        "ended_at": iso(run.ended_at),
        "finish_reason": run.finish_reason,
        "ttft_s": run.ttft_s,
        "itl_p50_s": run.itl_p50_s,
        "itl_p90_s": run.itl_p90_s,
        "itl_p99_s": run.itl_p99_s,
        "hit_max_tokens": run.hit_max_tokens,
        "short": run.short,
        "usage_reported": run.usage_reported,
    }


def iso(moment: datetime) -> str:
    """UTC, marked as such, to the millisecond (the run windows are matched to server-log lines by time)."""
    return moment.isoformat(timespec="milliseconds") + "Z"


# --- files --------------------------------------------------------------------------------------


def default_out_path(variant: str | None, model: str, now: datetime, folder: Path = Path(".")) -> Path:
    """``specdash-bench-<variant or model>-<UTC time>.json``; a model path is named by its last part."""
    name = variant or model.rstrip("/").rsplit("/", 1)[-1] or "model"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
    return folder / f"specdash-bench-{safe}-{now:%Y%m%dT%H%M%SZ}.json"


def metrics_paths(out: Path) -> tuple[Path, Path]:
    folder = out.with_name(out.name.removesuffix(".json") + ".metrics")
    return folder / "1-before.prom", folder / "2-after.prom"


def write_snapshots(out: Path, before: Snapshot | None, after: Snapshot | None) -> list[Path]:
    """The snapshots taken (a server without /metrics gives none), each dated to its scrape."""
    written = []
    for path, snapshot in zip(metrics_paths(out), (before, after), strict=True):
        if snapshot is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, snapshot.text)
        stamp = snapshot.taken_at.timestamp()
        os.utime(path, (stamp, stamp))
        written.append(path)
    return written


def write_document(out: Path, content: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out, json.dumps(content, indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """A file that is either whole or absent: an interrupted write never leaves half a JSON to ingest."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


# --- the printed table --------------------------------------------------------------------------


def table_lines(runs: Sequence[Run]) -> list[str]:
    """The seed's table of measured runs, a mean row, then one line per short or uncounted run."""
    lines = [TABLE_HEADER, "|---|---|---|---|---|"]
    lines += [f"| {run.index} | {run.output_tokens} | {run.duration_s:.2f} | {run.tok_per_s:.1f} | "
              f"{prompt_length(run.prompt_tokens)} |" for run in runs]
    if runs:
        lines.append(mean_row(runs))
        lines.append(summary_line(runs))
    lines += [short_note(run) for run in runs if run.short]
    lines += [usage_note(run) for run in runs if not run.usage_reported]
    return lines


def prompt_length(tokens: float | None) -> str:
    return "?" if tokens is None else f"{tokens:.0f}"


def mean_row(runs: Sequence[Run]) -> str:
    prompts = [run.prompt_tokens for run in runs if run.prompt_tokens is not None]
    return (f"| mean | {statistics.fmean(run.output_tokens for run in runs):.0f} | "
            f"{statistics.fmean(run.duration_s for run in runs):.2f} | "
            f"{statistics.fmean(run.tok_per_s for run in runs):.1f} | "
            f"{prompt_length(statistics.fmean(prompts) if prompts else None)} |")


def summary_line(runs: Sequence[Run]) -> str:
    rates = [run.tok_per_s for run in runs]
    spread = f" ± {statistics.stdev(rates):.1f} (sd)" if len(rates) > 1 else ""
    pooled = sum(run.output_tokens for run in runs) / sum(run.duration_s for run in runs)
    ttfts = [run.ttft_s for run in runs if run.ttft_s is not None]
    ttft = f"; mean TTFT {statistics.fmean(ttfts) * 1000:.0f} ms" if ttfts else ""
    return (f"mean {statistics.fmean(rates):.1f} tok/s{spread} over {len(runs)} runs "
            f"(Σtokens ÷ Σtime {pooled:.1f} tok/s){ttft}")


def short_note(run: Run) -> str:
    why = f"finish reason {run.finish_reason!r}" if run.finish_reason else "no finish reason"
    return f"run {run.index} stopped at {run.output_tokens:,} of {run.max_tokens:,} tokens ({why}): its tok/s is not like the others'"


def usage_note(run: Run) -> str:
    return (f"run {run.index}: the server sent no usage; tokens counted from {run.output_tokens:,} content chunks "
            "(an undercount when a chunk carries several tokens; recorded as usage_reported: false)")
