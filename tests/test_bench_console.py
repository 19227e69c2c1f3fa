"""The printed 'Serving Benchmark Result' block: SGLang and vLLM layouts, several blocks, a vLLM
'Speculative Decoding' section pasted alone, the corpus."""
from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pytest
from bench_golden import BENCH_FIXTURES, check_golden, golden_inputs
from conftest import corpus_files

from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import bench_console
from ingest.parsers.bench.bench_console import label_key
from ingest.pipeline import ingest_file
from ingest.reader import read_head
from ingest.registry import detect

GOLDEN = golden_inputs(bench_console.KIND)
SECTION_ONLY = BENCH_FIXTURES / "vllm-console-spec-decoding-section-only.txt"
# vLLM's section as vllm/benchmarks/serve.py prints it: "{:-^50}" ruler, "{:<40} {:<10.2f}" rows.
SECTION = (
    "---------------Speculative Decoding---------------\n"
    "Acceptance rate (%):                     52.33     \n"
    "Acceptance length:                       2.57      \n"
    "==================================================\n"
)
BLOCK = (
    "============ Serving Benchmark Result ============\n"
    "Successful requests:                     200       \n"
    "Output token throughput (tok/s):         727.07    \n"
    "==================================================\n"
)


def rows_of(path: Path) -> list[dict]:
    return bench_console.parse(path, ParseOptions()).tables["bench_serving"].to_pylist()


def test_there_are_golden_fixtures_for_both_layouts() -> None:
    assert {p.name for p in GOLDEN} >= {
        "sglang-console-jan2025-two-runs.txt",
        "vllm-console-2025-spec-decoding.txt",
        SECTION_ONLY.name,
    }


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_fixture_matches_its_golden_expectation(path: Path) -> None:
    check_golden(path, bench_console.parse)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_fixture_is_detected_as_console_output(path: Path) -> None:
    assert detect(path).kind == bench_console.KIND


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("Mean TTFT (ms)", "mean_ttft_ms"),
        ("Total Token throughput (tok/s)", "total_token_throughput_tok_s"),
        ("Total token throughput (tok/s)", "total_token_throughput_tok_s"),
        ("Max reqeuest concurrency", "max_reqeuest_concurrency"),
        ("Acceptance rate (%)", "acceptance_rate_pct"),
        ("Total generated tokens (retokenized)", "total_generated_tokens_retokenized"),
    ],
)
def test_labels_normalize_to_stable_keys(label: str, key: str) -> None:
    assert label_key(label) == key


def test_every_block_is_a_record_with_its_own_preamble() -> None:
    rows = rows_of(BENCH_FIXTURES / "sglang-console-jan2025-two-runs.txt")
    assert [row["line_no"] for row in rows] == [6, 40]
    assert [json.loads(row["extra"])["variant"] for row in rows] == ["k2-drafter", "baseline"]
    assert json.loads(rows[0]["extra"])["max_tokens"] == 2048 and "max_tokens" not in json.loads(rows[1]["extra"])


def test_jan_2025_misspelling_not_set_and_inf() -> None:
    first, second = rows_of(BENCH_FIXTURES / "sglang-console-jan2025-two-runs.txt")
    assert (first["max_concurrency"], second["max_concurrency"]) == (1, None)  # "not set" is null
    assert (first["request_rate"], second["request_rate"]) == (math.inf, 8.0)
    assert (first["accept_length"], second["accept_length"]) == (1.58, None)  # printed only when speculating


def test_unreadable_value_warns_with_its_line_and_label() -> None:
    parsed = bench_console.parse(BENCH_FIXTURES / "sglang-console-jan2025-two-runs.txt", ParseOptions())
    second = parsed.tables["bench_serving"].to_pylist()[1]
    assert second["p99_ttft_ms"] is None and json.loads(second["extra"])["p99_ttft_ms"] == "fast"
    assert [w.split(": ", 1)[0].rsplit(":", 1)[1] for w in parsed.warnings] == ["59"]
    assert "'P99 TTFT (ms)'" in parsed.warnings[0]


def test_vllm_layout_spec_decoding_section_and_preamble() -> None:
    parsed = bench_console.parse(BENCH_FIXTURES / "vllm-console-2025-spec-decoding.txt", ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert (parsed.engine, row["tool"]) == ("vllm", "vllm bench serve")
    assert row["line_no"] == 4  # the banner follows a tqdm bar on the same line
    assert row["request_rate"] == math.inf and row["max_concurrency"] == 8
    assert row["accept_length"] == 2.57 and row["mean_e2e_latency_ms"] == 2804.77
    extra = json.loads(row["extra"])
    assert extra["acceptance_rate_pct"] == 52.33  # vLLM prints percent; kept raw
    assert extra["per_position_acceptance_pct"] == [71.2, 50.1, 35.7]
    assert 1 + extra["accepted_tokens"] / extra["drafts"] == pytest.approx(row["accept_length"], abs=0.005)


# --- the "Speculative Decoding" section pasted alone ---------------------------------------------

def test_a_section_pasted_alone_is_a_record_with_a_warning() -> None:
    parsed = bench_console.parse(SECTION_ONLY, ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert (parsed.engine, row["tool"], row["line_no"]) == ("vllm", "vllm bench serve", 2)
    assert row["accept_length"] == 2.92
    extra = json.loads(row["extra"])
    assert extra["acceptance_rate_pct"] == 38.47  # percent, as printed: never converted
    assert extra["per_position_acceptance_pct"] == [71.86, 47.75, 32.1, 22.0, 18.64]
    assert (extra["drafts"], extra["draft_tokens"], extra["accepted_tokens"]) == (7281, 36405, 14005)
    assert 1 + extra["accepted_tokens"] / extra["drafts"] == pytest.approx(row["accept_length"], abs=0.005)
    assert 100 * extra["accepted_tokens"] / extra["draft_tokens"] == pytest.approx(extra["acceptance_rate_pct"], abs=0.005)
    # The throughput block was not pasted: its columns are null (not 0), and the warning says so.
    assert row["output_throughput"] is None and row["duration_s"] is None and row["completed"] is None
    (warning,) = parsed.warnings
    assert warning.startswith(f"{SECTION_ONLY}:2: ") and "throughput" in warning and "missing" in warning


def test_a_section_inside_a_block_is_part_of_it() -> None:
    parsed = bench_console.parse(BENCH_FIXTURES / "vllm-console-2025-spec-decoding.txt", ParseOptions())
    assert parsed.tables["bench_serving"].num_rows == 1 and parsed.warnings == []


@pytest.mark.parametrize("order", ["section-then-block", "block-then-section"])
def test_a_section_alone_and_a_whole_block_are_two_records(tmp_path: Path, order: str) -> None:
    path = tmp_path / "paste.txt"
    path.write_text(SECTION + "\n" + BLOCK if order == "section-then-block" else BLOCK + "\n" + SECTION)
    parsed = bench_console.parse(path, ParseOptions())
    rows = parsed.tables["bench_serving"].to_pylist()
    alone = rows[0] if order == "section-then-block" else rows[1]
    whole = rows[1] if order == "section-then-block" else rows[0]
    assert (alone["accept_length"], alone["output_throughput"]) == (2.57, None)
    assert (whole["accept_length"], whole["output_throughput"], whole["completed"]) == (None, 727.07, 200)
    assert len(parsed.warnings) == 1 and f":{alone['line_no']}: " in parsed.warnings[0]


def test_rows_printed_just_before_a_lone_section_belong_to_it(tmp_path: Path) -> None:
    """A paste cut inside the result block: the rows above the section are kept, like a preamble."""
    path = tmp_path / "cut.txt"
    path.write_text("Mean E2EL (ms):                          2804.77   \n" + SECTION)
    (row,) = rows_of(path)
    assert (row["mean_e2e_latency_ms"], row["accept_length"]) == (2804.77, 2.57)


def test_a_section_ruler_without_rows_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ruler.txt"
    path.write_text("---------------Speculative Decoding---------------\n")
    with pytest.raises(MalformedInput, match="Speculative Decoding"):
        bench_console.parse(path, ParseOptions())


def test_a_lone_section_survives_the_store_with_nothing_dropped(tmp_path: Path) -> None:
    """Everything the section printed reaches the store: accept length in its column, the rest in extra."""
    db = tmp_path / "store.duckdb"
    report = ingest_file(SECTION_ONLY, db)
    assert report.status == "loaded" and report.kind == bench_console.KIND
    with duckdb.connect(str(db), read_only=True) as con:
        tool, accept_length, extra = con.execute("SELECT tool, accept_length, extra FROM bench_serving").fetchone()
    assert (tool, accept_length) == ("vllm bench serve", 2.92)
    parsed_extra = json.loads(bench_console.parse(SECTION_ONLY, ParseOptions()).tables["bench_serving"]["extra"][0].as_py())
    assert json.loads(extra) == parsed_extra


def test_a_file_without_a_block_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Successful requests: 64\nBenchmark duration (s): 15.30\n")
    with pytest.raises(MalformedInput, match="Serving Benchmark Result"):
        bench_console.parse(path, ParseOptions())


def test_a_block_cut_short_keeps_what_it_has(tmp_path: Path) -> None:
    path = tmp_path / "cut.txt"
    path.write_text("============ Serving Benchmark Result ============\nSuccessful requests:  7\nBenchmark dur")
    (row,) = rows_of(path)
    assert row["completed"] == 7 and row["duration_s"] is None


@pytest.mark.parametrize(
    "head",
    [
        b'{"backend": "sglang", "completed": 1, "duration": 2.0, "output_throughput": 3.0}\n',
        b"[2025-11-11 04:06:27] Decode batch, #running-req: 1, #token: 90, accept len: 1.58\n",
        b"mean acceptance length: 3.64\nnum_drafts: 4687\n",
        b"notes: the ---------------Speculative Decoding--------------- section is missing today\n",
        b"---------------Speculative Decoding---------------\nsee the PR for the numbers\n",
    ],
    ids=["bench-serving-jsonl", "sglang-log", "vllm-offline-summary", "names-the-section", "ruler-without-rows"],
)
def test_sniff_leaves_other_formats_alone(head: bytes) -> None:
    assert not bench_console.sniff(head)


# --- the real corpus ------------------------------------------------------------------------------

@pytest.mark.corpus
def test_corpus_9428_sglang_baseline(corpus_dir: Path) -> None:
    path = corpus_dir / "bench" / "sglang-pr-9428-bench-serving-baseline.txt"
    assert detect(path).kind == bench_console.KIND
    (row,) = rows_of(path)
    assert row["tool"] == "sglang.bench_serving" and row["backend"] == "sglang"
    assert row["duration_s"] == 15.30 and row["completed"] == 64
    assert row["request_rate"] == math.inf and row["max_concurrency"] is None
    assert row["accept_length"] is None and row["mean_tpot_ms"] is None  # no spec, no TPOT block then
    assert row["mean_ttft_ms"] == 7252.11 and row["p99_itl_ms"] == 13753.42
    extra = json.loads(row["extra"])
    assert (extra["batch_size"], extra["inp_len"], extra["out_len"]) == (64, 32768, 2)  # the wrapper's preamble
    assert extra["p95_itl_ms"] == 13752.97 and extra["concurrency"] == 49.12


@pytest.mark.corpus
def test_corpus_21477_vllm_eagle(corpus_dir: Path) -> None:
    path = corpus_dir / "bench" / "vllm-pr-21477-bench-serve-eagle-jul2025.txt"
    parsed = bench_console.parse(path, ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert (parsed.engine, row["tool"]) == ("vllm", "vllm bench serve")
    assert row["completed"] == 100 and row["output_throughput"] == 157.49
    assert row["mean_tpot_ms"] == 12.47  # the excerpt ends inside the TPOT block: kept
    assert json.loads(row["extra"]) == {"total_token_throughput_tok_s": 228.33}
    # Jul 2025: no "Speculative Decoding" section yet, and a whole banner, so no section-only warning.
    assert row["accept_length"] is None and parsed.warnings == []


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("bench"), ids=lambda p: p.name)
def test_only_console_corpus_samples_sniff_as_console(path: Path) -> None:
    expected = path.name.startswith(("sglang-pr-9428", "vllm-pr-21477"))
    assert bench_console.sniff(read_head(path)) == expected
