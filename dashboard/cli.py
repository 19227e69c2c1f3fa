"""The ``specdash`` program: the store's commands (``ingest/cli.py``: ingest, formats, status) and the
dashboard's (serve, demo, decide). It lives in ``dashboard`` because it uses both; ``ingest`` never
imports ``dashboard``. One function per subcommand, each a thin layer over the library.
"""
from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from dashboard.check_cli import add_check_command
from dashboard.runner.command import add_bench_command
from ingest import cli as store_cli
from ingest.cli import add_store_arguments
from ingest.errors import DecisionError, NoStore, SpecdashError, StoreError
from ingest.storage import store
from ingest.storage.location import LakeStore, StoreRef


def cmd_demo(args: argparse.Namespace) -> int:
    from dashboard.demo import build_demo_store

    db = store.resolve_db_path(args.db, args.data_path)
    reports = build_demo_store(db)
    for report in reports:
        print(report.summary())
    failed = [report for report in reports if report.failed]
    print(f"demo store: {db} ({len(reports) - len(failed)} files)")
    return 1 if failed else 0


def cmd_drafters(args: argparse.Namespace) -> int:
    """Compare two drafters' vocabulary mappings: position by position and as sets."""
    import json

    from dashboard.analysis import drafters

    found = drafters.compare_given(store.resolve_db_path(args.db, args.data_path), args.a, args.b)
    if args.json:
        print(json.dumps(found.record(), sort_keys=True))
        return 0
    print(f"{found.name_a} vs {found.name_b} (draft vocabularies of {found.draft_vocab_size_a:,} and {found.draft_vocab_size_b:,} ids)")
    print(f"  positions: differ at {found.positions_differ:,} of {found.positions_compared:,} draft ids, agree at {found.positions_agree:,}"
          + (f" (first difference at draft id {found.first_difference:,})" if found.first_difference is not None else ""))
    print(f"  sets:      {found.shared_target_tokens:,} target tokens shared, {found.only_a:,} only in {found.name_a}, "
          f"{found.only_b:,} only in {found.name_b}; Jaccard {found.jaccard:.4f}")
    for sentence in found.sentences():
        print(f"  {sentence}")
    return 0


def cmd_decide(args: argparse.Namespace) -> int:
    """Record a decision with its evidence frozen (or list/show the ledger); prints the Markdown summary."""
    from dashboard.analysis import (
        ledger,  # evidence is computed by the dashboard's readers (no Streamlit)
    )

    db = store.resolve_db_path(args.db, args.data_path)
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


class ServeError(SpecdashError):
    """`specdash serve` cannot start: its address is taken or unusable."""

    title = "Cannot serve"


def cmd_serve(args: argparse.Namespace) -> int:
    db = store.resolve_db_path(args.db, args.data_path).resolve()
    # Both checks come before any output: a server that announces itself and then dies leaves the
    # user at a dead URL, and a store that is not a store shows the same error on every page.
    check_store_file(db)
    check_port_free(args.host, args.port)
    app = Path(__file__).resolve().parent / "app.py"
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"warning: serving on {args.host}: anyone who can reach this address can read the store and ingest files",
            file=sys.stderr,
        )
    # glibc gives each thread its own malloc arena; Streamlit's threads would keep ~8 of them
    # with freed pages, so the server's memory only ever grew. Two arenas are plenty here.
    env = {"MALLOC_ARENA_MAX": "2", **os.environ, "SPECDASH_DB": str(db)}
    if isinstance(db, LakeStore):
        env["SPECDASH_DATA_PATH"] = db.data_path
    env.pop("SPECDASH_STORE", None)  # it would win over SPECDASH_DB, which now names the store resolved here
    # `streamlit run dashboard/app.py` puts only dashboard/ on the path: the checkout it serves goes first.
    checkout = str(app.parents[1])
    env["PYTHONPATH"] = os.pathsep.join(part for part in (checkout, os.environ.get("PYTHONPATH")) if part)
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
    print(f"specdash: serving {db} on {http_url(args.host, args.port)} (open it in a browser; Ctrl+C stops)", flush=True)
    # Become the Streamlit process, so stopping `specdash serve` stops the server (no orphaned child).
    os.execve(sys.executable, command, env)
    return 0  # not reached


def http_url(host: str, port: int) -> str:
    """The address to open; an IPv6 literal needs brackets in a URL."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


# --- the store file: a DuckDB store, or not there yet ---------------------------------------------

# Every DuckDB database file starts with an 8-byte checksum followed by this magic (checked
# against files written by duckdb 2.0); reading 12 bytes opens nothing, locks nothing.
DUCKDB_MAGIC = b"DUCK"
DUCKDB_MAGIC_OFFSET = 8
STORE_HINT = "pass --db with a store (`specdash ingest FILES --db STORE.duckdb` loads data files into one)"


def check_store_file(db: StoreRef) -> None:
    """Refuse a ``db`` that exists but is not a DuckDB store; a missing one is fine (the app says
    "no store yet" and its Ingest page creates it)."""
    if isinstance(db, LakeStore) or not db.exists():  # a lake's catalog is checked when a page opens it
        return
    if db.is_dir():
        raise StoreError(db, "is a directory, not a DuckDB store", hint=STORE_HINT)
    try:
        with db.open("rb") as file:
            header = file.read(DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError as error:
        raise StoreError(db, f"cannot read it ({error.strerror})", hint="check the file's permissions") from error
    if header[DUCKDB_MAGIC_OFFSET:] != DUCKDB_MAGIC:
        raise StoreError(db, "not a DuckDB store", hint=STORE_HINT)


# --- the port: free, or who holds it --------------------------------------------------------------

FREE_PORT_SEARCH = 20  # how many ports above a taken one are tried for the hint


def check_port_free(host: str, port: int) -> None:
    """Bind (then release) the address Streamlit will listen on; raise ``ServeError`` if it is unusable."""
    if not 1 <= port <= 65535:
        raise ServeError(None, f"--port {port}: not a TCP port", hint="pass --port N with N between 1024 and 65535")
    try:
        try_bind(host, port)
    except socket.gaierror as error:
        raise ServeError(None, f"--host {host}: cannot resolve it ({error.strerror})",
                         hint="pass --host 127.0.0.1 or an address of this machine") from error
    except OSError as error:
        raise port_error(host, port, error) from error


def try_bind(host: str, port: int) -> None:
    """Bind the socket Streamlit's server binds (streamlit/web/server/starlette: one socket, its
    family from the address), so what passes here passes there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # SO_REUSEADDR as Streamlit sets it: a port left in TIME_WAIT by a server just stopped is
        # free, while Linux still refuses a port that someone listens on.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # "::" takes IPv4 too, as there
        probe.bind((host, port))


def port_error(host: str, port: int, error: OSError) -> ServeError:
    if error.errno == errno.EADDRINUSE:
        holder = port_holder(port)
        free = next_free_port(host, port)
        instead = f"pass --port {free} (free)" if free else "pass --port N"
        return ServeError(None, f"port {port} on {host} is already in use by {holder.description}",
                          hint=f"{instead} or stop {holder.stop_what}")
    if error.errno == errno.EACCES:
        return ServeError(None, f"port {port}: ports below 1024 need root", hint="pass --port N with N of 1024 or more")
    if error.errno == errno.EADDRNOTAVAIL:
        return ServeError(None, f"--host {host}: not an address of this machine",
                          hint="pass --host 127.0.0.1 or an address of this machine")
    return ServeError(None, f"cannot listen on {host}:{port} ({error.strerror})", hint="pass another --port or --host")


def next_free_port(host: str, port: int) -> int | None:
    for candidate in range(port + 1, min(port + FREE_PORT_SEARCH, 65535) + 1):
        try:
            try_bind(host, candidate)
        except OSError:
            continue
        return candidate
    return None


@dataclass(frozen=True)
class PortHolder:
    description: str  # "PID 4722 (python3 -m http.server 8501)"
    stop_what: str  # "PID 4722", "that process"


@dataclass(frozen=True)
class ListeningSocket:
    inode: int
    uid: int


PROC_NET_TCP = ("/proc/net/tcp", "/proc/net/tcp6")
TCP_LISTEN = "0A"  # the state column of /proc/net/tcp*
COMMAND_SHOWN_CHARS = 100  # the error stays one line


def port_holder(port: int) -> PortHolder:
    """Who listens on ``port``, from Linux's /proc; a process of another user (or another network
    namespace) cannot be named, and the description says so."""
    sockets = listening_sockets(port)
    pids = sorted({pid for listener in sockets if (pid := pid_with_socket(listener.inode)) is not None})
    if pids:
        named = ", ".join(f"PID {pid} ({process_command(pid)})" for pid in pids)
        return PortHolder(named, ", ".join(f"PID {pid}" for pid in pids))
    others = sorted({listener.uid for listener in sockets if listener.uid != os.getuid()})
    if others:
        users = ", ".join(f"uid {uid} ({user_name(uid)})" for uid in others)
        return PortHolder(f"another user's process ({users}; its name is not visible to you)", "that process")
    return PortHolder("a process this check cannot see (another user's, or outside this container)", "that process")


def listening_sockets(port: int, tables: Iterable[str] = PROC_NET_TCP) -> list[ListeningSocket]:
    found: list[ListeningSocket] = []
    for table in tables:
        try:
            text = Path(table).read_text()
        except OSError:  # not Linux, or /proc not mounted: the holder stays unnamed
            continue
        found.extend(parse_listening_sockets(text, port))
    return found


def parse_listening_sockets(table_text: str, port: int) -> list[ListeningSocket]:
    """LISTEN rows for ``port`` in a /proc/net/tcp* table (columns: sl local rem st ... uid timeout inode)."""
    found = []
    for row in table_text.splitlines()[1:]:
        fields = row.split()
        if len(fields) < 10:
            continue
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        if fields[3] == TCP_LISTEN and local_port == port:
            found.append(ListeningSocket(inode=int(fields[9]), uid=int(fields[7])))
    return found


def pid_with_socket(inode: int, proc: Path = Path("/proc")) -> int | None:
    """The process with a file descriptor on socket ``inode``; only this user's processes can be read."""
    wanted = f"socket:[{inode}]"
    for process in proc.iterdir():
        if not process.name.isdigit():
            continue
        try:
            descriptors = list((process / "fd").iterdir())
        except OSError:  # another user's process, or one that just ended
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(descriptor) == wanted:
                    return int(process.name)
            except OSError:
                continue
    return None


def process_command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        command = " ".join(raw.replace(b"\0", b" ").decode(errors="replace").split())  # one line, even for `python -c`
        command = command or Path(f"/proc/{pid}/comm").read_text().strip()  # kernel threads have no cmdline
    except OSError:
        return "command not readable"
    shown = command[:COMMAND_SHOWN_CHARS]
    return shown + "…" if len(command) > COMMAND_SHOWN_CHARS else shown


def user_name(uid: int) -> str:
    import pwd  # Unix only, like /proc: imported where it is used so the CLI still imports elsewhere

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return "no such user here"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="specdash", description="Speculative-decoding results: ingest and dashboard.")
    sub = parser.add_subparsers(dest="command", required=True)
    store_cli.add_store_commands(sub)
    db_help = store_cli.DB_HELP

    serve = sub.add_parser("serve", help="start the dashboard")
    add_store_arguments(serve, db_help)
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    serve.add_argument("--max-upload-mb", type=int, default=200, help="upload size limit of the browser ingest")
    serve.set_defaults(func=cmd_serve)

    decide = sub.add_parser("decide", help="record a decision with its evidence frozen; prints its Markdown summary")
    add_store_arguments(decide, db_help)
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

    add_bench_command(sub, db_help)
    add_check_command(sub, db_help)

    drafters = sub.add_parser("drafters", help="EAGLE-3 drafter checkpoints: compare two vocabulary mappings")
    drafters_sub = drafters.add_subparsers(dest="drafters_command", required=True)
    compare = drafters_sub.add_parser("compare", help="compare two drafters' d2t mappings (position by position and as sets)")
    compare.add_argument("a", help="a drafter folder (config.json + safetensors), a .safetensors file, or an ingested drafter's name")
    compare.add_argument("b", help="the drafter (or reference mapping) to compare it against, given the same ways")
    compare.add_argument("--json", action="store_true", help="print one JSON object (draft_vocab_size, positions_differ, "
                         "positions_agree, shared_target_tokens, jaccard, ...)")
    add_store_arguments(compare, db_help + " (for drafters given by name)")
    compare.set_defaults(func=cmd_drafters)

    demo = sub.add_parser("demo", help="build the demo store from the files in data/")
    add_store_arguments(demo, db_help)
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
