"""Keep the run-window tables of migration 007 in step with the store, inside each load's transaction.

``log_segment_spans``, ``session_log_links`` and ``run_windows`` hold exactly the rows of the views
``log_segments`` (plus the ingest group), ``session_logs`` and ``run_log_stats`` (plus range sums),
computed by the SQL macros ``session_logs_for`` and ``run_windows_for``. A loaded (or replaced)
file can change only some sessions' rows:

* its own sessions (a benchmark file);
* sessions linked to its log segments before the load (their link may be gone now);
* sessions of the ingest group its segments are in, before and after (same-call links, and the
  "call's only log" rule, which counts the group's segments);
* sessions whose phase and variant labels match its segments, before and after (label links).

Those are recomputed; rows of sessions that no longer exist are dropped. When the clock skew
changed since the last refresh (``specdash ingest --clock-skew`` stores it before loading), every
window moves, so everything is rebuilt. Afterwards ``store_meta.run_windows_basis`` records what
the tables were computed from; readers (``dashboard.analysis.data``) fall back to the views when it differs.
"""
from __future__ import annotations

import duckdb

from ingest.storage.sql import fetch_value, put_meta

KEPT_TABLES = ("log_segment_spans", "session_log_links", "run_windows")
SESSIONS_PER_BATCH = 500  # ≈ 2,500 runs × 5 linked logs: 0.4 s and well under 256 MB at 1,000 decode lines per log
BASIS_KEY = "run_windows_basis"

ALL_SEGMENTS = """
    INSERT INTO log_segment_spans
    SELECT l.source_id, l.segment, l.phase, l.variant, l.first_ts, l.last_ts, l.decode_lines, src.ingest_group
    FROM log_segments l JOIN sources src USING (source_id)
"""
SEGMENTS_OF_SOURCE = ALL_SEGMENTS + "WHERE l.source_id = $source_id"  # pushed into the view: one log's lines read
SEGMENT_KEYS = "SELECT DISTINCT phase, variant, ingest_group FROM log_segment_spans WHERE log_source_id = $source_id"

# Sessions whose links or windows the load of $source_id can change; $labels: (phase, variant, ingest_group)
# of the source's segments before and after the load.
TOUCHED_SESSIONS = """
    WITH keys AS (
        SELECT unnest(CAST($labels AS STRUCT(phase VARCHAR, variant VARCHAR, ingest_group VARCHAR)[]), recursive := true)
    )
    SELECT session_id FROM sessions WHERE source_id = $source_id
    UNION
    SELECT session_id FROM session_log_links WHERE log_source_id = $source_id
    UNION
    SELECT s.session_id FROM sessions s JOIN sources src USING (source_id)
    WHERE src.ingest_group IN (SELECT ingest_group FROM keys)
    UNION
    SELECT s.session_id FROM sessions s JOIN keys k ON k.variant = s.variant AND k.phase IS NOT DISTINCT FROM s.phase
"""
GONE_OR_TOUCHED = (
    "session_id IN (SELECT unnest(CAST($sessions AS VARCHAR[]))) OR session_id NOT IN (SELECT session_id FROM sessions)"
)


def refresh(con: duckdb.DuckDBPyConnection, source_id: str) -> None:
    """Bring the kept tables up to date after ``source_id`` was loaded or replaced (in the caller's transaction)."""
    if skew_changed(con):
        rebuild(con)
        return
    before = segment_keys(con, source_id)
    con.execute("DELETE FROM log_segment_spans WHERE log_source_id = ?", [source_id])
    con.execute(SEGMENTS_OF_SOURCE, {"source_id": source_id})
    labels = before | segment_keys(con, source_id)
    touched = [row[0] for row in con.execute(
        TOUCHED_SESSIONS,
        {"source_id": source_id,
         "labels": [{"phase": p, "variant": v, "ingest_group": g} for p, v, g in sorted(labels, key=str)]},
    ).fetchall()]
    for table in ("session_log_links", "run_windows"):
        con.execute(f"DELETE FROM {table} WHERE {GONE_OR_TOUCHED}", {"sessions": touched})
    insert_sessions(con, touched)
    record_basis(con)


def rebuild(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute the kept tables for the whole store (in the caller's transaction)."""
    for table in KEPT_TABLES:
        con.execute(f"DELETE FROM {table}")
    con.execute(ALL_SEGMENTS)
    insert_sessions(con, [row[0] for row in con.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()])
    record_basis(con)


def insert_sessions(con: duckdb.DuckDBPyConnection, session_ids: list[str]) -> None:
    """Links first (the windows are computed from them), a batch of sessions at a time.

    A batch's windows pass through two window functions over all their decode lines; in batches
    of SESSIONS_PER_BATCH they stay within the writer's memory limit instead of spilling to disk.
    """
    for start in range(0, len(session_ids), SESSIONS_PER_BATCH):
        batch = session_ids[start:start + SESSIONS_PER_BATCH]
        con.execute("INSERT INTO session_log_links SELECT * FROM session_logs_for($sessions)", {"sessions": batch})
        con.execute("INSERT INTO run_windows SELECT * FROM run_windows_for($sessions)", {"sessions": batch})


def segment_keys(con: duckdb.DuckDBPyConnection, source_id: str) -> set[tuple[str | None, str | None, str | None]]:
    return {tuple(row) for row in con.execute(SEGMENT_KEYS, {"source_id": source_id}).fetchall()}


def stored_basis(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute("SELECT value FROM store_meta WHERE key = ?", [BASIS_KEY]).fetchone()
    return row[0] if row else None


def skew_changed(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the tables were computed with another clock skew than the store's now (or never computed)."""
    stored = stored_basis(con)
    if stored is None:
        return True
    now = fetch_value(con, "SELECT 'clock_skew_us=' || clock_skew_us()")
    return stored.split(" ", 1)[0] != now


def record_basis(con: duckdb.DuckDBPyConnection) -> None:
    put_meta(con, BASIS_KEY, fetch_value(con, "SELECT run_windows_basis()"))


def is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the kept tables answer for this store as it is now (False on stores without them)."""
    try:
        row = con.execute(
            "SELECT (SELECT value FROM store_meta WHERE key = ?) IS NOT DISTINCT FROM run_windows_basis()", [BASIS_KEY]
        ).fetchone()
    except duckdb.CatalogException:  # a store from before migration 007
        return False
    return row is not None and bool(row[0])


# What readers query: ``linked_logs()`` (the rows of session_logs) and ``windows_of(session_ids)`` (the
# rows of run_log_stats for those sessions, with run_windows' range sums; NULL: every session's, only
# while the kept tables are current). While the kept tables are
# current they answer; else the views that define them do (no range sums: every line is read).
RANGES_UNKNOWN = (
    "NULL::BIGINT AS range_lines, NULL::BIGINT AS range_accept_lines, NULL::DOUBLE AS range_tokens_weighted, "
    "NULL::HUGEINT AS range_tokens_weight, NULL::DOUBLE AS range_drafts_weighted, NULL::HUGEINT AS range_drafts_weight, "
    "NULL::BOOLEAN AS range_cuda_graph_off, NULL::BOOLEAN AS range_cuda_graph_on"
)
READ_FROM_KEPT = """
    CREATE OR REPLACE TEMP MACRO linked_logs() AS TABLE SELECT * FROM session_log_links;
    CREATE OR REPLACE TEMP MACRO windows_of(session_ids) AS TABLE
        SELECT * FROM run_windows
        WHERE session_ids IS NULL OR session_id IN (SELECT unnest(CAST(session_ids AS VARCHAR[])));
"""
READ_FROM_VIEWS = f"""
    CREATE OR REPLACE TEMP MACRO linked_logs() AS TABLE SELECT * FROM session_logs;
    CREATE OR REPLACE TEMP MACRO windows_of(session_ids) AS TABLE
        SELECT *, {RANGES_UNKNOWN} FROM run_log_stats_for(CAST(session_ids AS VARCHAR[]));
"""


def define_readers(con: duckdb.DuckDBPyConnection) -> bool:
    """Define ``linked_logs()`` and ``windows_of(ids)`` on a (read-only) connection; True when they read the kept tables."""
    kept = is_current(con)
    con.execute(READ_FROM_KEPT if kept else READ_FROM_VIEWS)
    return kept
