"""What every benchmark shares: sizes and scale, the input cache, timing children, medians, the results table.

Machines here are shared and noisy, so a figure is never one run: each is
measured ``repeats`` times (≥ 5), interleaved with its reference, and the median
is reported next to the reference's median and their ratio.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
RESULTS = BENCH / "RESULTS.md"
PYTHON = Path(sys.executable)
SPECDASH = PYTHON.parent / "specdash"
MB = 1_000_000  # sizes and rates are decimal: 1 GB = 1e9 bytes, MB/s = 1e6 bytes per second

MIN_REPEATS = 5


def bench_dir() -> Path:
    """Where generated inputs and scratch stores live (never in the repository)."""
    folder = Path(os.environ.get("SPECDASH_BENCH_DIR", "/tmp/specdash-bench"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def scratch_dir(name: str) -> Path:
    folder = bench_dir() / "scratch" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def source_digest(*files: Path) -> str:
    """A short hash of generator sources: a changed generator makes a new cached input."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return digest.hexdigest()[:10]


def cached_input(name: str, generator_files: Sequence[Path], make: Callable[[Path], None]) -> Path:
    """``bench_dir()/inputs/<name>-<generator hash>``, generated once with ``make(path)``; reused while the generator is unchanged."""
    folder = bench_dir() / "inputs"
    folder.mkdir(exist_ok=True)
    stem, dot, suffix = name.partition(".")
    path = folder / f"{stem}-{source_digest(*generator_files)}{dot}{suffix}"
    if not path.exists():
        for stale in folder.glob(f"{stem}-*{dot}{suffix}"):
            stale.unlink()
        partial = path.with_name(path.name + ".partial")
        started = time.perf_counter()
        make(partial)
        partial.rename(path)
        log(f"generated {path.name}: {path.stat().st_size / MB:,.0f} MB in {time.perf_counter() - started:.0f} s")
    return path


def free_disk_gb(path: Path) -> float:
    return shutil.disk_usage(path).free / 1e9


# --- measuring ------------------------------------------------------------------------------------

@dataclass
class ChildRun:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str


def run_child(command: Sequence[str | Path], *, env: dict[str, str] | None = None) -> ChildRun:
    """Run ``command`` to completion; wall time and the child's own peak RSS (``wait4``'s ru_maxrss).

    Output goes to temporary files, not pipes, so a chatty child can never block on a full pipe.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([str(part) for part in command], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ChildRun(wall, usage.ru_maxrss / 1024, process.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def checked(run: ChildRun, what: str) -> ChildRun:
    if run.returncode != 0:
        raise RuntimeError(f"{what} exited {run.returncode}:\n{run.stderr[-3000:]}\n{run.stdout[-2000:]}")
    return run


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: Sequence[float]) -> str:
    """min–max of the samples, to show how noisy a median is."""
    return f"{number(min(values))}–{number(max(values))}" if values else ""


def number(value: float) -> str:
    """Three significant digits, without scientific notation."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


# --- reporting ------------------------------------------------------------------------------------

@dataclass
class Row:
    """One line of a results table: a figure, the reference it is compared with, the target and the verdict."""

    figure: str
    value: str
    samples: str = ""
    reference: str = ""
    ratio: str = ""
    target: str = ""
    met: bool | None = None

    def cells(self) -> list[str]:
        verdict = {True: "yes", False: "**no**", None: "–"}[self.met]
        return [self.figure, self.value, self.samples, self.reference, self.ratio, self.target, verdict]


@dataclass
class Section:
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        header = ["figure", "median", "samples (min–max)", "reference (median)", "ratio", "target", "met?"]
        lines = [f"### {self.title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row.cells()) + " |" for row in self.rows]
        if self.notes:
            lines.append("")
            lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def git_commit() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return f"{commit}{' + uncommitted changes' if dirty else ''}"
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_header(command: str, scale: float, repeats: int, elapsed_s: float) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"## {now} · commit {git_commit()}\n\n"
        f"- command: `{command}`\n"
        f"- scale: {scale:g} (SPECDASH_BENCH_SCALE; 1 = the issue's sizes) · repeats: {repeats} · "
        f"CPUs: {os.cpu_count()} ({cpu_model()}) · Python {platform.python_version()} · "
        f"whole run: {elapsed_s / 60:.1f} min · load average at the end {os.getloadavg()[0]:.1f} (1 min), "
        f"{os.getloadavg()[2]:.1f} (15 min)\n"
    )


def append_results(header: str, sections: list[Section]) -> None:
    if not RESULTS.exists():
        RESULTS.write_text(RESULTS_PREAMBLE)
    with RESULTS.open("a") as out:
        out.write("\n" + header + "\n" + "\n".join(section.markdown() for section in sections))


RESULTS_PREAMBLE = """# Benchmark results

Appended by `make bench` (`bench/run.py`); newest run last. Each figure is the median of at least 5
runs, measured in the same run as its reference (the machines are shared and noisy: compare ratios
more than absolute numbers). Sizes are decimal (1 GB = 10⁹ bytes, MB/s = 10⁶ bytes/s). How each
figure is measured: `bench/README.md`. Where the time goes: `bench/PROFILE.md`.
"""


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
