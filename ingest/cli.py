"""The store's commands — ``ingest``, ``formats``, ``status``, ``label`` — one function per subcommand.

``python -m ingest`` runs these alone (the Ingest page's uploads use it). The ``specdash`` program
(``dashboard/cli.py``) adds the dashboard's commands (serve, demo, decide) to the same parser, so the
imports point one way: the dashboard uses ingest, never the reverse.
"""
from __future__ import annotations

import argparse
import importlib.abc
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from ingest.errors import SpecdashError
from ingest.explain import candidates, shape
from ingest.formats import ParseOptions
from ingest.pipeline import FileReport, expand_paths, ingest_paths, skipped_summary
from ingest.progress import ProgressBar
from ingest.reader import read_head
from ingest.registry import detect, folder_format, registered_formats
from ingest.storage import export, imports, labels, store
from ingest.storage.location import LakeStore, StoreRef
from ingest.storage.sweep_status import sweep_lines

SHOWN_CANDIDATES = 3  # closest formats `specdash formats --explain` lists for a file none reads


def cmd_ingest(args: argparse.Namespace) -> int:
    use_returning_allocator()
    if not args.own_process:
        return ingest_files(args)
    with pandas_hidden():
        return ingest_files(args)


def ingest_files(args: argparse.Namespace) -> int:
    db = store.resolve_db_path(args.db, args.data_path)
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


def in_this_call(wanted: str, paths: list[str]) -> bool:
    """Whether a --link-to value names a file this call ingests (its path, name, or name without extensions)."""
    return any(wanted in (str(path), str(path.resolve()), path.name, path.name.split(".")[0]) for path in expand_paths(paths))


def link_to_problem(db: StoreRef, wanted: str, paths: list[str]) -> str | None:
    """Why a --link-to value names no single server lifetime (None when it does, or names a file of this call)."""
    if store.link_target_count(db, wanted) == 1 or (paths and in_this_call(wanted, paths)):
        return None
    lifetimes = store.lifetimes_of_log(db, wanted)
    if len(lifetimes) > 1:
        return f"that log has {len(lifetimes)} server lifetimes; name one by its session id: {', '.join(lifetimes)}"
    return (
        "no server lifetime of that name in the store: pass a session id as the Run page shows it "
        "(e.g. 3f2a9c0d1e2b4a5f-seg1), or the file name of a log in the store or in this call"
    )


def cmd_formats(args: argparse.Namespace) -> int:
    """Every format ingest reads, in the order detection tries them, each with an example line; with
    ``--explain FILE…``, which format reads each file, or the formats it came close to and why none read it."""
    formats = registered_formats()
    if args.explain:
        for path in args.explain:
            print("\n".join(explanation_lines(Path(path))))
        return 0
    if args.json:
        print(json.dumps([{"kind": f.kind, "description": f.description, "example": f.example} for f in formats], indent=2))
        return 0
    print(f"specdash reads {len(formats)} formats, told apart by content (tried in this order; see docs/formats.md):")
    for file_format in formats:
        print(f"\n{file_format.kind}: {file_format.description}")
        print(f"    {file_format.example or '(no example line declared)'}")
    return 0


def explanation_lines(path: Path) -> list[str]:
    """``FILE: read as KIND`` or ``FILE: not read`` with the closest formats (what each shows and lacks) and
    the content's shape."""
    if path.is_dir():
        folder = folder_format(path)
        return [f"{path}: read as {folder.kind} (a folder)" if folder else f"{path}: a folder; `specdash ingest` walks it"]
    try:
        found = detect(path)
        return [f"{path}: read as {found.kind} ({found.description})"]
    except SpecdashError as error:
        lines = [f"{path}: not read — {error.message}"]
    try:
        head = read_head(path)
    except (OSError, SpecdashError):  # missing, unreadable or a broken gzip: the line above says so
        return lines
    close = candidates(head, registered_formats())[:SHOWN_CANDIDATES]
    lines += [f"  {c.format.kind}: shows {', '.join(c.found)}" + (f"; lacks {', '.join(c.missing)}" if c.missing else "")
              for c in close]
    lines.append(f"  content: {shape(head)}")
    return lines


def cmd_status(args: argparse.Namespace) -> int:
    db = store.resolve_db_path(args.db, args.data_path)
    info = store.status(db)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    if not info["exists"]:
        print(f"{info['db']}: no store yet — run `specdash ingest FILES` or `specdash demo`")
        return 0
    print(f"store: {info['db']}")
    kinds = {f"source kind {kind}": count for kind, count in info["sources_by_kind"].items()}
    width = max(map(len, [*info["rows"], *kinds]), default=0)
    for name, count in info["rows"].items():
        print(f"  {name:<{width}} {count:>11,} rows")
    for label, count in kinds.items():
        print(f"  {label:<{width}} {count:>11,} files")
    print("\n".join(sweep_lines(db)))
    print(f"  migrations: {', '.join(info['migrations'])}")
    print("\n".join(snapshot_lines(info.get("snapshots", []))))
    print("\n".join(orphan_lines(info.get("orphaned_files", []))))
    if args.sessions:
        print("\n".join(session_lines(store.session_list(db))))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    db_path = store.resolve_db_path(args.db, args.data_path)
    folder = Path(args.parquet)
    manifest = export.export_parquet(db_path, folder)
    for table in manifest["tables"].values():
        print(f"  {table['file']:<28} {table['rows']:>10,} rows")
    print(f"exported {len(manifest['tables'])} tables of {db_path} to {folder}/ ({export.MANIFEST} lists them)")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    db_path = store.resolve_db_path(args.db, args.data_path)
    result = imports.import_store(db_path, Path(args.other))
    print(f"imported {result.sources} files ({result.rows:,} rows) and {result.decisions} decisions from {args.other} "
          f"into {db_path}; {result.already_here} of its files were here already")
    return 0


def snapshot_lines(snapshots: list[dict[str, object]]) -> list[str]:
    """A lake's newest snapshots, each as the Run page's "Store as of" names it (`?as_of=ID` opens one)."""
    if not snapshots:
        return []
    lines = [f"  snapshots: {snapshots[0]['snapshots']}; the newest (Run page: ?as_of=ID shows the store as of one):"]
    lines += [f"    #{row['snapshot_id']}  {row['snapshot_time']} UTC  {row['author'] or '-'}  {row['commit_message'] or '(no message)'}"
              for row in snapshots]
    return lines


def orphan_lines(orphaned: list[str]) -> list[str]:
    """A lake's data files that no snapshot lists, and how to delete them; files in its data path DuckLake did not write."""
    left = [path for path in orphaned if store.is_ducklake_file(path)]
    foreign = [path for path in orphaned if not store.is_ducklake_file(path)]
    lines = []
    if left:
        lines.append(f"  orphaned data files: {len(left)}, written by a writer stopped before its commit; no snapshot "
                     f"lists them and nothing reads them. `specdash clean` deletes those older than {store.ORPHAN_MIN_AGE} "
                     "(a younger one may be a write still running).")
    if foreign:
        lines.append(f"  other files in the data path: {len(foreign)}, such as {foreign[0]}; DuckLake did not write them "
                     "and would count them as orphans: `specdash clean` deletes nothing while they are there.")
    return lines


def cmd_clean(args: argparse.Namespace) -> int:
    db_path = store.resolve_db_path(args.db, args.data_path)
    if not isinstance(db_path, LakeStore):
        print(f"{db_path} is a DuckDB file, which holds all of its data: nothing to clean")
        return 0
    if not db_path.exists():
        print(f"{db_path}: no store yet")
        return 0
    deleted = store.delete_orphaned_files(db_path)
    for path in deleted:
        print(f"  deleted {path}")
    print(f"deleted {len(deleted)} data file(s) of {db_path} that no snapshot lists and that are older than "
          f"{store.ORPHAN_MIN_AGE}")
    return 0


def session_lines(sessions: list[dict[str, object]]) -> list[str]:
    """The sessions by phase and variant, each with its id (for `decide --session`) and its file."""
    if not sessions:
        return ["sessions: none"]
    lines = [f"sessions ({len(sessions)}; the id is what `specdash decide --session` takes):"]
    heading = None
    for row in sessions:
        group = (row["phase"] or labels.NO_PHASE, row["variant"], row["variant_from"])
        if group != heading:
            heading = group
            lines.append(f"  {group[0]} · {group[1]}  (variant from {group[2]})")
        lines.append(f"    {row['session_id']}  {row['origin']:<15}  {row['file']}")
    return lines


def cmd_label(args: argparse.Namespace) -> int:
    db = store.resolve_db_path(args.db, args.data_path)
    if args.history:
        changes = labels.history(db)
        if args.json:
            print(json.dumps(changes, indent=2, default=str))
        for row in [] if args.json else changes:
            after = "deleted" if row["action"] == "delete" else f"→ {row['new_variant']}, {row['new_phase'] or labels.NO_PHASE}"
            print(f"{row['changed_at']:%Y-%m-%d %H:%M:%S}  {row['change_id']}  {row['action']:<7}  "
                  f"{row['path']}  (was {row['old_variant']}, {row['old_phase'] or labels.NO_PHASE}) {after}")
        if not changes and not args.json:
            print("no label changes recorded")
        return 0
    change = labels.LabelChange(
        sources=args.source or (), variant=args.variant, in_phase=args.in_phase,
        new_variant=args.to, new_phase=args.phase, delete=args.delete,
    )
    report = labels.relabel(db, change)
    print(json.dumps({"change_id": report.change_id, "action": report.action, "files": report.files}) if args.json
          else report.summary())
    return 0


DB_HELP = (f"the store: a DuckDB file, ducklake:sqlite:FILE or ducklake:postgres:CONNINFO (default: $SPECDASH_STORE, "
           f"else $SPECDASH_DB, else ./{store.DEFAULT_DB})")
DATA_PATH_HELP = ("where a DuckLake store keeps its Parquet files, a folder or an s3:// URL (default: $SPECDASH_DATA_PATH; "
                  "a SQLite catalog: FILE.files beside it)")


def add_store_arguments(parser: argparse.ArgumentParser, db_help: str = DB_HELP) -> None:
    """``--db`` (alias ``--store``) and ``--data-path``, the same on every command that opens the store."""
    parser.add_argument("--db", "--store", dest="db", help=db_help)
    parser.add_argument("--data-path", help=DATA_PATH_HELP)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ingest", description="Load experiment files into a specdash store.")
    add_store_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def add_store_commands(sub: argparse._SubParsersAction) -> None:
    """The ``ingest``, ``formats``, ``status`` and ``label`` subcommands, on any program's parser."""
    db_help = DB_HELP

    ingest = sub.add_parser("ingest", help="load benchmark JSON/JSONL, server logs and profiler traces")
    ingest.add_argument("paths", nargs="+", help="files or directories (recursive); .gz accepted")
    add_store_arguments(ingest, db_help)
    ingest.add_argument("--phase", help="phase label for these files, e.g. phase-0")
    ingest.add_argument("--variant", help="variant label (overrides what the files say)")
    ingest.add_argument("--engine", choices=["sglang", "vllm", "llama.cpp"], help="what produced the logs (checked against content)")
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
    formats.add_argument("--explain", nargs="+", metavar="FILE",
                         help="which format reads each FILE, or the formats it came closest to and what each lacks")
    formats.set_defaults(func=cmd_formats)

    status = sub.add_parser("status", help="what the store holds")
    add_store_arguments(status, db_help)
    status.add_argument("--json", action="store_true")
    status.add_argument("--sessions", action="store_true",
                        help="list every session with its id, phase, variant (and where its name came from) and file")
    status.set_defaults(func=cmd_status)

    clean = sub.add_parser(
        "clean", help="delete a team store's data files that no snapshot lists (left by a writer stopped mid-ingest)",
        description="A lake writer killed before its commit leaves the Parquet files it wrote in the data path; no "
        f"snapshot lists them and nothing reads them. Deletes those older than {store.ORPHAN_MIN_AGE} (a younger one "
        "may belong to a write still running). `specdash status` counts them. A DuckDB file has none.",
    )
    add_store_arguments(clean, db_help)
    clean.set_defaults(func=cmd_clean)

    export_ = sub.add_parser(
        "export", help="write every table of the store as Parquet files (for Spark, Trino, pandas, Polars)",
        description="One Parquet file per table, read from one consistent view of the store, and a manifest.json "
        "naming each file's rows and columns. Views are not exported: docs/current-schema.sql defines them.",
    )
    add_store_arguments(export_, db_help)
    export_.add_argument("--parquet", required=True, metavar="DIR", help="the folder to write into (created if missing)")
    export_.set_defaults(func=cmd_export)

    import_ = sub.add_parser(
        "import", help="bring another store's files and decisions into this store (a colleague's, another host's)",
        description="Every file of OTHER whose content this store does not hold comes over with its rows and labels, "
        "and every decision this store lacks; files already here stay as they are. OTHER is never written. One "
        "transaction: a failure leaves this store as it was.",
    )
    import_.add_argument("other", metavar="OTHER", help="the store to read from (a .duckdb file)")
    add_store_arguments(import_, db_help)
    import_.set_defaults(func=cmd_import)

    label = sub.add_parser(
        "label", help="rename, merge, re-phase or delete ingested files and variants (recorded; `--history` lists changes)",
        description="Label whole files after ingest, as --variant/--phase would have at ingest. Examples: "
        "`specdash label --variant 'unlabelled: runs' --to eagle3-ft` (rename; merges into an existing name), "
        "`specdash label --source k2.server.log --phase phase-1`, `specdash label --variant old --delete`.",
    )
    add_store_arguments(label, db_help)
    label.add_argument("--source", action="append", metavar="FILE",
                       help="a file: its source id, path or file name (repeatable)")
    label.add_argument("--variant", metavar="NAME", help="the files whose evidence shows this variant")
    label.add_argument("--in-phase", metavar="PHASE", help=f"with --variant: only its files of this phase ('{labels.NO_PHASE}': unphased)")
    label.add_argument("--to", metavar="NAME", help="the new variant name (an existing name merges them)")
    label.add_argument("--phase", metavar="PHASE", help=f"the new phase ('{labels.NO_PHASE}' clears it)")
    label.add_argument("--delete", action="store_true", help="remove the files' rows from the store")
    label.add_argument("--history", action="store_true", help="list the recorded label changes")
    label.add_argument("--json", action="store_true", help="the change as one JSON object")
    label.set_defaults(func=cmd_label)


class _PandasHidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is not loaded while specdash ingests (see pandas_hidden)")


@contextmanager
def pandas_hidden() -> Iterator[None]:
    """While the block runs, pandas cannot be imported, so that ingesting does not load it.

    pyarrow imports pandas on its first conversion of any array, only to ask whether the input is
    a pandas object (apache/arrow#34994): 0.1 s with the GIL held and 30 MB, a seventh of the
    ingest of a small log (measured: 0.82 → 0.70 s; 1 GB log: 4.24 → 4.10 s). DuckDB 1.5 imports it
    to bind any query parameter, for the same question. Both go on without it. pyarrow keeps its first
    answer for the rest of the process (``to_pandas`` still works after the block: it imports pandas
    then). So this is done only in a process of its own, the ``specdash`` program, where nothing in
    the ingest uses pandas. A no-op once pandas is loaded.
    """
    hidden = _PandasHidden()
    sys.meta_path.insert(0, hidden)
    try:
        yield
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
    """Run one store command; ``own_process``: the process exists for it alone."""
    return dispatch(build_parser(), argv, own_process=own_process)


def dispatch(parser: argparse.ArgumentParser, argv: list[str] | None, *, own_process: bool) -> int:
    """Parse ``argv`` with ``parser`` and run the chosen command; an expected error prints its message."""
    args = parser.parse_args(argv)
    args.own_process = own_process
    try:
        return args.func(args)
    except SpecdashError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\ninterrupted: files reported as loaded are in the store; the file in progress was not written",
            file=sys.stderr,
        )
        return 130


def run(command_main: Callable[..., int] | None = None) -> NoReturn:
    """Run ``command_main`` (default: this module's ``main``) as the process's only work, then leave
    without tearing the interpreter down.

    Once a log has been read, interpreter shutdown walks numba's and LLVM's objects through
    several garbage collections: 0.2 s of a 4 s ingest of 1 GB (measured). Everything the
    command writes is committed and its files closed by then, so only the output streams
    need flushing.
    """
    try:
        code = (command_main or main)(own_process=True)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``specdash status | head``): nothing left to say
        code = 1
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
