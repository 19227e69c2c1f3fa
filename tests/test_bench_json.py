"""Benchmark JSON: the canonical format and ad-hoc shapes, read through declared aliases."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import bench_json
from ingest.registry import detect
from tests.conftest import FIXTURES, ROOT

K2 = ROOT / "data" / "demo" / "phase-0" / "k2-drafter" / "bench.json"
SEED_RUNS = [(2048, 40.50, 50.6, 32), (2048, 39.46, 51.9, 31), (2048, 41.69, 49.1, 26), (1963, 35.95, 54.6, 28), (2048, 38.51, 53.2, 34)]


def parse(path: Path):
    return bench_json.parse(path, ParseOptions())


def test_canonical_file_is_detected_and_read_exactly() -> None:
    assert detect(K2).kind == "bench_json"
    parsed = parse(K2)
    session = parsed.tables["sessions"].to_pylist()[0]
    assert (session["phase"], session["variant"], session["max_tokens"], session["warmup"]) == ("phase-0", "k2-drafter", 2048, 2)
    runs = [r for r in parsed.tables["bench_runs"].to_pylist() if not r["is_warmup"]]
    assert [(r["output_tokens"], r["duration_s"], r["tok_per_s"], r["prompt_tokens"]) for r in runs] == SEED_RUNS
    assert [r["hit_max_tokens"] for r in runs] == [True, True, True, False, True]
    assert runs[0]["started_at"] == datetime(2026, 2, 10, 14, 2, 49, 480000)


def test_adhoc_list_uses_aliases_and_keeps_unknown_keys() -> None:
    path = FIXTURES / "bench_json" / "adhoc_list.json"
    assert detect(path).kind == "bench_json"
    runs = parse(path).tables["bench_runs"].to_pylist()
    assert [(r["run_index"], r["output_tokens"], r["duration_s"], r["tok_per_s"], r["prompt_tokens"]) for r in runs] == [
        (1, 2048, 40.50, 50.6, 32),
        (2, 2048, 39.46, 51.9, 31),
    ]
    assert runs[0]["hit_max_tokens"] is None  # max_tokens unknown: no claim either way
    assert json.loads(runs[1]["extra"]) == {"gpu": "RTX PRO 6000"}


def test_adhoc_object_with_warmups_epoch_times_and_computed_rate() -> None:
    parsed = parse(FIXTURES / "bench_json" / "adhoc_object.json")
    session = parsed.tables["sessions"].to_pylist()[0]
    assert (session["variant"], session["max_tokens"], session["warmup"]) == ("k2-drafter", 2048, 1)
    warm, measured = parsed.tables["bench_runs"].to_pylist()
    assert warm["is_warmup"] and not measured["is_warmup"]
    assert measured["tok_per_s"] == pytest.approx(1963 / 35.95)
    assert measured["hit_max_tokens"] is False
    assert measured["started_at"] == datetime(2026, 2, 10, 14, 0, 0, 500000)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"runs": [{"tokens": 2048, "time": 40.5}', "invalid JSON"),
        ('{"runs": []}', "no runs found"),
        ('{"runs": [{"tokens": 2048, "prompt_len": 3}]}', "needs output tokens and a wall time"),
        ('{"runs": [{"tokens": "many", "time": 4}]}', "expected a number"),
        ('{"runs": [{"tokens": 20, "time": 0}]}', "wall time must be positive"),
        ('{"runs": [{"tokens": 20, "time": 4, "start": "yesterday"}]}', "ISO 8601"),
    ],
)
def test_bad_benchmark_json_names_file_and_place(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bench.json"
    path.write_text(content)
    with pytest.raises(MalformedInput) as caught:
        parse(path)
    assert expected in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_tokens_error_lists_the_keys_the_run_has(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text('{"runs": [{"time": 4.0, "prompt_len": 3}]}')
    with pytest.raises(MalformedInput) as caught:
        parse(path)
    assert caught.value.key == "runs[0]"
    assert "prompt_len, time" in caught.value.hint


def test_truncated_json_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(K2.read_text()[:300])
    with pytest.raises(MalformedInput) as caught:
        parse(path)
    assert caught.value.line is not None and caught.value.line > 1
