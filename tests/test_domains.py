"""Figures outside their domain are kept as read and named in the file's report (issue #29, ingest.derive.invariants)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from ingest.derive.invariants import DomainCheck
from ingest.pipeline import ingest_paths
from ingest.tables import table_from_rows


def test_a_run_with_no_time_and_a_zero_throughput_is_named_by_file_and_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([
        {"run": 1, "tokens": 2048, "time": 40.5, "throughput": 50.6, "prompt_len": 32},
        {"run": 2, "tokens": 2048, "time": 39.5, "throughput": 0.0, "prompt_len": 31},
    ]))
    [report] = ingest_paths([runs], tmp_path / "store.duckdb")
    assert not report.failed
    [warning] = [w for w in report.warnings if "kept as read" in w]
    assert warning.startswith(f"{runs}:run 2: tok/s = 0 is not above 0")
    assert "1 row(s) of bench_runs.tok_per_s" in warning


def test_every_row_outside_its_domain_is_counted_and_the_first_is_named() -> None:
    check = DomainCheck(Path("x.log"))
    decode = table_from_rows("decode_stats", [
        {"line_no": 10, "tokens_per_step": 1.58, "accept_rate_drafts": 0.3},
        {"line_no": 11, "tokens_per_step": 0.58, "accept_rate_drafts": 1.4},
        {"line_no": 12, "tokens_per_step": 0.61, "accept_rate_drafts": None},
    ])
    for batch in decode.to_batches(max_chunksize=2):  # streamed: counted across batches, first place kept
        check.check("decode_stats", pa.Table.from_batches([batch]))
    warnings = check.warnings()
    assert len(warnings) == 2
    assert warnings[0].startswith("x.log:11: accept length (tokens/step) = 0.58 is below 1.00")
    assert "2 row(s) of decode_stats.tokens_per_step" in warnings[0]
    assert warnings[1].startswith("x.log:11: accept rate (drafts) = 1.4 is outside [0, 1]")


def test_figures_inside_their_domain_give_no_warning() -> None:
    check = DomainCheck(Path("ok.jsonl"))
    check.check("acceptance_positions", table_from_rows("acceptance_positions", [
        {"line_no": 1, "position": 1, "rate": 0.0}, {"line_no": 1, "position": 2, "rate": 1.0}]))
    check.check("bench_serving", table_from_rows("bench_serving", [{"record_index": 0, "accept_length": 1.0}]))
    assert check.warnings() == []
