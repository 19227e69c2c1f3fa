"""Where the time goes: py-spy profiles of what the benchmarks measure.

    python bench/profiling.py                        # log and trace ingest, Compare page (default and every phase)
    python bench/profiling.py --scale 0.3 --only compare

* ``log`` / ``trace``: ``specdash ingest`` of the benchmark's generated log / trace into a fresh store;
* ``compare`` / ``compare-all``: one cold server-side run of the Compare page (Streamlit's AppTest;
  the page's default selection / every phase selected) against the generated 10k-session store,
  with every ``dashboard.analysis.data`` function timed and the page's elements counted.

py-spy (from ``bench/.venv-hta``) samples every thread; with ``--native`` it also
unwinds into C/C++ (numpy, Arrow and DuckDB show up as themselves, at a large sampling cost). Collapsed stacks go to
``$SPECDASH_BENCH_DIR/profiles/<name>.txt`` (open them in speedscope or a flame-graph
tool); the summary — largest self and inclusive shares, and the data-function timings —
is printed and written to ``profiles/summary.md``. ``bench/PROFILE.md`` is the reading of it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import bench_env  # noqa: E402
from bench.harness import PYTHON, SPECDASH, bench_dir, log, run_child, scratch_dir  # noqa: E402

FRAME = re.compile(r"^(?P<function>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")
TOP = 18


# --- the compare page, run inside py-spy ------------------------------------------------------------

def compare_page(db: Path, phases: list[str]) -> None:
    """Run the Compare page once (cold caches) through AppTest; print the data functions' timings as JSON.

    ``phases``: put in the URL (``?phase=...``), as a user selecting them would; none = the page's default.
    """
    import functools
    import inspect

    from streamlit.testing.v1 import AppTest

    from dashboard.analysis import data

    os.environ["SPECDASH_DB"] = str(db)
    spent: Counter[str] = Counter()
    calls: Counter[str] = Counter()

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - started
                calls[name] += 1
        return wrapper

    for name, function in inspect.getmembers(data, inspect.isfunction):
        if function.__module__ == data.__name__ and not name.startswith("_"):
            setattr(data, name, timed(name, function))
    app = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=3600)
    if phases:
        app.query_params["phase"] = phases
    started = time.perf_counter()
    app.run()
    total = time.perf_counter() - started
    errors = [str(e.value)[:300] for e in app.exception]
    result = {"total_s": total, "spent": spent, "calls": calls, "errors": errors, "elements": element_counts(app)}
    print("COMPARE_RESULT " + json.dumps(result), flush=True)


def element_counts(app: Any) -> dict[str, int]:
    """How many of each element kind the run produced (what the browser then has to render)."""
    kinds = ("metric", "warning", "info", "caption", "markdown", "dataframe", "expander", "button")
    counts = {kind: len(getattr(app, kind)) for kind in kinds if hasattr(app, kind)}
    counts["plotly_chart"] = len(app.get("plotly_chart"))
    return counts


# --- running and summarising py-spy -----------------------------------------------------------------

NATIVE = False  # --native: unwind into C/C++ frames too (much slower to sample: 5-10x longer runs)


def record(name: str, command: list[str | Path], rate: int) -> tuple[Path, str]:
    """Profile ``command`` with py-spy; the collapsed-stack file and the command's stdout."""
    spy = bench_env.ensure().parent / "py-spy"
    out = bench_dir() / "profiles" / f"{name}{'-native' if NATIVE else ''}.txt"
    out.parent.mkdir(exist_ok=True)
    native = ["--native"] if NATIVE else []
    done = run_child([spy, "record", "--rate", str(rate), "--format", "raw", "--output", out, *native, "--", *command])
    if done.returncode != 0 or not out.exists() or not out.stat().st_size:
        raise RuntimeError(f"py-spy could not profile {name}: {done.stderr.strip()[-800:]}")
    return out, done.stdout


def frame_key(frame: str, with_line: bool = False) -> str:
    """``function (path/to/file.py:12)`` → ``function (file.py)`` (or ``file.py:12``), paths shortened to the package."""
    match = FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match["file"]
    for marker in ("site-packages/", f"{ROOT}/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    line = frame.strip().rsplit(":", 1)[-1].rstrip(")") if with_line and ":" in frame else ""
    return f"{match['function']} ({path}{':' + line if line.isdigit() else ''})"


def summarize(path: Path) -> tuple[int, list[tuple[str, int]], list[tuple[str, int]], list[tuple[str, int]]]:
    """(samples, top self, top inclusive, top own lines) from a py-spy raw (collapsed) file.

    "Own lines": each sample goes to the deepest frame in specdash's code, with its line, so the time
    spent inside numpy/Arrow/DuckDB calls lands on the line of ours that made the call.
    """
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    own_lines: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [frame_key(frame) for frame in stack.split(";") if frame]
        if not frames:
            continue
        total += count
        self_time[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
        deepest_own = next((raw for raw in reversed(stack.split(";")) if ours(frame_key(raw))), None)
        own_lines[frame_key(deepest_own, with_line=True) if deepest_own else "(outside specdash: imports, interpreter)"] += count
    return total, self_time.most_common(TOP), inclusive.most_common(TOP * 3), own_lines.most_common(TOP)


def table(title: str, rows: list[tuple[str, int]], total: int, keep: Callable[[str], bool] = lambda key: True) -> str:
    lines = [f"**{title}**", "", "| share | samples | function (file) |", "|---:|---:|---|"]
    shown = [(key, count) for key, count in rows if keep(key)][:TOP]
    lines += [f"| {100 * count / total:.1f} % | {count} | `{key}` |" for key, count in shown]
    return "\n".join(lines) + "\n"


def ours(key: str) -> bool:
    return "(ingest/" in key or "(dashboard/" in key or "(bench/" in key


def report(name: str, path: Path, seconds: float, extra: str = "") -> str:
    total, self_top, inclusive_top, own_lines = summarize(path)
    text = f"## {name}\n\n{total} samples over {seconds:.1f} s (all threads{', native frames' if NATIVE else ''}; `{path}`)\n\n"
    text += table("largest self time", self_top, total) + "\n"
    text += table("largest inclusive time, specdash's own functions", inclusive_top, total, ours) + "\n"
    text += table("specdash's lines the time is spent under (deepest own frame, callees included)", own_lines, total) + "\n"
    return text + extra


# --- the three profiles ---------------------------------------------------------------------------

def profile_log(scale: float, rate: int) -> str:
    from bench import bench_log

    source = bench_log.log_input(int(bench_log.FULL_BYTES * scale))
    db = scratch_dir("profile-log") / "store.duckdb"
    started = time.perf_counter()
    path, _ = record("log-ingest", [SPECDASH, "ingest", source, "--db", db], rate)
    return report(f"Log ingest: `specdash ingest` of {source.stat().st_size / 1e6:,.0f} MB", path, time.perf_counter() - started)


def profile_trace(scale: float, rate: int) -> str:
    from bench import bench_trace

    trace = bench_trace.trace_input(int(bench_trace.FULL_BYTES * scale))
    db = scratch_dir("profile-trace") / "store.duckdb"
    started = time.perf_counter()
    path, _ = record("trace-ingest", [SPECDASH, "ingest", trace, "--db", db], rate)
    return report(f"Trace ingest: `specdash ingest` of {trace.stat().st_size / 1e6:,.0f} MB gzip", path, time.perf_counter() - started)


def profile_compare(scale: float, rate: int, every_phase: bool = False) -> str:
    from bench import gen_store

    db = scratch_dir("profile-compare") / "scale.duckdb"
    counts = gen_store.build(db, scale)
    phases = list(gen_store.PHASES) if every_phase else []
    started = time.perf_counter()
    name = "compare-every-phase" if every_phase else "compare-rerun"
    path, stdout = record(name, [PYTHON, Path(__file__), "--compare-page", db, *phases], rate)
    seconds = time.perf_counter() - started
    line = next((line for line in stdout.splitlines() if line.startswith("COMPARE_RESULT ")), None)
    extra = ""
    if line:
        result = json.loads(line.removeprefix("COMPARE_RESULT "))
        rows = sorted(result["spent"].items(), key=lambda item: -item[1])
        extra = (
            f"**`dashboard.analysis.data` functions during that run** (AppTest run {result['total_s']:.1f} s; inclusive: a function "
            "that calls another counts both)\n\n| function | seconds | share of the run | calls |\n|---|---:|---:|---:|\n"
            + "\n".join(f"| `{name}` | {spent:.2f} | {100 * spent / result['total_s']:.0f} % | {result['calls'][name]} |" for name, spent in rows)
            + "\n"
        )
        extra += "\nelements the run produced: " + ", ".join(f"{kind} {count:,}" for kind, count in result["elements"].items()) + "\n"
        if result["errors"]:
            extra += f"\npage errors: {result['errors']}\n"
    selected = "every phase selected" if every_phase else "the page's default selection"
    title = (f"Compare page, one cold server-side run, {selected}: {counts['sessions']:,} sessions, {counts['bench_runs']:,} runs, "
             f"{counts['decode_stats']:,} decode lines")
    return report(title, path, seconds, extra)


PROFILES = {
    "log": profile_log,
    "trace": profile_trace,
    "compare": profile_compare,
    "compare-all": lambda scale, rate: profile_compare(scale, rate, every_phase=True),
}


def main() -> int:
    parser = argparse.ArgumentParser(description="py-spy profiles of specdash's benchmarked paths")
    parser.add_argument("--scale", type=float, default=float(os.environ.get("SPECDASH_BENCH_SCALE", "1")))
    parser.add_argument("--only", default=",".join(PROFILES))
    parser.add_argument("--rate", type=int, default=100, help="samples per second")
    parser.add_argument("--native", action="store_true", help="include native frames (numpy, Arrow, DuckDB); slows the run down")
    parser.add_argument("--compare-page", nargs="+", help=argparse.SUPPRESS)  # the child run inside py-spy: DB [PHASE...]
    args = parser.parse_args()
    if args.compare_page:
        compare_page(Path(args.compare_page[0]), args.compare_page[1:])
        return 0
    global NATIVE
    NATIVE = args.native
    parts = []
    for name in [n.strip() for n in args.only.split(",") if n.strip()]:
        log(f"profiling {name}")
        parts.append(PROFILES[name](args.scale, args.rate))
        print(parts[-1], flush=True)
    summary = bench_dir() / "profiles" / f"summary{'-native' if NATIVE else ''}.md"
    summary.write_text(f"# py-spy summary (scale {args.scale:g})\n\n" + "\n".join(parts))
    log(f"summary written to {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
