"""SGLang's benchmark-script summaries (bench_sglang_eagle.py, gsm8k bench_sglang.py, SpecForge's run_*.py)
and their result.jsonl lines; and every sniffer over every sample file, so no format claims another's."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from bench_golden import BENCH_FIXTURES, check_golden, golden_inputs
from conftest import CORPUS, FIXTURES

from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import eagle_bench
from ingest.pipeline import ingest_file
from ingest.reader import read_head
from ingest.registry import detect, registered_formats

GOLDEN = golden_inputs(eagle_bench.KIND)
PR_4247 = BENCH_FIXTURES / "sglang-eagle-mtbench-pr4247-three-runs.txt"
WITH_RESULTS = BENCH_FIXTURES / "sglang-eagle-gsm8k-mtbench-with-result-jsonl.txt"
SPECFORGE = BENCH_FIXTURES / "specforge-run-benchmarks-accept-length.txt"
MMSTAR = BENCH_FIXTURES / "specforge-mmstar-evaluation-results-issue310.txt"  # SpecForge issue #310, quoted reply
# As benchmark/gsm8k/bench_sglang.py prints it (f"Latency: {latency:.3f} s" ...).
GSM8K = "Accuracy: 0.955\nInvalid: 0.000\nLatency: 12.379 s\nOutput throughput: 1922.860 token/s\n"


def rows_of(path: Path) -> list[dict]:
    return eagle_bench.parse(path, ParseOptions()).tables["bench_serving"].to_pylist()


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "paste.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_there_are_golden_fixtures_for_every_shape() -> None:
    assert {p.name for p in GOLDEN} == {PR_4247.name, WITH_RESULTS.name, SPECFORGE.name}


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_fixture_matches_its_golden_expectation(path: Path) -> None:
    check_golden(path, eagle_bench.parse)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_fixture_is_detected_as_a_benchmark_script_summary(path: Path) -> None:
    assert detect(path).kind == eagle_bench.KIND


def test_registered_once_after_the_other_text_formats() -> None:
    kinds = [f.kind for f in registered_formats()]
    assert kinds.count(eagle_bench.KIND) == 1
    assert kinds.index(eagle_bench.KIND) > kinds.index("sglang_send_one_text")


# --- the printed shapes ---------------------------------------------------------------------------

def test_mtbench_one_line_summaries_each_a_record_with_their_heading() -> None:
    """A real paste (sglang PR #4247): the shape alone does not name the dataset, so it is null."""
    rows = rows_of(PR_4247)
    assert [(row["output_throughput"], row["accept_length"]) for row in rows] == [(378.57, 5.39), (361.7, 4.68), (230.08, 3.76)]
    assert [json.loads(row["extra"])["heading"] for row in rows] == [
        "EAGLE-3 (num_steps=8)", "EAGLE-3 (num_steps=5)", "EAGLE-2 (num_steps=8)",
    ]
    assert {row["tool"] for row in rows} == {"sglang_eagle_bench"}
    assert {row["dataset_name"] for row in rows} == {None} and {row["duration_s"] for row in rows} == {None}
    assert json.loads(rows[0]["extra"])["num_questions"] == 80


def test_gsm8k_summary_columns_and_extra(tmp_path: Path) -> None:
    parsed = eagle_bench.parse(written(tmp_path, GSM8K), ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert parsed.engine == "sglang" and row["line_no"] == 1
    assert (row["duration_s"], row["output_throughput"], row["accept_length"]) == (12.379, 1922.86, None)
    assert json.loads(row["extra"]) == {"accuracy": 0.955, "invalid": 0.0}  # accuracy is kept, as printed
    assert parsed.warnings == [] and parsed.skipped == {}


def test_the_command_names_the_dataset_and_applies_until_the_next_one(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        "$ python3 benchmark/gsm8k/bench_sglang.py --num-questions 200\n" + GSM8K + "\n# This branch\n" + GSM8K
        + "$ python3 bench_sglang_eagle.py --num-questions 80\n"  # run from inside its folder: no dataset in the path
        + "#questions: 80, Throughput: 764.54 token/s, Acceptance length: 4.07\n",
    )
    rows = rows_of(path)
    assert [row["dataset_name"] for row in rows] == ["gsm8k", "gsm8k", None]
    assert [json.loads(row["extra"]).get("heading") for row in rows] == [None, "This branch", "This branch"]
    assert [json.loads(row["extra"])["script"] for row in rows] == [
        "benchmark/gsm8k/bench_sglang.py", "benchmark/gsm8k/bench_sglang.py", "bench_sglang_eagle.py",
    ]


def test_specforge_run_scripts_name_their_dataset() -> None:
    mtbench, math500 = rows_of(SPECFORGE)
    assert (mtbench["dataset_name"], mtbench["output_throughput"], mtbench["accept_length"]) == ("mtbench", 511.023, 3.412)
    assert mtbench["duration_s"] is None  # run_mtbench.py prints no latency
    assert (math500["dataset_name"], math500["duration_s"], math500["accept_length"]) == ("math500", 471.364, 3.871)


def test_a_repeated_label_starts_the_next_summary(tmp_path: Path) -> None:
    rows = rows_of(written(tmp_path, GSM8K + GSM8K.replace("12.379", "11.918")))
    assert [(row["line_no"], row["duration_s"]) for row in rows] == [(1, 12.379), (5, 11.918)]


def test_unnamed_numbers_inside_a_summary_are_kept_and_outside_it_are_counted(tmp_path: Path) -> None:
    path = written(tmp_path, "batch size: 64\n" + GSM8K + "Total output tokens: 24301\n")
    parsed = eagle_bench.parse(path, ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert json.loads(row["extra"])["total_output_tokens"] == 24301  # no column for it: extra, never dropped
    assert "batch_size" not in json.loads(row["extra"]) and parsed.skipped == {eagle_bench.NOISE: 1}


def test_accept_length_without_speculation_is_kept_as_printed(tmp_path: Path) -> None:
    """The scripts print 1.00 when the server reports no verify count; that is what it said."""
    (row,) = rows_of(written(tmp_path, "#questions: 80, Throughput: 133.20 token/s, Acceptance length: 1.00\n"))
    assert row["accept_length"] == 1.0


def test_an_accuracy_line_alone_is_no_result(tmp_path: Path) -> None:
    path = written(tmp_path, "Accuracy: 0.955\nInvalid: 0.000\n\nsome note\n" + GSM8K)
    parsed = eagle_bench.parse(path, ParseOptions())
    assert parsed.tables["bench_serving"].num_rows == 1
    assert parsed.skipped[eagle_bench.NO_FIGURES] == 1
    assert parsed.warnings == [f"{path}:1: a summary without latency, throughput or accept length; skipped"]


def test_a_file_without_a_summary_is_a_clear_error(tmp_path: Path) -> None:
    path = written(tmp_path, "Accuracy: 0.955\n100%|██████████| 200/200\n")
    with pytest.raises(MalformedInput, match="no SGLang benchmark summary") as raised:
        eagle_bench.parse(path, ParseOptions())
    assert raised.value.path == str(path) and "Output throughput" in raised.value.hint


def test_an_unreadable_value_warns_and_stays_in_extra(tmp_path: Path) -> None:
    path = written(tmp_path, '{"task": "mtbench", "num_gpus": 1, "latency": "fast", "throughput": 764.5}\n')
    parsed = eagle_bench.parse(path, ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert row["duration_s"] is None and json.loads(row["extra"])["latency"] == "fast"
    assert len(parsed.warnings) == 1 and parsed.warnings[0].startswith(f'{path}:1: "latency": ')


# --- result.jsonl lines -----------------------------------------------------------------------------

def test_result_lines_after_their_summaries_are_merged_not_duplicated() -> None:
    gsm8k, mtbench = rows_of(WITH_RESULTS)
    # the gsm8k line is found past the mtbench summary: its latency and accuracy agree with gsm8k's
    assert (gsm8k["dataset_name"], gsm8k["backend"], gsm8k["line_no"]) == ("gsm8k", "srt", 3)
    assert json.loads(gsm8k["extra"])["result_line"] == 11
    # the mtbench line fills what the one-line summary lacks; the printed figures win
    assert (mtbench["dataset_name"], mtbench["duration_s"]) == ("mtbench", 334.626)
    assert (mtbench["output_throughput"], mtbench["accept_length"]) == (764.54, 4.07)  # printed, not 764.537 / 4.071
    extra = json.loads(mtbench["extra"])
    assert extra["other"] == {"num_questions": 80, "parallel": 1, "temperature": 0.0, "top_k": 1}
    assert (extra["num_gpus"], extra["num_requests"], extra["result_line"]) == (1, 80, 12)


def test_a_result_line_that_disagrees_with_the_summary_is_its_own_record(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        GSM8K + '{"task": "gsm8k", "backend": "srt", "num_gpus": 1, "latency": 30.5, "accuracy": 0.9, "num_requests": 200}\n',
    )
    printed, earlier = rows_of(path)
    assert (printed["duration_s"], earlier["duration_s"], earlier["line_no"]) == (12.379, 30.5, 5)
    assert "result_line" not in json.loads(printed["extra"])


def test_a_result_line_of_another_dataset_is_not_merged(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        "$ python3 benchmark/gsm8k/bench_sglang.py\n" + GSM8K
        + '{"task": "mmlu", "backend": "srt", "num_gpus": 1, "latency": 12.379, "accuracy": 0.955, "num_requests": 200}\n',
    )
    assert [row["dataset_name"] for row in rows_of(path)] == ["gsm8k", "mmlu"]


def test_json_that_is_not_a_result_line_is_counted_and_broken_json_warns(tmp_path: Path) -> None:
    path = written(tmp_path, GSM8K + '{"question_id": 81, "choices": {}}\n{"task": "gsm8k", "num_gpus": 1,\n')
    parsed = eagle_bench.parse(path, ParseOptions())
    assert parsed.tables["bench_serving"].num_rows == 1
    assert parsed.skipped == {eagle_bench.NOT_RESULT: 1, eagle_bench.UNREADABLE: 1}
    assert len(parsed.warnings) == 1 and parsed.warnings[0].startswith(f"{path}:6: a JSON line that does not parse")


def test_nothing_printed_is_dropped_on_the_way_to_the_store(tmp_path: Path) -> None:
    """The store keeps only columns it has: every value must be in a column or in extra, and survive."""
    db = tmp_path / "store.duckdb"
    report = ingest_file(WITH_RESULTS, db)
    assert report.status == "loaded" and report.kind == eagle_bench.KIND
    expected = rows_of(WITH_RESULTS)
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute("SELECT * FROM bench_serving ORDER BY record_index")
        names = [column[0] for column in cursor.description]
        stored = [dict(zip(names, values)) for values in cursor.fetchall()]
    assert len(stored) == len(expected)
    for want, got in zip(expected, stored):
        for column, value in want.items():
            if value is not None:
                assert column in got, f"column {column} was dropped by the store"
                assert (json.loads(got[column]) if column == "extra" else got[column]) == (
                    json.loads(value) if column == "extra" else value
                )


@pytest.mark.parametrize(
    "head",
    [
        b"============ Serving Benchmark Result ============\nAccept length:                           3.12\n"
        b"Output token throughput (tok/s):         1915.40\n",
        b"acc_length=2.20\nspeed=125.59 token/s\n",
        b"mean acceptance length: 3.64\nnum_drafts: 4687\n",
        b'{"backend": "sglang", "completed": 1, "duration": 2.0, "output_throughput": 3.0, "accept_length": 2.1}\n',
        b"[2025-11-11 04:06:27] Decode batch, #running-req: 1, #token: 90, accept len: 1.58, gen throughput (token/s): 178.86\n",
        b"| Run | Tokens | Time (s) | Throughput (tok/s) |\n|---|---|---|---|\n| 1 | 2048 | 40.50 | 50.6 |\n",
        b"Output throughput: 1922.860 token/s\n",  # a throughput line alone is not a summary
        b'{"task": "gsm8k", "latency": 12.3}\n',  # not a benchmark result line (no num_gpus)
    ],
    ids=["sglang-console", "send-one", "vllm-offline-summary", "bench-serving-jsonl", "sglang-log", "team-table",
         "throughput-alone", "task-json"],
)
def test_sniff_leaves_other_formats_alone(head: bytes) -> None:
    assert not eagle_bench.sniff(head)


# --- the real corpus ------------------------------------------------------------------------------

@pytest.mark.corpus
def test_corpus_9588_gsm8k_main_and_branch(corpus_dir: Path) -> None:
    path = corpus_dir / "new" / "eagle_bench_summary" / "sglang-pr-9588-gsm8k-eagle3-summary.txt"
    assert detect(path).kind == eagle_bench.KIND
    parsed = eagle_bench.parse(path, ParseOptions())
    main, branch = parsed.tables["bench_serving"].to_pylist()
    assert [json.loads(row["extra"])["heading"] for row in (main, branch)] == ["Main", "This branch"]
    assert (main["duration_s"], main["output_throughput"]) == (12.379, 1922.86)
    assert (branch["duration_s"], branch["output_throughput"]) == (11.918, 2039.966)
    # The bench command is printed once, under "# Main"; the branch run is the same command.
    assert (main["dataset_name"], branch["dataset_name"]) == ("gsm8k", "gsm8k")
    assert [json.loads(row["extra"])["accuracy"] for row in (main, branch)] == [0.955, 0.95]
    assert main["accept_length"] is None  # bench_sglang.py prints no acceptance length
    assert parsed.skipped == {eagle_bench.NOISE: 1} and parsed.warnings == []  # the launch_server command


@pytest.mark.corpus
def test_corpus_jetspec_result_jsonl(corpus_dir: Path) -> None:
    path = corpus_dir / "new" / "eagle_bench_summary" / "vincentzed-sglang-jetspec-mtbench-result-maskfix-job3.jsonl"
    assert detect(path).kind == eagle_bench.KIND
    linear, tree = rows_of(path)
    assert (linear["dataset_name"], linear["backend"], linear["duration_s"]) == ("mtbench", "srt", 334.626)
    assert (linear["output_throughput"], linear["accept_length"]) == (764.54, 4.07)
    assert (tree["output_throughput"], tree["accept_length"]) == (243.0, 5.053)
    assert json.loads(tree["extra"]) == {"num_gpus": 1, "num_requests": 80, "other": {"num_questions": 80, "parallel": 1}}


# --- SpecForge's "Average …" summaries (run_<dataset>.py, print_results) -------------------------------

def test_specforge_mmstar_evaluation_results_give_task_accept_length_throughput_and_accuracy() -> None:
    """The real MMStar (multimodal) block of SpecForge issue #310, quoted in a reply ("> " kept as posted)."""
    assert detect(MMSTAR).kind == eagle_bench.KIND
    parsed = eagle_bench.parse(MMSTAR, ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert row["line_no"] == 11  # "> Number of questions: 100" opens the summary
    assert row["dataset_name"] == "mmstar"  # "MMSTAR Evaluation Results", as the results JSON spells the task
    assert row["duration_s"] == 44.846  # "Average Latency: 44.846 s"
    assert row["output_throughput"] == 147.304  # "Average Output throughput: 147.304 token/s"
    assert row["accept_length"] == 2.195  # "Average Accept length: 2.195": completion tokens / verify steps
    assert json.loads(row["extra"]) == {
        "accuracy": 0.34,  # "Average Accuracy: 0.3400 (34.00%)": the fraction; the percentage restates it
        "num_questions": 100,
        "evaluation_heading": "MMSTAR Evaluation Results",
        "averaged_over_runs": True,
    }
    assert parsed.warnings == []
    # the chat around it, the tqdm bar, "Warning: 15 predictions …", and the three rulers
    assert parsed.skipped == {eagle_bench.NOISE: 10}


# As SpecForge@c13bf439 benchmarks/utils.py print_results() prints a benchmark without a scorer (f"Average Accuracy:
# None"), and as run_gsm8k.py@77c4f21f printed before it had an accuracy or a heading (constructed from that code).
NO_SCORER = ("==================================================\nMTBENCH Evaluation Results\n"
             "==================================================\nNumber of questions: 80\nAverage Accuracy: None\n"
             "Average Latency: 120.500 s\nAverage Output throughput: 310.250 token/s\nAverage Accept length: 3.120\n"
             "==================================================\n")
BEFORE_ACCURACY = ("$ python benchmarks/run_gsm8k.py --num-questions 200 --num-runs 3\nAverage Latency: 60.125 s\n"
                   "Average Output throughput: 402.500 token/s\nAverage Accept length: 3.450\n")


def test_an_accuracy_printed_as_none_is_kept_as_null(tmp_path: Path) -> None:
    (row,) = rows_of(written(tmp_path, NO_SCORER))
    assert (row["dataset_name"], row["duration_s"], row["output_throughput"], row["accept_length"]) == (
        "mtbench", 120.5, 310.25, 3.12)
    extra = json.loads(row["extra"])
    assert "accuracy" in extra and extra["accuracy"] is None  # printed, but no figure: null, not dropped


def test_the_older_average_lines_take_their_dataset_from_the_command(tmp_path: Path) -> None:
    (row,) = rows_of(written(tmp_path, BEFORE_ACCURACY))
    assert (row["dataset_name"], row["duration_s"], row["output_throughput"], row["accept_length"]) == (
        "gsm8k", 60.125, 402.5, 3.45)
    assert json.loads(row["extra"]) == {"averaged_over_runs": True, "script": "benchmarks/run_gsm8k.py"}


def test_an_evaluation_heading_names_only_the_summary_after_it(tmp_path: Path) -> None:
    rows = rows_of(written(tmp_path, NO_SCORER + "\n" + GSM8K))
    assert [row["dataset_name"] for row in rows] == ["mtbench", None]  # the gsm8k lines below print no heading


def test_a_none_where_a_figure_belongs_is_not_read_as_one(tmp_path: Path) -> None:
    parsed = eagle_bench.parse(written(tmp_path, "Latency: None\n" + GSM8K), ParseOptions())
    (row,) = parsed.tables["bench_serving"].to_pylist()
    assert row["line_no"] == 2 and row["duration_s"] == 12.379 and parsed.skipped == {eagle_bench.NOISE: 1}


# --- every sniffer over every sample ---------------------------------------------------------------

# The format meant to read a sample that has no golden file saying so.
INTENDED: dict[str, str] = {
    "sglang-pr-9588-gsm8k-eagle3-summary.txt": eagle_bench.KIND,
    MMSTAR.name: eagle_bench.KIND,
    "vincentzed-sglang-jetspec-mtbench-result-maskfix-job3.jsonl": eagle_bench.KIND,
    "sglang-pr-9428-bench-serving-baseline.txt": "bench_serving_console",
    "vllm-pr-21477-bench-serve-eagle-jul2025.txt": "bench_serving_console",
    "sglang-issue-9585-bench-serving-jsonl.txt": "bench_serving_jsonl",
    "vllm-pr-26498-offline-spec-decode-summary.txt": "vllm_spec_decode_text",
    "sglang-pr-4951-send-one-acc-length.txt": "sglang_send_one_text",
}
# Overlaps known and resolved by detection order: none since bench_table stopped taking "key:  value"
# console lines for a header (tests/test_format_registry.py fails on any new one).
KNOWN_OVERLAPS: dict[str, set[str]] = {}
MINE = {eagle_bench.KIND}


def sample_files() -> list[Path]:
    roots = [FIXTURES, CORPUS] if CORPUS.is_dir() else [FIXTURES]
    skip = (".expected.json", ".source", ".py")
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file() and not p.name.endswith(skip)
                  and p.name != "README.md")


def intended_kind(path: Path) -> str | None:
    for golden in (path.with_name(path.name + ".expected.json"), path.with_suffix(".expected.json")):
        if golden.is_file():
            return json.loads(golden.read_text(encoding="utf-8")).get("kind")
    return INTENDED.get(path.name)


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_each_sample_is_claimed_by_its_format_only(path: Path) -> None:
    claimed = {f.kind for f in registered_formats() if f.sniff(read_head(path))}
    intended = intended_kind(path)
    if intended is None:  # a sample nobody here declared: no format may share it, and not ours
        assert len(claimed) <= 1 and not claimed & MINE, claimed
    else:
        assert claimed == {intended} | KNOWN_OVERLAPS.get(path.name, set())
