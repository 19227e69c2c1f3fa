"""The ``specdash`` program: the store's commands (``ingest/cli.py``: ingest, formats, status) and the
dashboard's (serve, demo, decide). It lives in ``dashboard`` because it uses both; ``ingest`` never
imports ``dashboard``. One function per subcommand, each a thin layer over the library.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from ingest import cli as store_cli
from ingest import store
from ingest.errors import DecisionError, NoStore


def cmd_demo(args: argparse.Namespace) -> int:
    from dashboard.demo import build_demo_store

    db = store.resolve_db_path(args.db)
    reports = build_demo_store(db)
    for report in reports:
        print(report.summary())
    failed = [report for report in reports if report.failed]
    print(f"demo store: {db} ({len(reports) - len(failed)} files)")
    return 1 if failed else 0


def cmd_decide(args: argparse.Namespace) -> int:
    """Record a decision with its evidence frozen (or list/show the ledger); prints the Markdown summary."""
    from dashboard import (
        ledger,  # evidence is computed by the dashboard's readers (no Streamlit)
    )

    db = store.resolve_db_path(args.db)
    if not db.exists():
        raise NoStore(db, "no store yet", hint="run `specdash ingest FILES` or `specdash demo` first")
    if args.list:
        print("\n".join(ledger.ledger_lines(db)))
        return 0
    if args.show:
        print(ledger.decision_summary(db, args.show, args.url), end="")
        return 0
    try:
        note = Path(args.note_file).read_text(encoding="utf-8") if args.note_file else (args.note or "")
    except OSError as error:
        raise DecisionError(args.note_file, f"cannot read the note ({error.strerror})", hint="check --note-file") from error
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
    app = Path(__file__).resolve().parent / "app.py"
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
    store_cli.add_store_commands(sub)
    db_help = store_cli.DB_HELP

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

    return parser


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command; ``own_process``: the process exists for it alone (the ``specdash`` program)."""
    return store_cli.dispatch(build_parser(), argv, own_process=own_process)


def run() -> NoReturn:
    """The ``specdash`` command (``ingest.cli.run``: leave without tearing the interpreter down)."""
    store_cli.run(main)


if __name__ == "__main__":
    run()
