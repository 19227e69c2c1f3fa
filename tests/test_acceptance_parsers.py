"""Acceptance in depth (issue #19): the per-position, per-request and /metrics readers, on fixtures and the corpus.

Every figure asserted here is worked out by hand from the file (the fixtures' .source files say where they come from).
"""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from ingest import registry
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.metrics import prometheus_text, spec_requests
from ingest.parsers.vllm import vllm_log
from ingest.pipeline import ingest_paths
from tests.conftest import FIXTURES, corpus_files

HERE = FIXTURES / "acceptance"
OPTIONS = ParseOptions(year=2025)


def requests_of(path: Path) -> list[dict]:
    return spec_requests.parse(path, OPTIONS).tables["acceptance_requests"].to_pylist()


# --- vLLM per-position rates: their own table -------------------------------------------------------

def test_vllm_log_positions_get_their_own_rows_and_add_up_to_the_mean_acceptance_length() -> None:
    parsed = vllm_log.parse(FIXTURES / "logs" / "vllm-v1-eagle3-2025.log", OPTIONS)
    rows = parsed.tables["acceptance_positions"].to_pylist()
    first = [r for r in rows if r["line_no"] == 7]
    assert [(r["position"], r["rate"]) for r in first] == [(1, 0.738), (2, 0.462), (3, 0.169)]
    assert {r["drafts"] for r in first} == {65}  # Drafted: 195 tokens ÷ 3 speculative tokens
    assert 1 + sum(r["rate"] for r in first) == pytest.approx(2.37, abs=0.005)  # the line's "Mean acceptance length"


def test_a_per_position_rate_above_one_refuses_the_log_naming_the_line() -> None:
    with pytest.raises(MalformedInput) as error:
        vllm_log.parse(HERE / "vllm-log-per-position-above-one.log", OPTIONS)
    assert error.value.line == 7 and "73.8" in error.value.message


# --- per request ----------------------------------------------------------------------------------

def test_vllm_responses_one_row_per_request_with_dataset_and_tokens() -> None:
    rows = requests_of(HERE / "vllm-responses-per-request-spec-metrics.jsonl")
    assert len(rows) == 4
    first = rows[0]
    assert first["request_id"] == "chatcmpl-0000" and first["dataset"] == "mt-bench"
    assert first["histogram"] == [39, 1, 0, 3] and first["spec_steps"] == 43 and first["accepted_drafts"] == 10
    assert first["accept_length"] == pytest.approx(1 + 10 / 43)
    assert first["input_tokens"] == 40 and first["output_tokens"] == 53
    assert [r["dataset"] for r in rows] == ["mt-bench", "gsm8k", "humaneval", "mt-bench"]


def test_sglang_meta_info_spec_fields() -> None:
    rows = requests_of(HERE / "sglang-responses-meta-info-spec.jsonl")
    assert [r["request_id"] for r in rows] == ["req-0", "req-1", "req-2"]
    first = rows[0]
    assert (first["spec_steps"], first["accepted_drafts"], first["draft_tokens"], first["num_spec_tokens"]) == (43, 63, 215, 5)
    assert first["accept_length"] == pytest.approx(106 / 43) and first["output_tokens"] == 106
    assert first["engine"] == "sglang" and first["extra"] is None  # meta_info's other keys are not kept


def test_a_histogram_that_does_not_sum_to_the_steps_is_refused_naming_the_line() -> None:
    with pytest.raises(MalformedInput) as error:
        requests_of(HERE / "vllm-response-histogram-not-summing.json")
    assert error.value.line == 1 and "43" in error.value.message and "44" in error.value.message


def test_a_percentage_among_fractions_refuses_the_whole_file(tmp_path: Path) -> None:
    with pytest.raises(MalformedInput) as error:
        requests_of(HERE / "vllm-response-rate-in-percent.jsonl")
    assert error.value.line == 2
    reports = ingest_paths([HERE / "vllm-response-rate-in-percent.jsonl"], tmp_path / "s.duckdb")
    assert reports[0].failed
    if (tmp_path / "s.duckdb").exists():
        with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM acceptance_requests").fetchone() == (0,)  # nothing half-loaded


@pytest.mark.parametrize("path", corpus_files("new/vllm_request_metrics"), ids=lambda p: p.name)
def test_corpus_vllm_request_metrics_placeholders_and_sparse_histograms(path: Path) -> None:
    [row] = requests_of(path)
    assert row["histogram"] == [39, 1, 0, 3]  # the sparse {"0": 39, "1": 1, "3": 3} too
    assert (row["spec_steps"], row["accepted_drafts"], row["draft_tokens"], row["num_spec_tokens"]) == (43, 10, 129, 3)
    assert row["accept_rate"] == pytest.approx(10 / 129)
    if "by-draft-length" in path.name:
        assert json.loads(row["extra"])["acceptance_histogram_by_draft_length"] == {"3": [39, 1, 0, 3]}


def test_corpus_sglang_meta_info(corpus_dir: Path) -> None:
    [row] = requests_of(corpus_dir / "new/sglang_meta_info/sglang-pr-33518-dspark-spec-fields.json")
    assert row["histogram"] == [11, 14, 11, 4, 0, 3] and row["spec_steps"] == 43 and row["accepted_drafts"] == 63
    assert row["accept_length"] == pytest.approx(106 / 43)


def test_corpus_aiperf_spec_record_skips_the_fragment_and_warns_on_the_illustrative_count(corpus_dir: Path) -> None:
    path = corpus_dir / "new/aiperf/aiperf-docs-spec-decode-record-and-pooled-hist-illustrative.json.txt"
    parsed = spec_requests.parse(path, OPTIONS)
    [row] = parsed.tables["acceptance_requests"].to_pylist()
    assert row["origin"] == "AIPerf spec_decode_acceptance" and row["histogram"] == [34, 22, 19, 16, 15, 22]
    assert row["spec_steps"] == 128 and row["accept_length"] == pytest.approx(3.18)
    assert sum(parsed.skipped.values()) == 3  # the pooled-histogram fragment's three lines
    assert any("278" in w and "281" in w for w in parsed.warnings)


def test_aiperf_exports_are_claimed_by_the_aiperf_formats_not_by_spec_request_json(corpus_dir: Path) -> None:
    # Whole AIPerf exports load their runs (ingest/parsers/bench/aiperf.py, which also gives the spec rows of
    # records that carry spec_decode_acceptance); only the docs' spec fragment, whose metrics are placeholders, is ours.
    for path in (corpus_dir / "new/aiperf").glob("*"):
        if "spec-decode" not in path.name and not path.name.endswith(".source"):
            assert not spec_requests.sniff(path.read_bytes()[:65536]), path.name
            assert registry.detect(path).kind in ("aiperf_json", "aiperf_records_jsonl"), path.name


# --- Prometheus /metrics text ----------------------------------------------------------------------

def test_two_snapshots_give_counter_deltas_per_engine_and_leave_gauges_alone() -> None:
    parsed = prometheus_text.parse(HERE / "vllm-metrics-two-snapshots-dp2.prom", OPTIONS)
    samples = parsed.tables["metric_samples"].to_pylist()
    deltas = parsed.tables["counter_deltas"].to_pylist()
    assert {s["snapshot"] for s in samples} == {0, 1} and len(samples) == 2 * 14
    assert {s["kind"] for s in samples if s["metric"].endswith("_created")} == {"created"}
    assert all(not d["metric"].endswith("_created") for d in deltas)  # created times are gauges: never differenced
    drafts = {d["engine_index"]: d["delta"] for d in deltas if d["metric"] == "vllm:spec_decode_num_drafts_total"}
    assert drafts == {0: 2000.0, 1: 1200.0}
    per_pos = {(d["engine_index"], d["position"]): d["delta"] for d in deltas
               if d["metric"] == "vllm:spec_decode_num_accepted_tokens_per_pos_total"}
    assert per_pos == {(0, 0): 1200.0, (0, 1): 700.0, (0, 2): 300.0, (1, 0): 740.0, (1, 1): 440.0, (1, 2): 220.0}
    assert not any(d["reset"] for d in deltas)


def test_a_restart_between_snapshots_is_said_and_counts_the_window_from_zero() -> None:
    parsed = prometheus_text.parse(HERE / "vllm-metrics-restart-between-snapshots.prom", OPTIONS)
    deltas = parsed.tables["counter_deltas"].to_pylist()
    drafts = [d for d in deltas if d["metric"] == "vllm:spec_decode_num_drafts_total"]
    assert [(d["value_before"], d["value_after"], d["delta"], d["reset"]) for d in drafts] == [
        (1000.0, 90.0, 90.0, True), (800.0, 60.0, 60.0, True)]
    assert any("restart" in w and ":27:" in w for w in parsed.warnings)


def test_a_counter_that_went_down_within_one_server_life_is_refused_naming_the_line() -> None:
    with pytest.raises(MalformedInput) as error:
        prometheus_text.parse(HERE / "vllm-metrics-counter-down-same-life.prom", OPTIONS)
    assert error.value.line == 27 and "went down" in error.value.message


def test_counter_delta_math_without_created_times_treats_a_decrease_as_a_restart() -> None:
    def snap(value: float) -> prometheus_text.Snapshot:
        sample = prometheus_text.Sample(1, "vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_drafts_total",
                                        "counter", {"engine": "0"}, value, None)
        return prometheus_text.Snapshot(samples=[sample])
    warnings: list[str] = []
    rows = prometheus_text.counter_deltas(Path("m.prom"), [snap(10), snap(25), snap(4), snap(9)], warnings)
    assert [(r["window"], r["delta"], r["reset"]) for r in rows] == [(1, 15.0, False), (2, 4.0, True), (3, 5.0, False)]
    assert len(warnings) == 1


@pytest.mark.parametrize("path", corpus_files("new/prometheus"), ids=lambda p: p.name)
def test_corpus_prometheus_text_reads_every_sample(path: Path) -> None:
    parsed = prometheus_text.parse(path, OPTIONS)
    samples = parsed.tables["metric_samples"].to_pylist()
    expected = {"sglang-docs-metrics-example-apr2025.prom": 91, "sglang-pr-1853-metrics-name-label-nov2024.prom": 5,
                "sglang-pr-4444-metrics-engine_type-label.prom": 3, "vllm-pr-24049-prom-query-dp8-drafts.txt": 9}
    assert len(samples) == expected[path.name]
    if path.name.startswith("vllm-pr-24049"):  # a UI paste: no # TYPE lines, engines by label
        drafts = [s for s in samples if s["kind"] == "counter"]
        assert [s["engine_index"] for s in drafts] == list(range(8)) and sum(s["value"] for s in drafts) == 188
        assert parsed.engine == "vllm"


# --- detection and the store ------------------------------------------------------------------------

@pytest.mark.parametrize("name, kind", [
    ("vllm-metrics-two-snapshots-dp2.prom", "prometheus_text"),
    ("vllm-responses-per-request-spec-metrics.jsonl", "spec_request_json"),
    ("sglang-responses-meta-info-spec.jsonl", "spec_request_json"),
])
def test_detected_from_content(name: str, kind: str) -> None:
    assert registry.detect(HERE / name).kind == kind


def test_the_store_views_pool_prometheus_windows_across_dp_engines(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    [report] = ingest_paths([HERE / "vllm-metrics-two-snapshots-dp2.prom"], db, variant="eagle3")
    assert not report.failed
    with duckdb.connect(str(db), read_only=True) as con:
        rates = con.execute("SELECT position, rate, drafts FROM acceptance_position_rates ORDER BY engine_index, position").fetchall()
        window = con.execute("SELECT scope, drafts, accepted, accept_length FROM acceptance_metric_windows "
                             "WHERE scope = 'counter delta'").fetchall()
        lifetime = con.execute("SELECT \"window\", drafts, accepted FROM acceptance_metric_windows "
                               "WHERE scope = 'counters since start' ORDER BY 1").fetchall()
    assert rates[:3] == [(1, 0.6, 2000), (2, 0.35, 2000), (3, 0.15, 2000)]
    assert window == [("counter delta", 3200.0, 3600.0, pytest.approx(1 + 3600 / 3200))]
    assert lifetime == [("snapshot 0", 1800.0, 2600.0), ("snapshot 1", 5000.0, 6200.0)]  # labelled, not a window


def test_corpus_store_holds_positions_requests_and_datasets(corpus_dir: Path, tmp_path: Path) -> None:
    from tests.test_acceptance_page import acceptance_corpus_paths

    db = tmp_path / "corpus.duckdb"
    ingest_paths(acceptance_corpus_paths(), db)
    with duckdb.connect(str(db), read_only=True) as con:
        origins = dict(con.execute("SELECT origin, count(*) FROM acceptance_position_rates GROUP BY 1").fetchall())
        offline = con.execute("""SELECT r."window", 1 + sum(r.rate), any_value(b.accept_length)
                                 FROM acceptance_position_rates r JOIN bench_serving b ON b.source_id = r.source_id
                                 AND 'record ' || b.record_index = r."window"
                                 WHERE r.origin = 'vllm spec_decode.py summary' GROUP BY 1 ORDER BY 1""").fetchall()
        requests = con.execute("SELECT count(*) FROM acceptance_requests").fetchone()
        datasets = con.execute("SELECT DISTINCT dataset FROM acceptance_datasets ORDER BY 1").fetchall()
    assert origins.get("vllm spec_decode.py summary") == 20  # two runs of vllm PR #26498, tokens 0..9 each
    assert [(w, round(total, 2), length) for w, total, length in offline] == [("record 0", 3.64, 3.64), ("record 1", 3.37, 3.36)]  # 1 + Σ rates = the printed accept length
    assert requests == (5,)  # three vLLM shapes, SGLang, AIPerf's record; the log cut before meta_info has none
    assert ("mtbench",) in datasets
