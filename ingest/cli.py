"""``specdash`` command line: a thin layer over the library, one function per subcommand."""
from __future__ import annotations

import argparse
import importlib.abc
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

from ingest import store
from ingest.errors import IngestError
from ingest.formats import ParseOptions, registered_formats
from ingest.pipeline import FileReport, ingest_paths, skipped_summary
from ingest.progress import ProgressBar


def cmd_ingest(args: argparse.Namespace) -> int:
    use_returning_allocator()
    if args.own_process:
        keep_pandas_unloaded()
    db = store.resolve_db_path(args.db)
    extra = {"trace_rules": str(args.trace_rules)} if args.trace_rules else {}
    options = ParseOptions(year=args.year, engine=args.engine, extra=extra)

    bars: list[ProgressBar] = []

    def bar_for(path: Path) -> ProgressBar:
        bars.append(ProgressBar(str(path)))
        return bars[-1]

    def show(report: FileReport) -> None:
        if bars:
            bars.pop().finish()
        if report.status == "skipped":  # counted in one line at the end
            return
        stream = sys.stderr if report.failed else sys.stdout
        print(report.summary(), file=stream, flush=True)
        for warning in report.warnings[: args.show_warnings]:
            print(f"  warning: {warning}", file=sys.stderr)

    def show_json(report: FileReport) -> None:
        print(json.dumps(report.record()), flush=True)

    if args.clock_skew is not None:
        store.set_meta(db, "clock_skew_s", str(args.clock_skew))
    link_to = "none" if args.no_link else args.link_to
    if link_to not in (None, "none") and (problem := link_to_problem(db, link_to, args.paths)):
        print(f"error: --link-to {link_to}: {problem}", file=sys.stderr)
        return 2
    reports = ingest_paths(
        args.paths, db, phase=args.phase, variant=args.variant, options=options, replace=args.replace,
        on_report=show_json if args.json else show, progress=None if args.json else bar_for, strict=args.strict,
        link_to=link_to,
    )
    if link_to not in (None, "none") and (problem := link_to_problem(db, link_to, [])):
        print(f"error: --link-to {link_to}: {problem}; the files are loaded unlinked: ingest them again with "
              "--replace and --link-to SESSION_ID", file=sys.stderr)
        return 1
    skipped = skipped_summary(reports)
    if skipped is not None:  # with --json, stdout holds JSON only: each skipped file is an object there too
        print(skipped, file=sys.stderr if args.json else sys.stdout, flush=True)
    failed = [report for report in reports if report.failed]
    if failed:
        data = [report for report in reports if report.status != "skipped"]
        print(f"{len(failed)} of {len(data)} files failed: {', '.join(str(r.path) for r in failed)}", file=sys.stderr)
        return 1
    return 0


def link_to_problem(db: Path, wanted: str, paths: list[str]) -> str | None:
    """Why a --link-to value names no single server lifetime (None when it does, or names a file of this call)."""
    if store.link_target_count(db, wanted) == 1 or (paths and store.in_this_call(wanted, paths)):
        return None
    lifetimes = store.lifetimes_of_log(db, wanted)
    if len(lifetimes) > 1:
        return f"that log has {len(lifetimes)} server lifetimes; name one by its session id: {', '.join(lifetimes)}"
    return (
        "no server lifetime of that name in the store: pass a session id as the Run page shows it "
        "(e.g. 3f2a9c0d1e2b4a5f-seg1), or the file name of a log in the store or in this call"
    )


def cmd_formats(args: argparse.Namespace) -> int:
    """Every format ingest reads, in the order detection tries them, each with an example line."""
    formats = registered_formats()
    if args.json:
        print(json.dumps([{"kind": f.kind, "description": f.description, "example": f.example} for f in formats], indent=2))
        return 0
    print(f"specdash reads {len(formats)} formats, told apart by content (tried in this order; see docs/formats.md):")
    for file_format in formats:
        print(f"\n{file_format.kind}: {file_format.description}")
        print(f"    {file_format.example or '(no example line declared)'}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ingest.demo import build_demo_store

    db = store.resolve_db_path(args.db)
    reports = build_demo_store(db)
    for report in reports:
        print(report.summary())
    failed = [report for report in reports if report.failed]
    print(f"demo store: {db} ({len(reports) - len(failed)} files)")
    return 1 if failed else 0


def cmd_status(args: argparse.Namespace) -> int:
    info = store.status(store.resolve_db_path(args.db))
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    if not info["exists"]:
        print(f"{info['db']}: no store yet — run `specdash ingest FILES` or `specdash demo`")
        return 0
    print(f"store: {info['db']}")
    for name, count in info["rows"].items():
        print(f"  {name:<16} {count:>10,} rows")
    for kind, count in info["sources_by_kind"].items():
        print(f"  source kind {kind:<20} {count}")
    print(f"  migrations: {', '.join(info['migrations'])}")
    return 0


def cmd_decide(args: argparse.Namespace) -> int:
    """Record a decision with its evidence frozen (or list/show the ledger); prints the Markdown summary."""
    from dashboard import ledger  # evidence is computed by the dashboard's readers (no Streamlit)

    db = store.resolve_db_path(args.db)
    if not db.exists():
        raise IngestError(db, "no store yet", hint="run `specdash ingest FILES` or `specdash demo` first")
    if args.list:
        print("\n".join(ledger.ledger_lines(db)))
        return 0
    if args.show:
        print(ledger.decision_summary(db, args.show, args.url), end="")
        return 0
    try:
        note = Path(args.note_file).read_text(encoding="utf-8") if args.note_file else (args.note or "")
    except OSError as error:
        raise IngestError(args.note_file, f"cannot read the note ({error.strerror})", hint="check --note-file") from error
    decision_id, markdown = ledger.record(
        db, title=args.title or "", verdict=args.verdict or "", phase=args.phase, session_ids=args.session or [],
        variants=args.variant or [], baseline=args.baseline, metric=args.metric, note_md=note, base_url=args.url,
    )
    print(f"recorded decision {decision_id}", file=sys.stderr)
    print(markdown, end="")
    return 0


DISCONNECTED_SESSION_TTL_S = 10


def cmd_serve(args: argparse.Namespace) -> int:
    db = store.resolve_db_path(args.db).resolve()
    app = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"warning: serving on {args.host}: anyone who can reach this address can read the store and ingest files",
            file=sys.stderr,
        )
    # glibc gives each thread its own malloc arena; Streamlit's threads would keep ~8 of them
    # with freed pages, so the server's memory only ever grew. Two arenas are plenty here.
    env = {"MALLOC_ARENA_MAX": "2", **os.environ, "SPECDASH_DB": str(db)}
    command = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.address", args.host,
        "--server.port", str(args.port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.maxUploadSize", str(args.max_upload_mb),
        "--client.toolbarMode", "viewer",
        # A closed tab's session (and every frame its page holds) is freed after this, not after
        # Streamlit's default 120 s; the selection lives in the URL, so a reconnect loses nothing.
        "--server.disconnectedSessionTTL", str(DISCONNECTED_SESSION_TTL_S),
    ]
    print(f"specdash: serving {db} on http://{args.host}:{args.port}", flush=True)
    # Become the Streamlit process, so stopping `specdash serve` stops the server (no orphaned child).
    os.execve(sys.executable, command, env)
    return 0  # not reached


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="specdash", description="Speculative-decoding results: ingest and dashboard.")
    sub = parser.add_subparsers(dest="command", required=True)
    db_help = f"store file (default: $SPECDASH_DB, else ./{store.DEFAULT_DB})"

    ingest = sub.add_parser("ingest", help="load benchmark JSON/JSONL, server logs and profiler traces")
    ingest.add_argument("paths", nargs="+", help="files or directories (recursive); .gz accepted")
    ingest.add_argument("--db", help=db_help)
    ingest.add_argument("--phase", help="phase label for these files, e.g. phase-0")
    ingest.add_argument("--variant", help="variant label (overrides what the files say)")
    ingest.add_argument("--engine", choices=["sglang", "vllm"], help="what produced the logs (checked against content)")
    ingest.add_argument("--year", type=int, help="year for log timestamps printed without one (vLLM)")
    ingest.add_argument(
        "--clock-skew", type=float, metavar="SECONDS",
        help="tolerance when matching benchmark runs to log lines by time (stored; default 2)",
    )
    ingest.add_argument(
        "--trace-rules", metavar="FILE",
        help="JSON/TOML file of extra kernel-class and phase patterns for profiler traces (docs/breakdown.md)",
    )
    linking = ingest.add_mutually_exclusive_group()
    linking.add_argument(
        "--link-to", metavar="SESSION_OR_LOG",
        help="link these traces and bench records to this server lifetime instead of the one found "
        "(a session id from the Run page, e.g. 3f2a…-seg1, or a log's file name when it has one lifetime)",
    )
    linking.add_argument("--no-link", action="store_true",
                         help="link these traces and bench records to no server log (keep their own names)")
    ingest.add_argument("--replace", action="store_true", help="swap an already-ingested file's rows for a fresh parse")
    ingest.add_argument("--show-warnings", type=int, default=5, metavar="N", help="warnings to print per file")
    ingest.add_argument("--json", action="store_true",
                        help="one JSON object per file on stdout as it finishes (status, summary, all warnings)")
    ingest.add_argument(
        "--strict", action="store_true",
        help="fail on files found in directories that no format reads and that are not data (README, *.md, "
        "*.source, images, binaries), instead of skipping them",
    )
    ingest.set_defaults(func=cmd_ingest)

    formats = sub.add_parser("formats", help="list the formats ingest reads, each with an example line")
    formats.add_argument("--json", action="store_true", help="a JSON list of {kind, description, example}")
    formats.set_defaults(func=cmd_formats)

    serve = sub.add_parser("serve", help="start the dashboard")
    serve.add_argument("--db", help=db_help)
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    serve.add_argument("--max-upload-mb", type=int, default=200, help="upload size limit of the browser ingest")
    serve.set_defaults(func=cmd_serve)

    decide = sub.add_parser("decide", help="record a decision with its evidence frozen; prints its Markdown summary")
    decide.add_argument("--db", help=db_help)
    decide.add_argument("--title", help="what was decided, e.g. 'K2 drafter as-is'")
    decide.add_argument("--verdict", choices=["accepted", "rejected", "inconclusive"])
    decide.add_argument("--phase", help="the phase it decides; without --session, its sessions are the evidence")
    decide.add_argument("--session", action="append", metavar="ID", help="an evidence session id (repeatable)")
    decide.add_argument("--variant", action="append", metavar="NAME", help="with --phase: only these variants' sessions")
    decide.add_argument("--baseline", help="variant the deltas are against (default: the one without speculation)")
    decide.add_argument("--metric", choices=["tokens_over_time", "mean_of_runs"], default="tokens_over_time",
                        help="headline tok/s: Σtokens ÷ Σtime (default) or the mean of per-run tok/s")
    note = decide.add_mutually_exclusive_group()
    note.add_argument("--note", help="Markdown note")
    note.add_argument("--note-file", metavar="FILE", help="Markdown note from a file")
    decide.add_argument("--url", default=os.environ.get("SPECDASH_URL", "http://127.0.0.1:8501"),
                        help="the dashboard's address, for the link in the summary (default: $SPECDASH_URL or %(default)s)")
    decide.add_argument("--list", action="store_true", help="list the ledger (stale decisions marked) instead")
    decide.add_argument("--show", metavar="ID", help="print an existing decision's Markdown summary instead")
    decide.set_defaults(func=cmd_decide)

    demo = sub.add_parser("demo", help="build the demo store from the files in data/")
    demo.add_argument("--db", help=db_help)
    demo.set_defaults(func=cmd_demo)

    status = sub.add_parser("status", help="what the store holds")
    status.add_argument("--db", help=db_help)
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)
    return parser


class _PandasHidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is not loaded for pyarrow's first probe (see keep_pandas_unloaded)")


def keep_pandas_unloaded() -> None:
    """Let pyarrow's first array conversion find no pandas, so that ingesting does not load it.

    pyarrow imports pandas on its first conversion of any array, only to ask whether the input is
    a pandas object (apache/arrow#34994): 0.1 s with the GIL held and 30 MB, a seventh of the
    ingest of a small log (measured: 0.82 → 0.70 s; 1 GB log: 4.24 → 4.10 s). pyarrow keeps that
    first answer: for the rest of the process it takes no input for a pandas object (``to_pandas``
    still works: it imports pandas then). So this is done only in a process of its own, the
    ``specdash`` program, where nothing hands pyarrow pandas objects. A no-op once pandas is loaded.
    """
    import pyarrow as pa

    hidden = _PandasHidden()
    sys.meta_path.insert(0, hidden)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(hidden)


def use_returning_allocator() -> None:
    """Arrow's default mimalloc pool keeps freed blocks; jemalloc hands them back, so reading a
    big log (each block's arrays freed once it is stored) peaks ~20 % lower (measured: 448 → 350 MB)."""
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:  # a pyarrow built without jemalloc: keep its default
        pass


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command; ``own_process``: the process exists for it alone (the ``specdash`` program)."""
    args = build_parser().parse_args(argv)
    args.own_process = own_process
    try:
        return args.func(args)
    except IngestError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\ninterrupted: files reported as loaded are in the store; the file in progress was not written",
            file=sys.stderr,
        )
        return 130


def run() -> NoReturn:
    """The ``specdash`` command: ``main``, then leave without tearing the interpreter down.

    Once a log has been read, interpreter shutdown walks numba's and LLVM's objects through
    several garbage collections: 0.2 s of a 4 s ingest of 1 GB (measured). Everything the
    command writes is committed and its files closed by then, so only the output streams
    need flushing.
    """
    try:
        code = main(own_process=True)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``specdash status | head``): nothing left to say
        code = 1
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
