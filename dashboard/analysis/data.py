"""Every SQL read the dashboard makes. Plain functions: db path and plain values in, DataFrames out.

Each call opens a short-lived read-only connection and closes it, so the CLI can
always get the write lock between reruns; a held lock is waited out briefly.
Values are always bound parameters. Aggregation and downsampling happen here, in
SQL: no page pulls raw log rows into pandas. ``dashboard/queries.py`` wraps these
with Streamlit's cache; this module imports no Streamlit, so the CLI can use it too
(decision evidence is computed from it).

A *scope* is (phases, variants, sessions): each an empty sequence for "all".
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd

from ingest.errors import NoStore
from ingest.storage import run_windows
from ingest.storage.labels import (
    NO_PHASE,  # evidence without --phase: a phase of its own on every page, and in $phases
)
from ingest.storage.location import LAKE_ALIAS, LakeStore, StoreRef, as_store
from ingest.storage.sql import fetch_value
from ingest.storage.store import (
    VIEWS_META_KEY,
    current_views_hash,
    lake_snapshots,
    migration_files,
    read_connection,
)

READ_LOCK_WAIT_S = 10.0
MAX_POINTS = 2000  # time series are downsampled in SQL to at most this many points
UNLABELLED = "(unlabelled)"

VARIANT = "coalesce(s.variant, '(unlabelled)')"
TOK_PER_S = "coalesce(r.tok_per_s, r.output_tokens / r.duration_s)"  # a benchmark run's tok/s
TOKENS_OVER_TIME = "sum(r.output_tokens) / sum(r.duration_s)"  # Σ tokens ÷ Σ time of the runs aggregated
# The spread of Σtok/Σtime as a ratio estimator R = Σy ÷ Σx (y tokens, x seconds of each sample): the sd of the
# samples' residuals y − R·x over the mean x, so that it ÷ √n is R's standard error (the delta method). Written with
# the sample variances and covariance, which DuckDB computes stably: Σ(y − R·x)² ÷ (n − 1) = var(y) − 2R·cov(x, y)
# + R²·var(x), since Σ(y − R·x) = 0. Null below 2 samples (abs, not greatest(…, 0), which would make that null a 0:
# a sum of squares is negative only by rounding). Welch's Δ of a Σtok/Σtime headline uses it.
RUNS_RATIO_SD = f"""sqrt(abs(var_samp(CAST(r.output_tokens AS DOUBLE))
    - 2 * ({TOKENS_OVER_TIME}) * covar_samp(CAST(r.output_tokens AS DOUBLE), r.duration_s)
    + ({TOKENS_OVER_TIME}) * ({TOKENS_OVER_TIME}) * var_samp(r.duration_s))) / avg(r.duration_s)"""
SAMPLES_RATIO = "sum(tokens) / sum(seconds)"
SAMPLES_RATIO_SD = f"""sqrt(abs(var_samp(CAST(tokens AS DOUBLE))
    - 2 * ({SAMPLES_RATIO}) * covar_samp(CAST(tokens AS DOUBLE), seconds)
    + ({SAMPLES_RATIO}) * ({SAMPLES_RATIO}) * var_samp(seconds))) / avg(seconds)"""
IN_SCOPE = f"""
    (len($phases) = 0 OR list_contains($phases, coalesce(s.phase, '(no phase)')))
    AND (len($variants) = 0 OR list_contains($variants, {VARIANT}))
    AND (len($sessions) = 0 OR list_contains($sessions, s.session_id))
"""


@contextmanager
def reader(db_path: str | StoreRef) -> Iterator[duckdb.DuckDBPyConnection]:
    path = as_store(db_path)
    if not path.exists():
        raise NoStore(path, "no store yet", hint="run `specdash ingest FILES` or `specdash demo`")
    with read_connection(path, wait_s=READ_LOCK_WAIT_S) as con:
        yield con




def frame(
    db_path: str | StoreRef, sql: str, params: Sequence[Any] | dict[str, Any] = (), *, linked: bool = False
) -> pd.DataFrame:
    """``sql``'s rows; with ``linked``, ``sql`` may read ``linked_logs()`` and ``windows_of(ids)``
    (``ingest.storage.run_windows.define_readers``: the kept tables while current, else their views)."""
    with reader(db_path) as con:
        if linked:
            run_windows.define_readers(con)
        return without_nan_text(con.execute(sql, params).df())


def without_nan_text(df: pd.DataFrame) -> pd.DataFrame:
    """SQL NULLs in text columns as None, not NaN: a NaN is truthy (`phase or '(no phase)'` gave "nan") and binds
    back into SQL as a DOUBLE (`phase IS NOT DISTINCT FROM $phase` then failed on a text phase)."""
    for column, dtype in df.dtypes.items():
        if (pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)) and df[column].hasnans:
            df[column] = df[column].astype(object).where(df[column].notna(), None)
    return df


def scope(phases: Sequence[str] = (), variants: Sequence[str] = (), sessions: Sequence[str] = ()) -> dict[str, list[str]]:
    return {"phases": list(phases), "variants": list(variants), "sessions": list(sessions)}


def relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def lake_snapshot(db_path: str | StoreRef) -> int | None:
    """A lake's newest snapshot (every commit makes one), None while it has no catalog: what the dashboard's caches
    key on, since no file of a lake says it changed."""
    if not as_store(db_path).exists():
        return None
    with reader(db_path) as con:
        return fetch_value(con, "SELECT max(snapshot_id) FROM ducklake_snapshots(?)", [LAKE_ALIAS])


def lake_history(db_path: str | StoreRef) -> pd.DataFrame:
    """A lake's snapshots, newest first: when (UTC), by whom, what (the writer's commit message), and whether this
    specdash can read the store as of it (``same_schema``: its tables and views are today's; a snapshot before a
    migration is not). Empty for a DuckDB file, which keeps no history."""
    store = as_store(db_path)
    if not isinstance(store, LakeStore) or not store.exists():
        return pd.DataFrame(columns=["snapshot_id", "snapshot_time", "author", "commit_message", "snapshots", "same_schema"])
    with reader(store.at(None)) as con:
        return lake_snapshots(con)


def store_state(db_path: str | StoreRef) -> dict[str, Any]:
    """Whether the store exists, its change id (cache key), whether it is demo data, and what it holds."""
    empty: dict[str, Any] = {"exists": False, "last_change": None, "demo": False, "sources": 0, "runs": 0, "pending_migrations": []}
    path = as_store(db_path)
    if not path.exists():
        return empty
    with reader(path) as con:
        if "sources" not in relations(con):
            return empty
        meta = dict(con.execute("SELECT key, value FROM store_meta").fetchall())
        applied = {row[0] for row in con.execute("SELECT name FROM schema_migrations").fetchall()}
        sources = fetch_value(con, "SELECT count(*) FROM sources")
        runs = fetch_value(con, "SELECT count(*) FROM bench_runs WHERE NOT is_warmup")
        decisions = fetch_value(con, "SELECT count(*) FROM decisions")
        kinds = dict(con.execute("SELECT kind, count(*) FROM sources GROUP BY kind ORDER BY count(*) DESC, kind").fetchall())
    return {
        "exists": True,
        "last_change": meta.get("last_change"),
        "demo": meta.get("demo") == "true",
        "start_phase": meta.get("start_phase"),
        "sources": sources,
        "runs": runs,
        "decisions": decisions,
        "kinds": kinds,
        # views.sql changed since a writer last opened the store: its views are an older version's
        "pending_migrations": [m.name for m in migration_files() if m.name not in applied]
        + (["views.sql"] if meta.get(VIEWS_META_KEY) != current_views_hash() else []),
    }


# --- labels -----------------------------------------------------------------------------------

def phases(db_path: str | StoreRef) -> list[str]:
    """Phase labels that have any evidence, oldest first (by their first session's start)."""
    df = frame(
        db_path,
        """
        SELECT coalesce(phase, '(no phase)') AS phase, min(started_at) AS first_seen FROM evidence_sessions
        GROUP BY 1 ORDER BY first_seen NULLS LAST, phase
        """,
    )
    return df["phase"].tolist()


def throughput_phases(db_path: str | StoreRef) -> list[str]:
    """The phases (NO_PHASE for evidence without one) whose sessions give a variant a tok/s figure, oldest first."""
    found = set(variant_summary(db_path, [], [], by_phase=True)["phase"].fillna(NO_PHASE))
    return [phase for phase in phases(db_path) if phase in found]


def variants(db_path: str | StoreRef, phase_list: Sequence[str]) -> list[str]:
    """Variants of every kind of session (evidence_sessions), first measured first."""
    df = frame(
        db_path,
        f"""
        SELECT {VARIANT} AS variant, min(started_at) AS first_seen
        FROM evidence_sessions s WHERE len($phases) = 0 OR list_contains($phases, coalesce(phase, '(no phase)'))
        GROUP BY 1 ORDER BY first_seen NULLS LAST, variant
        """,
        {"phases": list(phase_list)},
    )
    return df["variant"].tolist()


# Every relation a page draws a variant from, each with the file (source_id) its rows came from: the colour
# order (``variant_order``) must hold each variant any page shows, so a variant only a sweep, an acceptance
# file or a cycle-timing file names still has its own colour.
VARIANT_ORDER = """
    WITH named AS (
        SELECT DISTINCT variant, source_id FROM evidence_sessions
        UNION SELECT DISTINCT variant, source_id FROM cycle_phase_times
        UNION SELECT DISTINCT variant, source_id FROM sweep_series
        UNION SELECT DISTINCT variant, source_id FROM acceptance_position_rates
        UNION SELECT DISTINCT variant, source_id FROM acceptance_request_rows
        UNION SELECT DISTINCT variant, source_id FROM acceptance_datasets
        UNION SELECT DISTINCT variant, source_id FROM acceptance_metric_windows
    )
    SELECT coalesce(n.variant, '(unlabelled)') AS variant, min(src.ingested_at) AS first_ingested
    FROM named n LEFT JOIN sources src USING (source_id)
    GROUP BY 1 ORDER BY first_ingested NULLS LAST, variant
"""


def variant_order(db_path: str | StoreRef) -> list[str]:
    """Every variant of the store, in the order it entered it: its first file's ingest time, then its name.

    The variants' colours follow this order (``palette.VariantColors``): a variant ingested later comes last, so
    it never moves the others.
    """
    return frame(db_path, VARIANT_ORDER)["variant"].tolist()


def speculative_variants(db_path: str | StoreRef) -> dict[str, bool]:
    """variant → whether its server config used speculation (absent when no config was ingested)."""
    df = frame(
        db_path,
        "SELECT variant, bool_or(speculative_algorithm IS NOT NULL) AS spec FROM server_configs "
        "WHERE variant IS NOT NULL GROUP BY variant",
    )
    return dict(zip(df["variant"], df["spec"], strict=True))


# --- compare ----------------------------------------------------------------------------------

# Throughput evidence other than benchmark runs, one row per sample, for the sessions in ``ev``:
# a bench record's output throughput, and a server log's `gen throughput` lines. A line right after
# the log was idle (IDLE_GAP_S without a decode line, or the lifetime's first) spans the idle gap and is
# meaningless (DOMAIN.md §4), so it is left out. basis_rank orders the sources a headline is taken from
# (docs/metrics.md "Which throughput is the headline"): benchmark runs 1, bench records at max
# concurrency 1 2, log lines at 1 running request 3, bench records at other concurrencies 4, log lines
# at several running requests 5. ``streams`` is how many requests decode together in the figure: 1 for ranks 1-3,
# the max concurrency of a bench record (every slot busy), the running requests when every log line gives one
# count; none when unknown (the cycle model needs it: DOMAIN.md §2, compare.decode_streams).
IDLE_GAP_S = 10
# The sessions in scope whose figures are not benchmark runs: server lifetimes and bench records.
EVIDENCE_IN_SCOPE = f"""
    ev AS (SELECT * FROM evidence_sessions s WHERE s.origin IN ('bench_record', 'server_lifetime') AND {IN_SCOPE})
"""
EVIDENCE_SAMPLES = f"""
    record_samples AS (
        SELECT e.session_id, e.phase, e.variant, e.started_at,
               coalesce(b.max_concurrency, CASE WHEN b.tool ILIKE '%send_one%' THEN 1 END) AS concurrency,
               b.output_throughput AS value, b.total_output_tokens AS tokens, b.duration_s AS seconds, b.tool
        FROM ev e JOIN bench_serving b ON b.source_id = e.source_id AND b.record_index = e.part
        WHERE e.origin = 'bench_record' AND b.output_throughput IS NOT NULL
    ), log_lines AS (
        SELECT e.session_id, e.phase, e.variant, d.running_req, d.gen_throughput, d.ts,
               lag(d.ts) OVER (PARTITION BY d.source_id, d.segment, d.dp_rank ORDER BY d.line_no) AS previous_ts
        FROM ev e JOIN decode_stats d ON d.source_id = e.source_id AND d.segment IS NOT DISTINCT FROM e.part
        WHERE e.origin = 'server_lifetime'
    ), samples AS (
        SELECT session_id, phase, variant, started_at, CASE WHEN concurrency = 1 THEN 2 ELSE 4 END AS basis_rank,
               concurrency, value, tokens, seconds, CAST(NULL AS BIGINT) AS running_req, tool
        FROM record_samples
        UNION ALL
        SELECT session_id, phase, variant, ts, CASE WHEN running_req = 1 THEN 3 ELSE 5 END,
               CASE WHEN running_req = 1 THEN 1 END, gen_throughput, NULL, NULL, running_req, NULL
        FROM log_lines
        WHERE gen_throughput IS NOT NULL
          AND NOT (ts IS NOT NULL AND (previous_ts IS NULL OR ts - previous_ts > INTERVAL {IDLE_GAP_S} SECOND))
    )
"""
SOURCE_FIGURES = f"""
    WITH benchmark AS (
        SELECT CASE WHEN $by_session THEN s.session_id END AS session_id,
               CASE WHEN $by_phase THEN s.phase END AS phase,
               {VARIANT} AS variant,
               1 AS basis_rank, 'benchmark runs' AS basis, 'runs' AS sample_unit, CAST(NULL AS BIGINT) AS concurrency,
               1 AS streams,
               count(*) AS n_runs,
               count(DISTINCT s.session_id) AS n_sessions,
               avg({TOK_PER_S}) AS mean_of_runs,
               {TOKENS_OVER_TIME} AS tokens_over_time,
               stddev_samp({TOK_PER_S}) AS sd,
               {RUNS_RATIO_SD} AS sd_tokens_over_time,
               count(*) FILTER (WHERE r.hit_max_tokens = false) AS short_runs,
               min(r.prompt_tokens) AS prompt_min, max(r.prompt_tokens) AS prompt_max,
               list(DISTINCT r.max_tokens ORDER BY r.max_tokens) FILTER (WHERE r.max_tokens IS NOT NULL) AS max_tokens,
               coalesce(list(DISTINCT s.phase ORDER BY s.phase) FILTER (WHERE s.phase IS NOT NULL), []) AS phases,
               list(DISTINCT s.session_id ORDER BY s.session_id) AS session_ids,
               list(DISTINCT s.model ORDER BY s.model) FILTER (WHERE s.model IS NOT NULL) AS models,
               min(coalesce(r.started_at, s.started_at)) AS first_run_at,
               max(coalesce(r.ended_at, r.started_at, s.started_at)) AS last_run_at
        FROM bench_runs r JOIN benchmark_sessions s USING (session_id)
        WHERE $with_benchmark AND NOT r.is_warmup AND {IN_SCOPE}
        GROUP BY 1, 2, 3
    ), {EVIDENCE_IN_SCOPE}, {EVIDENCE_SAMPLES}, evidence AS (
        SELECT CASE WHEN $by_session THEN session_id END AS session_id,
               CASE WHEN $by_phase THEN phase END AS phase, variant, basis_rank,
               CASE WHEN basis_rank = 3 THEN 'server log: gen throughput at 1 running request'
                    WHEN basis_rank = 5 AND max(running_req) IS NULL
                        THEN 'server log: gen throughput, running requests not logged'
                    WHEN basis_rank = 5 THEN 'server log: gen throughput at ' ||
                         CASE WHEN min(running_req) = max(running_req) THEN CAST(min(running_req) AS VARCHAR)
                              ELSE min(running_req) || '–' || max(running_req) END
                         || ' running requests (all requests together)'
                    WHEN concurrency IS NULL THEN any_value(tool) || ', max concurrency not recorded'
                    ELSE any_value(tool) || ' at max concurrency ' || concurrency END AS basis,
               CASE WHEN basis_rank IN (3, 5) THEN 'log lines' ELSE 'records' END AS sample_unit,
               concurrency,
               CASE WHEN basis_rank IN (2, 3) THEN 1 WHEN basis_rank = 4 THEN concurrency
                    WHEN count(running_req) = count(*) AND min(running_req) = max(running_req) AND min(running_req) >= 1
                    THEN min(running_req)
               END AS streams,
               count(*) AS n_runs, count(DISTINCT session_id) AS n_sessions,
               avg(value) AS mean_of_runs,
               coalesce({SAMPLES_RATIO}, avg(value)) AS tokens_over_time,
               stddev_samp(value) AS sd,
               -- the spread of the figure tokens_over_time is: the ratio's, else the mean's (log lines carry no tokens)
               CASE WHEN {SAMPLES_RATIO} IS NOT NULL THEN {SAMPLES_RATIO_SD} ELSE stddev_samp(value) END
                   AS sd_tokens_over_time,
               0 AS short_runs,
               CAST(NULL AS BIGINT) AS prompt_min, CAST(NULL AS BIGINT) AS prompt_max,
               CAST(NULL AS BIGINT[]) AS max_tokens,
               coalesce(list(DISTINCT phase ORDER BY phase) FILTER (WHERE phase IS NOT NULL), []) AS phases,
               list(DISTINCT session_id ORDER BY session_id) AS session_ids,
               CAST(NULL AS VARCHAR[]) AS models,
               min(started_at) AS first_run_at, max(started_at) AS last_run_at
        FROM samples GROUP BY 1, 2, 3, 4, concurrency
    ), figures AS (
        SELECT * FROM benchmark UNION ALL BY NAME SELECT * FROM evidence
    )
    SELECT * FROM figures
    QUALIFY NOT $headline_only
         OR row_number() OVER (PARTITION BY session_id, phase, variant
                               ORDER BY basis_rank, concurrency NULLS LAST, basis) = 1
    ORDER BY CASE WHEN $headline_only THEN 0 ELSE basis_rank END, first_run_at NULLS LAST, variant, session_id,
             basis_rank, concurrency NULLS LAST
"""


def variant_summary(
    db_path: str | StoreRef,
    phase_list: Sequence[str],
    variant_list: Sequence[str],
    session_list: Sequence[str] = (),
    by_phase: bool = False,
) -> pd.DataFrame:
    """Per variant (and phase, with ``by_phase``): its headline throughput source, with n, both means, spread.

    The source is the first of SOURCE_FIGURES' order the variant has: ``basis`` names it, ``n_runs``
    counts its samples (runs, records or log lines: ``sample_unit``).
    """
    return frame(
        db_path, SOURCE_FIGURES,
        {**scope(phase_list, variant_list, session_list), "by_phase": by_phase, "by_session": False, "headline_only": True,
         "with_benchmark": True},
    )


def variant_sources(
    db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str], session_list: Sequence[str] = ()
) -> pd.DataFrame:
    """Every throughput source of every variant in scope, side by side (the headline's columns)."""
    return frame(
        db_path, SOURCE_FIGURES,
        {**scope(phase_list, variant_list, session_list), "by_phase": False, "by_session": False, "headline_only": False,
         "with_benchmark": True},
    )


def session_headlines(db_path: str | StoreRef, session_list: Sequence[str]) -> pd.DataFrame:
    """``variant_summary``'s columns per session: each session's own headline, as Compare would show it alone
    (``specdash check`` compares two sessions of one variant). An empty ``session_list`` means every session."""
    return frame(
        db_path, SOURCE_FIGURES,
        {**scope((), (), session_list), "by_phase": True, "by_session": True, "headline_only": True,
         "with_benchmark": True},
    )


def session_summary(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Per session, its headline throughput (as variant_summary): both means and n, for the break-even points.

    Benchmark sessions by a plain aggregate of their runs: SOURCE_FIGURES per session carries lists per group
    that cost 35 MB more at 10,000 sessions.
    """
    with reader(db_path) as con:
        benchmark = con.execute(
            f"""
            SELECT s.session_id, s.phase, {VARIANT} AS variant, s.started_at, 1 AS basis_rank,
                   'benchmark runs' AS basis, 'runs' AS sample_unit, 1 AS streams,
                   count(*) AS n_runs, avg({TOK_PER_S}) AS mean_of_runs,
                   {TOKENS_OVER_TIME} AS tokens_over_time
            FROM bench_runs r JOIN benchmark_sessions s USING (session_id)
            WHERE NOT r.is_warmup AND {IN_SCOPE}
            GROUP BY ALL ORDER BY s.started_at NULLS LAST, s.session_id
            """,
            scope(phase_list, variant_list),
        ).df()
        others = con.execute(
            SOURCE_FIGURES,
            {**scope(phase_list, variant_list), "by_phase": True, "by_session": True, "headline_only": True,
             "with_benchmark": False},
        ).df()
    others = others.rename(columns={"first_run_at": "started_at"})[list(benchmark.columns)]
    return pd.concat([benchmark, others], ignore_index=True) if not others.empty else benchmark


def runs(
    db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str], session_list: Sequence[str] = ()
) -> pd.DataFrame:
    """Every run (warm-ups included, flagged) of the sessions in scope."""
    return frame(
        db_path,
        f"""
        SELECT {VARIANT} AS variant, s.phase, s.session_id, r.run_index, r.is_warmup,
               r.prompt_tokens, r.output_tokens, r.duration_s,
               {TOK_PER_S} AS tok_per_s,
               r.max_tokens, r.hit_max_tokens, r.started_at, r.ended_at, r.finish_reason
        FROM bench_runs r JOIN benchmark_sessions s USING (session_id)
        WHERE {IN_SCOPE}
        ORDER BY s.started_at NULLS LAST, s.session_id, r.is_warmup DESC, r.run_index
        """,
        scope(phase_list, variant_list, session_list),
    )


def accept_length(
    db_path: str | StoreRef,
    phase_list: Sequence[str],
    variant_list: Sequence[str],
    session_list: Sequence[str] = (),
    by: str = "variant",
) -> pd.DataFrame:
    """Accept length from the server-log lines inside measured runs' windows (``run_log_stats``).

    Pooled over those lines and weighted by #running-req (the denominator is
    request-steps, DOMAIN.md §3); warm-ups and idle stretches of the log are out.
    ``by``: ``variant``, ``session`` or ``phase`` (phase and variant). Also reports
    whether the decode lines ran with CUDA graphs, a comparability signal.
    """
    if by not in ("variant", "session", "phase"):
        raise ValueError(f"unknown grouping {by!r}")
    params: dict[str, Any] = {**scope(phase_list, variant_list, session_list), "by": by, "in_scope": None}
    with reader(db_path) as con:
        if not run_windows.define_readers(con):  # the view computes windows: only for the sessions in scope
            params["in_scope"] = [row[0] for row in con.execute(
                f"SELECT s.session_id FROM benchmark_sessions s WHERE {IN_SCOPE}", scope(phase_list, variant_list, session_list)
            ).fetchall()]
        return con.execute(ACCEPT_LENGTH_ANY_EVIDENCE, params).df()


# A group's accept length from the first source it has: its benchmark runs' log windows, else the
# lifetimes of its server logs (every decode line, weighted by #running-req), else its bench records'
# accept_length (the server's lifetime average when the record was written, DOMAIN.md §3).
ACCEPT_ANY_EVIDENCE = """
    WITH benchmark AS (
        SELECT *, 1 AS accept_rank, 'server log lines in the run windows' AS accept_basis FROM ({benchmark})
    ), {evidence_in_scope}, lifetimes AS (
        SELECT CASE WHEN $by = 'session' THEN e.session_id END AS session_id,
               CASE WHEN $by = 'phase' THEN e.phase END AS phase, e.variant,
               sum(d.tokens_per_step * coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL)
                   / sum(coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL) AS tokens_per_step,
               sum(d.accepted_drafts_per_step * coalesce(d.running_req, 1)) FILTER (WHERE d.accepted_drafts_per_step IS NOT NULL)
                   / sum(coalesce(d.running_req, 1)) FILTER (WHERE d.accepted_drafts_per_step IS NOT NULL)
                   AS accepted_drafts_per_step,
               count(*) AS log_lines, count(d.tokens_per_step) AS accept_lines, count(DISTINCT e.source_id) AS log_files,
               CASE WHEN bool_or(NOT d.cuda_graph) AND bool_or(d.cuda_graph) THEN [false, true]
                    WHEN bool_or(NOT d.cuda_graph) THEN [false]
                    WHEN bool_or(d.cuda_graph) THEN [true] END AS cuda_graph,
               2 AS accept_rank, 'server log, whole lifetime' AS accept_basis
        FROM ev e JOIN decode_stats d ON d.source_id = e.source_id AND d.segment IS NOT DISTINCT FROM e.part
        WHERE e.origin = 'server_lifetime'
        GROUP BY 1, 2, 3
    ), records AS (
        SELECT CASE WHEN $by = 'session' THEN e.session_id END AS session_id,
               CASE WHEN $by = 'phase' THEN e.phase END AS phase, e.variant,
               avg(b.accept_length) AS tokens_per_step, avg(b.accept_length) - 1 AS accepted_drafts_per_step,
               0 AS log_lines, count(*) AS accept_lines, 0 AS log_files, CAST(NULL AS BOOLEAN[]) AS cuda_graph,
               3 AS accept_rank, 'bench record (server lifetime average)' AS accept_basis
        FROM ev e JOIN bench_serving b ON b.source_id = e.source_id AND b.record_index = e.part
        WHERE e.origin = 'bench_record' AND b.accept_length IS NOT NULL
        GROUP BY 1, 2, 3
    )
    SELECT * EXCLUDE (accept_rank) FROM (
        SELECT * FROM benchmark UNION ALL BY NAME SELECT * FROM lifetimes UNION ALL BY NAME SELECT * FROM records
    )
    QUALIFY row_number() OVER (PARTITION BY session_id, phase, variant
                               ORDER BY accept_rank = 1 DESC, tokens_per_step IS NULL, accept_rank) = 1
    ORDER BY variant, phase, session_id
"""


# Every decode line numbered inside a measured window's line range counts once per group, however many
# windows of the group cover it. Windows of a group and log segment whose ranges overlap form an island:
# a window alone in its island brings its range sums (kept by ingest in run_windows); an island of
# several (or a window without sums) is pooled from its lines.
ACCEPT_LENGTH = """
    WITH windows AS (
        SELECT CASE WHEN $by = 'session' THEN w.session_id END AS session_id,
               CASE WHEN $by = 'phase' THEN s.phase END AS phase,
               {variant} AS variant,
               w.log_source_id, w.segment, w.first_line_no, w.last_line_no,
               w.range_lines, w.range_accept_lines, w.range_tokens_weighted, w.range_tokens_weight,
               w.range_drafts_weighted, w.range_drafts_weight, w.range_cuda_graph_off, w.range_cuda_graph_on
        FROM windows_of($in_scope) w JOIN benchmark_sessions s USING (session_id)
        WHERE NOT w.is_warmup AND w.first_line_no IS NOT NULL AND {in_scope}
    ), reach AS (
        SELECT *, max(last_line_no) OVER (PARTITION BY session_id, phase, variant, log_source_id, segment
                                          ORDER BY first_line_no, last_line_no
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached_before
        FROM windows
    ), islands AS (
        SELECT *, count(*) FILTER (WHERE reached_before IS NULL OR first_line_no > reached_before)
                      OVER (PARTITION BY session_id, phase, variant, log_source_id, segment
                            ORDER BY first_line_no, last_line_no ROWS UNBOUNDED PRECEDING) AS island
        FROM reach
    ), spans AS (
        SELECT session_id, phase, variant, log_source_id, segment, island, count(*) AS windows,
               min(first_line_no) AS first_line_no, max(last_line_no) AS last_line_no,
               any_value(range_lines) AS range_lines, any_value(range_accept_lines) AS range_accept_lines,
               any_value(range_tokens_weighted) AS range_tokens_weighted,
               any_value(range_tokens_weight) AS range_tokens_weight,
               any_value(range_drafts_weighted) AS range_drafts_weighted,
               any_value(range_drafts_weight) AS range_drafts_weight,
               any_value(range_cuda_graph_off) AS range_cuda_graph_off,
               any_value(range_cuda_graph_on) AS range_cuda_graph_on
        FROM islands GROUP BY session_id, phase, variant, log_source_id, segment, island
    ), pooled AS (
        SELECT session_id, phase, variant, log_source_id, range_lines AS lines, range_accept_lines AS accept_lines,
               range_tokens_weighted AS tokens_weighted, range_tokens_weight AS tokens_weight,
               range_drafts_weighted AS drafts_weighted, range_drafts_weight AS drafts_weight,
               range_cuda_graph_off AS graph_off, range_cuda_graph_on AS graph_on
        FROM spans WHERE windows = 1 AND range_lines IS NOT NULL
        UNION ALL
        SELECT p.session_id, p.phase, p.variant, p.log_source_id,
               count(*), count(*) FILTER (WHERE d.tokens_per_step IS NOT NULL),
               sum(d.tokens_per_step * coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL),
               sum(coalesce(d.running_req, 1)) FILTER (WHERE d.tokens_per_step IS NOT NULL),
               sum(d.accepted_drafts_per_step * coalesce(d.running_req, 1)) FILTER (WHERE d.accepted_drafts_per_step IS NOT NULL),
               sum(coalesce(d.running_req, 1)) FILTER (WHERE d.accepted_drafts_per_step IS NOT NULL),
               bool_or(NOT d.cuda_graph), bool_or(d.cuda_graph)
        FROM spans p JOIN decode_stats d
          ON d.source_id = p.log_source_id AND d.segment IS NOT DISTINCT FROM p.segment
         AND d.line_no BETWEEN p.first_line_no AND p.last_line_no
        WHERE p.windows > 1 OR p.range_lines IS NULL
        GROUP BY p.session_id, p.phase, p.variant, p.log_source_id, p.segment, p.island
    )
    SELECT session_id, phase, variant,
           sum(tokens_weighted) / sum(tokens_weight) AS tokens_per_step,
           sum(drafts_weighted) / sum(drafts_weight) AS accepted_drafts_per_step,
           CAST(sum(lines) AS BIGINT) AS log_lines,
           CAST(sum(accept_lines) AS BIGINT) AS accept_lines,
           count(DISTINCT log_source_id) AS log_files,
           CASE WHEN bool_or(graph_off) AND bool_or(graph_on) THEN [false, true]
                WHEN bool_or(graph_off) THEN [false]
                WHEN bool_or(graph_on) THEN [true] END AS cuda_graph
    FROM pooled
    GROUP BY session_id, phase, variant
    ORDER BY variant, phase, session_id
"""
ACCEPT_LENGTH_ANY_EVIDENCE = ACCEPT_ANY_EVIDENCE.format(
    benchmark=ACCEPT_LENGTH.format(variant=VARIANT, in_scope=IN_SCOPE), evidence_in_scope=EVIDENCE_IN_SCOPE
)


def accept_by_variant(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Variants whose run windows logged an accept length (speculative ones): ``accept_length`` without the rest."""
    found = accept_length(db_path, phase_list, variant_list)
    return found[found["tokens_per_step"].notna()].reset_index(drop=True)


# Where an evidence session's server config is: its own (a lifetime's server_args, a record's server_info),
# and the log it was linked to. One pass over {sessions} (server lifetimes and bench records): reading the
# evidence sessions twice made DuckDB keep every config's 10 KB of args (+65 MB at 10,000 sessions).
CONFIG_PLACES = """
    SELECT session_id, variant, place.source_id AS config_source_id, place.segment AS config_segment
    FROM (SELECT session_id, variant, unnest([struct_pack(source_id := source_id, segment := part),
                                              struct_pack(source_id := log_source_id, segment := log_segment)]) AS place
          FROM {sessions})
    WHERE place.source_id IS NOT NULL
"""


def configs_by_variant(
    db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str], session_list: Sequence[str] = ()
) -> pd.DataFrame:
    """The latest server config linked (view ``session_logs``) to each variant's sessions in scope.

    ``distinct_configs`` counts different argument sets among them: more than one
    means the variant's own sessions are not like-for-like.
    """
    # Config rows are ~10 KB of argument JSON each: only the winners' full rows are read, the rest is
    # carried as (variant, row id, time) and distinct (variant, args) pairs.
    return frame(
        db_path,
        f"""
        WITH {EVIDENCE_IN_SCOPE}, keys AS (
            SELECT DISTINCT l.log_source_id, l.segment, {VARIANT} AS variant
            FROM benchmark_sessions s JOIN linked_logs() l USING (session_id)
            WHERE {IN_SCOPE}
            UNION ALL  -- a server lifetime's own config, a bench record's server_info, the log linked to a record
            SELECT DISTINCT config_source_id, config_segment, variant FROM ({CONFIG_PLACES.format(sessions="ev")})
        ), linked AS (
            SELECT k.variant, c.rowid AS config_row, c.ts, c.args
            FROM keys k JOIN server_configs c ON c.source_id = k.log_source_id AND c.segment = k.segment
        ), latest AS (
            SELECT variant, config_row FROM linked
            QUALIFY row_number() OVER (PARTITION BY variant ORDER BY ts DESC NULLS LAST) = 1
        ), spread AS (
            SELECT variant, count(args) AS distinct_configs FROM (SELECT DISTINCT variant, args FROM linked) GROUP BY variant
        )
        SELECT c.* EXCLUDE (variant), latest.variant, spread.distinct_configs,
               coalesce(spec_method(c.speculative_algorithm), 'none') AS method
        FROM latest JOIN server_configs c ON c.rowid = latest.config_row JOIN spread ON spread.variant = latest.variant
        ORDER BY latest.variant
        """,
        scope(phase_list, variant_list, session_list),
        linked=True,
    )


# The slowest rank sets the pace: per profile (trace files sharing a profile_id, else one file) and
# cycle kind, the rank with the longest median over complete cycles (cycle_totals), with how many
# ranks and cycles the profile has. Reads $phases and $variants.
PACE = """
    rank_medians AS (
        SELECT coalesce(t.profile_id, c.source_id) AS profile_key, c.variant, c.cycle_kind, c.source_id, c.rank,
               median(c.cycle_ms) AS median_cycle_ms, count(*) AS cycles
        FROM cycle_totals c LEFT JOIN trace_ranks t USING (source_id, rank)
        WHERE c.variant IS NOT NULL
          AND (len($phases) = 0 OR list_contains($phases, coalesce(c.experiment_phase, '(no phase)')))
          AND (len($variants) = 0 OR list_contains($variants, c.variant))
        GROUP BY ALL
    ), pace AS (
        SELECT *, count(*) OVER profile AS ranks_in_profile, sum(cycles) OVER profile AS profile_cycles
        FROM rank_medians
        WINDOW profile AS (PARTITION BY profile_key, variant, cycle_kind)
        QUALIFY row_number() OVER (PARTITION BY profile_key, variant, cycle_kind ORDER BY median_cycle_ms DESC, rank) = 1
    )
"""


def measured_cycles(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Cycle time measured by profiler traces (views of migration 004), per variant.

    Per rank, the median over complete cycles; per profile (ranks sharing a
    profile_id), the slowest rank's, since it sets the pace; per variant, the median
    over its profiles. ``cycle_kind``: speculative (draft+verify+extend) or decode
    (a baseline step). Empty when no trace was ingested.
    """
    with reader(db_path) as con:
        if not {"cycle_totals", "trace_ranks"} <= relations(con):
            return pd.DataFrame(columns=["variant", "cycle_kind", "cycle_ms", "profiles", "ranks", "cycles"])
        return con.execute(
            f"""
            WITH {PACE}
            SELECT variant, cycle_kind, median(median_cycle_ms) AS cycle_ms, count(*) AS profiles,
                   sum(ranks_in_profile) AS ranks, sum(profile_cycles) AS cycles
            FROM pace GROUP BY ALL ORDER BY variant, cycle_kind
            """,
            {"phases": list(phase_list), "variants": list(variant_list)},
        ).df()


# --- phases -----------------------------------------------------------------------------------

def phase_overview(db_path: str | StoreRef) -> pd.DataFrame:
    """One row per phase with any evidence: its dates, sessions (of every origin), variants and measured runs."""
    return frame(
        db_path,
        f"""
        SELECT coalesce(s.phase, $no_phase) AS phase,
               min(coalesce(r.started_at, s.started_at)) AS first_at,
               max(coalesce(r.ended_at, r.started_at, s.ended_at, s.started_at)) AS last_at,
               count(DISTINCT s.session_id) AS sessions,
               count(r.run_index) FILTER (WHERE NOT r.is_warmup) AS measured_runs,
               list(DISTINCT {VARIANT} ORDER BY {VARIANT}) AS variants,
               list(DISTINCT s.origin ORDER BY s.origin) AS origins
        FROM evidence_sessions s LEFT JOIN bench_runs r USING (session_id)
        GROUP BY 1 ORDER BY first_at NULLS LAST, phase
        """,
        {"no_phase": NO_PHASE},
    )


# --- run drill-down ---------------------------------------------------------------------------

def sessions(
    db_path: str | StoreRef, phase_list: Sequence[str] = (), variant_list: Sequence[str] = (), session_list: Sequence[str] = ()
) -> pd.DataFrame:
    """Sessions of every origin (view evidence_sessions), benchmark sessions first, then newest first."""
    # Runs are summed per session before the join: grouping the wide session rows themselves cost the
    # dashboard's server 25 MB more at 10,000 sessions (bench/bench_dashboard.py).
    return frame(
        db_path,
        f"""
        WITH run_figures AS (
            SELECT session_id, count(*) AS n_runs, avg({TOK_PER_S}) AS mean_tok_per_s,
                   {TOKENS_OVER_TIME} AS tokens_over_time
            FROM bench_runs r WHERE NOT r.is_warmup GROUP BY session_id
        )
        SELECT s.session_id, s.origin, s.source_id, s.phase, {VARIANT} AS variant, s.variant_from, s.started_at, s.ended_at,
               coalesce(b.model, s.model) AS model, b.endpoint, b.max_tokens, b.warmup, s.part, s.files,
               s.log_source_id, s.log_segment, s.link_method,
               src.path, src.sha256, src.ingested_at, src.size_bytes, src.kind,
               coalesce(f.n_runs, 0) AS n_runs, f.mean_tok_per_s, f.tokens_over_time
        FROM evidence_sessions s JOIN sources src USING (source_id)
        LEFT JOIN sessions b USING (session_id)
        LEFT JOIN run_figures f USING (session_id)
        WHERE {IN_SCOPE}
        ORDER BY list_position(['benchmark', 'server_lifetime', 'bench_record', 'trace_set'], s.origin),
                 s.started_at DESC NULLS LAST, s.session_id
        """,
        scope(phase_list, variant_list, session_list),
    )


def session_runs(db_path: str | StoreRef, session_id: str) -> pd.DataFrame:
    """The session's runs with what the server log says about each (view ``run_log_stats``)."""
    return frame(
        db_path,
        f"""
        WITH per_run AS (  -- the run's window with the most decode lines; of equal ones, the lowest log source id's
            SELECT run_index, is_warmup, tokens_per_step, accepted_drafts_per_step,
                   gen_throughput_mean AS log_gen_throughput, decode_lines
            FROM windows_of([$session])
            QUALIFY row_number() OVER (PARTITION BY run_index, is_warmup ORDER BY decode_lines DESC, log_source_id, segment) = 1
        )
        SELECT r.run_index, r.is_warmup, r.prompt_tokens, r.output_tokens, r.max_tokens, r.duration_s,
               {TOK_PER_S} AS tok_per_s, r.hit_max_tokens,
               p.tokens_per_step, p.accepted_drafts_per_step, p.log_gen_throughput, p.decode_lines,
               r.started_at, r.ended_at, r.finish_reason
        FROM bench_runs r LEFT JOIN per_run p USING (run_index, is_warmup)
        WHERE r.session_id = $session
        ORDER BY r.is_warmup DESC, r.started_at NULLS LAST, r.run_index
        """,
        {"session": session_id},
        linked=True,
    )


def session_logs(db_path: str | StoreRef, session_id: str) -> pd.DataFrame:
    """Server-log segments of a session (view ``session_logs``; a lifetime's own log, a record's linked log)."""
    return frame(
        db_path,
        """
        WITH logs AS (
            SELECT log_source_id, segment, link_method FROM linked_logs() WHERE session_id = $session
            UNION ALL
            SELECT log_source_id, log_segment, link_method FROM evidence_sessions
            WHERE session_id = $session AND log_source_id IS NOT NULL
        )
        SELECT l.log_source_id AS source_id, l.segment, l.link_method, src.path, src.sha256, src.size_bytes,
               src.ingested_at, src.kind, src.lines_skipped
        FROM logs l JOIN sources src ON src.source_id = l.log_source_id
        ORDER BY src.path, l.segment
        """,
        {"session": session_id},
        linked=True,
    )


def log_windows(db_path: str | StoreRef, session_id: str) -> pd.DataFrame:
    """Per run and linked log: the line-number range of its window, and the file to read it from.

    A session without runs (a server lifetime, a bench record) has one window: its log's whole lifetime.
    """
    return frame(
        db_path,
        """
        WITH windows AS (
            SELECT run_index, is_warmup, log_source_id, segment, join_method, first_line_no, last_line_no,
                   decode_lines, window_start, window_end
            FROM windows_of([$session])
            UNION ALL
            SELECT CAST(NULL AS INTEGER), false, e.log_source_id, e.log_segment, 'lifetime',
                   min(d.line_no), max(d.line_no), count(*), min(d.ts), max(d.ts)
            FROM evidence_sessions e
            JOIN decode_stats d ON d.source_id = e.log_source_id AND d.segment IS NOT DISTINCT FROM e.log_segment
            WHERE e.session_id = $session
            GROUP BY e.log_source_id, e.log_segment
        )
        SELECT w.run_index, w.is_warmup, w.log_source_id AS source_id, w.segment, w.join_method,
               w.first_line_no, w.last_line_no, w.decode_lines, w.window_start, w.window_end,
               src.path, src.size_bytes
        FROM windows w JOIN sources src ON src.source_id = w.log_source_id
        WHERE w.first_line_no IS NOT NULL
        ORDER BY src.path, w.segment, w.first_line_no
        """,
        {"session": session_id},
        linked=True,
    )


def bench_record(db_path: str | StoreRef, session_id: str) -> pd.DataFrame:
    """The bench_serving row behind a ``bench_record`` session (empty for other sessions)."""
    return frame(
        db_path,
        """
        SELECT b.* FROM evidence_sessions e
        JOIN bench_serving b ON b.source_id = e.source_id AND b.record_index = e.part
        WHERE e.session_id = $session AND e.origin = 'bench_record'
        """,
        {"session": session_id},
    )


BUCKETED = """
    bounds AS (SELECT min(ts) AS t0, max(ts) AS t1, count(*) AS n FROM d),
    bucketed AS (
        SELECT d.*, CASE WHEN bounds.n <= $max_points THEN epoch_us(d.ts)
                         ELSE floor((epoch_us(d.ts) - epoch_us(bounds.t0)) * $max_points
                                    / greatest(epoch_us(bounds.t1) - epoch_us(bounds.t0), 1)) END AS bucket
        FROM d, bounds
    )
"""


def decode_series(db_path: str | StoreRef, log_keys: Sequence[str], start: Any = None, end: Any = None) -> pd.DataFrame:
    """Decode stats of the given log segments (``source_id:segment``) over time, in ≤ MAX_POINTS buckets."""
    return frame(
        db_path,
        f"""
        WITH d AS (
            SELECT * FROM decode_stats
            WHERE list_contains($keys, source_id || ':' || coalesce(CAST(segment AS VARCHAR), ''))
              AND ts IS NOT NULL
              AND ($start IS NULL OR ts >= $start) AND ($end IS NULL OR ts <= $end)
        ), {BUCKETED}
        SELECT min(ts) AS ts,
               avg(gen_throughput) AS gen_throughput,
               -- only the lines that carry an accept length weigh it: vLLM prints it on its own line
               sum(tokens_per_step * coalesce(running_req, 1))
                   / sum(coalesce(running_req, 1)) FILTER (WHERE tokens_per_step IS NOT NULL) AS tokens_per_step,
               avg(running_req) AS running_req,
               max(queue_req) AS queue_req,
               min(line_no) AS first_line_no,
               count(*) AS lines
        FROM bucketed GROUP BY bucket ORDER BY ts
        """,
        {"keys": list(log_keys), "start": start, "end": end, "max_points": MAX_POINTS},
    )


def prefill_events(db_path: str | StoreRef, log_keys: Sequence[str], start: Any = None, end: Any = None) -> pd.DataFrame:
    """Prefill batches of the given log segments, in ≤ MAX_POINTS buckets (token counts summed)."""
    return frame(
        db_path,
        f"""
        WITH d AS (
            SELECT * FROM prefill_stats
            WHERE list_contains($keys, source_id || ':' || coalesce(CAST(segment AS VARCHAR), ''))
              AND ts IS NOT NULL
              AND ($start IS NULL OR ts >= $start) AND ($end IS NULL OR ts <= $end)
        ), {BUCKETED}
        SELECT min(ts) AS ts, sum(new_seq) AS new_seq, sum(new_token) AS new_token,
               sum(cached_token) AS cached_token, min(line_no) AS line_no, count(*) AS batches
        FROM bucketed GROUP BY bucket ORDER BY ts
        """,
        {"keys": list(log_keys), "start": start, "end": end, "max_points": MAX_POINTS},
    )


ONE_EVIDENCE_SESSION = ("(SELECT * FROM evidence_sessions WHERE session_id = $session"
                        " AND origin IN ('server_lifetime', 'bench_record', 'trace_set'))")


def session_config(db_path: str | StoreRef, session_id: str) -> pd.DataFrame:
    """The server config of a session: its own, else of the log linked to it (latest server start first)."""
    return frame(
        db_path,
        f"""
        WITH places AS (
            SELECT log_source_id AS config_source_id, segment AS config_segment FROM linked_logs() WHERE session_id = $session
            UNION ALL
            SELECT config_source_id, config_segment FROM ({CONFIG_PLACES.format(sessions=ONE_EVIDENCE_SESSION)})
        )
        SELECT c.* FROM places p
        JOIN server_configs c ON c.source_id = p.config_source_id AND c.segment = p.config_segment
        ORDER BY c.ts DESC NULLS LAST LIMIT 1
        """,
        {"session": session_id},
        linked=True,
    )


def variant_config(db_path: str | StoreRef, variant: str, phase: str | None) -> pd.DataFrame:
    """A variant's server config, preferring one linked to its sessions in ``phase``: a benchmark session's
    linked log; else (a variant without benchmark sessions) a lifetime's own config, a record's
    server_info or linked log. Benchmark sessions first: the evidence view costs more at 10,000 sessions."""
    found = frame(
        db_path,
        f"""
        SELECT c.*, (s.phase IS NOT DISTINCT FROM $phase) AS same_phase
        FROM benchmark_sessions s
        JOIN linked_logs() l USING (session_id)
        JOIN server_configs c ON c.source_id = l.log_source_id AND c.segment = l.segment
        WHERE {VARIANT} = $variant
        ORDER BY same_phase DESC, c.ts DESC NULLS LAST LIMIT 1
        """,
        {"variant": variant, "phase": phase},
        linked=True,
    )
    if not found.empty:
        return found
    return frame(
        db_path,
        f"""
        WITH ev AS (
            SELECT * FROM evidence_sessions WHERE variant = $variant AND origin IN ('server_lifetime', 'bench_record')
        )
        SELECT c.*, (e.phase IS NOT DISTINCT FROM $phase) AS same_phase
        FROM ({CONFIG_PLACES.format(sessions="ev")}) p JOIN ev e USING (session_id)
        JOIN server_configs c ON c.source_id = p.config_source_id AND c.segment = p.config_segment
        ORDER BY same_phase DESC, c.ts DESC NULLS LAST LIMIT 1
        """,
        {"variant": variant, "phase": phase},
    )


# --- decisions and sources --------------------------------------------------------------------

def decisions(db_path: str | StoreRef) -> pd.DataFrame:
    return frame(db_path, "SELECT * FROM decisions ORDER BY created_at DESC, decision_id")


def label_changes(db_path: str | StoreRef) -> pd.DataFrame:
    """Every recorded label change (``specdash label``, Ingest → Label files), newest first."""
    with reader(db_path) as con:
        if "label_changes" not in relations(con):  # a store from before migration 019
            return pd.DataFrame()
        return without_nan_text(con.execute("SELECT * FROM label_changes ORDER BY changed_at DESC, path").df())


def sources(db_path: str | StoreRef) -> pd.DataFrame:
    return frame(
        db_path,
        """
        SELECT path, kind, phase, variant, ingested_at, rows_loaded, lines_skipped, engine, size_bytes, sha256, source_id
        FROM sources ORDER BY ingested_at DESC, path
        """,
    )


# --- trace breakdown (tables and views of migration 004) -------------------------------------

TRACE_SCOPE = """
    (len($phases) = 0 OR list_contains($phases, coalesce(p.phase, '(no phase)')))
    AND (len($variants) = 0 OR list_contains($variants, p.variant))
"""
# Stacked-bar components of a cycle: the phase, with communication split out of verify and decode.
COMPONENT = """
    CASE WHEN p.cycle_phase IN ('verify', 'decode') AND p.kernel_class = 'communication' THEN p.cycle_phase || ' communication'
         WHEN p.cycle_phase IN ('verify', 'decode') THEN p.cycle_phase || ' compute'
         WHEN p.cycle_phase IN ('draft', 'draft_extend', 'unattributed', 'idle') THEN p.cycle_phase
         ELSE 'other' END
"""


def trace_scope(phases: Sequence[str], variants: Sequence[str]) -> dict[str, list[str]]:
    return {"phases": list(phases), "variants": list(variants)}


def has_traces(db_path: str | StoreRef) -> bool:
    with reader(db_path) as con:
        if "cycle_phase_times" not in relations(con):
            return False
        return fetch_value(con, "SELECT count(*) > 0 FROM cycle_phase_times")


def trace_overview(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Per trace file and rank in scope: GPU busy and idle time, and each kernel class's union (trace_ranks).

    The one breakdown a trace without phase markers (no step[...] spans, no EAGLE stack events) still gives.
    """
    return frame(
        db_path,
        f"""
        SELECT p.variant, p.phase, p.rank, p.world_size, p.gpu_name, p.file_name, p.phase_source, p.span_ms,
               p.busy_ms, p.idle_ms, p.communication_ms, p.attention_ms, p.gemm_ms, p.moe_ms, p.memcpy_ms,
               p.other_kernel_ms, p.kernels, p.cycles, p.attributed_share
        FROM trace_ranks p WHERE p.variant IS NOT NULL AND {TRACE_SCOPE}
        ORDER BY p.variant, p.file_name, p.rank
        """,
        trace_scope(phase_list, variant_list),
    )


def cycle_composition(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Where the pace-setting rank's cycle goes, per variant: mean ms per component over its complete cycles.

    Per profile (ranks sharing a profile_id), the slowest rank by median cycle time sets the pace;
    its complete cycles' components are averaged, so they add up to its mean cycle. Variants with
    several profiles average them. ``communication_ms`` counts communication kernels in any phase.
    """
    return frame(
        db_path,
        f"""
        WITH parts AS (
            SELECT p.variant, p.cycle_kind, p.source_id, p.rank, coalesce(t.profile_id, p.source_id) AS profile_key,
                   {COMPONENT} AS component, p.kernel_class = 'communication' AS is_comm, p.duration_ms
            FROM cycle_phase_times p LEFT JOIN trace_ranks t USING (source_id, rank)
            WHERE p.complete AND p.cycle_kind IN ('speculative', 'decode') AND p.variant IS NOT NULL AND {TRACE_SCOPE}
        ), {PACE}, per_profile AS (
            SELECT pa.variant, pa.cycle_kind, pa.profile_key, p.component,
                   sum(p.duration_ms) / any_value(pa.cycles) AS mean_ms,
                   sum(p.duration_ms) FILTER (WHERE p.is_comm) / any_value(pa.cycles) AS comm_ms,
                   any_value(pa.rank) AS pace_rank, any_value(pa.ranks_in_profile) AS ranks,
                   any_value(pa.cycles) AS cycles, any_value(pa.median_cycle_ms) AS median_cycle_ms
            FROM pace pa JOIN parts p USING (profile_key, variant, cycle_kind, source_id, rank)
            GROUP BY ALL
        )
        SELECT variant, cycle_kind, component, avg(mean_ms) AS mean_ms, avg(coalesce(comm_ms, 0)) AS communication_ms,
               count(DISTINCT profile_key) AS profiles, min(pace_rank) AS pace_rank, max(ranks) AS ranks,
               sum(cycles) AS cycles, avg(median_cycle_ms) AS median_cycle_ms
        FROM per_profile GROUP BY ALL ORDER BY variant, component
        """,
        trace_scope(phase_list, variant_list),
    )


def cycle_distribution(
    db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str], max_points: int = MAX_POINTS
) -> pd.DataFrame:
    """Cycle times of complete cycles, every rank, sampled in SQL to at most ``max_points`` per variant."""
    return frame(
        db_path,
        """
        SELECT variant, cycle_kind, rank, cycle_idx, cycle_ms, verify_ms, verify_comm_ms
        FROM (
            SELECT p.variant, p.cycle_kind, p.rank, p.cycle_idx, p.cycle_ms, p.verify_ms, p.verify_comm_ms,
                   row_number() OVER (PARTITION BY p.variant ORDER BY hash(p.source_id, p.rank, p.cycle_idx)) AS nth
            FROM cycle_totals p
            WHERE p.variant IS NOT NULL
              AND (len($phases) = 0 OR list_contains($phases, coalesce(p.experiment_phase, '(no phase)')))
              AND (len($variants) = 0 OR list_contains($variants, p.variant))
        ) WHERE nth <= $max_points
        ORDER BY variant, rank, cycle_idx
        """,
        {**trace_scope(phase_list, variant_list), "max_points": max_points},
    )


def rank_breakdown(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Per variant and rank: median complete cycle, verify and its communication, and the GPU busy/idle split."""
    return frame(
        db_path,
        """
        SELECT s.variant, s.rank, t.world_size, t.gpu_name, t.stage, coalesce(t.profile_id, s.source_id) AS profile,
               s.complete_cycles, s.median_cycle_ms, s.max_cycle_ms, s.median_verify_ms, s.median_verify_comm_ms,
               s.verify_comm_share, t.busy_ms, t.idle_ms, t.communication_ms, t.attributed_share, t.phase_source
        FROM cycle_rank_summary s LEFT JOIN trace_ranks t USING (source_id, rank)
        WHERE s.variant IS NOT NULL
          AND (len($phases) = 0 OR list_contains($phases, coalesce(s.experiment_phase, '(no phase)')))
          AND (len($variants) = 0 OR list_contains($variants, s.variant))
        ORDER BY s.variant, profile, s.rank
        """,
        trace_scope(phase_list, variant_list),
    )


def top_kernels(
    db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str], limit: int = 15
) -> pd.DataFrame:
    """The kernels that take the most GPU time per variant, averaged over its ranks."""
    return frame(
        db_path,
        """
        SELECT * FROM (
            SELECT p.variant, p.name, p.kernel_class, p.cycle_phase,
                   sum(p.count) / count(DISTINCT (p.source_id, p.rank)) AS calls_per_rank,
                   sum(p.total_ms) / count(DISTINCT (p.source_id, p.rank)) AS total_ms_per_rank,
                   sum(p.total_ms) / sum(p.count) AS mean_ms,
                   median(p.p50_ms) AS p50_ms, max(p.p99_ms) AS p99_ms,
                   row_number() OVER (PARTITION BY p.variant ORDER BY sum(p.total_ms) DESC) AS position
            FROM trace_kernels p
            WHERE p.variant IS NOT NULL AND (len($phases) = 0 OR list_contains($phases, coalesce(p.phase, '(no phase)')))
              AND (len($variants) = 0 OR list_contains($variants, p.variant))
            GROUP BY p.variant, p.name, p.kernel_class, p.cycle_phase
        ) WHERE position <= $limit
        ORDER BY variant, position
        """,
        {**trace_scope(phase_list, variant_list), "limit": limit},
    )


def session_positions(db_path: str | StoreRef, session_id: str, run_index: int | None = None) -> pd.DataFrame:
    """The per-position acceptance rows (``acceptance_positions``: vLLM's per-position lines) of one session's window.

    The session's logs are those ``session_logs`` reads (a benchmark's linked logs, a lifetime's own log, a
    record's linked log). A benchmark's window is its measured runs' (``run_index``: one run's): a line counts
    when its timestamp lies inside a run's window (run times ± clock skew), or, for lines or runs without
    times, when its line number lies inside the run's decode lines. A session without runs, or runs joined
    by ``grouping`` (no times), takes the log segment's every line. Empty when the logs print no such lines.
    """
    columns = ["source_id", "segment", "line_no", "ts", "engine_index", "position", "rate", "drafts", "origin"]
    with reader(db_path) as con:
        if "acceptance_positions" not in relations(con):
            return pd.DataFrame(columns=columns)
    return frame(
        db_path,
        """
        WITH logs AS (
            SELECT log_source_id, segment FROM linked_logs() WHERE session_id = $session
            UNION
            SELECT log_source_id, log_segment FROM evidence_sessions
            WHERE session_id = $session AND log_source_id IS NOT NULL
        ),
        windows AS (
            SELECT run_index, is_warmup, log_source_id, segment, join_method, window_start, window_end,
                   first_line_no, last_line_no
            FROM windows_of([$session])
        ),
        measured AS (
            SELECT * FROM windows WHERE NOT is_warmup AND ($run::INTEGER IS NULL OR run_index = $run::INTEGER)
        )
        SELECT p.source_id, p.segment, p.line_no, p.ts, p.engine_index, p.position, p.rate, p.drafts, p.origin
        FROM acceptance_positions p
        JOIN logs l ON l.log_source_id = p.source_id AND l.segment IS NOT DISTINCT FROM p.segment
        WHERE (NOT EXISTS (SELECT 1 FROM windows w
                           WHERE w.log_source_id = p.source_id AND w.segment IS NOT DISTINCT FROM p.segment)
               AND $run::INTEGER IS NULL)
           OR EXISTS (
               SELECT 1 FROM measured w
               WHERE w.log_source_id = p.source_id AND w.segment IS NOT DISTINCT FROM p.segment
                 AND (w.join_method = 'grouping'
                      OR (p.ts IS NOT NULL AND p.ts BETWEEN w.window_start AND w.window_end)
                      OR (p.ts IS NULL AND p.line_no BETWEEN w.first_line_no AND w.last_line_no)))
        ORDER BY p.source_id, p.segment, p.line_no, p.engine_index, p.position
        """,
        {"session": session_id, "run": run_index},
        linked=True,
    )


def variant_origins(db_path: str | StoreRef, phase_list: Sequence[str], variant_list: Sequence[str]) -> pd.DataFrame:
    """Per variant in scope: where its name came from (evidence_sessions.variant_from), its sessions, files and
    engines (a variant is a claim that its runs are one system)."""
    return frame(
        db_path,
        f"""
        SELECT {VARIANT} AS variant, list(DISTINCT s.variant_from ORDER BY s.variant_from) AS named_from,
               count(*) AS sessions, count(DISTINCT coalesce(s.log_source_id, s.source_id)) AS files,
               count(DISTINCT src.engine) AS engines
        FROM evidence_sessions s JOIN sources src USING (source_id)
        WHERE {IN_SCOPE}
        GROUP BY 1 ORDER BY 1
        """,
        scope(phase_list, variant_list),
    )
