"""The sweeps a store holds, one line each, for ``specdash status`` (issue #21): which sweep, its variants, the
batch sizes / concurrencies it covers, how many points and what kind of throughput. Reads view ``sweep_series``
(migration 016); no dashboard code, so the ingest CLI can print it."""
from __future__ import annotations

from ingest.storage.location import StoreRef
from ingest.storage.store import open_with_retry

SWEEPS = """
    SELECT sweep,
           string_agg(DISTINCT CASE WHEN NOT is_baseline THEN variant END, ', ' ORDER BY CASE WHEN NOT is_baseline THEN variant END) AS variants,
           bool_or(is_baseline) AS has_baseline,
           CASE WHEN count(batch_size) > 0 THEN 'batch' WHEN count(concurrency) > 0 THEN 'concurrency' ELSE 'rate' END AS axis,
           list_sort(list_distinct(list(coalesce(CAST(batch_size AS DOUBLE), CAST(concurrency AS DOUBLE), request_rate)))) AS xs,
           count(*) AS points,
           string_agg(DISTINCT throughput_kind, ', ') AS kinds,
           bool_or(simulated) AS simulated
    FROM sweep_series GROUP BY sweep ORDER BY sweep
"""


def sweep_lines(db_path: StoreRef, limit: int = 20) -> list[str]:
    """One line per sweep (at most ``limit``, then how many more)."""
    con = open_with_retry(db_path, read_only=True, wait_s=10.0)
    try:
        rows = con.execute(SWEEPS).fetchall()
    finally:
        con.close()
    lines = []
    for sweep, variants, has_baseline, axis, xs, points, kinds, simulated in rows[:limit]:
        values = ", ".join(f"{x:g}" for x in xs if x is not None)
        lines.append(f"  sweep {sweep}: {variants or 'baseline only'}{'' if has_baseline else ' (no baseline)'}; "
                     f"{axis} {values}; {points} points, {kinds}{'; SIMULATED acceptance' if simulated else ''}")
    if len(rows) > limit:
        lines.append(f"  … and {len(rows) - limit} more sweeps (the Sweeps page lists them all)")
    return lines
