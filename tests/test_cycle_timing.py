"""Cycle-timing files (phase times a team measured itself) as a spec: CSV, TSV, JSONL, bad rows, the store."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import FIXTURES

from ingest.errors import MalformedInput, UnrecognizedFormat
from ingest.formats import ParseOptions
from ingest.parsers.traces import cycle_timing, kineto
from ingest.pipeline import ingest_paths
from ingest.registry import detect

TRACES = FIXTURES / "traces"
CSV = TRACES / "cycle-timing.csv"
JSONL = TRACES / "cycle-timing.jsonl"
TSV = TRACES / "cycle-timing-baseline.tsv"
BAD = TRACES / "cycle-timing-bad.csv"


def rows(path: Path, options: ParseOptions = ParseOptions()) -> list[dict[str, Any]]:
    return cycle_timing.parse(path, options).tables["cycle_phase_times"].to_pylist()


def by_cycle(found: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, float]]:
    table: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for row in found:
        table[(row["rank"], row["cycle_idx"])][row["cycle_phase"]] = round(row["duration_ms"], 6)
        table[(row["rank"], row["cycle_idx"])]["cycle"] = round(row["cycle_ms"], 6)
    return dict(table)


@pytest.mark.parametrize("path", [CSV, JSONL, TSV, BAD], ids=lambda p: p.name)
def test_detected_by_content(path: Path) -> None:
    assert detect(path).kind == "cycle_timing"


def test_csv_with_ranks_totals_and_a_session() -> None:
    found = rows(CSV)
    assert by_cycle(found) == {
        (0, 0): {"draft": 0.31, "verify": 29.95, "draft_extend": 0.16, "idle": 0.08, "cycle": 30.5},
        (0, 1): {"draft": 0.29, "verify": 30.05, "draft_extend": 0.14, "idle": 0.07, "cycle": 30.55},
        (1, 0): {"draft": 0.33, "verify": 29.9, "draft_extend": 0.15, "idle": 0.12, "cycle": 30.5},
        (1, 1): {"draft": 0.3, "verify": 30.1, "draft_extend": 0.15, "cycle": 30.55},  # phases fill the total exactly
    }
    assert {(r["kernel_class"], r["attribution"]) for r in found if r["cycle_phase"] != "idle"} == {("measured", "measured")}
    assert {(r["cycle_kind"], r["complete"], r["variant"], r["session_key"]) for r in found} == {("speculative", True, "k2-drafter", 0)}
    assert json.loads(found[0]["extra"]) == {"batch_size": 1}


def test_sessions_become_sessions_rows() -> None:
    sessions = cycle_timing.parse(CSV, ParseOptions()).tables["sessions"].to_pylist()
    assert [(s["session_key"], s["variant"], json.loads(s["extra"])["label"]) for s in sessions] == [(0, "k2-drafter", "probe-1")]


def test_jsonl_with_aliased_keys_and_microseconds() -> None:
    found = rows(JSONL)
    assert by_cycle(found) == {
        (0, 0): {"draft": 1.2, "verify": 31.0, "draft_extend": 0.6, "cycle": 32.8},  # no total: the sum
        (0, 1): {"draft": 1.15, "verify": 31.1, "draft_extend": 0.65, "cycle": 32.9},
    }
    assert json.loads(found[0]["extra"]) == {"note": "3 draft steps"}
    assert "sessions" not in cycle_timing.parse(JSONL, ParseOptions()).tables


def test_baseline_decode_steps_from_a_tsv() -> None:
    found = rows(TSV, ParseOptions(extra={"variant": "baseline", "phase": "phase-0"}))
    assert [(r["cycle_idx"], r["cycle_kind"], r["duration_ms"]) for r in found] == [(0, "decode", 12.1), (1, "decode", 12.25), (2, "decode", 12.2)]
    assert {(r["variant"], r["phase"], r["rank"]) for r in found} == {("baseline", "phase-0", 0)}


def test_bad_rows_are_skipped_with_their_line_and_the_rest_loads() -> None:
    result = cycle_timing.parse(BAD, ParseOptions())
    assert result.skipped["malformed row"] == 4
    warnings = "\n".join(result.warnings)
    for line, text in [(3, "ms='thirty' is not a duration"), (4, "cycle='-1' is not a cycle number"), (5, "4 cells"), (7, "cycle='x'")]:
        assert f"{BAD}:{line}: {text}" in warnings
    assert f"{BAD}:6: unknown phase 'sampling'" in warnings
    assert f"{BAD}:10: phases of cycle 1 add up to 5.000 ms, more than its total 4.000 ms" in warnings
    found = result.tables["cycle_phase_times"].to_pylist()
    assert by_cycle(found) == {
        (0, 0): {"draft": 0.3, "other": 0.05, "idle": 0.05, "cycle": 0.4},
        (0, 1): {"verify": 5.0, "cycle": 5.0},
    }
    other = next(r for r in found if r["cycle_phase"] == "other")
    assert json.loads(other["extra"]) == {"phase_label": "sampling"}


def test_nothing_valid_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "timing.csv"
    path.write_text("cycle,phase,ms\nx,verify,1\n")
    with pytest.raises(MalformedInput, match="no valid timing row"):
        cycle_timing.parse(path, ParseOptions())
    empty = tmp_path / "empty.csv"
    empty.write_text("# nothing measured yet\n")
    with pytest.raises(UnrecognizedFormat, match="no data lines"):
        cycle_timing.parse(empty, ParseOptions())


@pytest.mark.parametrize(
    "head",
    [
        b"| Run | Tokens | Time (s) | Throughput (tok/s) | Prompt Length |\n|---|---|---|---|---|\n| 1 | 2048 | 40.50 | 50.6 | 32 |\n",
        b"[2026-02-10 14:00:00 TP0] Decode batch, #running-req: 1, accept len: 1.58\n",
        b'{"runs": [{"tokens": 2048, "time": 40.5}]}\n',
        b"cycle,phase\n0,verify\n",  # no duration
        b'{"cycle": 0, "phase": "verify"}\n',
    ],
)
def test_other_files_are_not_cycle_timing(head: bytes) -> None:
    assert not cycle_timing.sniff(head)


def test_a_trace_is_not_cycle_timing_and_a_timing_file_is_not_a_trace() -> None:
    assert not cycle_timing.sniff(b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel"}]}')
    assert not kineto.sniff(CSV.read_bytes())


def test_store_view_treats_measured_phases_like_trace_phases(isolated_store: Path) -> None:
    reports = ingest_paths([CSV], isolated_store, phase="phase-0")
    assert reports[0].status == "loaded", reports[0].summary()
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        summary = con.execute(
            "SELECT rank, complete_cycles, median_cycle_ms, median_verify_ms, verify_comm_share, variant FROM cycle_rank_summary ORDER BY rank"
        ).fetchall()
        session = con.execute("SELECT DISTINCT session_id FROM cycle_breakdown").fetchall()
        session_variant = con.execute("SELECT variant, phase FROM sessions").fetchall()
    assert summary == [
        (0, 2, pytest.approx(30.525), pytest.approx(30.0), None, "k2-drafter"),  # no kernel classes: no comm share
        (1, 2, pytest.approx(30.525), pytest.approx(30.0), None, "k2-drafter"),
    ]
    assert session == [(f"{reports[0].source_id}-0",)]
    assert session_variant == [("k2-drafter", "phase-0")]


def test_an_unlabelled_timing_file_takes_its_folders_group_and_the_acceptance_page_reads_it(
    tmp_path: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by tests/test_real_stores.py: a baseline timing file names no variant, and without one its rows
    were NULL, which no page could name and the Acceptance page's cycle model failed on."""
    from tests.test_app import run_page

    folder = tmp_path / "timings"
    folder.mkdir()
    for name in ("cycle-timing-baseline.tsv", "cycle-timing.csv"):
        (folder / name).write_bytes((FIXTURES / "traces" / name).read_bytes())
    ingest_paths([folder], isolated_store)
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        labels = dict(con.execute("SELECT variant, count(*) FROM cycle_phase_times GROUP BY ALL").fetchall())
    assert labels == {"k2-drafter": 15, "unlabelled: timings": 3}
    run_page("views/acceptance.py", isolated_store, monkeypatch)
