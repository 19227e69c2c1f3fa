"""`specdash check`: exit non-zero when the newest benchmark regressed, for a CI job after a benchmark.

A thin layer over ``dashboard.analysis.regressions`` (the rule and the Markdown live there). Exit status:
0 no regression, 1 a regression, 2 nothing to check (no store, no benchmark session, an unknown
baseline) or the Markdown file cannot be written — so a CI job tells "slower" from "misconfigured".
``dashboard/cli.py`` adds it to the ``specdash`` parser with ``add_check_command(sub, db_help)``.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ingest.cli import add_store_arguments
from ingest.errors import NoStore
from ingest.storage import store

EXIT_OK, EXIT_REGRESSION, EXIT_NOTHING_TO_CHECK = 0, 1, 2
# Written out for --help: importing the analysis layer here would load pandas for every `specdash` command
# (`specdash ingest` keeps it unloaded). tests/test_check.py holds them to regressions.DEFAULT_*.
MAX_DROP_HELP, MAX_ACCEPT_DROP_HELP = "5", "10"


def add_check_command(sub: argparse._SubParsersAction, db_help: str) -> None:
    check = sub.add_parser(
        "check", help="fail (exit 1) when the newest benchmark of a variant regressed; prints a Markdown summary",
        description="Compare each variant's newest benchmark session with its previous session and with the baseline's "
                    "newest in its phase, by the Compare page's figures (Σtok/Σtime, Welch 95% CI). Exit 1 on a regression against "
                    "the previous session, 2 when there is nothing to check.",
    )
    add_store_arguments(check, db_help)
    check.add_argument("--baseline", metavar="VARIANT", help="variant to compare against (default: the one served without speculation)")
    check.add_argument("--phase", help="check only this phase's sessions (default: every phase)")
    check.add_argument("--max-drop", type=float, metavar="PCT",
                       help=f"a tok/s drop larger than this, outside the noise, is a regression (default: {MAX_DROP_HELP})")
    check.add_argument("--max-accept-drop", type=float, metavar="PCT",
                       help=f"an accept-length drop larger than this is a collapse (default: {MAX_ACCEPT_DROP_HELP})")
    check.add_argument("--fail-vs-baseline", action="store_true",
                       help="also fail when a variant's newest session is slower than the baseline's (default: report it only)")
    check.add_argument("--markdown", metavar="FILE", help="also write the Markdown summary here (for a PR comment)")
    check.add_argument("--base-url", default=None,
                       help="the dashboard's address for the permalinks (default: $SPECDASH_URL; without either, the links "
                            "are relative and the summary says so)")
    check.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """Print the Markdown summary; write it to --markdown; 1 on a regression, 2 when there is nothing to check."""
    from dashboard.analysis import regressions

    db = store.resolve_db_path(args.db, args.data_path)
    options = regressions.CheckOptions(
        baseline=args.baseline, phase=args.phase,
        max_drop_pct=regressions.DEFAULT_MAX_DROP_PCT if args.max_drop is None else args.max_drop,
        max_accept_drop_pct=regressions.DEFAULT_MAX_ACCEPT_DROP_PCT if args.max_accept_drop is None else args.max_accept_drop,
        fail_vs_baseline=args.fail_vs_baseline, base_url=args.base_url or os.environ.get("SPECDASH_URL") or None,
    )
    try:
        result = regressions.check(db, options)
    except (NoStore, regressions.NothingToCheck) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_NOTHING_TO_CHECK
    summary = regressions.markdown(result)
    print(summary, end="")
    if args.markdown:
        try:
            Path(args.markdown).write_text(summary, encoding="utf-8")
        except OSError as error:
            print(f"error: {args.markdown}: cannot write the summary ({error.strerror})", file=sys.stderr)
            return EXIT_NOTHING_TO_CHECK
    print(regressions.text_summary(result), file=sys.stderr)
    return EXIT_REGRESSION if result.failed else EXIT_OK
