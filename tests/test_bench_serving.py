"""sglang.bench_serving --output-file JSONL: every key generation, pasted files, bad input, the corpus."""
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
from ingest.parsers.bench import bench_serving
from ingest.reader import read_head
from ingest.registry import detect
from ingest.storage import store

GOLDEN = golden_inputs(bench_serving.KIND)


def parse(path: Path):
    return bench_serving.parse(path, ParseOptions())


def test_there_are_golden_fixtures_for_every_key_generation() -> None:
    names = {path.name for path in GOLDEN}
    assert {
        "sglang-2024-07-old-keys.jsonl",
        "sglang-2025-06-accept-length.jsonl",
        "sglang-2025-11-server-info.jsonl",
        "sglang-output-details.jsonl",
        "sglang-pasted-wrapped-truncated.txt",
    } <= names


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_fixture_matches_its_golden_expectation(path: Path) -> None:
    check_golden(path, bench_serving.parse)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_fixture_is_detected_as_bench_serving(path: Path) -> None:
    assert bench_serving.sniff(read_head(path))


# --- key generations ------------------------------------------------------------------------------

def test_mid_2024_short_key_names_land_in_the_renamed_columns() -> None:
    rows = parse(BENCH_FIXTURES / "sglang-2024-07-old-keys.jsonl").tables["bench_serving"].to_pylist()
    assert [row["total_input_tokens"] for row in rows] == [20480, 20480]
    assert [row["output_throughput"] for row in rows] == [1024.5, 512.25]
    assert [row["median_ttft_ms"] for row in rows] == [812.5, 95.0]
    assert rows[0]["request_rate"] == math.inf and rows[1]["request_rate"] == 4.0
    assert rows[0]["duration_s"] is None  # that generation did not write it: null, never 0


def test_accept_length_is_raw_and_null_without_speculation() -> None:
    rows = parse(BENCH_FIXTURES / "sglang-2025-06-accept-length.jsonl").tables["bench_serving"].to_pylist()
    assert [row["accept_length"] for row in rows] == [None, 1.58]
    assert json.loads(rows[1]["extra"])["p95_itl_ms"] == 36.0


def test_server_info_becomes_a_server_config_with_a_variant_and_stays_out_of_extra() -> None:
    parsed = parse(BENCH_FIXTURES / "sglang-2025-11-server-info.jsonl")
    configs = parsed.tables["server_configs"].to_pylist()
    assert [(c["segment"], c["variant"]) for c in configs] == [(0, "baseline"), (1, "eagle3:kimi-k2-eagle3")]
    assert configs[1]["speculative_num_draft_tokens"] == 3 and configs[1]["tp_size"] == 8
    assert json.loads(configs[1]["args"])["internal_states"][0]["avg_spec_accept_length"] == 1.58
    rows = parsed.tables["bench_serving"].to_pylist()
    assert [row["tag"] for row in rows] == ["baseline", "k2-drafter"]
    assert all("server_info" not in json.loads(row["extra"]) for row in rows)
    assert json.loads(rows[1]["extra"])["total_throughput"] == pytest.approx(51.84 + 160 / 197.5)


def test_pd_server_info_is_read_from_the_decode_server(tmp_path: Path) -> None:
    record = {"completed": 1, "duration": 1.0, "output_throughput": 5.0, "mean_ttft_ms": 1.0,
              "server_info": {"prefill": [{"model_path": "m", "speculative_algorithm": None}],
                              "decode": [{"model_path": "m", "speculative_algorithm": "EAGLE3",
                                          "speculative_draft_model_path": "org/drafter"}]}}
    path = tmp_path / "pd.jsonl"
    path.write_text(json.dumps(record) + "\n")
    config = parse(path).tables["server_configs"].to_pylist()[0]
    assert (config["speculative_algorithm"], config["variant"]) == ("EAGLE3", "eagle3:drafter")


def test_router_server_info_without_server_args_stays_in_extra(tmp_path: Path) -> None:
    info = {"internal_states": [{"avg_spec_accept_length": 2.1}], "decode": [{"url": "http://d1:8080", "load": 5}]}
    record = {"completed": 1, "duration": 1.0, "output_throughput": 5.0, "mean_ttft_ms": 1.0, "server_info": info}
    path = tmp_path / "router.jsonl"
    path.write_text(json.dumps(record) + "\n")
    parsed = parse(path)
    assert "server_configs" not in parsed.tables  # no server args: no config, and no invented "baseline"
    assert json.loads(parsed.tables["bench_serving"].to_pylist()[0]["extra"])["server_info"] == info


def test_output_details_become_request_rows_in_ms_and_not_extra() -> None:
    parsed = parse(BENCH_FIXTURES / "sglang-output-details.jsonl")
    requests = parsed.tables["bench_requests"].to_pylist()
    assert [r["request_index"] for r in requests] == [0, 1, 2]
    assert [r["ttft_ms"] for r in requests] == [250.0, 500.0, 0.0]
    assert requests[0]["itls_ms"] == pytest.approx([20.0, 30.0, 10.0])
    assert requests[0]["tpot_ms"] == pytest.approx(60.0 / 3)  # sum(ITL) / (output_len - 1)
    assert requests[2]["tpot_ms"] is None and requests[2]["error"] == "Bad Gateway"
    extra = json.loads(parsed.tables["bench_serving"].to_pylist()[0]["extra"])
    assert not {"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} & set(extra)


def test_uneven_detail_arrays_are_padded_with_null_and_reported(tmp_path: Path) -> None:
    record = {"completed": 2, "duration": 1.0, "output_throughput": 5.0, "input_lens": [1, 2], "ttfts": [0.1]}
    path = tmp_path / "uneven.jsonl"
    path.write_text(json.dumps(record) + "\n")
    parsed = parse(path)
    assert [r["ttft_ms"] for r in parsed.tables["bench_requests"].to_pylist()] == [100.0, None]
    assert any("ttfts=1" in warning for warning in parsed.warnings)


# --- the tolerant reader --------------------------------------------------------------------------

def test_pasted_file_keeps_good_records_and_reports_the_rest_by_line() -> None:
    parsed = parse(BENCH_FIXTURES / "sglang-pasted-wrapped-truncated.txt")
    rows = parsed.tables["bench_serving"].to_pylist()
    assert [row["line_no"] for row in rows] == [2, 7, 9]  # wrapped record reported at its first line
    assert rows[0]["tag"] == "text with Infinity and {braces}"  # text inside strings is untouched
    assert rows[1]["request_rate"] == -math.inf and rows[1]["accept_length"] is None  # NaN means no value
    assert parsed.skipped == {"not JSON (preamble or note)": 1, "truncated JSON record": 2, "malformed JSON record": 1}
    where = [warning.split(": ")[0].rsplit(":", 1)[1] for warning in parsed.warnings[:4]]
    assert where == ["1", "6", "8", "10"]


def test_wrong_types_warn_naming_the_key_and_keep_the_raw_value() -> None:
    parsed = parse(BENCH_FIXTURES / "sglang-pasted-wrapped-truncated.txt")
    row = parsed.tables["bench_serving"].to_pylist()[2]
    assert row["duration_s"] is None and row["completed"] == 64  # 64.0 is a whole number
    assert json.loads(row["extra"]) == {"duration": "12.5s", "max_concurrency": True}
    assert any(':9: key "duration": expected a number' in warning for warning in parsed.warnings)


def test_a_file_without_any_record_is_a_clear_error() -> None:
    with pytest.raises(MalformedInput) as raised:
        parse(BENCH_FIXTURES / "garbage.jsonl")
    assert raised.value.line == 1
    assert "no complete sglang.bench_serving record" in str(raised.value)
    assert "--output-file" in raised.value.hint


def test_a_lone_truncated_record_is_an_error_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text('{"backend": "sglang", "completed": 3, "duration": 1.5, "output_thr')
    with pytest.raises(MalformedInput) as raised:
        parse(path)
    assert raised.value.line == 1 and "truncated" in raised.value.message


def test_gzipped_output_is_read_like_plain(tmp_path: Path) -> None:
    import gzip

    source = BENCH_FIXTURES / "sglang-2025-06-accept-length.jsonl"
    packed = tmp_path / "out.jsonl.gz"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    assert parse(packed).tables["bench_serving"].to_pylist() == parse(source).tables["bench_serving"].to_pylist()


# --- detection ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "head",
    [
        b'{"format": "specdash.bench/1", "runs": [{"tokens": 2048, "time": 40.5}]}',
        b'[{"tokens": 2048, "time": 40.5, "completed": 1, "duration": 1, "output_throughput": 2}]',
        b'{"date": "20250720", "model_id": "m", "tokenizer_id": "m", "completed": 100, "duration": 135.0,'
        b' "request_throughput": 0.74, "output_throughput": 157.49}',
        b'{"run_name": "default", "batch_size": 1, "latency": 2.0, "output_throughput": 5.0, "last_ttft": 0.1}',
        b"[2025-11-11 04:06:27] Decode batch, #running-req: 1, accept len: 1.58, gen throughput (token/s): 51.8",
        b"============ Serving Benchmark Result ============\nSuccessful requests: 64\n",
    ],
    ids=["canonical-json", "list-of-runs", "vllm-save-result", "bench-one-batch", "sglang-log", "console"],
)
def test_sniff_leaves_other_formats_alone(head: bytes) -> None:
    assert not bench_serving.sniff(head)


def test_sniff_ignores_records_quoted_inside_another_document() -> None:
    golden = (BENCH_FIXTURES / "sglang-2025-06-accept-length.jsonl.expected.json").read_bytes()
    assert b'"output_throughput"' in golden and not bench_serving.sniff(golden)


def test_sniff_reads_a_record_longer_than_the_head_by_its_text() -> None:
    record = {"backend": "sglang", "duration": 1.0, "completed": 2000, "output_throughput": 9.0,
              "itls": [[0.01] * 500 for _ in range(2000)]}
    head = (json.dumps(record) + "\n").encode()[: 64 * 1024]
    assert bench_serving.sniff(head)


# --- the real corpus ------------------------------------------------------------------------------

@pytest.mark.corpus
def test_corpus_9585_pasted_record(corpus_dir: Path) -> None:
    path = corpus_dir / "bench" / "sglang-issue-9585-bench-serving-jsonl.txt"
    assert detect(path).kind == bench_serving.KIND
    parsed = parse(path)
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert row["request_rate"] == math.inf
    assert row["completed"] == 300 and row["max_concurrency"] == 16
    assert row["accept_length"] is None
    assert row["duration_s"] == pytest.approx(91.82476212800248)
    assert row["line_no"] == 2  # line 1 is the poster's echo; the record is wrapped onto lines 2-3
    assert json.loads(row["extra"])["p95_itl_ms"] == 0.0
    assert parsed.skipped == {"not JSON (preamble or note)": 1}


@pytest.mark.corpus
def test_corpus_9585_loads_into_the_store(corpus_dir: Path, isolated_store: Path) -> None:
    path = corpus_dir / "bench" / "sglang-issue-9585-bench-serving-jsonl.txt"
    store.load_source(isolated_store, path, parse(path), sha256=store.file_sha256(path))
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        rate, completed, concurrency = con.execute(
            "SELECT request_rate, completed, CAST(extra ->> '$.concurrency' AS DOUBLE) FROM bench_serving"
        ).fetchone()
    assert (rate, completed) == (math.inf, 300)
    assert concurrency == pytest.approx(15.552, abs=1e-3)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("bench"), ids=lambda p: p.name)
def test_only_the_jsonl_corpus_sample_sniffs_as_bench_serving(path: Path) -> None:
    assert bench_serving.sniff(read_head(path)) == ("bench-serving-jsonl" in path.name)
