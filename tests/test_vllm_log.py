"""The vLLM server-log parser, read as a spec (fixtures with goldens, the corpus, year handling)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.errors import IngestError, UnrecognizedFormat
from ingest.formats import ParseOptions
from ingest.parsers.vllm import vllm_log
from ingest.registry import detect
from tests.conftest import corpus_files
from tests.log_golden import assert_matches_golden, load_golden, parse_for_golden

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
VLLM_GOLDENS = sorted(FIXTURES.glob("vllm-*.expected.json"))


def parse(path: Path, **options: object) -> vllm_log.ParsedSource:
    return vllm_log.parse(path, ParseOptions(**options))  # type: ignore[arg-type]


def spec_rows(path: Path, **options: object) -> list[dict]:
    return [
        row
        for row in parse(path, **options).tables["decode_stats"].to_pylist()
        if json.loads(row["extra"])["source"] != "engine stats"
    ]


@pytest.mark.parametrize("golden", VLLM_GOLDENS, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_fixture_matches_its_golden(golden: Path) -> None:
    source, expected = load_golden(golden)
    assert_matches_golden(source, parse_for_golden(source, expected), expected)


def test_mean_acceptance_length_is_bonus_inclusive_and_the_rate_comes_from_the_counters() -> None:
    first = spec_rows(FIXTURES / "vllm-v1-eagle3-2025.log", year=2025)[0]
    assert (first["accept_len_raw"], first["tokens_per_step"]) == (2.37, 2.37)
    assert first["accepted_drafts_per_step"] == pytest.approx(1.37)
    assert first["accept_rate_raw"] == 45.6  # as logged, in percent...
    assert first["accept_rate_drafts"] == pytest.approx(89 / 195)  # ...exact from "Accepted: 89, Drafted: 195"
    extra = json.loads(first["extra"])
    assert extra["accept_rate_unit"] == "percent"


def test_per_position_rates_inside_a_comma_separated_line_stay_one_list() -> None:
    first = spec_rows(FIXTURES / "vllm-v1-eagle3-2025.log", year=2025)[0]
    extra = json.loads(first["extra"])
    assert extra["Per-position acceptance rate"] == [0.738, 0.462, 0.169]
    assert not any(key.startswith("Avg Draft acceptance rate") for key in extra)  # it is the accept_rate_raw column
    assert extra["Accepted (tokens)"] == 89 and extra["Drafted (tokens)"] == 195


def test_v0_rate_is_a_fraction_and_tokens_per_step_comes_from_emitted_tokens() -> None:
    row = spec_rows(FIXTURES / "vllm-v0-2024.log")[0]
    assert row["accept_rate_raw"] == 0.642
    assert json.loads(row["extra"])["accept_rate_unit"] == "fraction"
    steps = 13311 / 3  # draft tokens ÷ k
    assert row["tokens_per_step"] == pytest.approx(10616 / steps)
    # V0's own rate counts every matching position; the drafts-only rate counts the accepted prefix
    assert row["accept_rate_drafts"] == pytest.approx((10616 / steps - 1) / 3)


def test_april_2025_line_takes_k_from_the_engine_config() -> None:
    row = spec_rows(FIXTURES / "vllm-apr-2025.log", year=2025)[0]
    assert row["accept_rate_raw"] == 41.2
    assert row["accept_rate_drafts"] == pytest.approx(1030 / 2500)
    assert row["tokens_per_step"] == pytest.approx(1 + 1030 / (2500 / 5))  # num_spec_tokens=5


def test_engine_stats_map_to_the_sglang_columns() -> None:
    engine = parse(FIXTURES / "vllm-apr-2025.log", year=2025).tables["decode_stats"].to_pylist()[0]
    assert (engine["gen_throughput"], engine["running_req"], engine["queue_req"]) == (230.5, 4, 1)
    assert engine["token_usage"] == pytest.approx(0.035)  # "GPU KV cache usage: 3.5%"


def test_engine_config_gives_the_variant_and_sglang_style_counts() -> None:
    config = parse(FIXTURES / "vllm-v1-eagle3-2025.log").tables["server_configs"].to_pylist()
    assert len(config) == 1  # "non-default args" and the engine config of one start-up are one segment
    assert config[0]["variant"] == "eagle3:EAGLE3-LLaMA3.1-Instruct-8B"
    assert (config[0]["speculative_num_steps"], config[0]["speculative_num_draft_tokens"]) == (3, 4)
    assert json.loads(config[0]["args"])["compilation_config"]["cudagraph_capture_sizes"] == [512, 504, 496]


def test_the_year_comes_from_options_else_a_dated_line_else_stays_empty_with_one_warning() -> None:
    source = FIXTURES / "vllm-v1-eagle3-2025.log"
    assert str(spec_rows(source, year=2025)[0]["ts"]) == "2025-08-04 20:51:08"
    undated = parse(source)
    assert all(ts is None for ts in undated.tables["decode_stats"].column("ts").to_pylist())
    assert sum("pass the year" in warning for warning in undated.warnings) == 1
    # kubectl's timestamp column dates vllm-v0-2024.log; December rolls over into January
    stamps = [str(row["ts"]) for row in parse(FIXTURES / "vllm-v0-2024.log").tables["decode_stats"].to_pylist()]
    assert stamps == ["2024-12-31 23:59:47", "2024-12-31 23:59:47", "2025-01-01 00:00:02"]


def test_a_malformed_metrics_line_is_skipped_with_a_warning() -> None:
    source = FIXTURES / "vllm-apr-2025.log"
    result = parse(source, year=2025)
    assert result.skipped["malformed spec line"] == 1
    assert f"{source}:4: 'Draft acceptance rate': 'x%' is not a number" in result.warnings


def test_engine_hint_must_match_the_content() -> None:
    with pytest.raises(IngestError, match="content is a vllm server log"):
        parse(FIXTURES / "vllm-v1-eagle3-2025.log", engine="sglang")
    with pytest.raises(IngestError, match="content is a sglang server log"):
        parse(FIXTURES / "sglang-eagle3-basic.log", engine="vllm")


def test_a_log_without_vllm_lines_names_the_expected_shapes(tmp_path: Path) -> None:
    source = tmp_path / "startup.log"
    source.write_text("INFO 08-04 20:49:02 [api_server.py:1805] vLLM API server version 0.10.1\n")
    with pytest.raises(UnrecognizedFormat, match="no vLLM spec-decode metrics") as raised:
        parse(source)
    assert "SpecDecoding metrics" in raised.value.hint


@pytest.mark.corpus
def test_corpus_v0_speculative_metrics(corpus_dir: Path) -> None:
    source = corpus_dir / "logs" / "vllm-issue-9539-v0-speculative-metrics.log"
    assert detect(source).kind == "vllm_log"
    result = parse(source, year=2024)
    assert {name: table.num_rows for name, table in result.tables.items()} == {
        "server_configs": 0, "decode_stats": 1, "prefill_stats": 0,
    }
    assert dict(result.skipped) == {"other log line": 1}  # "Prefix cache hit rate: GPU: 94.35%, CPU: 0.00%"
    row = result.tables["decode_stats"].to_pylist()[0]
    assert str(row["ts"]) == "2024-10-16 19:05:47"
    assert row["accept_rate_raw"] == 0.642
    assert row["tokens_per_step"] == pytest.approx(10616 / (13311 / 3))
    assert json.loads(row["extra"])["System efficiency"] == 0.598


@pytest.mark.corpus
def test_corpus_v1_before_and_after_pr_15902(corpus_dir: Path) -> None:
    source = corpus_dir / "logs" / "vllm-pr-15902-v1-specdecoding-before-after.log"
    result = parse(source)
    decode = result.tables["decode_stats"].to_pylist()
    assert len(decode) == 3 and not result.skipped
    before, after, engine = decode
    assert (before["accept_rate_raw"], json.loads(before["extra"])["accept_rate_unit"]) == (1.0, "fraction")
    assert (after["accept_rate_raw"], json.loads(after["extra"])["accept_rate_unit"]) == (100.0, "percent")
    assert before["accept_rate_drafts"] == after["accept_rate_drafts"] == 1.0
    assert before["tokens_per_step"] is None  # no k anywhere: τ cannot be derived from counts alone
    assert (engine["gen_throughput"], engine["running_req"], engine["queue_req"]) == (10.0, 0, 0)
    assert all(row["ts"] is None for row in decode)  # bare message bodies: no timestamp at all


@pytest.mark.corpus
@pytest.mark.parametrize("source", corpus_files("logs", "sglang-*.log"), ids=lambda p: p.name)
def test_corpus_sglang_logs_are_not_vllm_logs(source: Path, corpus_dir: Path) -> None:
    with pytest.raises(UnrecognizedFormat):
        parse(source)


def test_sniff() -> None:
    assert vllm_log.sniff((FIXTURES / "vllm-v0-2024.log").read_bytes())
    assert vllm_log.sniff(b"SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens\n")
    assert not vllm_log.sniff((FIXTURES / "sglang-eagle3-basic.log").read_bytes())
