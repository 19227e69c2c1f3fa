"""A store at the scale of a long-running project, written straight into the real schema with DuckDB SQL.

``ingest.storage.store.writer`` creates the schema (all migrations), then ``INSERT ...
SELECT ... FROM range(n)`` fills it; values are deterministic functions of the row
number (``hash``), so the same scale gives the same store. At scale 1:

* 10,000 benchmark sessions (2,000 benchmark files of 5 sessions each), 50,000
  measured runs (5 per session, 2048 max tokens, ~10 % stopped short);
* 10,000 server logs, one per session, each with its ``server_configs`` row and
  1,000 decode-stat lines (10 million in all) over the session's time window, plus
  one prefill line per run;
* 5 phases × 20 variants (two of them without speculation), every session labelled
  with one of each, as ``specdash ingest --phase --variant`` would;
* the run-window tables ingest keeps (migration 007), rebuilt once at the end.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ingest.storage import run_windows, store  # noqa: E402

PHASES = ("phase-0", "phase-1", "phase-2", "phase-3", "phase-4")
# variant → (speculative?, mean tok/s, tokens per step)
VARIANTS: dict[str, tuple[bool, float, float]] = {
    "baseline": (False, 82.0, 1.0),
    "baseline-fp8-kv": (False, 85.5, 1.0),
    "k2-drafter": (True, 51.8, 1.58),
    "from-scratch": (True, 60.1, 1.83),
    "k2-drafter-d2t-fixed": (True, 71.4, 2.21),
    "ft-k25-epoch1": (True, 74.9, 2.32),
    "ft-k25-epoch2": (True, 79.3, 2.46),
    "ft-k25-epoch3": (True, 83.8, 2.60),
    "ft-k25-epoch4": (True, 86.0, 2.67),
    "ft-k25-epoch5": (True, 86.9, 2.70),
    "ft-k25-steps2": (True, 84.1, 2.35),
    "ft-k25-steps4": (True, 85.2, 2.94),
    "ft-k25-topk4": (True, 81.7, 2.88),
    "ft-k25-300k": (True, 88.4, 2.79),
    "ft-k25-1m": (True, 91.2, 2.91),
    "ft-k25-1m-lr2": (True, 90.5, 2.88),
    "custom-ar-on": (True, 93.1, 2.91),
    "nccl-tree": (True, 89.7, 2.91),
    "verify-fp8": (True, 95.6, 2.90),
    "verify-fp8-steps4": (True, 97.2, 3.21),
}

SESSIONS = 10_000
SESSIONS_PER_BENCH_FILE = 5
RUNS_PER_SESSION = 5
DECODE_LINES_PER_LOG = 1_000


def uniform(expr: str, salt: str) -> str:
    """SQL for a deterministic uniform [0, 1) value of ``expr``."""
    return f"((hash({expr}, '{salt}') % 1000003) / 1000003.0)"


def normal(expr: str, salt: str) -> str:
    """Deterministic ~N(0, 1): the sum of four uniforms, centred and scaled (Irwin–Hall)."""
    return "((" + " + ".join(uniform(expr, f"{salt}{k}") for k in range(4)) + ") - 2.0) * 1.7320508"


def server_args_text(variant: str, speculative: bool) -> str:
    """A config dump of realistic size (~300 keys, ~9 KB of JSON)."""
    args: dict[str, object] = {
        "model_path": "/models/Kimi-K2.5", "tp_size": 8, "dp_size": 1, "decode_log_interval": 40,
        "speculative_algorithm": "EAGLE3" if speculative else None,
        "speculative_draft_model_path": f"/models/drafters/{variant}" if speculative else None,
        "speculative_num_steps": 3 if speculative else None, "speculative_eagle_topk": 1 if speculative else None,
        "speculative_num_draft_tokens": 4 if speculative else None, "disable_cuda_graph": False,
    }
    args.update({f"option_{index:03d}": [False, index * 7, round(index / 301, 3), "auto"][index % 4] for index in range(290)})
    return json.dumps(args)


def build(db: Path, scale: float = 1.0) -> dict[str, int]:
    sessions = max(100, int(SESSIONS * scale))
    bench_files = sessions // SESSIONS_PER_BENCH_FILE
    sessions = bench_files * SESSIONS_PER_BENCH_FILE
    for stale in (db, db.with_name(db.name + ".wal")):
        stale.unlink(missing_ok=True)
    variant_rows = [(index, name, spec, toks, tau, server_args_text(name, spec)) for index, (name, (spec, toks, tau)) in enumerate(VARIANTS.items())]
    with store.writer(db) as con:
        con.execute("SET memory_limit = '4GB'")  # one 10-million-row transaction, unlike an ingest's batches
        con.execute("CREATE TEMP TABLE v (vi INTEGER, variant VARCHAR, spec BOOLEAN, toks DOUBLE, tau DOUBLE, args VARCHAR)")
        con.executemany("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", variant_rows)
        con.execute("CREATE TEMP TABLE p AS SELECT unnest(?) AS phase, generate_subscripts(?, 1) - 1 AS pi", [list(PHASES), list(PHASES)])
        nv, np_ = len(VARIANTS), len(PHASES)
        # one row per session: its labels, files and start time
        con.execute(
            f"""
            CREATE TEMP TABLE s AS
            SELECT i, v.variant, v.spec, v.toks, v.tau, p.phase,
                   lpad(printf('%x', i // {SESSIONS_PER_BENCH_FILE}), 12, '0') || 'b000' AS bench_source,
                   lpad(printf('%x', i), 12, '0') || 'l000' AS log_source,
                   i % {SESSIONS_PER_BENCH_FILE} AS session_key,
                   TIMESTAMP '2026-01-05 09:00:00' + to_seconds(CAST(i * 1500 + {uniform('i', 'start')} * 600 AS BIGINT)) AS started_at
            FROM range({sessions}) t(i)
            JOIN v ON v.vi = (i // {SESSIONS_PER_BENCH_FILE}) % {nv}
            JOIN p ON p.pi = (i // ({SESSIONS_PER_BENCH_FILE} * {nv})) % {np_}
            """
        )
        con.execute(
            """
            INSERT INTO sources  -- link_to: NULL (links found, not given)
            SELECT bench_source, '/data/bench/' || bench_source || '.json', bench_source || repeat('0', 48), 'bench_json', 'sglang',
                   4096, any_value(phase), any_value(variant), 'g' || bench_source, max(started_at) + INTERVAL 1 HOUR,
                   count(*) * 7, 0, '{}', '[]', NULL
            FROM s GROUP BY bench_source
            UNION ALL
            SELECT log_source, '/data/logs/' || log_source || '.log', log_source || repeat('1', 48), 'sglang_log', 'sglang',
                   350000, phase, variant, 'g' || bench_source, started_at + INTERVAL 1 HOUR,
                   1006, 120, '{"noise: http access": 120}', '[]', NULL
            FROM s
            """
        )
        con.execute(
            """
            INSERT INTO sessions
            SELECT bench_source || '-' || session_key, bench_source, session_key, phase, variant, 'sglang',
                   'http://10.0.0.5:30000/v1/chat/completions', 'kimi-k2.5', 2048, 2, started_at, NULL
            FROM s
            """
        )
        con.execute(
            f"""
            INSERT INTO bench_runs
            WITH r AS (
                SELECT s.*, k AS run_index,
                       greatest(5.0, toks * (1 + 0.04 * {normal('i * 10 + k', 'tok')})) AS tok_s,
                       CASE WHEN {uniform('i * 10 + k', 'short')} < 0.1 THEN 1500 + CAST({uniform('i * 10 + k', 'len')} * 540 AS INTEGER) ELSE 2048 END AS tokens
                FROM s, range(1, {RUNS_PER_SESSION + 1}) t(k)
            )
            SELECT bench_source, bench_source || '-' || session_key, session_key, run_index, false,
                   26 + CAST({uniform('i * 10 + run_index', 'prompt')} * 9 AS INTEGER), tokens, tokens / tok_s, tok_s, 2048, tokens = 2048,
                   started_at + to_seconds(CAST(run_index * 45 AS BIGINT)),
                   started_at + to_seconds(CAST(run_index * 45 AS BIGINT)) + to_microseconds(CAST(1e6 * tokens / tok_s AS BIGINT)),
                   CASE WHEN tokens = 2048 THEN 'length' ELSE 'stop' END, NULL, phase, variant
            FROM r
            """
        )
        con.execute(
            """
            INSERT INTO server_configs (source_id, segment, line_no, ts, phase, variant, model_path, tp_size, dp_size,
                                        speculative_algorithm, speculative_draft_model_path, speculative_num_steps,
                                        speculative_eagle_topk, speculative_num_draft_tokens, args)
            SELECT s.log_source, 0, 1, s.started_at - INTERVAL 90 SECOND, s.phase, s.variant, '/models/Kimi-K2.5', 8, 1,
                   CASE WHEN s.spec THEN 'EAGLE3' END, CASE WHEN s.spec THEN '/models/drafters/' || s.variant END,
                   CASE WHEN s.spec THEN 3 END, CASE WHEN s.spec THEN 1 END, CASE WHEN s.spec THEN 4 END, v.args
            FROM s JOIN v USING (variant)
            """
        )
        # decode lines: every 0.25 s from 5 s before the first run to the end of the last one
        con.execute(
            f"""
            INSERT INTO decode_stats
            WITH d AS (
                SELECT s.log_source, s.spec, s.toks, s.tau, s.started_at, n,
                       s.i * {DECODE_LINES_PER_LOG} + n AS key
                FROM s, range({DECODE_LINES_PER_LOG}) t(n)
            ), x AS (
                SELECT *, CASE WHEN spec THEN greatest(1.0, tau * (1 + 0.15 * {normal('key', 'tau')})) END AS tau_line
                FROM d
            )
            SELECT log_source, 0, 200 + n, started_at + to_microseconds(CAST(40e6 + n * 250000 AS BIGINT)), NULL, 0,
                   1, 60 + (n * 13) % 2048, round(((n * 13) % 2048) / 220950.0, 2),
                   round(tau_line, 2), round(tau_line, 2), round(tau_line, 2) - 1,
                   CASE WHEN spec THEN round((tau_line - 1) / 3, 2) END, CASE WHEN spec THEN round((tau_line - 1) / 3, 2) END,
                   true, round(toks * (1 + 0.05 * {normal('key', 'gen')}), 2), 0, NULL
            FROM x
            """
        )
        con.execute(
            f"""
            INSERT INTO prefill_stats
            SELECT s.log_source, 0, 150 + k, s.started_at + to_seconds(CAST(k * 45 AS BIGINT)), NULL, 0,
                   1, 26 + k, 0, 0.0, 0, 0, NULL, true, NULL
            FROM s, range(1, {RUNS_PER_SESSION + 1}) t(k)
            """
        )
        run_windows.rebuild(con)  # what each ingest's load_source keeps up to date, for the whole store at once
        store.touch_last_change(con)
        counts = {
            name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            for name in ("sources", "sessions", "bench_runs", "server_configs", "decode_stats", "prefill_stats")
        }
        con.execute("CHECKPOINT")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    started = time.perf_counter()
    counts = build(args.db, args.scale)
    print(json.dumps(counts), f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
