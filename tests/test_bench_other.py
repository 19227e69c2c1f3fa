"""bench_one_batch(_server) JSONL, vLLM result JSON and spec_decode.py summary, the team's run table, send_one."""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from bench_golden import BENCH_FIXTURES, check_golden, golden_inputs
from conftest import corpus_files

from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import bench_one_batch, bench_table, send_one
from ingest.parsers.bench.bench_table import header_key
from ingest.parsers.vllm import vllm_bench
from ingest.reader import read_head
from ingest.registry import detect, registered_formats

PARSERS = {
    bench_one_batch.KIND: bench_one_batch.parse,
    vllm_bench.JSON_KIND: vllm_bench.parse_json,
    vllm_bench.SUMMARY_KIND: vllm_bench.parse_summary,
    bench_table.KIND: bench_table.parse,
    send_one.KIND: send_one.parse,
}
GOLDEN = [(kind, path) for kind in PARSERS for path in golden_inputs(kind)]


def fixture(name: str) -> Path:
    return BENCH_FIXTURES / name


@pytest.mark.parametrize(("kind", "path"), GOLDEN, ids=[p.name for _, p in GOLDEN])
def test_fixture_matches_its_golden_expectation(kind: str, path: Path) -> None:
    check_golden(path, PARSERS[kind])


@pytest.mark.parametrize(("kind", "path"), GOLDEN, ids=[p.name for _, p in GOLDEN])
def test_fixture_is_detected_as_its_format(kind: str, path: Path) -> None:
    assert detect(path).kind == kind


def test_every_format_has_golden_fixtures() -> None:
    assert {kind for kind, _ in GOLDEN} == set(PARSERS)


def test_bench_formats_are_registered_once() -> None:
    kinds = [f.kind for f in registered_formats()]
    mine = ["bench_serving_jsonl", "bench_serving_console", *PARSERS]
    assert all(kinds.count(kind) == 1 for kind in mine)


# --- bench_one_batch ------------------------------------------------------------------------------

def test_one_batch_server_records() -> None:
    parsed = bench_one_batch.parse(fixture("sglang-one-batch-server.jsonl"), ParseOptions())
    rows = parsed.tables["bench_serving"].to_pylist()
    assert {row["tool"] for row in rows} == {"sglang.bench_one_batch_server"}
    assert [(row["tag"], row["max_concurrency"]) for row in rows] == [("eagle3", 1), ("eagle3", 8), ("baseline", 1)]
    assert [row["accept_length"] for row in rows] == [1.58, 1.61, None]  # acc_length -1 -> null
    assert [row["duration_s"] for row in rows] == [39.5, 61.25, 24.98]
    extra = json.loads(rows[1]["extra"])
    assert (extra["overall_throughput"], extra["last_ttft"], extra["cache_hit_rate"]) == (271.67, 0.3312, 0.0)


def test_offline_one_batch_pretty_printed_records_that_run_together() -> None:
    parsed = bench_one_batch.parse(fixture("sglang-one-batch-offline-pasted.txt"), ParseOptions())
    rows = parsed.tables["bench_serving"].to_pylist()
    assert [(row["line_no"], row["tool"]) for row in rows] == [(2, "sglang.bench_one_batch"), (11, "sglang.bench_one_batch")]
    assert [row["duration_s"] for row in rows] == [0.5, 1.76]  # total_latency
    assert json.loads(rows[1]["extra"])["median_decode_throughput"] == 200.0
    assert parsed.skipped == {"not JSON (preamble or note)": 1}


# --- vLLM -----------------------------------------------------------------------------------------

def test_vllm_result_json_maps_names_and_keeps_the_percent_rate_raw() -> None:
    parsed = vllm_bench.parse_json(fixture("vllm-bench-serve-append-result.jsonl"), ParseOptions())
    first, spec = parsed.tables["bench_serving"].to_pylist()
    assert parsed.engine == "vllm" and spec["tool"] == "vllm bench serve"
    assert first["request_rate"] == math.inf  # vLLM writes the text "inf"
    assert (first["backend"], spec["backend"]) == ("openai", "vllm")  # endpoint_type before "backend" existed
    assert (first["accept_length"], spec["accept_length"]) == (None, 2.455)
    assert spec["tag"] == "eagle3-k3" and spec["mean_e2e_latency_ms"] == 1270.0
    extra = json.loads(spec["extra"])
    assert extra["spec_decode_acceptance_rate"] == 48.5  # percent, as vLLM writes it
    assert 1 + extra["spec_decode_accepted_tokens"] / extra["spec_decode_num_drafts"] == pytest.approx(2.455, abs=1e-3)
    requests = parsed.tables["bench_requests"].to_pylist()
    assert [(r["record_index"], r["start_time_s"]) for r in requests] == [(1, 1000.0), (1, 1000.01), (1, 1002.2)]
    assert requests[0]["tpot_ms"] == pytest.approx((24 + 25) / 2)


def test_vllm_pretty_printed_result_is_one_record() -> None:
    (row,) = vllm_bench.parse_json(fixture("vllm-benchmark-serving-pretty.json"), ParseOptions()).tables[
        "bench_serving"
    ].to_pylist()
    assert row["line_no"] == 1 and row["completed"] == 3 and row["output_throughput"] == 59.08


def test_offline_summary_broken_value_warns_at_its_line() -> None:
    parsed = vllm_bench.parse_summary(fixture("vllm-spec-decode-summary-cut.txt"), ParseOptions())
    first, second = parsed.tables["bench_serving"].to_pylist()
    assert first["accept_length"] == 2.56 and second["accept_length"] is None
    assert json.loads(second["extra"])["mean acceptance length"] == "2.0O"
    assert parsed.warnings == [
        f'{fixture("vllm-spec-decode-summary-cut.txt")}:18: key "mean acceptance length": '
        "expected a number, got '2.0O'; raw value kept in extra"
    ]


@pytest.mark.corpus
def test_corpus_26498_two_offline_runs(corpus_dir: Path) -> None:
    path = corpus_dir / "bench" / "vllm-pr-26498-offline-spec-decode-summary.txt"
    assert detect(path).kind == vllm_bench.SUMMARY_KIND
    first, second = vllm_bench.parse_summary(path, ParseOptions()).tables["bench_serving"].to_pylist()
    assert (first["accept_length"], second["accept_length"]) == (3.64, 3.36)
    assert (first["total_output_tokens"], second["total_output_tokens"]) == (16994, 68596)
    for row in (first, second):  # mean acceptance length = 1 + accepted / drafts (bonus-inclusive)
        extra = json.loads(row["extra"])
        assert 1 + extra["num_accepted_tokens"] / extra["num_drafts"] == pytest.approx(row["accept_length"], abs=0.005)
        assert len(extra["acceptance_at_token"]) == 10
    assert json.loads(first["extra"])["acceptance_at_token"][:2] == [0.74, 0.54]


# --- the team's run table -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("header", "key"),
    [("Time (s)", "time"), ("Throughput (tok/s)", "throughput"), ("Prompt Length", "prompt_length"),
     ("PromptLen", "prompt_len"), ("tok/s", "tok/s"), ("Time(s)", "time")],
)
def test_table_headers_normalize_onto_the_canonical_aliases(header: str, key: str) -> None:
    assert header_key(header) == key


def test_story_table_reproduces_the_phase0_numbers() -> None:
    parsed = bench_table.parse(fixture("team-phase0-markdown-table.txt"), ParseOptions())
    (session,) = parsed.tables["sessions"].to_pylist()
    runs = parsed.tables["bench_runs"].to_pylist()
    assert (session["variant"], session["phase"], session["max_tokens"], session["model"]) == (
        "k2-drafter", "0", 2048, "Kimi-K2.5")
    assert [run["run_index"] for run in runs] == [1, 2, 3, 4, 5]
    tokens, times = [run["output_tokens"] for run in runs], [run["duration_s"] for run in runs]
    assert (sum(tokens), round(sum(times), 2)) == (10155, 196.11)
    assert round(sum(tokens) / sum(times), 2) == 51.78
    assert round(statistics.mean(run["tok_per_s"] for run in runs), 2) == 51.88
    assert round(statistics.stdev(run["tok_per_s"] for run in runs), 2) == 2.15
    assert [run["hit_max_tokens"] for run in runs] == [True, True, True, False, True]  # run 4 stopped early
    assert json.loads(session["extra"])["summary"][0]["tok_per_s"] == 51.78


def test_whitespace_tables_warmups_and_sessions() -> None:
    parsed = bench_table.parse(fixture("team-whitespace-table-two-sessions.txt"), ParseOptions())
    sessions = parsed.tables["sessions"].to_pylist()
    runs = parsed.tables["bench_runs"].to_pylist()
    assert [(s["variant"], s["max_tokens"], s["warmup"]) for s in sessions] == [
        ("baseline", 512, 1), ("from-scratch", 512, None)]  # max_tokens carries over
    assert [(r["session_key"], r["run_index"], r["is_warmup"]) for r in runs][:2] == [(0, 1, True), (0, 1, False)]
    assert [r["finish_reason"] for r in runs[:4]] == ["length", "length", "stop", "length"]
    assert runs[3]["tok_per_s"] is None and json.loads(runs[3]["extra"])["throughput"] == "oops"
    assert any(':7: column "throughput"' in warning for warning in parsed.warnings)
    assert runs[4]["tok_per_s"] == 61.0  # single-space columns under single-word headers


def test_without_max_tokens_hit_max_tokens_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "runs.txt"
    path.write_text("Run  Tokens  Time (s)\n1  100  2.0\n2  50  1.0\n")
    runs = bench_table.parse(path, ParseOptions()).tables["bench_runs"].to_pylist()
    assert [r["hit_max_tokens"] for r in runs] == [None, None]
    assert [r["tok_per_s"] for r in runs] == [50.0, 50.0]  # no throughput column: tokens / time


def test_text_without_a_run_table_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("| Run | Tokens | Time (s) |\n|---|---|---|\n")
    with pytest.raises(MalformedInput, match="no run table"):
        bench_table.parse(path, ParseOptions())


# --- send_one -------------------------------------------------------------------------------------

@pytest.mark.corpus
def test_corpus_4951_send_one(corpus_dir: Path) -> None:
    path = corpus_dir / "logs" / "sglang-pr-4951-send-one-acc-length.txt"
    assert detect(path).kind == send_one.KIND
    rows = send_one.parse(path, ParseOptions()).tables["bench_serving"].to_pylist()
    assert [(r["accept_length"], r["output_throughput"]) for r in rows] == [(1.00, 84.82), (2.20, 125.59)]


# --- no sniffer of this file claims another corpus sample ------------------------------------------

SNIFFERS = {
    "bench_one_batch_jsonl": bench_one_batch.sniff,
    "vllm_bench_json": vllm_bench.sniff_json,
    "vllm_spec_decode_text": vllm_bench.sniff_summary,
    "bench_table_text": bench_table.sniff,
    "sglang_send_one_text": send_one.sniff,
}
CLAIMED = {"vllm-pr-26498-offline-spec-decode-summary.txt": "vllm_spec_decode_text",
           "sglang-pr-4951-send-one-acc-length.txt": "sglang_send_one_text"}


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("bench") + corpus_files("logs") + corpus_files("traces"), ids=lambda p: p.name)
def test_sniffers_claim_only_their_own_corpus_samples(path: Path) -> None:
    head = read_head(path)
    claimed = {kind for kind, sniff in SNIFFERS.items() if sniff(head)}
    assert claimed == ({CLAIMED[path.name]} if path.name in CLAIMED else set())
