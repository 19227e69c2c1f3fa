"""Every SQL read the dashboard makes. Plain functions: db path and plain values in, DataFrames out.

Each call opens a short-lived read-only connection and closes it, so the CLI can
always get the write lock between reruns; a held lock is waited out briefly.
Values are always bound parameters. ``dashboard/queries.py`` wraps these with
Streamlit's cache; this module imports no Streamlit, so the CLI can use it too.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ingest.store import open_with_retry

READ_LOCK_WAIT_S = 10.0
MAX_POINTS = 2000  # time series are downsampled in SQL to at most this many points


class NoStore(Exception):
    """The store file does not exist yet."""


@contextmanager
def reader(db_path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    path = Path(db_path)
    if not path.exists():
        raise NoStore(str(path))
    con = open_with_retry(path, read_only=True, wait_s=READ_LOCK_WAIT_S)
    try:
        yield con
    finally:
        con.close()


def frame(db_path: str | Path, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
    with reader(db_path) as con:
        return con.execute(sql, params).df()


def store_state(db_path: str | Path) -> dict[str, Any]:
    """Whether the store exists, its change id (cache key), whether it is demo data, and what it holds."""
    path = Path(db_path)
    if not path.exists():
        return {"exists": False, "last_change": None, "demo": False, "sources": 0, "runs": 0}
    with reader(path) as con:
        tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "sources" not in tables:
            return {"exists": False, "last_change": None, "demo": False, "sources": 0, "runs": 0}
        meta = dict(con.execute("SELECT key, value FROM store_meta").fetchall())
        sources = con.execute("SELECT count(*) FROM sources").fetchone()[0]
        runs = con.execute("SELECT count(*) FROM bench_runs WHERE NOT is_warmup").fetchone()[0]
    return {
        "exists": True,
        "last_change": meta.get("last_change"),
        "demo": meta.get("demo") == "true",
        "sources": sources,
        "runs": runs,
    }


# --- labels -----------------------------------------------------------------------------------

def phases(db_path: str | Path) -> list[str]:
    df = frame(
        db_path,
        """
        SELECT phase, min(started_at) AS first_seen FROM sessions WHERE phase IS NOT NULL GROUP BY phase
        UNION ALL
        SELECT phase, min(ts) FROM server_configs WHERE phase IS NOT NULL
          AND phase NOT IN (SELECT phase FROM sessions WHERE phase IS NOT NULL) GROUP BY phase
        ORDER BY first_seen NULLS LAST, phase
        """,
    )
    return df["phase"].tolist()


def variants(db_path: str | Path, phase_list: Sequence[str]) -> list[str]:
    df = frame(
        db_path,
        """
        SELECT coalesce(variant, '(unlabelled)') AS variant, min(started_at) AS first_seen
        FROM sessions WHERE len($phases) = 0 OR list_contains($phases, phase)
        GROUP BY 1 ORDER BY first_seen NULLS LAST, variant
        """,
        {"phases": list(phase_list)},
    )
    return df["variant"].tolist()


def speculative_variants(db_path: str | Path) -> dict[str, bool]:
    """variant → whether its server config used speculation (absent when no config was ingested)."""
    df = frame(
        db_path,
        "SELECT variant, bool_or(speculative_algorithm IS NOT NULL) AS spec FROM server_configs "
        "WHERE variant IS NOT NULL GROUP BY variant",
    )
    return dict(zip(df["variant"], df["spec"]))


# --- compare ----------------------------------------------------------------------------------

def variant_summary(db_path: str | Path, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Per variant over its measured (non-warm-up) runs: n, both means, spread, short runs, sessions."""
    return frame(
        db_path,
        """
        SELECT coalesce(s.variant, '(unlabelled)') AS variant,
               count(*) AS n_runs,
               count(DISTINCT s.session_id) AS n_sessions,
               avg(r.tok_per_s) AS mean_of_runs,
               sum(r.output_tokens) / sum(r.duration_s) AS tokens_over_time,
               stddev_samp(r.tok_per_s) AS sd,
               count(*) FILTER (WHERE r.hit_max_tokens = false) AS short_runs,
               min(r.prompt_tokens) AS prompt_min, max(r.prompt_tokens) AS prompt_max,
               list(DISTINCT r.max_tokens) FILTER (WHERE r.max_tokens IS NOT NULL) AS max_tokens,
               list(DISTINCT s.phase) FILTER (WHERE s.phase IS NOT NULL) AS phases
        FROM bench_runs r JOIN sessions s USING (session_id)
        WHERE NOT r.is_warmup
          AND (len($phases) = 0 OR list_contains($phases, s.phase))
          AND list_contains($variants, coalesce(s.variant, '(unlabelled)'))
        GROUP BY 1
        """,
        {"phases": list(phase_list), "variants": list(variant_list)},
    )


def runs(db_path: str | Path, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Every run (warm-ups included, flagged) of the selected sessions."""
    return frame(
        db_path,
        """
        SELECT coalesce(s.variant, '(unlabelled)') AS variant, s.phase, s.session_id, r.run_index, r.is_warmup,
               r.prompt_tokens, r.output_tokens, r.duration_s, r.tok_per_s, r.max_tokens, r.hit_max_tokens,
               r.started_at, r.ended_at, r.finish_reason
        FROM bench_runs r JOIN sessions s USING (session_id)
        WHERE (len($phases) = 0 OR list_contains($phases, s.phase))
          AND list_contains($variants, coalesce(s.variant, '(unlabelled)'))
        ORDER BY s.started_at, s.session_id, r.is_warmup DESC, r.run_index
        """,
        {"phases": list(phase_list), "variants": list(variant_list)},
    )


DECODE_WITH_LABELS = """
    SELECT d.*, coalesce(c.variant, src.variant) AS variant, coalesce(c.phase, src.phase) AS phase
    FROM decode_stats d
    JOIN sources src USING (source_id)
    LEFT JOIN server_configs c ON c.source_id = d.source_id AND c.segment = d.segment
"""


def accept_by_variant(db_path: str | Path, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Accept length per variant from its server logs, weighted by #running-req (DOMAIN.md §3)."""
    return frame(
        db_path,
        f"""
        WITH d AS ({DECODE_WITH_LABELS})
        SELECT variant,
               sum(tokens_per_step * coalesce(running_req, 1)) / sum(coalesce(running_req, 1)) AS tokens_per_step,
               sum(accepted_drafts_per_step * coalesce(running_req, 1)) / sum(coalesce(running_req, 1))
                   AS accepted_drafts_per_step,
               count(*) AS log_lines
        FROM d
        WHERE tokens_per_step IS NOT NULL
          AND (len($phases) = 0 OR list_contains($phases, phase))
          AND list_contains($variants, variant)
        GROUP BY variant
        """,
        {"phases": list(phase_list), "variants": list(variant_list)},
    )


def configs_by_variant(db_path: str | Path, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """The latest server config seen for each selected variant."""
    return frame(
        db_path,
        """
        SELECT * EXCLUDE (rn) FROM (
            SELECT c.*, row_number() OVER (PARTITION BY c.variant ORDER BY c.ts DESC NULLS LAST) AS rn
            FROM server_configs c
            WHERE (len($phases) = 0 OR list_contains($phases, c.phase))
              AND list_contains($variants, c.variant)
        ) WHERE rn = 1
        """,
        {"phases": list(phase_list), "variants": list(variant_list)},
    )


# --- run drill-down ---------------------------------------------------------------------------

def sessions(db_path: str | Path) -> pd.DataFrame:
    return frame(
        db_path,
        """
        SELECT s.session_id, s.phase, coalesce(s.variant, '(unlabelled)') AS variant, s.started_at, s.model,
               s.endpoint, s.max_tokens, s.warmup, src.path, src.sha256, src.ingested_at,
               count(r.run_index) FILTER (WHERE NOT r.is_warmup) AS n_runs,
               avg(r.tok_per_s) FILTER (WHERE NOT r.is_warmup) AS mean_tok_per_s
        FROM sessions s JOIN sources src USING (source_id)
        LEFT JOIN bench_runs r USING (session_id)
        GROUP BY ALL ORDER BY s.started_at DESC NULLS LAST, s.session_id
        """,
    )


def session_runs(db_path: str | Path, session_id: str) -> pd.DataFrame:
    return frame(
        db_path,
        """
        SELECT run_index, is_warmup, prompt_tokens, output_tokens, duration_s, tok_per_s, max_tokens,
               hit_max_tokens, started_at, ended_at, finish_reason
        FROM bench_runs WHERE session_id = ? ORDER BY is_warmup DESC, started_at NULLS LAST, run_index
        """,
        [session_id],
    )


def session_logs(db_path: str | Path, session_id: str) -> pd.DataFrame:
    """Log sources that belong with a session: same phase and variant."""
    return frame(
        db_path,
        """
        SELECT DISTINCT src.source_id, src.path, src.sha256, src.ingested_at, src.kind
        FROM sessions s
        JOIN server_configs c ON c.variant = s.variant AND c.phase IS NOT DISTINCT FROM s.phase
        JOIN sources src ON src.source_id = c.source_id
        WHERE s.session_id = ?
        ORDER BY src.path
        """,
        [session_id],
    )


def decode_series(db_path: str | Path, source_ids: Sequence[str], start: Any = None, end: Any = None) -> pd.DataFrame:
    """Decode stats of the given logs over time, averaged into at most MAX_POINTS buckets in SQL."""
    return frame(
        db_path,
        """
        WITH d AS (
            SELECT * FROM decode_stats
            WHERE list_contains($sources, source_id) AND ts IS NOT NULL
              AND ($start IS NULL OR ts >= $start) AND ($end IS NULL OR ts <= $end)
        ), bounds AS (SELECT min(ts) AS t0, max(ts) AS t1, count(*) AS n FROM d)
        SELECT min(d.ts) AS ts,
               avg(d.gen_throughput) AS gen_throughput,
               sum(d.tokens_per_step * coalesce(d.running_req, 1)) / sum(coalesce(d.running_req, 1)) AS tokens_per_step,
               avg(d.running_req) AS running_req,
               count(*) AS lines
        FROM d, bounds
        GROUP BY CASE WHEN bounds.n <= $max_points THEN epoch_us(d.ts)
                      ELSE floor((epoch_us(d.ts) - epoch_us(bounds.t0)) * $max_points
                                 / greatest(epoch_us(bounds.t1) - epoch_us(bounds.t0), 1)) END
        ORDER BY ts
        """,
        {"sources": list(source_ids), "start": start, "end": end, "max_points": MAX_POINTS},
    )


def session_config(db_path: str | Path, session_id: str) -> pd.DataFrame:
    return frame(
        db_path,
        """
        SELECT c.* FROM sessions s
        JOIN server_configs c ON c.variant = s.variant AND c.phase IS NOT DISTINCT FROM s.phase
        WHERE s.session_id = ? ORDER BY c.ts DESC NULLS LAST LIMIT 1
        """,
        [session_id],
    )
