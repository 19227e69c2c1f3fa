"""Crash safety: `specdash ingest` killed with SIGKILL at random moments never leaves a half-loaded source.

One call ingests a few small files and a generated ~32 MB server log. A calibration run
records when each file finishes; kills (fixed seed) then land anywhere in the run, inside the
big file's write transaction, and right after a file was reported loaded. After every kill the
store must open, and every ``sources`` row must have exactly its ``rows_loaded`` rows across the
data tables, with no row of an unknown source. Re-running completes the work; re-ingesting is a
no-op; a killed ``--replace`` leaves each file with its old rows or its new rows, never a mix.
"""
from __future__ import annotations

import random
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest

from tests.reliability_helpers import (
    remove_store,
    run_ingest,
    sources_summary,
    start_ingest,
    store_inconsistencies,
    write_bench_json,
    write_server_log,
)

SEED = 20260210
BIG_LOG_MB = 32
FRESH_KILLS = 15
REPLACE_KILLS = 9
COMPLETE_EVERY = 5  # after this many kills, re-run without a kill and check the work got done
# Kills aimed at the big file's write land this long at most after its rows start reaching the file
# (its write transaction took ~0.15 s for 40 MB on an idle machine, from the first block written to the checkpoint).
WRITE_WINDOW_S = 0.2


@dataclass(frozen=True)
class Inputs:
    files: list[Path]  # in command-line order
    big: Path
    replaced: list[Path]  # the files the --replace trials swap


@dataclass
class Timeline:
    """When each file's summary line appeared, in seconds after the process started."""

    done_at: dict[str, float]
    total: float


@dataclass
class Kill:
    """A kill ``delay`` seconds after the process printed ``anchor`` file lines (0: after it started).

    With ``after_growth`` the delay starts only once the store file has grown past its size at the
    anchor: the next file's rows are being written (DuckDB writes big appends to the file before the
    commit), so the kill lands inside the write transaction however loaded the machine is.
    """

    anchor: int
    delay: float
    aim: str
    after_growth: bool = False
    killed: bool = False
    files_done: int = 0
    mid_write: bool = False  # the store file had grown since the last committed file: rows in flight
    wal_left: bool = False
    problems: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    folder = tmp_path_factory.mktemp("crash-inputs")
    big = folder / "big-server.log"
    write_server_log(big, megabytes=BIG_LOG_MB, seed=1)
    small = folder / "small-server.log"
    write_server_log(small, megabytes=0.3, seed=2)
    bench_a = write_bench_json(folder / "bench-a.json", variant="k2-drafter", phase="phase-0", seed=3)
    bench_b = write_bench_json(folder / "bench-b.json", variant="baseline", phase="phase-0", seed=4)
    return Inputs(files=[bench_a, big, small, bench_b], big=big, replaced=[bench_a, big])


def timed_run(db: Path, files: list[Path], *extra: str) -> Timeline:
    """Run an ingest to the end, noting when each file's line is printed."""
    started = time.monotonic()
    process = start_ingest(db, files, *extra)
    done_at: dict[str, float] = {}

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            done_at[line.split(":", 1)[0]] = time.monotonic() - started

    reader = threading.Thread(target=read)
    reader.start()
    process.wait(timeout=120)
    reader.join()
    total = time.monotonic() - started
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    assert set(done_at) == {str(f) for f in files}, done_at
    return Timeline(done_at, total)


def store_bytes(db: Path) -> int:
    """Bytes in the store file and its WAL (a file that vanishes meanwhile, like a checkpointed WAL, counts 0)."""
    total = 0
    for path in (db, Path(f"{db}.wal")):
        try:
            total += path.stat().st_size
        except FileNotFoundError:
            pass
    return total


def kill_after(db: Path, files: list[Path], kill: Kill, *extra: str) -> Kill:
    """Run an ingest and SIGKILL it at the kill's moment (unless it finished first); note what it left."""
    process = start_ingest(db, files, *extra)
    lines: list[str] = []
    size_at_last_line = [store_bytes(db)]
    anchored = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            size_at_last_line[0] = store_bytes(db)
            lines.append(line)
            if len(lines) >= kill.anchor:
                anchored.set()
        anchored.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if kill.anchor:
        anchored.wait(timeout=120)
    if kill.after_growth:
        size_at_anchor = store_bytes(db)
        deadline = time.monotonic() + 60
        while store_bytes(db) <= size_at_anchor and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
    try:
        process.wait(timeout=kill.delay)
    except subprocess.TimeoutExpired:
        size_at_kill = store_bytes(db)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        kill.killed = True
        kill.mid_write = size_at_kill > size_at_last_line[0]
    reader.join(timeout=30)
    kill.wal_left = Path(f"{db}.wal").exists()
    kill.files_done = sum(1 for line in lines if "rows loaded" in line or "already ingested" in line)
    return kill


def test_the_consistency_check_sees_missing_and_orphan_rows(reference: tuple[Path, Timeline], tmp_path: Path) -> None:
    """The invariant checked after every kill does fail on a half-loaded source or rows of an unknown source."""
    db = tmp_path / "damaged.duckdb"
    shutil.copy(reference[0], db)
    with duckdb.connect(str(db)) as con:
        [(source_id,)] = con.execute("SELECT DISTINCT source_id FROM decode_stats LIMIT 1").fetchall()
        con.execute("DELETE FROM decode_stats WHERE source_id = ? AND line_no % 1000 = 7", [source_id])
        con.execute("INSERT INTO sessions (session_id, source_id, session_key) VALUES ('ghost-0', 'ghost', 0)")
    problems = store_inconsistencies(db)
    assert any(f"source {source_id} says" in problem for problem in problems), problems
    assert any("rows of source ghost, which is not in sources" in problem for problem in problems), problems


def planned_kills(timeline: Timeline, files: list[Path], big: Path, count: int, rng: random.Random) -> list[Kill]:
    """Kill moments in rotation: anywhere in the run, inside the big file's write, right after a file committed."""
    big_position = [str(f) for f in files].index(str(big))
    kills = []
    for index in range(count):
        aim = ("anywhere", "big file's write", "between files")[index % 3]
        if aim == "anywhere":
            kills.append(Kill(anchor=0, delay=rng.uniform(0.0, timeline.total), aim=aim))
        elif aim == "big file's write":
            kills.append(Kill(anchor=big_position, delay=rng.uniform(0.0, WRITE_WINDOW_S), aim=aim, after_growth=True))
        else:
            kills.append(Kill(anchor=rng.randint(1, len(files)), delay=rng.uniform(0.0, 0.03), aim=aim))
    return kills


@pytest.fixture(scope="module")
def reference(inputs: Inputs, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Timeline]:
    """A store with every input loaded by one uninterrupted run, and that run's timeline."""
    db = tmp_path_factory.mktemp("crash-reference") / "reference.duckdb"
    timeline = timed_run(db, inputs.files)
    assert store_inconsistencies(db) == []  # the invariant holds without any crash
    assert len(sources_summary(db)) == len(inputs.files)
    return db, timeline


def report(title: str, kills: list[Kill], **figures: object) -> None:
    killed = [k for k in kills if k.killed]
    by_files_done = {n: sum(1 for k in killed if k.files_done == n) for n in sorted({k.files_done for k in killed})}
    by_aim = {aim: sum(1 for k in killed if k.aim == aim) for aim in dict.fromkeys(k.aim for k in kills)}
    print(
        f"\n{title}: {len(kills)} trials, {len(killed)} killed mid-run, "
        f"{sum(1 for k in kills if k.problems)} inconsistent stores; killed by aim {by_aim}; "
        f"by files finished before the kill {by_files_done}; with rows in flight {sum(k.mid_write for k in killed)}; "
        f"WAL left behind {sum(k.wal_left for k in killed)}; "
        + ", ".join(f"{key} {value}" for key, value in figures.items())
    )


def test_sigkill_at_random_moments_leaves_every_source_whole(
    inputs: Inputs, reference: tuple[Path, Timeline], tmp_path: Path
) -> None:
    reference_db, timeline = reference
    expected = sources_summary(reference_db)
    rng = random.Random(SEED)
    db = tmp_path / "killed.duckdb"
    kills = planned_kills(timeline, inputs.files, inputs.big, FRESH_KILLS, rng)
    completions = 0
    for number, kill in enumerate(kills, start=1):
        remove_store(db)
        kill_after(db, inputs.files, kill)
        kill.problems = store_inconsistencies(db)
        assert kill.problems == [], f"kill {number} ({kill}): {kill.problems}"
        if number % COMPLETE_EVERY == 0 or number == len(kills):
            rerun = run_ingest(db, inputs.files)
            assert rerun.returncode == 0, rerun.stderr
            assert sources_summary(db) == expected, f"re-run after kill {number} did not complete the work"
            assert store_inconsistencies(db) == []
            completions += 1
    report("fresh ingest", kills, **{"re-runs that completed the work": completions})
    killed = [k for k in kills if k.killed]
    # The kills covered the run: before the big file was loaded, with its rows in flight, and after it.
    assert len(killed) >= FRESH_KILLS // 2
    assert any(k.files_done == 1 for k in killed) and any(k.files_done >= 2 for k in killed)
    assert any(k.mid_write for k in killed), "no kill landed while rows were being written"


def labels_per_source(db: Path) -> dict[str, set[str | None]]:
    """source_id → every variant label its rows carry (the source row's own and its sessions'/configs')."""
    labels: dict[str, set[str | None]] = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for source_id, variant in con.execute(
            "SELECT source_id, variant FROM sources UNION ALL SELECT source_id, variant FROM sessions "
            "UNION ALL SELECT source_id, variant FROM server_configs"
        ).fetchall():
            labels.setdefault(source_id, set()).add(variant)
    return labels


def test_sigkill_during_replace_leaves_old_rows_or_new_rows(inputs: Inputs, tmp_path: Path) -> None:
    base = tmp_path / "base.duckdb"
    assert run_ingest(base, inputs.replaced, "--variant", "old").returncode == 0
    expected = sources_summary(base)
    calibration = tmp_path / "calibration.duckdb"
    shutil.copy(base, calibration)
    timeline = timed_run(calibration, inputs.replaced, "--replace", "--variant", "new")
    assert set(map(frozenset, labels_per_source(calibration).values())) == {frozenset({"new"})}

    rng = random.Random(SEED + 1)
    db = tmp_path / "replaced.duckdb"
    kills = planned_kills(timeline, inputs.replaced, inputs.big, REPLACE_KILLS, rng)
    outcomes = {"old": 0, "new": 0}
    for number, kill in enumerate(kills, start=1):
        remove_store(db)
        shutil.copy(base, db)
        kill_after(db, inputs.replaced, kill, "--replace", "--variant", "new")
        kill.problems = store_inconsistencies(db)
        labels = labels_per_source(db)
        assert set(labels) == set(expected), f"kill {number}: a source vanished during --replace"
        for source_id, seen in labels.items():
            assert seen in ({"old"}, {"new"}), f"kill {number} ({kill}): {source_id} mixes {seen}"
            outcomes[next(iter(seen))] += 1
        assert kill.problems == [], f"kill {number} ({kill}): {kill.problems}"
        if number % COMPLETE_EVERY == 0 or number == len(kills):
            done = run_ingest(db, inputs.replaced, "--replace", "--variant", "new")
            assert done.returncode == 0, done.stdout + done.stderr
            assert set(map(frozenset, labels_per_source(db).values())) == {frozenset({"new"})}
            assert sources_summary(db) == expected
    report("--replace", kills, **{"sources left with old rows": outcomes["old"], "with new rows": outcomes["new"]})
    assert outcomes["old"] and outcomes["new"], "kills should land both before and after a replace committed"


def test_reingesting_after_a_complete_run_changes_nothing(
    inputs: Inputs, reference: tuple[Path, Timeline], tmp_path: Path
) -> None:
    db = tmp_path / "again.duckdb"
    shutil.copy(reference[0], db)

    def snapshot() -> tuple[dict[str, int], str]:
        with duckdb.connect(str(db), read_only=True) as con:
            change = con.execute("SELECT value FROM store_meta WHERE key = 'last_change'").fetchone()[0]
        return sources_summary(db), change

    before = snapshot()
    again = run_ingest(db, inputs.files)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already ingested (same sha256)") == len(inputs.files)
    assert snapshot() == before
