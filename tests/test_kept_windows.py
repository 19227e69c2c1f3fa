"""The run-window tables ingest keeps (migration 007) hold exactly what the views compute, and the
dashboard's readers give the same numbers from them as the views' own queries do."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest

from dashboard.analysis import data
from dashboard.cli import main
from ingest.pipeline import ingest_paths
from ingest.storage import run_windows, store
from tests.conftest import ROOT

DEMO = ROOT / "data" / "demo" / "phase-0"
K2, BASELINE, SCRATCH = DEMO / "k2-drafter", DEMO / "baseline", DEMO / "from-scratch"
WINDOW_COLUMNS = (
    "session_id, run_index, is_warmup, log_source_id, segment, join_method, decode_lines, first_line_no, last_line_no, "
    "window_start, window_end, tokens_per_step, accepted_drafts_per_step, gen_throughput_mean, gen_throughput_min, "
    "gen_throughput_max"
)
# each kept table against the view it keeps, as the same columns
KEPT_AND_VIEW = {
    "log_segment_spans": ("SELECT * EXCLUDE (ingest_group) FROM log_segment_spans", "SELECT * FROM log_segments"),
    "session_log_links": ("SELECT * FROM session_log_links", "SELECT * FROM session_logs"),
    "run_windows": (f"SELECT {WINDOW_COLUMNS} FROM run_windows", f"SELECT {WINDOW_COLUMNS} FROM run_log_stats"),
}

# The Compare page's accept length as it was computed before run_windows kept range sums: every decode line
# inside a measured window's line range, once per group (DISTINCT). The kept sums must give the same numbers.
REFERENCE_ACCEPT_LENGTH = """
    WITH windows AS (
        SELECT w.session_id, w.log_source_id, w.segment, w.first_line_no, w.last_line_no,
               s.phase, coalesce(s.variant, '(unlabelled)') AS variant
        FROM run_log_stats w JOIN sessions s USING (session_id)
        WHERE NOT w.is_warmup AND w.first_line_no IS NOT NULL
          AND (len($sessions) = 0 OR list_contains($sessions, s.session_id))
    ), lines AS (
        SELECT DISTINCT
               CASE WHEN $by = 'session' THEN w.session_id END AS session_id,
               CASE WHEN $by = 'phase' THEN w.phase END AS phase,
               w.variant, d.source_id, d.segment, d.line_no,
               d.tokens_per_step, d.accepted_drafts_per_step, coalesce(d.running_req, 1) AS weight, d.cuda_graph
        FROM windows w JOIN decode_stats d
          ON d.source_id = w.log_source_id AND d.segment IS NOT DISTINCT FROM w.segment
         AND d.line_no BETWEEN w.first_line_no AND w.last_line_no
    )
    SELECT session_id, phase, variant,
           sum(tokens_per_step * weight) FILTER (WHERE tokens_per_step IS NOT NULL)
               / sum(weight) FILTER (WHERE tokens_per_step IS NOT NULL) AS tokens_per_step,
           sum(accepted_drafts_per_step * weight) FILTER (WHERE accepted_drafts_per_step IS NOT NULL)
               / sum(weight) FILTER (WHERE accepted_drafts_per_step IS NOT NULL) AS accepted_drafts_per_step,
           count(*) AS log_lines,
           count(*) FILTER (WHERE tokens_per_step IS NOT NULL) AS accept_lines,
           count(DISTINCT source_id) AS log_files,
           list(DISTINCT cuda_graph ORDER BY cuda_graph) FILTER (WHERE cuda_graph IS NOT NULL) AS cuda_graph
    FROM lines
    GROUP BY ALL
    ORDER BY variant, phase, session_id
"""


def query(db: Path, sql: str, params: dict[str, Any] | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def same_rows(left: list[tuple], right: list[tuple]) -> bool:
    """Equal as multisets; floats equal to 1e-12 (DuckDB may add a window's lines in another order)."""
    def key(row: tuple) -> str:
        return repr(tuple(round(v, 9) if isinstance(v, float) else v for v in row))

    def equal(a: Any, b: Any) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-12) or (math.isnan(a) and math.isnan(b))
        return a == b

    if len(left) != len(right):
        return False
    return all(len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
               for a, b in zip(sorted(left, key=key), sorted(right, key=key)))


def assert_kept_tables_match_views(db: Path) -> None:
    with duckdb.connect(str(db), read_only=True) as con:
        assert run_windows.is_current(con)
    for table, (kept, view) in KEPT_AND_VIEW.items():
        kept_rows, view_rows = query(db, kept), query(db, view)
        assert same_rows(kept_rows, view_rows), f"{table} differs from its view:\n{kept_rows}\n!=\n{view_rows}"


def assert_accept_length_matches_reference(db: Path, session_ids: list[str] | None = None) -> None:
    for by in ("variant", "session", "phase"):
        found = data.accept_length(db, [], [], session_ids or [], by=by)
        # Sessions of other evidence (server lifetimes, bench records) bring their own rows: the run windows' only.
        found = found[found["accept_basis"] == "server log lines in the run windows"].drop(columns="accept_basis")
        found = found.reset_index(drop=True)
        with duckdb.connect(str(db), read_only=True) as con:
            expected = con.execute(REFERENCE_ACCEPT_LENGTH, {"by": by, "sessions": session_ids or []}).df()
        pd.testing.assert_frame_equal(found, expected, check_exact=False, rtol=1e-12)


def test_the_demo_store_keeps_what_the_views_compute(demo_db: Path) -> None:
    assert_kept_tables_match_views(demo_db)
    counts = {table: len(query(demo_db, f"SELECT * FROM {table}")) for table in KEPT_AND_VIEW}
    # Phase 0: 3 logs linked to 3 sessions of 7 runs; phase 1: 2 logs, no benchmark session; phase 2: 2 and 2.
    assert counts == {"log_segment_spans": 7, "session_log_links": 5, "run_windows": 35}
    assert_accept_length_matches_reference(demo_db)


def test_range_sums_add_up_the_lines_of_each_window(demo_db: Path) -> None:
    kept = query(demo_db, """
        SELECT range_lines, range_accept_lines, range_tokens_weighted, range_tokens_weight, range_cuda_graph_on
        FROM run_windows WHERE first_line_no IS NOT NULL ORDER BY session_id, is_warmup, run_index""")
    direct = query(demo_db, """
        SELECT count(*), count(d.tokens_per_step), sum(d.tokens_per_step * coalesce(d.running_req, 1)),
               sum(coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL), bool_or(d.cuda_graph)
        FROM run_windows w JOIN decode_stats d ON d.source_id = w.log_source_id AND d.segment = w.segment
         AND d.line_no BETWEEN w.first_line_no AND w.last_line_no
        GROUP BY w.session_id, w.is_warmup, w.run_index ORDER BY w.session_id, w.is_warmup, w.run_index""")
    assert same_rows(kept, direct) and len(kept) == 35  # 5 benchmark sessions (phases 0 and 2) of 7 runs
    assert {row[0] for row in kept} >= {31}  # a measured k2 window of ~40 s at 1.3 s per line


def shifted_bench(tmp_path: Path, name: str, *, days: int = 0, drop_times: bool = False, note: str = "") -> Path:
    """A copy of K2's bench.json: a day later, without run times, or only differing by an extra key."""
    session = json.loads((K2 / "bench.json").read_text())
    for run in session["runs"]:
        if drop_times:
            run.pop("started_at"), run.pop("ended_at")
        elif days:
            run["started_at"] = run["started_at"].replace("2026-02-10", f"2026-02-{10 + days}")
            run["ended_at"] = run["ended_at"].replace("2026-02-10", f"2026-02-{10 + days}")
    if note:
        session["note"] = note
    path = tmp_path / name
    path.write_text(json.dumps(session))
    return path


def test_kept_tables_follow_separate_ingests_a_replace_and_a_reingest(isolated_store: Path, tmp_path: Path) -> None:
    steps = [
        lambda: ingest_paths([K2 / "bench.json"], isolated_store, phase="phase-0", variant="k2-drafter"),  # no log yet
        lambda: ingest_paths([K2 / "server.log"], isolated_store, phase="phase-0", variant="k2-drafter"),  # links by labels
        lambda: ingest_paths([shifted_bench(tmp_path, "later.json", days=1)], isolated_store, phase="phase-0",
                             variant="k2-drafter"),  # labels match, times do not: no link
        lambda: ingest_paths([BASELINE / "bench.json", BASELINE / "server.log"], isolated_store),  # one call
        lambda: ingest_paths([shifted_bench(tmp_path, "no-times.json", drop_times=True), SCRATCH / "server.log"],
                             isolated_store),  # grouping: the call's only log
        lambda: ingest_paths([K2 / "server.log"], isolated_store, phase="phase-1", variant="k2-drafter",
                             replace=True),  # relabelled: the label links move
        lambda: ingest_paths([K2 / "server.log"], isolated_store, phase="phase-1", variant="k2-drafter"),  # a no-op
    ]
    seen_methods: set[str] = set()
    for step in steps:
        reports = step()
        assert not [r for r in reports if r.failed]
        assert_kept_tables_match_views(isolated_store)
        seen_methods |= {row[0] for row in query(isolated_store, "SELECT DISTINCT link_method FROM session_log_links")}
    assert seen_methods == {"phase+variant labels", "same ingest call", "same ingest call, only log"}
    assert query(isolated_store, "SELECT count(*) FROM session_log_links WHERE link_method = 'phase+variant labels'") == [(0,)]
    assert_accept_length_matches_reference(isolated_store)


def test_a_second_log_in_the_call_ends_the_only_log_link(isolated_store: Path, tmp_path: Path) -> None:
    no_times = shifted_bench(tmp_path, "no-times.json", drop_times=True)
    seen = []

    def after_each(report: Any) -> None:  # files load in the order given: bench, then one log, then another
        store.release_held_writer(isolated_store)  # ingest_paths keeps its writer open between files
        seen.append(query(isolated_store, "SELECT link_method FROM session_log_links"))
        assert_kept_tables_match_views(isolated_store)

    ingest_paths([no_times, SCRATCH / "server.log", BASELINE / "server.log"], isolated_store, on_report=after_each)
    assert seen == [[], [("same ingest call, only log",)], []]


def test_overlapping_windows_pool_each_line_once(isolated_store: Path, tmp_path: Path) -> None:
    """Two sessions of one variant over the same log lines: the accept length counts every line once."""
    twin = shifted_bench(tmp_path, "twin.json", note="the same runs, benchmarked again")
    ingest_paths([K2 / "bench.json", twin, K2 / "server.log"], isolated_store, phase="phase-0", variant="k2-drafter")
    assert_kept_tables_match_views(isolated_store)
    by_variant = data.accept_length(isolated_store, [], [])
    assert by_variant["log_lines"].tolist() == [159]  # not twice 159
    assert by_variant["tokens_per_step"].iloc[0] == pytest.approx(1.58)
    assert_accept_length_matches_reference(isolated_store)


def test_a_clock_skew_set_without_a_load_falls_back_to_the_views_until_a_load_rebuilds(
    isolated_store: Path, tmp_path: Path
) -> None:
    session = json.loads((K2 / "bench.json").read_text())
    session["runs"] = [session["runs"][2]]  # one measured run, ending seconds before the log's next lines
    session["runs"][0].update(started_at="2026-02-10T14:03:31.000", ended_at="2026-02-10T14:03:40.000")
    late = tmp_path / "late.json"
    late.write_text(json.dumps(session))
    assert main(["ingest", str(late), str(K2 / "server.log"), "--clock-skew", "0"]) == 0
    assert_kept_tables_match_views(isolated_store)
    session_id = query(isolated_store, "SELECT session_id FROM sessions")[0][0]
    tight = data.session_runs(isolated_store, session_id)
    assert main(["ingest", str(late), "--clock-skew", "5"]) == 0  # nothing loaded: the tables are stale
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        assert not run_windows.is_current(con)
    loose = data.session_runs(isolated_store, session_id)  # read from the views: the new skew counts
    assert loose["decode_lines"].sum() > tight["decode_lines"].sum()
    assert_accept_length_matches_reference(isolated_store)
    assert main(["ingest", str(BASELINE / "bench.json")]) == 0  # a load with the new skew rebuilds everything
    assert_kept_tables_match_views(isolated_store)
    pd.testing.assert_frame_equal(data.session_runs(isolated_store, session_id), loose)


def test_the_dashboard_reads_the_same_from_tables_and_views(demo_db: Path, tmp_path: Path) -> None:
    stale = tmp_path / "stale.duckdb"
    stale.write_bytes(demo_db.read_bytes())
    with store.writer(stale) as con:  # the same rows, but the tables no longer vouch for them
        con.execute("UPDATE store_meta SET value = 'computed from other rows' WHERE key = ?", [run_windows.BASIS_KEY])
    with duckdb.connect(str(stale), read_only=True) as con:
        assert not run_windows.is_current(con)
    session = query(demo_db, "SELECT session_id FROM sessions WHERE variant = 'k2-drafter'")[0][0]
    variants = [row[0] for row in query(demo_db, "SELECT DISTINCT variant FROM sessions ORDER BY 1")]
    for name, args in [("accept_length", ([], variants)), ("configs_by_variant", ([], variants)), ("session_runs", (session,)),
                       ("session_logs", (session,)), ("log_windows", (session,)), ("session_config", (session,)),
                       ("variant_config", ("baseline", "phase-0"))]:
        kept, views = getattr(data, name)(demo_db, *args), getattr(data, name)(stale, *args)
        pd.testing.assert_frame_equal(kept, views, check_exact=False, rtol=1e-12, obj=name)


def test_a_run_seen_by_two_logs_alike_takes_every_log_figure_from_the_same_one(isolated_store: Path, tmp_path: Path) -> None:
    """Two logs with the same decode lines in a run's window: the Run page's figures come
    from one window, the same one every time (the lowest log source id), not a mix of both."""
    other_log = tmp_path / "server-again.log"
    text = (K2 / "server.log").read_text()
    other_log.write_text(re.sub(r"accept len: (\d+\.\d+)", lambda m: f"accept len: {float(m[1]) + 0.5:.2f}", text))
    ingest_paths([K2 / "bench.json", K2 / "server.log", other_log], isolated_store, phase="phase-0", variant="k2-drafter")
    session_id = query(isolated_store, "SELECT session_id FROM sessions")[0][0]
    expected = query(
        isolated_store,
        """SELECT run_index, is_warmup, tokens_per_step, gen_throughput_mean, decode_lines FROM run_windows WHERE session_id = ?
           QUALIFY row_number() OVER (PARTITION BY run_index, is_warmup ORDER BY decode_lines DESC, log_source_id, segment) = 1
           ORDER BY run_index, is_warmup""",
        [session_id],
    )
    tied = query(isolated_store, "SELECT count(DISTINCT log_source_id) FROM run_windows WHERE session_id = ? GROUP BY run_index", [session_id])
    assert {count for (count,) in tied} == {2}  # both logs saw every run
    runs = data.session_runs(isolated_store, session_id).sort_values(["run_index", "is_warmup"])
    shown = list(runs[["run_index", "is_warmup", "tokens_per_step", "log_gen_throughput", "decode_lines"]].itertuples(index=False, name=None))
    assert shown == [tuple(row) for row in expected]


def scanned_tables(con: duckdb.DuckDBPyConnection, query: str) -> set[str]:
    """The store tables a query's plan reads, with the optimizer off so that no scan is pruned for this data."""
    plan = con.execute(f"EXPLAIN (FORMAT json) {query}").fetchall()[0][1]
    return {name.rsplit(".", 1)[-1] for name in re.findall(r'"Table": "([^"]+)"', plan)}


def test_a_load_skips_the_links_and_windows_only_for_tables_they_never_read(tmp_path: Path) -> None:
    """store.UNLINKED_TABLES lets a load skip run_windows.refresh and relink_traces: no query either runs may read them."""
    db = tmp_path / "store.duckdb"
    with store.writer(db) as con:
        con.execute("PRAGMA disable_optimizer")
        derived_from = set().union(*(scanned_tables(con, query) for query in (
            "SELECT * FROM trace_set_links", "SELECT * FROM trace_labels", "SELECT * FROM session_logs_for(['s'])",
            "SELECT * FROM run_windows_for(['s'])", "SELECT * FROM log_segments", "SELECT clock_skew_us()",
        )))
        data_tables = set(store.data_tables(con))
    assert {"sessions", "server_configs", "trace_ranks", "decode_stats"} <= derived_from  # the plans were read
    assert store.UNLINKED_TABLES <= data_tables
    assert not store.UNLINKED_TABLES & derived_from


def test_a_training_log_loaded_after_a_trace_keeps_the_traces_link_and_the_windows_current(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    ingest_paths([K2], db)
    with duckdb.connect(str(db), read_only=True) as con:
        links_before = con.execute("SELECT * FROM trace_links ORDER BY ALL").fetchall()
    assert links_before  # the trace set is linked to the server log
    ingest_paths([ROOT / "tests" / "fixtures" / "training"], db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM training_steps").fetchone()[0] > 0
        assert run_windows.is_current(con)  # the basis counts the drafter's source
        assert con.execute("SELECT * FROM trace_links ORDER BY ALL").fetchall() == links_before
        assert con.execute("SELECT * FROM trace_set_links ORDER BY ALL").fetchall() == links_before
