"""llama.cpp's speculative-decoding outputs (issue #31): each shape read into the store, figures read by hand.

Every golden value below was read off the fixture file (tests/fixtures/llamacpp/, each with a ``.source``) and
is asserted against the store the file was ingested into, not against the parser's tables.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dashboard.analysis import data
from ingest.errors import IngestError, MalformedInput, UnrecognizedFormat
from ingest.formats import ParseOptions
from ingest.parsers.llamacpp import (
    completion_timings,
    server_log,
    speculative_summary,
    speed_bench,
)
from ingest.pipeline import ingest_paths
from ingest.registry import detect
from tests.conftest import FIXTURES

HERE = FIXTURES / "llamacpp"
KINDS = {
    "server-2026-06-eagle3-per-position.log": "llamacpp_server_log",
    "server-2026-05-pid-prefix-ngram-mod-and-draft-mtp.log": "llamacpp_server_log",
    "server-plain-mtp-multiline.log": "llamacpp_server_log",
    "server-2026-05-elapsed-prefix-multiline-mtp.log": "llamacpp_server_log",
    "server-2026-06-progress-no-speculation.log": "llamacpp_server_log",
    "speculative-issue5877-llama32.txt": "llamacpp_speculative_text",
    "speculative-pr3006-two-summaries.txt": "llamacpp_speculative_text",
    "speculative-pr2926-2023-generated.txt": "llamacpp_speculative_text",
    "speculative-simple-constructed-stats.txt": "llamacpp_speculative_text",
    "completion-timings-pr12603.json": "llamacpp_timings_json",
    "stream-final-chunk-b9251.txt": "llamacpp_timings_json",
    "speed-bench-summary-constructed.txt": "llamacpp_speed_bench_text",
    "speed-bench-compare-constructed.txt": "llamacpp_speed_bench_text",
}


def stored(tmp_path: Path, name: str, sql: str, **labels: str) -> list[dict[str, Any]]:
    """Ingest fixture ``name`` into a fresh store and return ``sql``'s rows as dicts."""
    db = tmp_path / "llama.duckdb"
    reports = ingest_paths([HERE / name], db, **labels)
    assert [r.failed for r in reports] == [False], [r.summary() for r in reports]
    with duckdb.connect(str(db), read_only=True) as con:
        result = con.execute(sql)
        columns = [d[0] for d in result.description]
        return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def extra(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["extra"]) if row.get("extra") else {}


def test_every_fixture_has_its_source_and_is_read_by_its_format() -> None:
    files = sorted(p.name for p in HERE.iterdir() if not p.name.endswith(".source"))
    assert files == sorted(KINDS)
    for name, kind in KINDS.items():
        assert (HERE / f"{name}.source").read_text(encoding="utf-8").strip(), name
        assert detect(HERE / name).kind == kind, name


# --- llama-server logs -------------------------------------------------------------------------------------------


def test_2026_log_one_request_with_mean_length_and_per_position_rates(tmp_path: Path) -> None:
    name = "server-2026-06-eagle3-per-position.log"
    [request] = stored(tmp_path, name, "SELECT * FROM acceptance_requests")
    # 'draft acceptance = 0.64479 (  167 accepted /   259 generated), mean acceptance length =  2.92, … (0.805, 0.632, 0.483)'
    assert (request["engine"], request["origin"], request["request_id"]) == ("llama.cpp", "llama.cpp slot print_timing", "slot 1 task 0")
    assert (request["accepted_drafts"], request["draft_tokens"], request["accept_length"]) == (167, 259, 2.92)
    assert request["accept_rate"] == pytest.approx(0.64479, abs=5e-6)
    assert (request["input_tokens"], request["output_tokens"], request["num_spec_tokens"], request["line_no"]) == (20, 256, 3, 5)
    assert extra(request)["methods"] == ["draft-eagle3"]

    positions = stored(tmp_path / "p", name, "SELECT position, rate, origin FROM acceptance_positions ORDER BY position")
    assert [(p["position"], p["rate"]) for p in positions] == [(1, 0.805), (2, 0.632), (3, 0.483)]

    [run] = stored(tmp_path / "r", name, "SELECT * FROM bench_runs")
    # '… eval time =    2296.72 ms /   256 tokens (    8.97 ms per token,   111.46 tokens per second)'
    assert (run["prompt_tokens"], run["output_tokens"], run["duration_s"], run["tok_per_s"]) == (20, 256, 2.29672, 111.46)
    assert extra(run)["total_ms"] == 2596.83 and extra(run)["graphs_reused"] == 85
    [session] = stored(tmp_path / "s", name, "SELECT engine, variant FROM sessions")
    assert session == {"engine": "llama.cpp", "variant": "draft-eagle3"}

    [line] = stored(tmp_path / "d", name, "SELECT * FROM decode_stats")
    # 'statistics     draft-eagle3: … #gen tokens =    259, #acc tokens =   167, #mean acc len = 2.92, …'
    assert (line["accept_len_raw"], line["tokens_per_step"], line["ts"]) == (2.92, 2.92, None)
    assert line["accepted_drafts_per_step"] == pytest.approx(1.92)
    assert line["accept_rate_drafts"] == pytest.approx(167 / 259)
    said = extra(line)
    assert (said["method"], said["gen_drafts"], said["acc_drafts"], said["log_time"]) == ("draft-eagle3", 87, 70, "0.06.896.057")
    assert said["calls_begin_draft_accept"] == [1, 87, 87] and said["acc_rate_per_position"] == [0.805, 0.632, 0.483]


def test_two_speculative_types_of_one_server_are_two_variants(tmp_path: Path) -> None:
    name = "server-2026-05-pid-prefix-ngram-mod-and-draft-mtp.log"
    configs = stored(tmp_path, name, "SELECT segment, variant, speculative_algorithm, args FROM server_configs ORDER BY segment")
    assert [(c["segment"], c["variant"], c["speculative_algorithm"]) for c in configs] == [
        (0, "ngram-mod", "ngram-mod"), (1, "draft-mtp", "draft-mtp")]
    assert json.loads(configs[0]["args"])["types_in_lifetime"] == ["ngram-mod", "draft-mtp"]
    lines = stored(tmp_path / "d", name, "SELECT segment, line_no, accept_rate_drafts, tokens_per_step, extra FROM decode_stats ORDER BY line_no")
    # '#gen tokens = 256, #acc tokens = 47' and '#gen tokens = 1585, #acc tokens = 1252'; no '#mean acc len' printed
    assert [(d["segment"], d["line_no"]) for d in lines] == [(0, 1), (1, 2)]
    assert [d["accept_rate_drafts"] for d in lines] == [pytest.approx(47 / 256), pytest.approx(1252 / 1585)]
    assert [d["tokens_per_step"] for d in lines] == [None, None]
    assert [extra(d)["pid"] for d in lines] == [53409, 53409]
    assert extra(lines[1])["dur_begin_draft_accept_ms"] == [0.008, 33271.024, 1.264]
    lifetimes = stored(tmp_path / "l", name, "SELECT segment, variant FROM server_lifetimes ORDER BY segment")
    assert [(x["segment"], x["variant"]) for x in lifetimes] == [(0, "ngram-mod"), (1, "draft-mtp")]


@pytest.mark.parametrize(("name", "expected"), [
    # 'prompt eval time =    8584.47 ms /  3258 tokens', 'eval time =    1287.69 ms /    57 tokens (…,    44.27 tokens per second)',
    # 'draft acceptance rate = 1.00000 (   36 accepted /    36 generated)'
    ("server-plain-mtp-multiline.log", (3258, 57, 1.28769, 44.27, 36, 36, "slot 3 task 0", ["mtp"])),
    # the block's first line only is prefixed: 'prompt eval time =    4063.52 ms /    96 tokens', 'eval time =   31868.65 ms /
    # 221 tokens (…,     6.93 tokens per second)', 'draft acceptance rate = 0.69953 (  149 accepted /   213 generated)'
    ("server-2026-05-elapsed-prefix-multiline-mtp.log", (96, 221, 31.86865, 6.93, 149, 213, "slot 0 task 854", [])),
])
def test_multi_line_timing_blocks_give_a_run_and_a_rate_without_a_length(
        tmp_path: Path, name: str, expected: tuple[Any, ...]) -> None:
    prompt, output, seconds, speed, accepted, drafted, request_id, methods = expected
    [run] = stored(tmp_path, name, "SELECT * FROM bench_runs")
    assert (run["prompt_tokens"], run["output_tokens"], run["duration_s"], run["tok_per_s"]) == (prompt, output, seconds, speed)
    [request] = stored(tmp_path / "a", name, "SELECT * FROM acceptance_requests")
    assert (request["accepted_drafts"], request["draft_tokens"], request["request_id"]) == (accepted, drafted, request_id)
    assert request["accept_rate"] == pytest.approx(accepted / drafted)
    assert request["accept_length"] is None and request["spec_steps"] is None  # no step count: no made-up τ
    assert extra(request)["methods"] == methods
    [source] = stored(tmp_path / "s", name, "SELECT engine, warnings FROM sources")
    assert source["engine"] == "llama.cpp"
    assert "accept length left empty" in source["warnings"]


def test_speed_reports_of_a_server_without_speculation(tmp_path: Path) -> None:
    name = "server-2026-06-progress-no-speculation.log"
    lines = stored(tmp_path, name, "SELECT segment, line_no, gen_throughput, tokens_per_step, extra FROM decode_stats ORDER BY line_no")
    assert len(lines) == 12 and {d["segment"] for d in lines} == {0}
    # '2.02.846.974 I slot print_timing: id  3 | task 0 | n_decoded =   1081, tg =  12.93 t/s, tg_3s =  12.57 t/s'
    assert (lines[0]["gen_throughput"], lines[-1]["gen_throughput"]) == (12.57, 12.67)
    assert extra(lines[0]) == {"source": "llama.cpp progress line", "scope": "one slot (one request)", "slot": 3, "task": 0,
                               "n_decoded": 1081, "tg": 12.93, "tg_3s": 12.57, "gen_throughput_from": "tg_3s",
                               "log_time": "2.02.846.974"}
    assert stored(tmp_path / "c", name, "SELECT * FROM server_configs") == []  # the log names no speculative type
    assert stored(tmp_path / "s", name, "SELECT * FROM sessions") == []  # no request ended in the excerpt


def test_compare_names_the_basis_of_speed_lines_that_log_no_running_requests(tmp_path: Path) -> None:
    """llama.cpp progress lines give a slot's speed, not how many requests ran: the headline's basis says so (it was
    NULL, and Compare's caption showed 'nan')."""
    db = tmp_path / "store.duckdb"
    ingest_paths([FIXTURES / "llamacpp" / "server-2026-06-progress-no-speculation.log"], db)
    summary = data.variant_summary(db, [], [])
    assert summary[["basis", "sample_unit", "n_runs"]].values.tolist() == [
        ["server log: gen throughput, running requests not logged", "log lines", 12]]


def test_speed_reports_before_tg_3s_use_tg(tmp_path: Path) -> None:
    parsed = server_log.parse(HERE / "server-2026-05-elapsed-prefix-multiline-mtp.log", ParseOptions())
    # '57.38.073.660 I slot print_timing: id  0 | task 854 | n_decoded =    187, tg =   6.71 t/s'
    assert parsed.tables["decode_stats"].column("gen_throughput").to_pylist() == [6.71, 6.94]
    assert parsed.skipped == {}
    assert parsed.lines_read == 7


def test_speed_reports_of_chained_types_are_their_own_variant(tmp_path: Path) -> None:
    log = tmp_path / "chained.log"
    report = "[53409] 5.02.000.001 I slot print_timing: id  0 | task 765 | n_decoded =    100, tg =  30.00 t/s, tg_3s =  31.50 t/s\n"
    log.write_text(report + (HERE / "server-2026-05-pid-prefix-ngram-mod-and-draft-mtp.log").read_text(encoding="utf-8"))
    parsed = server_log.parse(log, ParseOptions())
    configs = parsed.tables["server_configs"].to_pylist()
    assert [(c["segment"], c["speculative_algorithm"]) for c in configs] == [(0, "ngram-mod"), (1, "draft-mtp"), (2, "ngram-mod+draft-mtp")]
    rows = parsed.tables["decode_stats"].to_pylist()
    assert [(d["line_no"], d["segment"], d["gen_throughput"]) for d in rows] == [(1, 2, 31.5), (2, 0, None), (3, 1, None)]


def test_a_restart_starts_a_new_lifetime(tmp_path: Path) -> None:
    text = (HERE / "server-plain-mtp-multiline.log").read_text(encoding="utf-8")
    log = tmp_path / "two.log"
    log.write_text(text + "build: 9251 (e2b129e1b) with cc for x86_64-linux-gnu\nmain: server is listening on http://0.0.0.0:8080\n" + text)
    parsed = server_log.parse(log, ParseOptions())
    assert parsed.tables["server_configs"].column("segment").to_pylist() == [0, 1]
    assert parsed.tables["sessions"].num_rows == 2
    assert parsed.tables["bench_runs"].column("session_key").to_pylist() == [0, 1]


def test_a_malformed_statistics_line_is_named_and_the_rest_read(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    text = (HERE / "server-plain-mtp-multiline.log").read_text(encoding="utf-8")
    log.write_text(text.replace("#gen tokens = 36,", "#gen tokens = lots,"))
    parsed = server_log.parse(log, ParseOptions())
    assert parsed.skipped["malformed llama.cpp statistics line"] == 1
    assert any(w.startswith(f"{log}:9: '#gen tokens'") for w in parsed.warnings), parsed.warnings
    assert parsed.tables["acceptance_requests"].num_rows == 1


def test_a_file_without_llama_server_figures_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "idle.log"
    log.write_text("srv  update_slots: all slots are idle\n")
    with pytest.raises(UnrecognizedFormat, match="no llama-server request timings"):
        server_log.parse(log, ParseOptions())


def test_engine_option_must_agree(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="--engine sglang"):
        server_log.parse(HERE / "server-plain-mtp-multiline.log", ParseOptions(engine="sglang"))


# --- llama-speculative summaries ---------------------------------------------------------------------------------


def test_speculative_summary(tmp_path: Path) -> None:
    name = "speculative-issue5877-llama32.txt"
    [run] = stored(tmp_path, name, "SELECT * FROM bench_runs")
    # 'encoded   14 tokens in    0.054 seconds, …', 'decoded  673 tokens in   12.132 seconds, speed:   55.473 t/s'
    assert (run["prompt_tokens"], run["output_tokens"], run["duration_s"], run["tok_per_s"]) == (14, 673, 12.132, 55.473)
    [request] = stored(tmp_path / "a", name, "SELECT * FROM acceptance_requests")
    # 'n_draft   = 5', 'n_predict = 673', 'n_drafted = 730', 'n_accept  = 526', 'accept    = 72.055%'
    assert (request["num_spec_tokens"], request["output_tokens"], request["draft_tokens"], request["accepted_drafts"]) == (5, 673, 730, 526)
    assert request["accept_rate"] == pytest.approx(0.72055, abs=5e-6)
    assert (request["accept_length"], request["origin"], request["engine"]) == (None, "llama-speculative summary", "llama.cpp")
    assert extra(request)["accept_percent_printed"] == 72.055


def test_two_pasted_summaries_with_the_speed_line_after_the_counts(tmp_path: Path) -> None:
    name = "speculative-pr3006-two-summaries.txt"
    runs = stored(tmp_path, name, "SELECT run_index, output_tokens, duration_s, tok_per_s, extra FROM bench_runs ORDER BY run_index")
    assert [(r["run_index"], r["output_tokens"], r["duration_s"], r["tok_per_s"]) for r in runs] == [
        (1, 266, 11.990, 22.185), (2, 266, 13.234, 20.099)]
    assert [extra(r)["heading"] for r in runs] == ["With heuristic", "Without heuristic"]
    requests = stored(tmp_path / "a", name, "SELECT num_spec_tokens, draft_tokens, accepted_drafts FROM acceptance_requests ORDER BY record_index")
    assert [tuple(r.values()) for r in requests] == [(53, 245, 231), (16, 254, 223)]


def test_the_2023_summary_says_generated(tmp_path: Path) -> None:
    [run] = stored(tmp_path, "speculative-pr2926-2023-generated.txt", "SELECT output_tokens, duration_s, tok_per_s FROM bench_runs")
    assert run == {"output_tokens": 129, "duration_s": 248.340, "tok_per_s": 0.519}  # 'generated 129 tokens in 248.340 seconds, speed: 0.519 t/s'


def test_statistics_lines_of_a_summary_name_the_method(tmp_path: Path) -> None:
    [request] = stored(tmp_path, "speculative-simple-constructed-stats.txt", "SELECT extra FROM acceptance_requests")
    said = extra(request)
    assert said["method"] == "draft"
    # 'statistics draft: #calls = 56, #gen drafts = 56, #acc drafts = 48, #gen tokens = 448, #acc tokens = 201, dur = 612.337 ms'
    assert said["statistics"] == [{"method": "draft", "line_no": 12, "calls": 56, "gen_drafts": 56, "acc_drafts": 48,
                                   "gen_tokens": 448, "acc_tokens": 201, "dur_ms": 612.337}]


def test_a_broken_count_is_named(tmp_path: Path) -> None:
    path = tmp_path / "spec.txt"
    path.write_text("n_draft   = 5\nn_predict = 673\nn_drafted = 730\nn_accept  = 1e999\naccept    = 72.055%\n")
    with pytest.raises(MalformedInput, match="n_accept") as raised:
        speculative_summary.parse(path, ParseOptions())
    assert raised.value.line == 4


# --- completion timings --------------------------------------------------------------------------------------------


def test_a_bare_timings_object_gives_a_rate_and_no_length(tmp_path: Path) -> None:
    name = "completion-timings-pr12603.json"
    [request] = stored(tmp_path, name, "SELECT * FROM acceptance_requests")
    # '"predicted_n": 200', '"draft_n": 347', '"draft_n_accepted": 65'
    assert (request["draft_tokens"], request["accepted_drafts"], request["output_tokens"]) == (347, 65, 200)
    assert request["accept_rate"] == pytest.approx(65 / 347)
    assert (request["accept_length"], request["origin"]) == (None, "llama.cpp completion timings")
    [run] = stored(tmp_path / "r", name, "SELECT * FROM bench_runs")
    # '"predicted_ms": 11082.606', '"predicted_per_second": 18.0462970532382'
    assert (run["output_tokens"], run["duration_s"], run["tok_per_s"], run["prompt_tokens"]) == (200, 11.082606, 18.0462970532382, 1)
    [source] = stored(tmp_path / "s", name, "SELECT kind, engine, warnings FROM sources")
    assert (source["kind"], source["engine"]) == ("llamacpp_timings_json", "llama.cpp")
    assert "no verify-step count" in source["warnings"] and "accept length left empty" in source["warnings"]


def test_the_final_chunk_of_a_saved_stream(tmp_path: Path) -> None:
    name = "stream-final-chunk-b9251.txt"
    [request] = stored(tmp_path, name, "SELECT * FROM acceptance_requests")
    # '"usage":{"completion_tokens":665,"prompt_tokens":808,…}', '"draft_n":604,"draft_n_accepted":515'
    assert (request["request_id"], request["input_tokens"], request["output_tokens"]) == ("chatcmpl-nFCxRKKHfmmnVXEHbeKtPcEqHXBZvQCr", 808, 665)
    assert (request["draft_tokens"], request["accepted_drafts"], request["accept_length"]) == (604, 515, None)
    [run] = stored(tmp_path / "r", name, "SELECT * FROM bench_runs")
    assert (run["output_tokens"], run["duration_s"], run["prompt_tokens"]) == (665, 20.629211, 808)
    assert extra(run)["cache_n"] == 804
    [session] = stored(tmp_path / "s", name, "SELECT model, engine FROM sessions")
    assert session == {"model": "Qwen3.5-9B-Q4_K_M.gguf", "engine": "llama.cpp"}


def test_jsonl_responses_and_a_broken_line(tmp_path: Path) -> None:
    first = {"id": "a", "choices": [{"finish_reason": "length"}], "usage": {"prompt_tokens": 12, "completion_tokens": 64},
             "generation_settings": {"n_predict": 64},
             "timings": {"prompt_n": 12, "predicted_n": 64, "predicted_ms": 800.0, "predicted_per_second": 80.0}}
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps({**first, "id": "b"}) + "\n")
    parsed = completion_timings.parse(path, ParseOptions())
    runs = parsed.tables["bench_runs"].to_pylist()
    assert [(r["finish_reason"], r["max_tokens"], r["hit_max_tokens"]) for r in runs] == [("length", 64, True)] * 2
    assert "acceptance_requests" not in parsed.tables  # no draft_n: the server did not speculate
    path.write_text(json.dumps(first) + "\n" + '{"timings": {"predicted_n": 1,\n')
    with pytest.raises(MalformedInput) as raised:
        completion_timings.parse(path, ParseOptions())
    assert raised.value.line == 2


def test_more_accepted_than_drafted_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"predicted_n": 10, "predicted_ms": 100.0, "draft_n": 5, "draft_n_accepted": 6}')
    with pytest.raises(MalformedInput, match="draft_n_accepted 6 is more than draft_n 5"):
        completion_timings.parse(path, ParseOptions())


# --- SPEED-Bench tables --------------------------------------------------------------------------------------------


def test_compare_table_gives_a_baseline_and_a_speculative_point_per_category(tmp_path: Path) -> None:
    points = stored(tmp_path, "speed-bench-compare-constructed.txt",
                    "SELECT dataset, variant, is_baseline, throughput, batch_size, accept_length, extra FROM sweep_points ORDER BY point_index")
    # 'coding    62.41              118.62             1.90x           13.702s           7.214s            1.90x            0.7125'
    assert [(p["dataset"], p["variant"], p["is_baseline"], p["throughput"]) for p in points[:2]] == [
        ("coding", "baseline", True, 62.41), ("coding", "speculative", False, 118.62)]
    assert [p["dataset"] for p in points] == ["coding", "coding", "math", "math", "writing", "writing", "overall", "overall"]
    assert extra(points[1]) == {"engine": "llama.cpp", "decode_speedup": 1.9, "latency_speedup": 1.9,
                                "table": "speed_bench_compare.py", "avg_latency_s": 7.214, "accept_rate": 0.7125}
    assert extra(points[0])["avg_latency_s"] == 13.702 and "accept_rate" not in extra(points[0])
    assert {p["batch_size"] for p in points} == {None} and {p["accept_length"] for p in points} == {None}
    assert "aggregate" in extra(points[-1])


def test_summary_table_names_its_bench(tmp_path: Path) -> None:
    points = stored(tmp_path, "speed-bench-summary-constructed.txt",
                    "SELECT sweep, dataset, is_baseline, throughput, extra FROM sweep_points ORDER BY point_index")
    # 'speed_bench: loaded 24 samples from bench=qualitative …', 'math      8        1490.07         104.35        9.873s       0.6402'
    assert {p["sweep"] for p in points} == {"SPEED-Bench qualitative"}
    assert (points[1]["dataset"], points[1]["is_baseline"], points[1]["throughput"]) == ("math", False, 104.35)
    assert extra(points[1])["samples"] == 8 and extra(points[1])["avg_prompt_t/s"] == 1490.07


def test_a_summary_with_nothing_drafted_is_a_baseline(tmp_path: Path) -> None:
    path = tmp_path / "base.txt"
    path.write_text("category  samples  avg_prompt_t/s  avg_pred_t/s  avg_latency  accept_rate\n"
                    "--------  -------  --------------  ------------  -----------  -----------\n"
                    "coding    8        1531.90         62.41         13.702s      n/a        \n")
    [point] = speed_bench.parse(path, ParseOptions()).tables["sweep_points"].to_pylist()
    assert (point["variant"], point["is_baseline"], point["throughput"]) == ("baseline", True, 62.41)
    path.write_text(path.read_text().replace("13.702s", "fast"))
    with pytest.raises(MalformedInput, match="avg_latency 'fast' is not a number"):
        speed_bench.parse(path, ParseOptions())


def test_the_acceptance_page_shows_rate_only_requests_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A completion's timings give draft_n / draft_n_accepted and no verify steps: a rate, shown as one on the
    Acceptance page's per-request tab, never as an accept length."""
    from tests.test_app import every_tab, run_page

    db = tmp_path / "store.duckdb"
    assert not [r for r in ingest_paths([FIXTURES / "llamacpp" / "completion-timings-pr12603.json"], db, variant="qwen-draft")
                if r.failed]
    shown = []
    for tab, view in every_tab(run_page("views/acceptance.py", db, monkeypatch)):
        shown += [t.value for t in view.dataframe if "rate requests" in t.value.columns] if "Per request" in tab else []
    [rates] = shown
    assert rates["variant"].tolist() == ["qwen-draft"] and rates["rate requests"].tolist() == [1]
    assert rates["request acceptance rate"].iloc[0] == pytest.approx(100 * 65 / 347)  # draft_n_accepted / draft_n, in %


def test_a_server_logs_requests_take_their_lifetimes_variant(tmp_path: Path) -> None:
    """Unlabelled, a request's acceptance is the variant its lifetime's speculative type names (as its runs are),
    not the folder's group; --variant still wins."""
    log = FIXTURES / "llamacpp" / "server-2026-06-eagle3-per-position.log"
    db, labelled = tmp_path / "store.duckdb", tmp_path / "labelled.duckdb"
    assert not [r for r in ingest_paths([log], db) if r.failed]
    assert not [r for r in ingest_paths([log], labelled, variant="k25-eagle3") if r.failed]
    for store, variant in ((db, "draft-eagle3"), (labelled, "k25-eagle3")):
        with duckdb.connect(str(store), read_only=True) as con:
            assert con.execute("SELECT DISTINCT variant FROM acceptance_request_rows").fetchall() == [(variant,)]
