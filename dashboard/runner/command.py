"""``specdash bench URL``: run the team's procedure against a server, write the session, ingest it.

Order of a session: wait until the server serves a model; record what its optional endpoints say
(server config, version); warm-ups; a ``/metrics`` snapshot; the profiler started (``--profile``);
the measured runs; the profiler stopped (with ``--profile-dir``, its traces awaited there); a second snapshot. The snapshots bracket the measured
runs alone, so the store's window between them holds their counters and nothing of the warm-ups.

Nothing is written until every measured run has finished (or Ctrl-C stopped them): a failure
anywhere before that leaves no file and nothing in the store.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from dashboard.runner import client, session
from dashboard.runner.client import BenchError
from dashboard.runner.procedure import (
    BUILT_IN_PROMPTS,
    Plan,
    Run,
    RunHook,
    TickHook,
    measured_runs,
    run_warmups,
)
from dashboard.runner.session import Session, Snapshot
from ingest.cli import add_store_arguments
from ingest.pipeline import FileReport, ingest_paths
from ingest.storage import store

INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT, as `specdash ingest` returns
SERVER_INFO_PATHS = ("/get_server_info", "/server_info")  # SGLang, before and after the rename
TRACE_ENDINGS = (".trace.json.gz", ".trace.json", ".pt.trace.json.gz", ".json.gz")  # what torch.profiler exports
TRACE_POLL_S = 0.5
BAR_WIDTH = 20


def add_bench_command(sub: argparse._SubParsersAction, db_help: str) -> None:
    """The ``bench`` subcommand, on any program's parser."""
    bench = sub.add_parser(
        "bench", help="benchmark an OpenAI-compatible server (warm-ups, measured runs) and ingest the session",
        description="Wait until URL serves a model, run warm-ups and measured streaming runs, write the canonical "
        "benchmark JSON (specdash.bench/1) with /metrics snapshots beside it, and ingest them (docs/runner.md).",
    )
    bench.add_argument("url", help="the server, e.g. http://127.0.0.1:30000 (…/v1 or a full endpoint URL also work)")
    bench.add_argument("--phase", help="phase label, e.g. phase-0")
    bench.add_argument("--variant", help="variant label, e.g. k2-drafter (default: what the store derives)")
    add_store_arguments(bench, db_help)
    bench.add_argument("--model", help="the served model to benchmark (default: the only one served)")
    bench.add_argument("--api", choices=sorted(client.API_PATHS), default="completions",
                       help="/v1/completions (default) or /v1/chat/completions")
    bench.add_argument("--warmup", type=int, default=2, metavar="N", help="warm-up runs (default 2)")
    bench.add_argument("--runs", type=int, default=5, metavar="N", help="measured runs (default 5)")
    bench.add_argument("--concurrency", type=int, default=1, metavar="N", help="measured requests in flight (default 1)")
    bench.add_argument("--max-tokens", type=int, default=2048, metavar="N", help="max_tokens of every run (default 2048)")
    bench.add_argument("--prompts", metavar="FILE",
                       help='prompts: one per line, JSONL with "prompt", or a ShareGPT-style JSON dataset (its first human '
                            'turns) (default: a built-in set of short prompts)')
    bench.add_argument("--no-ignore-eos", dest="ignore_eos", action="store_false",
                       help="do not send ignore_eos: runs may stop early at an end-of-sequence token")
    bench.add_argument("--seed", type=int, default=0, help="sampling seed sent with every request and recorded (default 0)")
    bench.add_argument("--ready-timeout", type=float, default=600.0, metavar="SECONDS",
                       help="how long to wait for the server to serve a model (default 600)")
    bench.add_argument("--request-timeout", type=float, default=600.0, metavar="SECONDS",
                       help="the longest silence within one request before it fails (default 600)")
    bench.add_argument("--profile", action="store_true",
                       help="call SGLang's /start_profile and /stop_profile around the measured runs")
    bench.add_argument("--profile-dir", metavar="DIR",
                       help="with --profile: where the server writes its traces (sent as output_dir; this machine's "
                            "folder or a shared mount); the traces that appear there are ingested with the session")
    bench.add_argument("--profile-wait", type=float, default=120.0, metavar="SECONDS",
                       help="how long to wait for the traces after /stop_profile (default 120)")
    bench.add_argument("--out", metavar="FILE",
                       help="the JSON to write (default: ./specdash-bench-<variant or model>-<UTC time>.json)")
    bench.add_argument("--no-ingest", dest="ingest", action="store_false", help="only write the files")
    bench.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    return run_bench(args)


def run_bench(args: argparse.Namespace, on_run: RunHook | None = None, out: TextIO | None = None) -> int:
    """The command; ``on_run`` sees each finished run (tests interrupt through it)."""
    shown = out or sys.stdout
    check_counts(args)
    prompts = load_prompts(Path(args.prompts)) if args.prompts else BUILT_IN_PROMPTS
    root = client.server_root(args.url)
    try:
        plan = ready_plan(args, root, tuple(prompts))
        note(f"benchmarking {plan.model} at {plan.endpoint}: {plan.warmup} warm-ups, {plan.runs} runs of "
             f"{plan.max_tokens:,} tokens, concurrency {plan.concurrency}")
        live = LiveLine(plan.runs)
        recorded, snapshots = run_session(args, plan, chained(progress_line(plan, live), on_run), live.tick)
        live.clear()
    except KeyboardInterrupt:
        note("interrupted before the measured runs: nothing written")
        return INTERRUPTED
    return finish(args, recorded, snapshots, shown)


def ready_plan(args: argparse.Namespace, root: str, prompts: tuple[str, ...]) -> Plan:
    """Wait for the server, pick its model, and fix what every request will be."""
    served = client.wait_until_ready(root, args.ready_timeout)
    return Plan(
        root=root, api=args.api, model=client.pick_model(root, served, args.model), prompts=prompts,
        max_tokens=args.max_tokens, warmup=args.warmup, runs=args.runs, concurrency=args.concurrency,
        ignore_eos=args.ignore_eos, seed=args.seed, timeout_s=args.request_timeout,
    )


def check_counts(args: argparse.Namespace) -> None:
    for name, least in (("warmup", 0), ("runs", 1), ("concurrency", 1), ("max_tokens", 1)):
        if getattr(args, name) < least:
            flag = "--" + name.replace("_", "-")
            raise BenchError(None, f"{flag} {getattr(args, name)}: must be at least {least}", hint=f"pass {flag} N")


def load_prompts(path: Path) -> list[str]:
    """One prompt per line, JSONL records with ``"prompt"``, or a ShareGPT-style JSON dataset (the file SGLang's
    and vLLM's ``bench_serving --dataset-name sharegpt`` read: each conversation's first human turn)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BenchError(path, f"cannot read the prompts ({error})", hint="pass --prompts with a UTF-8 text file") from error
    if text.lstrip().startswith("["):
        return dataset_prompts(path, text)
    lines = text.splitlines()
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise BenchError(path, "no prompts in the file", hint="one prompt per line, or JSONL with \"prompt\"")
    if numbered[0][1].lstrip().startswith("{"):
        return [jsonl_prompt(path, number, line) for number, line in numbered]
    return [line for _, line in numbered]


def dataset_prompts(path: Path, text: str) -> list[str]:
    """The first human turn of each ShareGPT conversation (``conversations: [{"from": "human", "value"}]``, or
    ``messages: [{"role": "user", "content"}]``); records with a ``"prompt"`` string are taken as they are."""
    try:
        records = json.loads(text)
    except ValueError as error:
        raise BenchError(path, f"not a JSON dataset ({error})", hint="a JSON list of conversations, or one prompt per line") from None
    prompts = [prompt for record in records if isinstance(record, dict) and (prompt := first_human_turn(record))]
    if not prompts:
        raise BenchError(path, "no conversation in the dataset has a human turn",
                         hint='ShareGPT records look like {"conversations": [{"from": "human", "value": "..."}]}')
    return prompts


def first_human_turn(record: dict[str, Any]) -> str | None:
    if isinstance(record.get("prompt"), str):
        return str(record["prompt"])
    for turn in record.get("conversations") or record.get("messages") or []:
        if isinstance(turn, dict) and (turn.get("from") or turn.get("role")) in ("human", "user"):
            value = turn.get("value", turn.get("content"))
            return value if isinstance(value, str) and value.strip() else None
    return None


def jsonl_prompt(path: Path, number: int, line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError as error:
        raise BenchError(path, f"not a JSON line ({error})", line=number, hint="fix the line, or write plain prompts one per line") from None
    if not isinstance(record, dict) or not isinstance(record.get("prompt"), str):
        raise BenchError(path, 'a JSONL record needs a "prompt" string', line=number, hint='e.g. {"prompt": "Write a story"}')
    return str(record["prompt"])


def run_session(args: argparse.Namespace, plan: Plan, on_run: RunHook,
                on_tick: TickHook | None = None) -> tuple[Session, tuple[Snapshot | None, Snapshot | None]]:
    server = server_answers(plan.root)
    started_at = store.utc_now()
    warmups = run_warmups(plan, on_run)
    before = metrics_snapshot(plan.root, server, "before")
    profile_dir = Path(args.profile_dir).resolve() if args.profile_dir else None
    profile_started = time.time()
    profile = start_profile(plan.root, profile_dir) if args.profile or profile_dir else None
    runs, interrupted = measured_runs(plan, on_run, on_tick)
    if profile is not None:
        profile["stop"] = client.optional(plan.root, "POST", "/stop_profile").record()
        if profile_dir is not None:
            profile["traces"] = [str(path) for path in traces_written(profile_dir, profile_started, args.profile_wait)]
    after = metrics_snapshot(plan.root, server, "after")
    recorded = Session(plan=plan, phase=args.phase, variant=args.variant, started_at=started_at, warmups=warmups,
                       runs=runs, incomplete=interrupted, server=server, profile=profile)
    return recorded, (before, after)


def start_profile(root: str, folder: Path | None) -> dict[str, Any]:
    """SGLang's profiler started, writing into ``folder`` when one is given (its ``output_dir``)."""
    payload = None if folder is None else {"output_dir": str(folder)}
    return {"requested": True, "start": client.optional(root, "POST", "/start_profile", payload).record()}


def traces_written(folder: Path, since: float, wait_s: float) -> list[Path]:
    """The trace files the profiler wrote into ``folder`` since ``since`` (epoch seconds), once their sizes hold
    still: SGLang writes them after /stop_profile has answered, one per rank."""
    deadline = time.monotonic() + wait_s
    seen: dict[Path, int] = {}
    while True:
        found = {path: path.stat().st_size for path in folder.rglob("*")
                 if path.is_file() and path.name.endswith(TRACE_ENDINGS) and path.stat().st_mtime >= since - 1}
        if found and found == seen:
            return sorted(found)
        if time.monotonic() >= deadline:
            note(f"no trace finished in {folder} within {wait_s:g} s: ingest it later with `specdash ingest {folder}`"
                 if not found else f"traces in {folder} still growing after {wait_s:g} s: not ingested; "
                 f"ingest them later with `specdash ingest {folder}`")
            return []
        seen = found
        time.sleep(TRACE_POLL_S)


def server_answers(root: str) -> dict[str, Any]:
    """The engine's config and version where it offers them: SGLang's server info (server args, internal
    states with its average accept length, version); vLLM's and llama.cpp's ``/version`` where present."""
    return {
        "server_info": client.first_offered(root, SERVER_INFO_PATHS).record(),
        "version": client.optional(root, "GET", "/version").record(),
    }


def metrics_snapshot(root: str, server: dict[str, Any], when: str) -> Snapshot | None:
    """``/metrics`` as Prometheus text, with its status noted in ``server``; None where there is none."""
    taken_at = store.utc_now()
    answer = client.optional(root, "GET", "/metrics")
    status = {key: value for key, value in answer.record().items() if key != "answer"}
    server[f"metrics_{when}"] = status
    if not answer.ok:
        return None
    text = answer.body.decode("utf-8", errors="replace")
    if text.lstrip()[:1] in ("{", "["):  # TensorRT-LLM answers JSON iteration stats, which no format reads as a snapshot
        status["note"] = "JSON, not Prometheus text: not saved"
        return None
    return Snapshot(text, taken_at)


def finish(args: argparse.Namespace, recorded: Session, snapshots: tuple[Snapshot | None, Snapshot | None], shown: TextIO) -> int:
    """Write the session (and its snapshots), print its table, ingest it; 130 when it was interrupted."""
    if not recorded.runs:
        note("interrupted before any measured run finished: nothing written")
        return INTERRUPTED
    out = Path(args.out) if args.out else session.default_out_path(recorded.variant, recorded.plan.model, recorded.started_at)
    metrics_files = session.write_snapshots(out, *snapshots)
    traces = [Path(path) for path in (recorded.profile or {}).get("traces", [])]
    session.write_document(out, session.document(recorded, metrics_files))
    print("\n".join(session.table_lines(recorded.runs)), file=shown)
    print(f"wrote {out}" + (f" and {len(metrics_files)} /metrics snapshots in {metrics_files[0].parent}" if metrics_files else ""),
          file=shown)
    if traces:
        print(f"{len(traces)} profiler trace(s) from {traces[0].parent}", file=shown)
    failed = ingest_session(args, [out, *metrics_files, *traces], shown) if args.ingest else False
    if recorded.incomplete:
        note(f"interrupted: kept {len(recorded.runs)} of {recorded.plan.runs} measured runs, marked incomplete")
        return INTERRUPTED
    return 1 if failed else 0


def ingest_session(args: argparse.Namespace, paths: list[Path], shown: TextIO) -> bool:
    """Ingest the written files as `specdash ingest` would; True when one failed."""
    db = store.resolve_db_path(args.db, args.data_path)
    reports: list[FileReport] = ingest_paths(paths, db, phase=args.phase, variant=args.variant)
    for report in reports:
        print(report.summary(), file=sys.stderr if report.failed else shown)
    return any(report.failed for report in reports)


class LiveLine:
    """The measured runs' progress, redrawn in place while they stream: on a terminal only (a log gets the
    line per finished run). Content chunks, not tokens: a speculative step often streams several tokens."""

    def __init__(self, runs: int, stream: TextIO | None = None) -> None:
        self.runs = runs
        self.stream = stream or sys.stderr
        self.drawn = False

    def tick(self, finished: int, chunks: int, seconds: float) -> None:
        if not self.stream.isatty():
            return
        filled = BAR_WIDTH * finished // self.runs
        self.stream.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] runs {finished}/{self.runs} · "
                          f"{chunks:,} chunks streamed · {seconds:.1f} s\033[K")
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False


def progress_line(plan: Plan, live: LiveLine | None = None) -> RunHook:
    def show(run: Run) -> None:
        if live is not None:
            live.clear()
        what = f"warm-up {run.index}/{plan.warmup}" if run.warmup else f"run {run.index}/{plan.runs}"
        note(f"{what}: {run.output_tokens:,} tokens in {run.duration_s:.2f} s ({run.tok_per_s:.1f} tok/s)")
    return show


def chained(first: RunHook, then: RunHook | None) -> RunHook:
    if then is None:
        return first

    def both(run: Run) -> None:
        first(run)
        then(run)
    return both


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)

