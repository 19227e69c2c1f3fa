"""AIPerf exports (ingest/parsers/bench/aiperf.py): the aggregate profile_export_aiperf.json as one bench_serving
row, the per-request profile_export.jsonl as benchmark runs. Every expected number below was read by hand from the
file named next to it (the fixtures' .source files name their origin)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dashboard.analysis import data
from ingest import registry
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import aiperf
from ingest.pipeline import ingest_paths
from tests.conftest import FIXTURES

BENCH = FIXTURES / "bench"
AGGREGATE = BENCH / "aiperf-run1-profile_export_aiperf.json"  # "records" wrapper, before aiperf #343
FLAT = BENCH / "aiperf-issue340-flat-excerpt.json"  # metrics at the top level, aiperf #343 on
RECORDS = BENCH / "aiperf-run1-profile_export-3-records.jsonl"  # 1 cancelled + 2 successful requests
OPTIONS = ParseOptions()


def bench_row(path: Path) -> tuple[dict, dict, list[str]]:
    parsed = aiperf.parse_aggregate(path, OPTIONS)
    [row] = parsed.tables["bench_serving"].to_pylist()
    return row, json.loads(row["extra"]), parsed.warnings


# --- the aggregate ---------------------------------------------------------------------------------------------

def test_the_early_aggregate_gives_throughput_load_and_latencies_from_its_records() -> None:
    row, extra, warnings = bench_row(AGGREGATE)
    assert registry.detect(AGGREGATE).kind == "aiperf_json"
    assert row["tool"] == "aiperf" and row["record_index"] == 0
    # records.output_token_throughput.avg = 2320.7222350404572 tokens/sec; request_throughput.avg 9.551622221540914
    assert row["output_throughput"] == pytest.approx(2320.7222350404572)
    assert row["request_throughput"] == pytest.approx(9.551622221540914)
    # request_count.avg 89.0; benchmark_duration.avg 9.317788951 sec; total_isl 48950.0; total_osl 21624.0
    assert (row["completed"], row["total_input_tokens"], row["total_output_tokens"]) == (89, 48950, 21624)
    assert row["duration_s"] == pytest.approx(9.317788951)
    # the throughput is total_osl ÷ duration (reasoning tokens included), which is why total_osl is the column
    assert row["total_output_tokens"] / row["duration_s"] == pytest.approx(row["output_throughput"])
    # input_config.loadgen: "concurrency": 100, no request_rate (left at its default, so not dumped)
    assert row["max_concurrency"] == 100 and row["request_rate"] is None
    # ttft avg/p50/p99 in ms: 2343.219436988764, 2369.317693, 3833.3894000399996
    assert (row["mean_ttft_ms"], row["median_ttft_ms"], row["p99_ttft_ms"]) == pytest.approx(
        (2343.219436988764, 2369.317693, 3833.3894000399996))
    # inter_token_latency = (latency − TTFT) ÷ (OSL − 1) per request: TPOT; avg 27.763065454471807, p50 27.615130366666666
    assert (row["mean_tpot_ms"], row["median_tpot_ms"]) == pytest.approx((27.763065454471807, 27.615130366666666))
    # inter_chunk_latency (gaps between streamed chunks): ITL; avg 27.755153106189347, p50 22.673047999999998, p99 140.53429476
    assert (row["mean_itl_ms"], row["median_itl_ms"], row["p99_itl_ms"]) == pytest.approx(
        (27.755153106189347, 22.673047999999998, 140.53429476))
    assert row["mean_e2e_latency_ms"] == pytest.approx(9059.654633033708)  # request_latency.avg
    assert row["accept_length"] is None and row["backend"] is None  # AIPerf does not say which engine served it
    assert extra["model"] == "openai/gpt-oss-20b" and extra["error_request_count"] == 11.0
    assert extra["metrics"]["total_output_tokens"]["avg"] == 1832.0  # AIPerf's own count, without reasoning tokens
    assert extra["error_summary"][0]["count"] == 11 and extra["was_cancelled"] is False
    assert extra["shape"].startswith("records wrapper")
    assert warnings == [f"{AGGREGATE}: 11 requests ended in an error (499 RequestCancellationError ×11): "
                        "not in completed or the throughput"]


def test_the_current_flat_aggregate_reads_the_same_way() -> None:
    row, extra, warnings = bench_row(FLAT)
    assert registry.detect(FLAT).kind == "aiperf_json"
    # request_throughput.avg 0.14968841618235815; request_count.avg 80.0; request_latency.avg 6655.520201949999
    assert row["request_throughput"] == pytest.approx(0.14968841618235815) and row["completed"] == 80
    assert row["mean_e2e_latency_ms"] == pytest.approx(6655.520201949999)
    # time_to_first_token (the tag #343 gave ttft): avg 44.166079325, p50 44.452151, p99 48.16844818
    assert (row["mean_ttft_ms"], row["median_ttft_ms"], row["p99_ttft_ms"]) == pytest.approx(
        (44.166079325, 44.452151, 48.16844818))
    assert row["output_throughput"] is None and row["max_concurrency"] is None  # not in this excerpt: not guessed
    assert extra["shape"].startswith("metrics at the top level") and warnings == []


def test_a_metric_in_an_unexpected_unit_is_not_placed(tmp_path: Path) -> None:
    document = json.loads(FLAT.read_text())
    document["time_to_first_token"]["unit"] = "tokens"  # not a time: the number means something else
    document["request_latency"]["unit"] = "sec"  # a time in seconds: converted, not copied
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(document))
    row, extra, warnings = bench_row(path)
    assert row["mean_ttft_ms"] is None and extra["metrics"]["time_to_first_token"]["avg"] == 44.166079325
    assert row["mean_e2e_latency_ms"] == pytest.approx(6655.520201949999 * 1000)
    assert any('"time_to_first_token.avg"' in w and "'tokens'" in w for w in warnings)


def test_a_truncated_aggregate_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(AGGREGATE.read_text()[:4000])
    with pytest.raises(MalformedInput) as raised:
        aiperf.parse_aggregate(path, OPTIONS)
    assert str(path) in str(raised.value) and raised.value.line is not None


def test_an_object_without_throughput_or_count_is_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps({"time_to_first_token": {"unit": "ms", "avg": 1.0}, "request_latency": {"unit": "ms", "avg": 2.0}}))
    with pytest.raises(MalformedInput, match="no AIPerf throughput") as raised:
        aiperf.parse_aggregate(path, OPTIONS)
    assert raised.value.key == "output_token_throughput"


# --- the per-request records -----------------------------------------------------------------------------------

def test_successful_records_are_runs_and_cancelled_ones_are_counted() -> None:
    parsed = aiperf.parse_records(RECORDS, OPTIONS)
    assert registry.detect(RECORDS).kind == "aiperf_records_jsonl"
    runs = parsed.tables["bench_runs"].to_pylist()
    # line 2: input_sequence_length 550, output_sequence_length 193, request_latency 7936.968269 ms,
    #         timestamp_ns 1759522419159192408; line 3: 193 tokens in 8214.202336 ms
    assert [(r["prompt_tokens"], r["output_tokens"]) for r in runs] == [(550, 193), (550, 193)]
    assert [r["duration_s"] for r in runs] == pytest.approx([7.936968269, 8.214202336])
    assert runs[0]["tok_per_s"] == pytest.approx(193 / 7.936968269)
    assert runs[0]["started_at"].isoformat() == "2025-10-03T20:13:39.159192"  # 1759522419.159192408 s, UTC
    assert not any(r["is_warmup"] for r in runs)  # credit_phase "profiling"
    assert json.loads(runs[0]["extra"])["metadata"]["x_request_id"] == "1ed40a0d-e708-434d-bb8e-fb1b44cb8717"
    [session] = parsed.tables["sessions"].to_pylist()
    assert json.loads(session["extra"])["not_runs"] == {"cancelled (error 499 RequestCancellationError)": 1}
    assert parsed.warnings == [f"{RECORDS}: 1 records cancelled (error 499 RequestCancellationError): not runs"]


def test_corpus_head_gives_two_runs_and_names_eleven_cancelled(corpus_dir: Path) -> None:
    path = corpus_dir / "new/aiperf/aiperf-examples-run1-profile_export.head13.jsonl"
    parsed = aiperf.parse_records(path, OPTIONS)
    assert parsed.tables["bench_runs"].num_rows == 2
    assert parsed.warnings == [f"{path}: 11 records cancelled (error 499 RequestCancellationError): not runs"]


def test_corpus_pretty_record_with_a_duplicated_key_is_one_run(corpus_dir: Path) -> None:
    path = corpus_dir / "new/aiperf/aiperf-docs-profile_export-record-pretty.json.txt"
    parsed = aiperf.parse_records(path, OPTIONS)
    [run] = parsed.tables["bench_runs"].to_pylist()
    # output_sequence_length 9, request_latency 297.52522799999997 ms, request_start_ns 1759813207532900363,
    # request_end_ns 1759813207838764604, benchmark_phase "profiling"
    assert (run["prompt_tokens"], run["output_tokens"]) == (550, 9)
    assert run["duration_s"] == pytest.approx(0.297525228) and not run["is_warmup"]
    assert run["started_at"].isoformat() == "2025-10-07T05:00:07.532900"
    assert run["ended_at"].isoformat() == "2025-10-07T05:00:07.838764"
    # "time_to_first_token" appears twice; JSON keeps the last: 4.898… ms (the doc's renamed "ttst")
    assert json.loads(run["extra"])["metrics"]["time_to_first_token"]["value"] == 4.8984369999999995


def test_a_record_with_spec_fields_is_a_run_and_an_acceptance_row(tmp_path: Path) -> None:
    # Constructed: the fixture's successful line 2 with the spec_decode_acceptance object the AIPerf docs print
    # (docs/tutorials/spec-decode-metrics.md, "illustrative values"; no posted export carries both yet).
    record = json.loads(RECORDS.read_text().splitlines()[1])
    record["spec_decode_acceptance"] = {
        "engine": "vllm", "mean_acceptance_length": 3.18, "draft_acceptance_rate": 0.436,
        "acceptance_histogram": {"0": 34, "1": 22, "2": 19, "3": 16, "4": 15, "5": 22},
        "num_accepted_draft_tokens": 278, "num_draft_tokens": 640, "num_spec_steps": 128, "num_spec_tokens": 5,
    }
    path = tmp_path / "profile_export.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert registry.detect(path).kind == "aiperf_records_jsonl"
    parsed = aiperf.parse_records(path, OPTIONS)
    [run] = parsed.tables["bench_runs"].to_pylist()
    [accept] = parsed.tables["acceptance_requests"].to_pylist()
    assert run["output_tokens"] == 193 and accept["output_tokens"] == 193
    assert accept["origin"] == "AIPerf spec_decode_acceptance" and accept["spec_steps"] == 128
    assert accept["request_id"] == "1ed40a0d-e708-434d-bb8e-fb1b44cb8717" and parsed.engine == "vllm"


def test_only_cancelled_records_are_refused_naming_the_count(tmp_path: Path) -> None:
    path = tmp_path / "profile_export.jsonl"
    path.write_text(RECORDS.read_text().splitlines()[0] + "\n")
    with pytest.raises(MalformedInput, match="no successful AIPerf request among 1 records") as raised:
        aiperf.parse_records(path, OPTIONS)
    assert str(path) in str(raised.value) and raised.value.line == 1


def test_a_record_cut_mid_line_is_skipped_and_the_rest_load(tmp_path: Path) -> None:
    lines = RECORDS.read_text().splitlines()
    path = tmp_path / "profile_export.jsonl"
    path.write_text("\n".join([lines[1], lines[2][:500]]) + "\n")
    parsed = aiperf.parse_records(path, OPTIONS)
    assert parsed.tables["bench_runs"].num_rows == 1
    assert any(w.startswith(f"{path}:2: truncated JSON record") for w in parsed.warnings)


# --- in the store ----------------------------------------------------------------------------------------------

def test_the_aggregate_reaches_compare_at_its_concurrency(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    assert not [r.summary() for r in ingest_paths([AGGREGATE], db) if r.failed]
    [row] = data.variant_summary(db, [], []).to_dict("records")
    assert row["basis"] == "aiperf at max concurrency 100" and row["streams"] == 100
    assert row["tokens_over_time"] == pytest.approx(21624 / 9.317788951)  # total_osl ÷ benchmark_duration


def test_the_corpus_aiperf_folder_ingests_without_failures(corpus_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    reports = ingest_paths([corpus_dir / "new/aiperf"], db)
    assert [r.summary() for r in reports if r.failed] == []
    summary = data.variant_summary(db, [], [])
    assert list(summary["variant"]) == ["unlabelled: aiperf"]
    # the folder's three successful requests (2 + the docs' 1) are benchmark runs, the headline basis
    assert summary.iloc[0]["basis"] == "benchmark runs" and summary.iloc[0]["n_runs"] == 3
