"""Results tables people post (ingest/parsers/tables): every layout, cell form and header spelling on our fixtures
(tests/fixtures/tables, each with its .source: real tables from Spec-Bench, vLLM, evalscope and imp, and constructed
ones marked so), with golden values read by hand from the files."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from ingest import registry
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.parsers.tables import results_table
from ingest.parsers.tables.cells import read_cell
from ingest.parsers.tables.vocabulary import read_header
from ingest.pipeline import ingest_paths
from ingest.reader import read_head
from tests.conftest import FIXTURES

HERE = FIXTURES / "tables"
KIND = "results_table_text"
FILES = sorted(p.name for p in HERE.iterdir() if not p.name.endswith(".source"))


def kinds(path: Path) -> list[str]:
    head = read_head(path)
    return [f.kind for f in registry.registered_formats() if f.sniff(head)]


def parse(path: Path) -> ParsedSource:
    return results_table.parse(path, ParseOptions())


def points(path: Path) -> list[dict[str, Any]]:
    rows = parse(path).tables["sweep_points"].to_pylist()
    for row in rows:
        row["extra"] = json.loads(row["extra"])
    return rows


def write(tmp_path: Path, text: str, name: str = "notes.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", FILES)
def test_each_fixture_is_claimed_by_this_format_alone_and_names_its_origin(name: str) -> None:
    assert kinds(HERE / name) == [KIND]
    source = (HERE / f"{name}.source").read_text(encoding="utf-8")
    assert source.strip()
    assert ("Constructed" in source) == name.startswith("constructed-")


def test_spec_bench_leaderboard_is_one_point_per_method_and_task() -> None:
    rows = points(HERE / "spec-bench-leaderboard.md")
    assert len(rows) == (10 + 10 + 11 + 10) * 7  # four tables; six tasks and Overall per method
    assert [r["sweep"] for r in rows[::70]][:2] == ["Leaderboard on 3090", "Leaderboard on A100 · Vicuna-7B-v1.3"]
    assert {r["sweep"]: r["model"] for r in rows} == {
        "Leaderboard on 3090": "Vicuna-7B-v1.3",  # from "- Experimental Settings: Vicuna-7B-v1.3, ..."
        "Leaderboard on A100 · Vicuna-7B-v1.3": "Vicuna-7B-v1.3",
        "Leaderboard on A100 · Vicuna-13B-v1.3": "Vicuna-13B-v1.3",
        "Leaderboard on A100 · Vicuna-33B-v1.3": "Vicuna-33B-v1.3",
    }
    assert {r["batch_size"] for r in rows} == {1}  # "batch size = 1" in the settings bullets
    assert {r["is_baseline"] for r in rows} == {False} and {r["throughput"] for r in rows} == {None}
    eagle3 = [r for r in rows if r["variant"] == "EAGLE3"]  # line 53: the 13B table's winner, all in bold
    assert [(r["dataset"], r["extra"]["speedup"]) for r in eagle3] == [
        ("Multi-turn Conversation", 3.48), ("Translation", 2.36), ("Summa-rization", 3.14),
        ("Question Answering", 2.94), ("Mathematical Reasoning", 3.42), ("Retrieval-aug. Generation", 2.78),
        ("Overall", 3.02)]
    assert [r["accept_length"] for r in eagle3] == [None] * 6 + [5.71]  # mean accepted tokens: over all tasks
    assert {r["line_no"] for r in eagle3} == {53}
    overall = eagle3[-1]["extra"]
    assert overall["method"] == "EAGLE3" and overall["method_link"] == "https://sites.google.com/view/eagle-llm"
    assert overall["hardware"] == "a single NVIDIA A100 GPU (80GB) with 96 CPU cores"
    lookahead = next(r for r in rows if r["variant"] == "Lookahead" and r["dataset"] == "Translation")
    assert (lookahead["line_no"], lookahead["extra"]["speedup"]) == (26, 1.0)
    assert parse(HERE / "spec-bench-leaderboard.md").warnings == []


def test_a_run_per_row_maps_headers_by_meaning_and_names_the_columns_it_skipped() -> None:
    path = HERE / "vllm-frspec-methods.md"
    parsed = parse(path)
    assert parsed.warnings == [
        f'{path}:13: columns skipped (no results-table meaning): "Branching", "Forward Ratio"; their cells are kept '
        "in each row's extra",
        f'{path}:13: columns naming a field an earlier column gives: "Num Spec Tokens"; the first column is read, '
        "these are kept in each row's extra",
    ]
    rows = points(path)
    assert [(r["variant"], r["steps"], r["accept_length"], r["throughput"]) for r in rows] == [
        ("Eagle", 3, 2.31, 119.31), ("fr-spec", 3, 2.23, 121.46), ("Eagle", 1, 2.31, 120.16),
        ("fr-spec", 1, 2.23, 121.99), ("fr-spec", 1, 1.68, 104.59), ("Eagle", 1, 1.71, 100.01),
        ("baseline", None, 1.0, 61.74)]
    assert rows[-1]["is_baseline"] and rows[-1]["extra"]["method"] == "Vanilla"
    assert {r["sweep"] for r in rows} == {"Speculative Decoding Benchmark Results"}  # the heading above it
    assert rows[0]["model"] == "llama-3.1-8b-instruct" and rows[0]["batch_size"] is None  # no batch size written
    assert {k: rows[2]["extra"][k] for k in ("branching", "num_spec_tokens", "forward_ratio", "time_s")} == {
        "branching": 3.0, "num_spec_tokens": 3.0, "forward_ratio": 0.138, "time_s": 180.02}


def test_a_table_without_outer_pipes_keeps_its_text_columns_in_extra() -> None:
    rows = points(HERE / "vllm-frspec-batch.md")
    assert len(rows) == 1
    row = rows[0]
    assert (row["variant"], row["batch_size"], row["steps"], row["accept_length"], row["throughput"]) == (
        "fr-spec", 1, 1, 1.63, 108.45)
    assert row["extra"]["time_s"] == 207.10
    assert row["extra"]["command"].startswith("VLLM_USE_V1=1 python3 examples/offline_inference/spec_decode.py")


def test_percentages_bold_rows_and_dashes() -> None:
    rows = points(HERE / "imp-workloads-acceptance.md")
    assert [(r["dataset"], r["throughput"], r["extra"].get("acceptance_rate"), r["accept_length"]) for r in rows] == [
        ("ordinary prose, no speculation", 89.1, None, None),
        ("ordinary prose, n-gram default", 89.4, 0.112, None),  # "11.2 %"
        ("ordinary prose, MTP k=2", 87.9, 0.58, 2.3),  # "emitted per verify" is the accept length
        ("repeat a text verbatim", 876.5, 0.983, 36.6),  # the bold row
    ]
    assert [r["is_baseline"] for r in rows] == [True, False, False, False]  # "no speculation" in its label


def test_an_mtp_depth_sweep_names_its_baseline_and_method_in_the_depth_column() -> None:
    path = HERE / "llamacpp-mtp-n-max-sweep.md"
    parsed = parse(path)
    assert parsed.warnings == [f'{path}:3: columns skipped (no results-table meaning): "wall_s_total"; their cells are '
                               "kept in each row's extra"]
    rows = points(path)
    # | spec-draft-n-max | average tk\s | wall_s_total | aggregate_accept_rate |, rows as the comment printed them
    assert [(r["steps"], r["throughput"], r["extra"].get("acceptance_rate"), r["extra"]["wall_s_total"])
            for r in rows] == [
        (None, 22.92, None, 77.69),  # | n/a - no mtp | 22.92 | 77.69 | n/a |
        (1, 27.58, 0.8835, 68.34), (2, 29.39, 0.815, 66.00), (3, 27.78, 0.7127, 67.96), (4, 26.09, 0.6421, 72.23)]
    assert [r["is_baseline"] for r in rows] == [True, False, False, False, False]
    assert rows[0]["variant"] == "baseline" and rows[0]["extra"]["steps_as_written"] == "n/a - no mtp"
    # no method column: "no mtp" in the baseline's depth cell says the depths are MTP's
    assert {(r["extra"]["method"], r["extra"]["method_from"]) for r in rows[1:]} == {
        ("mtp", "the baseline row's config cell")}
    assert "method" not in rows[0]["extra"]
    assert {r["variant"] for r in rows[1:]} == {"llamacpp-mtp-n-max-sweep · table 1"}  # no heading above it
    assert {(r["topk"], r["num_draft_tokens"], r["accept_length"], r["batch_size"]) for r in rows} == {
        (None, None, None, None)}  # the table gives none of them


def test_a_method_named_in_two_baseline_cells_differently_is_left_unnamed(tmp_path: Path) -> None:
    path = write(tmp_path, "| depth | tok/s |\n|---|---|\n| no mtp | 10 |\n| no eagle | 11 |\n| 2 | 12 |\n")
    rows = points(path)
    assert [r["is_baseline"] for r in rows] == [True, True, False] and "method" not in rows[2]["extra"]


def test_a_metric_value_grid_table_is_one_result() -> None:
    path = HERE / "evalscope-perf-summary.txt"
    parsed = parse(path)
    assert parsed.warnings == [
        f'{path}:3: columns skipped (no results-table meaning): "Time taken for tests (s)", "Request rate (req/s)", '
        '"Total requests", "Succeed requests", "Failed requests", "Total token throughput (tok/s)"; their cells are '
        "kept in each row's extra"]
    [row] = points(path)
    assert (row["throughput"], row["concurrency"], row["sweep"]) == (893.269, 20, "Benchmarking summary")
    assert {k: row["extra"][k] for k in ("time_taken_for_tests", "total_token_throughput", "request_rate")} == {
        "time_taken_for_tests": 71.6469, "total_token_throughput": 8039.42, "request_rate": -1.0}


def test_a_transposed_table_is_one_result_per_column() -> None:
    rows = points(HERE / "constructed-transposed.md")
    assert [r["variant"] for r in rows] == ["baseline", "EAGLE-3 (3 steps)", "EAGLE-3 (5 steps)"]
    assert [r["throughput"] for r in rows] == [1234.5, 2101.0, 1987.2]  # "1,234.5 ± 3.1", "**2,101.0 ± 12.4**"
    assert [r["extra"]["throughput_sd"] for r in rows] == [3.1, 12.4, 9.8]
    assert [r["accept_length"] for r in rows] == [None, 2.91, 3.42]  # "—", "2.91", "*3.42*"
    assert [r["extra"].get("acceptance_rate") for r in rows] == [None, 0.637, 0.484]  # "63.7 %", "48.4%"
    assert [(r["steps"], r["topk"], r["num_draft_tokens"]) for r in rows] == [(None, None, None), (3, 1, 4), (5, 4, 8)]
    assert {k: rows[0]["extra"][k] for k in ("steps_as_written", "topk_as_written", "num_draft_tokens_as_written")} == {
        "steps_as_written": 0, "topk_as_written": 0, "num_draft_tokens_as_written": 0}
    assert [r["extra"]["gpu_memory"] for r in rows] == [61.2, 63.0, 63.4]
    assert {(r["model"], r["batch_size"], r["extra"]["hardware"]) for r in rows} == {
        ("Llama-3.1-8B-Instruct", 1, "1x H100")}  # all three from the heading


def test_several_tables_are_each_read_and_labelled_by_their_heading() -> None:
    path = HERE / "constructed-metrics-and-pairs.md"
    parsed = parse(path)
    assert parsed.warnings == [f'{path}:19: columns skipped (no results-table meaning): "accepted / drafted"; their '
                               "cells are kept in each row's extra"]
    rows = points(path)
    assert [r["sweep"] for r in rows] == ["Summary"] + ["Per concurrency"] * 3 + ["TPOT only"] * 2
    assert {r["extra"]["hardware"] for r in rows} == {"1x A100 80GB, SGLang 0.5.2, temperature 0."}
    summary = rows[0]
    assert (summary["variant"], summary["dataset"], summary["throughput"], summary["accept_length"],
            summary["concurrency"]) == ("EAGLE-3", "gsm8k", 1482.6, 3.21, 8)
    assert (summary["extra"]["acceptance_rate"], summary["extra"]["speedup"], summary["extra"]["layout"]) == (
        0.55, 2.3, "metrics")


def test_mean_sd_pairs_and_tpot() -> None:
    rows = points(HERE / "constructed-metrics-and-pairs.md")
    vanilla, one, eight = rows[1:4]
    assert (vanilla["is_baseline"], vanilla["throughput"], vanilla["extra"]["throughput_sd"]) == (True, 84.0, 0.4)
    assert (one["throughput"], one["extra"]["throughput_sd"], one["extra"]["speedup"]) == (195.1, 2.2, 2.32)
    assert (eight["throughput"], eight["extra"]["speedup"], eight["concurrency"]) == (1060.0, 1.71, 8)
    assert one["extra"]["accepted/drafted"] == "1,655/2,540"  # "x / y" under a header with no meaning: as written
    assert (one["accept_length"], one["extra"]["accept_length_sd"]) == (3.4, 0.1)
    # a throughput column is given: TPOT is kept as it is, never converted next to it
    assert (one["extra"]["tpot_ms"], one["throughput_kind"]) == (5.1, "measured wall-clock")
    tpot_only = rows[4:]
    assert [r["throughput"] for r in tpot_only] == [80.0, 200.0]  # 1000 / 12.5 ms, 1000 / 5.0 ms
    assert {r["throughput_kind"] for r in tpot_only} == {results_table.FROM_TPOT}
    assert tpot_only[1]["extra"]["throughput_from"] == '1000 / "TPOT (ms)" (ms per output token)'


def test_a_header_naming_two_fields_reads_both_numbers_of_its_cells(tmp_path: Path) -> None:
    path = write(tmp_path, "| Method | bs | TPS / AL | note |\n|---|---|---|---|\n| EAGLE-3 | 1 | 182.4 / 3.1 | ok |\n"
                           "| EAGLE-3 | 4 | 410.0 | no AL |\n")
    rows = points(path)
    assert [(r["batch_size"], r["throughput"], r["accept_length"]) for r in rows] == [(1, 182.4, 3.1)]
    assert parse(path).warnings == [  # one number under two fields: which one it is, the header does not say
        f'{path}:1: columns skipped (no results-table meaning): "note"; their cells are kept in each row\'s extra',
        f"{path}:4: no throughput, TPOT, accept length, acceptance rate or speedup that its column's header names; "
        "row skipped"]


def test_a_fixed_width_table_under_a_dash_rule() -> None:
    rows = points(HERE / "constructed-fixed-width.txt")
    assert [(r["dataset"], r["variant"], r["throughput"], r["accept_length"], r["extra"]["speedup"]) for r in rows] == [
        ("coding", "EAGLE-3", 171.40, 3.12, 2.09), ("coding", "baseline", 82.10, None, 1.0),
        ("math", "EAGLE-3", 158.25, 2.87, 1.93), ("math", "baseline", 82.00, None, 1.0)]
    assert [r["extra"].get("acceptance_rate") for r in rows] == [0.71, None, 0.64, None]
    assert {(r["model"], r["batch_size"], r["extra"]["hardware"]) for r in rows} == {("Llama-3.1-8B-Instruct", 1, "H100")}


@pytest.mark.parametrize(("raw", "value", "unit", "spread", "second", "ratio"), [
    ("**2.85x**", 2.85, "x", None, None, None),
    ("*3.42*", 3.42, None, None, None, None),
    ("1,234.5", 1234.5, None, None, None, None),
    ("82.1 tok/s", 82.1, "tok/s", None, None, None),
    ("57 %", 57.0, "%", None, None, None),
    ("1.8×", 1.8, "×", None, None, None),
    ("3.1 ± 0.2", 3.1, None, 0.2, None, None),
    ("3.1 +/- 0.2 ms", 3.1, "ms", 0.2, None, None),
    ("538/660", 538.0, None, None, 660.0, None),
    ("41.2/0.8 (1.23×)", 41.2, None, None, 0.8, 1.23),
    ("11.976s", 11.976, "s", None, None, None),
    ("—", None, None, None, None, None),
    ("N/A", None, None, None, None, None),
    ("12,5", None, None, None, None, None),  # a decimal comma is not read as 12 (or 125)
    ("ordinary prose, MTP k=2", None, None, None, None, None),
])
def test_cells(raw: str, value: float | None, unit: str | None, spread: float | None, second: float | None,
               ratio: float | None) -> None:
    cell = read_cell(raw)
    assert (cell.value, cell.unit, cell.spread, cell.second, cell.ratio) == (value, unit, spread, second, ratio)


@pytest.mark.parametrize(("header", "field", "unit"), [
    ("Throughput (tok/s)", "throughput", "tok/s"),
    ("Output throughput", "throughput", None),
    ("tok/s", "throughput", None),
    ("t/s", "throughput", None),
    ("Tokens per second", "throughput", None),
    ("Decoding Throughput (tokens/s)", "throughput", "tokens/s"),
    ("Total token throughput (tok/s)", None, "tok/s"),  # prompt tokens included: not the decode rate
    ("Request throughput (req/s)", None, "req/s"),
    ("TPOT (ms)", "tpot", "ms"),
    ("ms per token", "tpot", None),
    ("Accept length", "accept_length", None),
    ("τ", "accept_length", None),
    ("AL", "accept_length", None),
    ("#Mean Accepted Tokens", "accept_length", None),
    ("Mean Acceptance Length", "accept_length", None),
    ("acc_len", "accept_length", None),
    ("Acceptance rate (%)", "acceptance_rate", "%"),
    ("accept_rate", "acceptance_rate", None),
    ("Speedup (×)", "speedup", "×"),
    ("decode_speedup", "speedup", None),
    ("Batch size", "batch_size", None),
    ("bs", "batch_size", None),
    ("Concurrency", "concurrency", None),
    ("num_steps", "steps", None),
    ("Depth", "steps", None),
    ("num_speculative_tokens", "steps", None),
    ("n-max", "steps", None),
    ("Top-k", "topk", None),
    ("num_draft_tokens", "num_draft_tokens", None),
    ("Draft tokens", "num_draft_tokens", None),
    ("Category", "task", None),
    ("Dataset", "task", None),
    ("Model", "model", None),
    ("Algorithm", "method", None),
    ("GPU", "hardware", None),
    ("Models", None, None),  # Spec-Bench's column of methods: a leaderboard's label column, not "model"
    ("Forward Ratio", None, None),
    ("Throughput mean/sd (tok/s)", "throughput", "tok/s"),
    ("spec-draft-n-max", "steps", None),  # llama.cpp's --spec-draft-n-max: the draft depth
    ("average tk\\s", "throughput", None),
    ("aggregate_accept_rate", "acceptance_rate", None),
    ("wall_s_total", None, None),
])
def test_headers(header: str, field: str | None, unit: str | None) -> None:
    read = read_header(header)
    assert (read.field, read.unit) == (field, unit)


def test_mean_sd_headers_say_the_second_number_is_the_spread() -> None:
    assert read_header("Throughput mean/sd (tok/s)").mean_sd and not read_header("accepted / drafted").mean_sd


NOT_RESULTS = {
    # vllm-project/vllm#51494: a setup table, no result in it
    "setup.md": "| Component | Value |\n| --- | --- |\n| Hardware | 8x NVIDIA B200 SXM |\n| vLLM | 0.26.1rc1.dev457 |\n",
    # vllm-project/vllm#54448: methods as columns of numbers no header names: never guessed to be throughputs
    "methods-as-columns.md": "| dataset | batch | dflash | dspark | xpress | xp/dfl |\n|---|---|---|---|---|---|\n"
                             "| gsm8k | 1 | 929 | 1292 | 1361 | 1.465 |\n| gsm8k | 4 | 2522 | 3382 | 3659 | 1.451 |\n",
    # docs/metrics.md's glossary: one of its three rows is named like a measure, and a worked example is numeric
    "glossary.md": "| column | definition | dead drafter | perfect drafter (k drafts) |\n|---|---|---|---|\n"
                   "| `tokens_per_step` (τ) | tokens emitted per step | 1.0 | k + 1 |\n"
                   "| `accepted_drafts_per_step` | τ − 1 | 0.0 | k |\n| `accept_rate_drafts` | accepted ÷ proposed | 0.0 | 1.0 |\n",
    # a README with a table of links and a log line with pipes (no separator row under it)
    "README.md": "# Drafters\n\n| name | link |\n|---|---|\n| EAGLE-3 | https://example.org |\n",
    "server.log": "slot print_timing: id  1 | task 0 | eval time = 2296.72 ms | 111.46 tokens per second\n"
                  "slot print_timing: id  1 | task 0 | eval time = 2296.72 ms | 111.46 tokens per second\n",
}


@pytest.mark.parametrize("name", sorted(NOT_RESULTS))
def test_a_table_without_results_is_not_claimed(tmp_path: Path, name: str) -> None:
    assert KIND not in kinds(write(tmp_path, NOT_RESULTS[name], name))


def test_tables_other_formats_read_stay_theirs(tmp_path: Path) -> None:
    run_table = write(tmp_path, "| Run | Tokens | Time (s) | Throughput (tok/s) |\n|---|---|---|---|\n| 1 | 2048 | 40.1 | 51.1 |\n")
    assert kinds(run_table) == ["bench_table_text"]
    sweep = write(tmp_path, "| bs | steps | topk | num_draft | throughput | acc len |\n|---|---|---|---|---|---|\n"
                            "| 1 | 3 | 1 | 4 | 159.78 | 1.86 |\n", "sweep.md")
    assert kinds(sweep) == ["sweep_table_text"]


def test_a_run_table_with_tokens_and_time_becomes_bench_runs(tmp_path: Path) -> None:
    path = write(tmp_path, "## k2 drafter\n\n| trial | generated tokens | elapsed time (ms) | accept rate |\n|---|---|---|---|\n"
                           "| 1 | 512 | 4,096 | 0.61 |\n| 2 | 512 | 4,000 | 0.63 |\n")
    assert kinds(path) == [KIND]
    parsed = parse(path)
    runs = parsed.tables["bench_runs"].to_pylist()
    assert [(r["run_index"], r["output_tokens"], r["duration_s"], r["tok_per_s"]) for r in runs] == [
        (1, 512, 4.096, 125.0), (2, 512, 4.0, 128.0)]  # tokens / seconds: no throughput column
    assert [json.loads(r["extra"])["acceptance_rate"] for r in runs] == [0.61, 0.63]
    assert parsed.tables["sessions"].to_pylist()[0]["variant"] == "k2 drafter"
    assert "sweep_points" not in parsed.tables


def test_a_value_that_does_not_fit_its_column_is_reported_and_kept(tmp_path: Path) -> None:
    path = write(tmp_path, "| method | throughput | acceptance rate |\n|---|---|---|\n| a | 80.0 | 3.5 |\n| b | 90 | 0.5 |\n"
                           "| c | 91 |\n")
    parsed = parse(path)
    assert parsed.warnings == [
        f"{path}:5: 2 cells, the header (line 1) has 3; row skipped",
        f'{path}:3: column "acceptance rate": an acceptance rate must be in [0, 1] or a percentage, got \'3.5\'; '
        "kept in extra",
    ]
    rows = points(path)
    assert [(r["variant"], r["extra"].get("acceptance_rate")) for r in rows] == [("a", "3.5"), ("b", 0.5)]


def test_a_file_with_no_result_fails_with_what_to_do(tmp_path: Path) -> None:
    path = write(tmp_path, "| method | throughput |\n|---|---|\n| a | fast |\n")
    with pytest.raises(MalformedInput) as error:
        parse(path)
    assert error.value.hint and "throughput" in error.value.hint


def test_every_fixture_ingests_into_the_store_and_shows_as_sweep_series(tmp_path: Path) -> None:
    db = tmp_path / "tables.duckdb"
    reports = ingest_paths([HERE / name for name in FILES], db)
    assert [r.summary() for r in reports if r.failed] == []
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM sweep_points").fetchone()
        shown = con.execute("SELECT count(*) FROM sweep_series WHERE origin = ?", [KIND]).fetchone()
    assert stored is not None and stored[0] == 287 + 7 + 1 + 4 + 1 + 3 + 6 + 4 + 5  # + 5: the MTP depth sweep
    assert shown is not None and shown[0] == stored[0]
