"""``sglang.bench_serving --output-details`` carries no per-request acceptance; its files still load whole (issue #19).

The two fixtures are built from the writer code (their .source files name the commits and lines): the classic
script merges six per-request arrays into the record, the refactored package nests them under ``details``.
Neither holds a spec field per request, so no ``acceptance_requests`` rows; the record's ``accept_length`` is
the server-lifetime average. What the arrays hold becomes ``bench_requests`` rows in both shapes — nothing is lost, nothing crashes.
"""
from __future__ import annotations

import json
from pathlib import Path

import duckdb

from ingest import registry
from ingest.pipeline import ingest_paths
from tests.conftest import FIXTURES

HERE = FIXTURES / "acceptance"
DETAIL_KEYS = ["errors", "generated_texts", "input_lens", "itls", "output_lens", "ttfts"]


def load(name: str, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    return load_path(HERE / name, tmp_path)


def load_path(path: Path, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    db = tmp_path / "s.duckdb"
    [report] = ingest_paths([path], db)
    assert not report.failed and report.status == "loaded"
    return duckdb.connect(str(db), read_only=True)


def test_the_writers_put_no_spec_field_in_any_request(tmp_path: Path) -> None:
    for name in ("sglang-bench-serving-output-details-classic.jsonl", "sglang-bench-serving-output-details-nested.jsonl"):
        record = json.loads((HERE / name).read_text(encoding="utf-8"))
        details = record.get("details", record)
        assert sorted(k for k in details if isinstance(details[k], list)) == DETAIL_KEYS
        assert not any(key.startswith("spec_") for key in record) and registry.detect(HERE / name).kind == "bench_serving_jsonl"


def test_classic_output_details_become_bench_requests(tmp_path: Path) -> None:
    with load("sglang-bench-serving-output-details-classic.jsonl", tmp_path) as con:
        assert con.execute("SELECT accept_length, completed FROM bench_serving").fetchall() == [(1.58, 3)]
        assert con.execute("SELECT count(*), sum(output_len), min(ttft_ms) FROM bench_requests").fetchall() == [(3, 190, 39.0)]
        assert con.execute("SELECT count(*) FROM acceptance_requests").fetchall() == [(0,)]


def test_nested_details_become_bench_requests_like_the_classic_ones(tmp_path: Path) -> None:
    with load("sglang-bench-serving-output-details-nested.jsonl", tmp_path) as con:
        [(accept_length, total_input, extra)] = con.execute(
            "SELECT accept_length, total_input_tokens, extra FROM bench_serving").fetchall()
        assert con.execute("SELECT count(*), sum(output_len), min(ttft_ms) FROM bench_requests").fetchall() == [(3, 190, 39.0)]
        assert con.execute("SELECT count(*) FROM acceptance_requests").fetchall() == [(0,)]
    assert (accept_length, total_input) == (1.58, 96)
    assert "details" not in json.loads(extra)  # read into rows, not kept twice


def test_a_details_object_without_arrays_stays_in_extra(tmp_path: Path) -> None:
    record = {"backend": "sglang", "completed": 1, "output_throughput": 10.0, "duration": 1.0,
              "details": {"note": "no arrays here"}}
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with load_path(path, tmp_path) as con:
        [(extra,)] = con.execute("SELECT extra FROM bench_serving").fetchall()
        assert con.execute("SELECT count(*) FROM bench_requests").fetchall() == [(0,)]
    assert json.loads(extra)["details"] == {"note": "no arrays here"}
