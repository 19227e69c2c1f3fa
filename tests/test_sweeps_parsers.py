"""Sweep files (ingest/parsers/bench/sweeps.py): bench_speculative.py JSONL, SpecForge bench_eagle3 / SpecBundle JSON and
pasted sweep tables, on our fixtures (tests/fixtures/sweeps, each with its .source) and the real corpus samples."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from ingest import registry
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import sweeps
from ingest.pipeline import ingest_paths
from ingest.reader import read_head
from tests.conftest import CORPUS, FIXTURES

HERE = FIXTURES / "sweeps"
SPECFORGE = CORPUS / "new" / "specforge_bench"


def rows(path: Path) -> tuple[list[dict], list[str]]:
    fmt = registry.detect(path)
    parsed = fmt.parse(path, ParseOptions())
    return parsed.tables["sweep_points"].to_pylist(), parsed.warnings


def kinds(path: Path) -> list[str]:
    head = read_head(path)
    return [f.kind for f in registry.registered_formats() if f.sniff(head)]


@pytest.mark.parametrize(("name", "kind"), [
    ("bench-speculative-output.jsonl", "bench_speculative_jsonl"),
    ("bench-speculative-bad-lines.jsonl", "bench_speculative_jsonl"),
    ("specforge-bench-eagle3-sweep.json", "specforge_bench_json"),
    ("sglang-pr14063-mmstar-bench-eagle3.json", "specforge_bench_json"),
    ("user-sweep-table.md", "sweep_table_text"),
])
def test_each_fixture_is_claimed_by_exactly_its_format_and_names_its_origin(name: str, kind: str) -> None:
    assert kinds(HERE / name) == [kind]
    assert (HERE / name).with_suffix(".source").read_text(encoding="utf-8").strip()


def test_bench_speculative_lines_keep_the_writers_units_and_the_baseline() -> None:
    points, warnings = rows(HERE / "bench-speculative-output.jsonl")
    assert warnings == [] and len(points) == 9
    first = points[0]
    assert (first["is_baseline"], first["steps"], first["topk"], first["num_draft_tokens"]) == (True, 0, 0, 0)
    assert first["step_time_ms"] == pytest.approx(12.2)  # the file writes seconds
    assert {p["throughput_kind"] for p in points} == {"modelled from step time"}  # speed = acc_length / step_time
    tree = points[2]
    assert (tree["batch_size"], tree["accept_length"], tree["throughput"]) == (1, 2.916, 106.268)
    assert json.loads(tree["extra"]) == {"completion_tokens": 512.0}  # unknown keys kept


def test_bad_lines_are_reported_by_line_and_the_good_ones_kept() -> None:
    points, warnings = rows(HERE / "bench-speculative-bad-lines.jsonl")
    assert [p["line_no"] for p in points] == [1, 4, 8]
    text = "\n".join(warnings)
    assert "bench-speculative-bad-lines.jsonl:2: no batch size" in text
    assert "bench-speculative-bad-lines.jsonl:3: step_time must be positive, got 0 s" in text
    assert "bench-speculative-bad-lines.jsonl:5: batch 1, config (3, 1, 4)" in text and "already given at line 4" in text
    assert "bench-speculative-bad-lines.jsonl:7: step_time must be positive, got -0.03 s" in text
    assert ":6:" not in text  # an exact repeat is no conflict
    simulated = points[2]
    assert simulated["simulated"] and simulated["simulated_by"] == "env.SGLANG_SIMULATE_ACC_LEN=2.0"
    assert not points[0]["simulated"]


def test_a_file_of_bad_lines_only_is_an_error_naming_the_first(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"batch_size": 1, "steps": 3, "topk": 1, "num_draft_tokens": 4, "acc_length": 2.0, '
                    '"step_time": 0, "speed": 0}\n', encoding="utf-8")
    with pytest.raises(MalformedInput, match=r"bad.jsonl:1: step_time must be positive"):
        rows(path)


def test_bench_eagle3_results_give_the_drafter_and_the_zero_config_baseline() -> None:
    points, _ = rows(HERE / "specforge-bench-eagle3-sweep.json")
    assert [(p["variant"], p["batch_size"], p["is_baseline"]) for p in points] == [
        ("baseline", 1, True),
        ("lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge", 1, False),
        ("lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge", 8, False),
    ]
    assert points[1]["sweep"] == "bench_eagle3.py · mtbench" and points[1]["dataset"] == "mtbench"
    assert json.loads(points[1]["extra"])["latency_s"] == 16.4


def test_a_multimodal_task_keeps_its_accuracy_labelled_beside_accept_length_and_throughput() -> None:
    """sglang PR #14063's MMStar results from bench_eagle3.py (existing-server mode: null config, no "model" key)."""
    [point], warnings = rows(HERE / "sglang-pr14063-mmstar-bench-eagle3.json")
    assert warnings == []
    assert (point["sweep"], point["dataset"], point["variant"], point["is_baseline"]) == (
        "bench_eagle3.py · mmstar", "mmstar", "EAGLE3", False)
    assert point["accept_length"] == 3.1803588290840414  # "accept_length": output tokens / spec_verify_ct
    assert point["throughput"] == 198.132860357858 and point["throughput_kind"] == "measured wall-clock"
    assert json.loads(point["extra"]) == {
        "accuracy": 0.33, "num_valid_predictions": 86, "num_questions": 100, "categorical_performance": None,
        "num_samples": 100, "latency_s": 33.99738936708309,
    }


def test_a_pasted_table_reads_any_header_spelling_and_keeps_unknown_columns() -> None:
    points, _ = rows(HERE / "user-sweep-table.md")
    base = [p for p in points if p["is_baseline"]]
    spec = [p for p in points if not p["is_baseline"]]
    assert [(p["batch_size"], p["throughput"]) for p in base] == [(1, 170.2), (8, 1050.0), (32, 2900.0)]
    assert [(p["batch_size"], p["steps"], p["topk"], p["num_draft_tokens"], p["accept_length"]) for p in spec][1] == (
        1, 5, 4, 8, 3.10)
    assert {p["variant"] for p in spec} == {"EAGLE3"}
    assert json.loads(spec[1]["extra"])["note"] == "best"


def test_a_run_table_stays_with_the_run_table_format(tmp_path: Path) -> None:
    path = tmp_path / "runs.md"
    path.write_text("| Run | Tokens | Time (s) | Throughput (tok/s) |\n|---|---|---|---|\n| 1 | 2048 | 40.5 | 50.6 |\n")
    assert kinds(path) == ["bench_table_text"]


def test_a_simulated_acceptance_note_flags_the_tables_after_it(tmp_path: Path) -> None:
    path = tmp_path / "cost.md"
    path.write_text("Cost curve with SGLANG_SIMULATE_ACC_LEN=3.0\n\nbs | steps | topk | num_draft | throughput | acc len\n"
                    "-- | -- | -- | -- | -- | --\n1 | 3 | 1 | 4 | 200.0 | 3.0\n", encoding="utf-8")
    [point], _ = rows(path)
    assert point["simulated"] and "SGLANG_SIMULATE_ACC_LEN" in point["simulated_by"]


# --- the real samples ---------------------------------------------------------------------------

@pytest.fixture
def specforge_dir(corpus_dir: Path) -> Path:
    return SPECFORGE


def test_corpus_specbundle_kimi_k2_sweep(specforge_dir: Path) -> None:
    points, warnings = rows(specforge_dir / "specforge-specbundle-raw-data.json")
    assert warnings == []
    kimi = [p for p in points if p["sweep"] == "Kimi-K2-Instruct · gsm8k"]
    base = [p for p in kimi if p["is_baseline"]]
    assert len(base) == 1 and base[0]["throughput"] == pytest.approx(337.924, abs=1e-3)  # repeated per config: kept once
    assert json.loads(base[0]["extra"])["baseline_name"] == "Wihtout EAGLE3"  # the file's own spelling
    best = max((p for p in kimi if not p["is_baseline"]), key=lambda p: p["throughput"])
    assert (best["variant"], best["steps"], best["topk"], best["num_draft_tokens"]) == (
        "AQ-MedAI/Kimi-K2-Instruct-eagle3", 7, 1, 8)
    assert best["throughput"] / base[0]["throughput"] == pytest.approx(1.610, abs=1e-3)
    assert {p["batch_size"] for p in kimi} == {8}
    # drafter names as the file writes them (the stray-space "Spec for ge" one included: no guessing)
    llama = {p["variant"] for p in points if p["sweep"].startswith("Llama-3.3-70B-Instruct") and not p["is_baseline"]}
    assert "lmsys/SGLang-EAGLE3-Llama-3.3-70B-Instruct-Spec for ge" in llama and len(llama) == 3


def test_corpus_cookbook_bench_eagle3_results(specforge_dir: Path) -> None:
    points, _ = rows(specforge_dir / "cookbook-specbundle-bench-eagle3-results.json")
    assert [(p["sweep"], p["batch_size"], p["accept_length"] and round(p["accept_length"], 3)) for p in points] == [
        ("bench_eagle3.py · mtbench", 1, 2.170), ("bench_eagle3.py · gsm8k", 1, 2.643)]
    assert not any(p["is_baseline"] for p in points)  # null config: speculative, settings unknown


def test_corpus_issue_339_tables(specforge_dir: Path) -> None:
    points, _ = rows(specforge_dir / "specforge-issue-339-user-sweep-tables.md")
    base = {p["batch_size"]: p["throughput"] for p in points if p["is_baseline"]}
    assert base == {1: 222.47, 4: 566.21, 8: 733.61, 16: 1012.96, 32: 1077.55, 64: 1073.69}
    spec = [p for p in points if not p["is_baseline"]]
    assert len(spec) == 8 and {p["variant"] for p in spec} == {"EAGLE3 combined"}
    assert max(p["throughput"] for p in spec if p["batch_size"] == 1) == 207.62


def test_every_corpus_sweep_file_has_one_format_and_loads(specforge_dir: Path, tmp_path: Path) -> None:
    files = sorted(p for p in specforge_dir.iterdir() if p.suffix != ".source")
    assert {p.name: kinds(p) for p in files} == {
        "cookbook-specbundle-bench-eagle3-results.json": ["specforge_bench_json"],
        "specforge-issue-339-user-sweep-tables.md": ["sweep_table_text"],
        "specforge-specbundle-raw-data.json": ["specforge_bench_json"],
    }
    db = tmp_path / "s.duckdb"
    reports = ingest_paths(files, db)
    assert not any(r.failed for r in reports)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT sweep) FROM sweep_series").fetchone()[0] > 60


def test_the_formats_list_their_examples() -> None:
    for fmt in sweeps.FORMATS:
        assert fmt.example and fmt.description
