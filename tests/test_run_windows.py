"""Benchmark runs tied to their server-log windows: run_log_stats and how sessions find their logs."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from dashboard.cli import main
from ingest.pipeline import ingest_paths
from tests.conftest import ROOT

K2 = ROOT / "data" / "demo" / "phase-0" / "k2-drafter"


def rows(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def test_demo_runs_get_their_windows(demo_db: Path) -> None:
    stats = rows(
        demo_db,
        "SELECT run_index, join_method, decode_lines, tokens_per_step, accepted_drafts_per_step, gen_throughput_mean "
        "FROM run_log_stats JOIN sessions USING (session_id) WHERE variant = 'k2-drafter' AND NOT is_warmup ORDER BY run_index",
    )
    assert [r[0] for r in stats] == [1, 2, 3, 4, 5]
    assert {r[1] for r in stats} == {"time_window"}
    assert all(30 <= r[2] <= 33 for r in stats)
    assert all(r[3] == pytest.approx(1.58) and r[4] == pytest.approx(0.58) for r in stats)
    seed = [50.6, 51.9, 49.1, 54.6, 53.2]
    assert all(abs(r[5] - rate) < 1.5 for r, rate in zip(stats, seed))  # the log agrees with the benchmark


def test_each_log_line_counts_for_one_run_only(demo_db: Path) -> None:
    counted = rows(demo_db, "SELECT sum(decode_lines) FROM run_log_stats JOIN sessions USING (session_id) "
                            "WHERE variant = 'baseline' AND phase = 'phase-0'")
    lines = rows(demo_db, "SELECT decode_lines FROM log_segments WHERE variant = 'baseline' AND phase = 'phase-0'")
    assert counted[0][0] <= lines[0][0]
    overlap = rows(
        demo_db,
        "SELECT count(*) FROM run_log_stats a JOIN run_log_stats b ON a.session_id = b.session_id "
        "AND a.log_source_id = b.log_source_id AND (a.run_index, a.is_warmup) <> (b.run_index, b.is_warmup) "
        "AND a.first_line_no <= b.last_line_no AND b.first_line_no <= a.last_line_no",
    )
    assert overlap[0][0] == 0


def test_separate_ingests_link_by_labels(isolated_store: Path) -> None:
    ingest_paths([K2 / "bench.json"], isolated_store, phase="phase-0", variant="k2-drafter")
    ingest_paths([K2 / "server.log"], isolated_store, phase="phase-0", variant="k2-drafter")
    assert rows(isolated_store, "SELECT DISTINCT link_method FROM session_logs") == [("phase+variant labels",)]
    assert rows(isolated_store, "SELECT count(*) FROM run_log_stats WHERE decode_lines > 0")[0][0] == 7


def test_runs_without_timestamps_join_by_grouping(isolated_store: Path, tmp_path: Path) -> None:
    session = json.loads((K2 / "bench.json").read_text())
    for run in session["runs"]:
        run.pop("started_at"), run.pop("ended_at")
    bench = tmp_path / "bench-no-times.json"
    bench.write_text(json.dumps(session))
    ingest_paths([bench, K2 / "server.log"], isolated_store)
    stats = rows(isolated_store, "SELECT DISTINCT join_method, decode_lines, round(tokens_per_step, 2) FROM run_log_stats")
    assert stats == [("grouping", 167, 1.58)]


def test_clock_skew_tolerance_is_configurable(isolated_store: Path, tmp_path: Path) -> None:
    session = json.loads((K2 / "bench.json").read_text())
    session["runs"] = [session["runs"][2]]  # first measured run, 40.5 s
    run = session["runs"][0]
    run["started_at"], run["ended_at"] = "2026-02-10T14:03:31.000", "2026-02-10T14:03:40.000"  # log lines later than this
    bench = tmp_path / "late.json"
    bench.write_text(json.dumps(session))
    assert main(["ingest", str(bench), str(K2 / "server.log"), "--clock-skew", "0"]) == 0
    tight = rows(isolated_store, "SELECT decode_lines FROM run_log_stats")[0][0]
    assert main(["ingest", str(bench), "--clock-skew", "5"]) == 0
    loose = rows(isolated_store, "SELECT decode_lines FROM run_log_stats")[0][0]
    assert loose > tight


def test_run_log_stats_for_some_sessions_equals_the_filtered_view(demo_db: Path) -> None:
    k2 = rows(demo_db, "SELECT session_id FROM sessions WHERE variant = 'k2-drafter'")[0][0]
    order = "ORDER BY session_id, run_index, is_warmup, log_source_id, segment"
    scoped = rows(demo_db, f"SELECT * FROM run_log_stats_for([$1]) {order}", [k2])
    filtered = rows(demo_db, f"SELECT * FROM run_log_stats WHERE session_id = $1 {order}", [k2])
    assert scoped == filtered and len(scoped) == 7


def test_labels_link_only_logs_whose_times_agree(isolated_store: Path, tmp_path: Path) -> None:
    session = json.loads((K2 / "bench.json").read_text())
    session["started_at"] = session["started_at"].replace("2026-02-10", "2026-02-11")
    for run in session["runs"]:  # the same benchmark, a day later: the day-before log is not its log
        run["started_at"] = run["started_at"].replace("2026-02-10", "2026-02-11")
        run["ended_at"] = run["ended_at"].replace("2026-02-10", "2026-02-11")
    later = tmp_path / "later.json"
    later.write_text(json.dumps(session))
    ingest_paths([K2 / "server.log"], isolated_store, phase="phase-0", variant="k2-drafter")
    ingest_paths([K2 / "bench.json"], isolated_store, phase="phase-0", variant="k2-drafter")
    ingest_paths([later], isolated_store, phase="phase-0", variant="k2-drafter")
    linked = rows(isolated_store, "SELECT s.started_at::DATE::VARCHAR, count(l.log_source_id) FROM sessions s "
                                  "LEFT JOIN session_logs l USING (session_id) GROUP BY ALL ORDER BY 1")
    assert linked == [("2026-02-10", 1), ("2026-02-11", 0)]
