"""``specdash bench`` against a real HTTP server that streams as SGLang and vLLM do (tests/openai_server.py).

Each test runs the command as the program does (argparse, ``ingest.cli.dispatch``), then reads back
what it wrote: the JSON, the /metrics snapshots, and the store through the dashboard's readers.
"""
from __future__ import annotations

import argparse
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from dashboard.analysis import data
from dashboard.runner import command, procedure
from dashboard.runner.client import BenchError
from dashboard.runner.procedure import Run
from ingest import cli as store_cli
from tests.browser import free_port
from tests.conftest import FIXTURES
from tests.openai_server import Behaviour, FakeEngine, prompt_tokens_of
from tests.test_app import run_page


@pytest.fixture
def engine() -> Iterator[FakeEngine]:
    server = FakeEngine(Behaviour()).start()
    yield server
    server.stop()


def parser() -> argparse.ArgumentParser:
    program = argparse.ArgumentParser(prog="specdash")
    command.add_bench_command(program.add_subparsers(dest="command", required=True), store_cli.DB_HELP)
    return program


def bench(url: str, *options: str) -> int:
    return store_cli.dispatch(parser(), ["bench", url, *options], own_process=False)


def files_options(tmp_path: Path, *, ingest: bool = False) -> list[str]:
    """Where the session goes; the store only where a test reads it back (creating one costs ~2 s here)."""
    return ["--out", str(tmp_path / "out" / "session.json"), "--db", str(tmp_path / "bench.duckdb"),
            *([] if ingest else ["--no-ingest"])]


# --- the seed's procedure -----------------------------------------------------------------------


def test_the_seed_procedure_gives_its_table_and_a_session_compare_reads(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Generation request 6 is measured run 4 (after 2 warm-ups): it stops at 1,963 tokens, as in the seed.
    engine.behaviour.short_requests = {6: 1963}
    code = bench(engine.url, "--phase", "phase-0", "--variant", "k2-drafter", *files_options(tmp_path, ingest=True))
    shown = capsys.readouterr()
    assert code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[0] == "| Run | Tokens | Time (s) | Throughput (tok/s) | Prompt Length |"
    rows = [line for line in lines if re.match(r"\| \d ", line)]
    assert [row.split("|")[2].strip() for row in rows] == ["2048", "2048", "2048", "1963", "2048"]
    assert any(line.startswith("| mean | 2031 |") for line in lines)  # (4 × 2048 + 1963) / 5 = 2031
    assert "run 4 stopped at 1,963 of 2,048 tokens (finish reason 'stop')" in shown.out

    document = json.loads((tmp_path / "out" / "session.json").read_text())
    assert document["format"] == "specdash.bench/1"
    assert (document["model"], document["phase"], document["variant"]) == ("/models/Kimi-K2.5", "phase-0", "k2-drafter")
    assert document["endpoint"] == engine.url + "/v1/completions"
    assert (document["max_tokens"], document["warmup"], document["seed"], document["concurrency"]) == (2048, 2, 0, 1)
    assert [(run["index"], run["warmup"]) for run in document["runs"]] == [(1, True), (2, True), (1, False), (2, False),
                                                                          (3, False), (4, False), (5, False)]
    measured = document["runs"][2:]
    assert [run["finish_reason"] for run in measured] == ["length", "length", "length", "stop", "length"]
    assert all(run["usage_reported"] for run in measured)
    assert all(0 < run["ttft_s"] < run["duration_s"] and run["itl_p50_s"] <= run["itl_p99_s"] for run in measured)
    assert document["incomplete"] is False
    assert document["server"]["server_info"]["answer"]["speculative_algorithm"] == "EAGLE3"

    # What the server was asked: every body streams with usage, ignore_eos, the fixed seed.
    assert len(engine.bodies) == 7
    assert all(body["stream"] and body["stream_options"] == {"include_usage": True} and body["ignore_eos"] is True
               and body["seed"] == 0 and body["max_tokens"] == 2048 for body in engine.bodies)

    runs = data.runs(tmp_path / "bench.duckdb", ["phase-0"], ["k2-drafter"])
    kept = runs[~runs["is_warmup"]]
    assert kept["output_tokens"].tolist() == [2048, 2048, 2048, 1963, 2048]
    assert kept["hit_max_tokens"].tolist() == [True, True, True, False, True]
    assert (kept["tok_per_s"] - kept["output_tokens"] / kept["duration_s"]).abs().max() < 0.01
    summary = data.variant_summary(tmp_path / "bench.duckdb", ["phase-0"], ["k2-drafter"])
    assert (summary.loc[0, "n_runs"], summary.loc[0, "short_runs"]) == (5, 1)
    with duckdb.connect(str(tmp_path / "bench.duckdb"), read_only=True) as con:
        extras = [json.loads(row[0]) for row in con.execute(
            "SELECT extra FROM bench_runs WHERE NOT is_warmup ORDER BY run_index").fetchall()]
    assert [extra["short"] for extra in extras] == [False, False, False, True, False]
    assert all(extra["ttft_s"] > 0 and extra["itl_p90_s"] >= extra["itl_p50_s"] for extra in extras)

    # Compare shows the session with no other step: its headline is Σtokens ÷ Σtime of the measured runs.
    page = run_page("views/compare.py", tmp_path / "bench.duckdb", monkeypatch)
    [metric] = page.metric
    headline = sum(run["output_tokens"] for run in measured) / sum(run["duration_s"] for run in measured)
    assert metric.label.startswith("k2-drafter") and metric.value == f"{headline:,.1f} tok/s", (metric.label, metric.value)


def test_tokens_come_from_usage_not_from_counting_chunks(engine: FakeEngine, tmp_path: Path) -> None:
    engine.behaviour.tokens_per_chunk = 4  # 512 chunks carry a run's 2,048 tokens
    assert bench(engine.url, "--warmup", "0", "--runs", "1", *files_options(tmp_path)) == 0
    run = json.loads((tmp_path / "out" / "session.json").read_text())["runs"][0]
    assert run["output_tokens"] == 2048
    assert run["prompt_tokens"] == prompt_tokens_of(engine.bodies[0])


def test_without_usage_the_chunks_are_counted_and_the_run_says_so(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine.behaviour.send_usage = False
    assert bench(engine.url, "--warmup", "0", "--runs", "2", "--max-tokens", "64", *files_options(tmp_path)) == 0
    shown = capsys.readouterr().out
    runs = json.loads((tmp_path / "out" / "session.json").read_text())["runs"]
    assert [(run["output_tokens"], run["usage_reported"], run["prompt_tokens"]) for run in runs] == [(16, False, None)] * 2
    assert "run 1: the server sent no usage; tokens counted from 16 content chunks" in shown


# --- API, concurrency, engines ------------------------------------------------------------------


def test_chat_api_on_a_vllm_server(tmp_path: Path) -> None:
    server = FakeEngine(Behaviour(engine="vllm", model="meta-llama/Llama-3.1-8B-Instruct")).start()
    try:
        assert bench(server.url + "/v1", "--api", "chat", "--runs", "3", "--max-tokens", "256", *files_options(tmp_path)) == 0
    finally:
        server.stop()
    document = json.loads((tmp_path / "out" / "session.json").read_text())
    assert document["endpoint"] == server.url + "/v1/chat/completions"
    assert document["api"] == "chat"
    assert all(body["messages"][0]["role"] == "user" and "prompt" not in body for body in server.bodies)
    measured = [run for run in document["runs"] if not run["warmup"]]
    assert [(run["output_tokens"], run["finish_reason"]) for run in measured] == [(256, "length")] * 3
    assert all(run["prompt_tokens"] > 10 for run in measured)  # the chat template's tokens are in the usage
    assert document["server"]["server_info"]["status"] == 404  # vLLM has none: noted, not an error
    assert document["server"]["version"]["answer"] == {"version": "0.11.0"}


def test_concurrency_two_keeps_two_requests_in_flight(engine: FakeEngine, tmp_path: Path) -> None:
    engine.behaviour.seconds_per_token = 0.0002  # long enough runs for the overlap to show
    assert bench(engine.url, "--warmup", "0", "--runs", "4", "--concurrency", "2", "--max-tokens", "256",
                 *files_options(tmp_path)) == 0
    runs = json.loads((tmp_path / "out" / "session.json").read_text())["runs"]
    assert [(run["index"], run["output_tokens"]) for run in runs] == [(1, 256), (2, 256), (3, 256), (4, 256)]
    starts = sorted(run["started_at"] for run in runs)
    ends = sorted(run["ended_at"] for run in runs)
    assert starts[1] < ends[0]  # the second request started before the first ended


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_line_follows_the_chunks_as_they_stream(engine: FakeEngine) -> None:
    """While runs stream, the progress line is redrawn with the runs finished and the chunks so far."""
    engine.behaviour.seconds_per_token = 0.002  # 256 tokens ≈ 0.5 s a run: several ticks each
    plan = procedure.Plan(root=engine.url, api="completions", model=engine.behaviour.model, prompts=("Hi",),
                          max_tokens=256, warmup=0, runs=2)
    terminal = Terminal()
    live = command.LiveLine(plan.runs, terminal)
    runs, interrupted = procedure.measured_runs(plan, None, live.tick)
    assert not interrupted and [run.output_tokens for run in runs] == [256, 256]
    frames = [frame for frame in terminal.getvalue().split("\r") if frame]
    chunks = [int(re.search(r"([\d,]+) chunks", frame).group(1).replace(",", "")) for frame in frames]  # type: ignore[union-attr]
    assert len(frames) >= 3 and chunks == sorted(chunks) and 0 < chunks[-1] <= 2 * 256 // 4
    assert frames[-1].startswith("[####################] runs 2/2")
    live.clear()
    assert terminal.getvalue().endswith("\r\033[K")
    log = io.StringIO()  # not a terminal: nothing drawn
    command.LiveLine(2, log).tick(1, 10, 1.0)
    assert log.getvalue() == ""


def test_metrics_snapshots_bracket_the_measured_runs_and_are_ingested_as_a_window(tmp_path: Path) -> None:
    server = FakeEngine(Behaviour(engine="vllm", model="meta-llama/Llama-3.1-8B-Instruct")).start()
    try:
        assert bench(server.url, "--variant", "eagle3", *files_options(tmp_path, ingest=True)) == 0
    finally:
        server.stop()
    before, after = tmp_path / "out" / "session.metrics" / "1-before.prom", tmp_path / "out" / "session.metrics" / "2-after.prom"
    assert "vllm:spec_decode_num_drafts_total" in before.read_text()
    assert before.stat().st_mtime <= after.stat().st_mtime
    with duckdb.connect(str(tmp_path / "bench.duckdb"), read_only=True) as con:
        deltas = dict(con.execute(
            "SELECT metric, delta FROM metric_file_deltas WHERE metric LIKE 'vllm:%'"
        ).fetchall())
        pairs = con.execute("SELECT before_path, after_path, ordered_by FROM metric_file_pairs").fetchall()
    assert pairs == [(str(before), str(after), "file modification time")]
    # 5 runs × 2,048 tokens at 4 tokens per verify step: 2,560 drafts, 3 accepted of 3 drafted each.
    assert deltas["vllm:spec_decode_num_drafts_total"] == 2560
    assert deltas["vllm:spec_decode_num_draft_tokens_total"] == 2560 * 3
    assert deltas["vllm:spec_decode_num_accepted_tokens_total"] == 2560 * 3
    assert deltas["vllm:generation_tokens_total"] == 5 * 2048  # the warm-ups are outside the window


def test_profile_calls_sglangs_profiler_and_records_its_answers(engine: FakeEngine, tmp_path: Path) -> None:
    assert bench(engine.url, "--profile", "--warmup", "0", "--runs", "1", "--max-tokens", "32", *files_options(tmp_path)) == 0
    profile = json.loads((tmp_path / "out" / "session.json").read_text())["profile"]
    assert profile["requested"] is True
    assert profile["start"] == {"path": "/start_profile", "status": 200, "answer": "Start profiling.\n"}
    assert profile["stop"]["status"] == 200
    assert engine.paths.index("POST /start_profile") < engine.paths.index("POST /stop_profile")


def test_profile_dir_ingests_the_trace_the_server_wrote_there(engine: FakeEngine, tmp_path: Path) -> None:
    """--profile-dir is sent as SGLang's output_dir; the trace that appears there is ingested with the session."""
    engine.behaviour.profile_trace = FIXTURES / "traces" / "eagle-stack-TP-0.trace.json.gz"
    traces = tmp_path / "traces"
    traces.mkdir()
    code = bench(engine.url, "--profile-dir", str(traces), "--variant", "eagle3", "--warmup", "0", "--runs", "2",
                 "--max-tokens", "32", *files_options(tmp_path, ingest=True))
    assert code == 0
    profile = json.loads((tmp_path / "out" / "session.json").read_text())["profile"]
    [written] = traces.iterdir()
    assert profile["traces"] == [str(written)]
    with duckdb.connect(str(tmp_path / "bench.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT DISTINCT s.path, t.variant FROM trace_ranks t JOIN sources s USING (source_id)").fetchall()
    assert stored == [(str(written), "eagle3")]


def test_profile_dir_without_a_trace_says_how_to_ingest_it_later(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    assert bench(engine.url, "--profile-dir", str(traces), "--profile-wait", "1", "--warmup", "0", "--runs", "1",
                 "--max-tokens", "32", *files_options(tmp_path)) == 0
    assert json.loads((tmp_path / "out" / "session.json").read_text())["profile"]["traces"] == []
    assert f"no trace finished in {traces} within 1 s: ingest it later with `specdash ingest {traces}`" in capsys.readouterr().err


def test_no_ingest_writes_the_default_file_name_and_no_store(
    engine: FakeEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert bench(engine.url, "--no-ingest", "--no-ignore-eos", "--seed", "7", "--warmup", "0", "--runs", "1") == 0
    written = sorted(tmp_path.glob("specdash-bench-*.json"))
    assert len(written) == 1 and re.fullmatch(r"specdash-bench-Kimi-K2\.5-\d{8}T\d{6}Z\.json", written[0].name)
    assert not (tmp_path / "store.duckdb").exists()
    document = json.loads(written[0].read_text())
    assert (document["ignore_eos"], document["seed"], document["runs"][0]["output_tokens"]) == (False, 7, 100)
    assert "ignore_eos" not in engine.bodies[0] and engine.bodies[0]["seed"] == 7


# --- Ctrl-C ---------------------------------------------------------------------------------------


def test_ctrl_c_after_run_3_keeps_three_runs_marked_incomplete(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupt_after_third(run: Run) -> None:
        if not run.warmup and run.index == 3:
            raise KeyboardInterrupt

    args = parser().parse_args(["bench", engine.url, "--variant", "k2-drafter", *files_options(tmp_path, ingest=True)])
    assert command.run_bench(args, on_run=interrupt_after_third) == 130
    assert "interrupted: kept 3 of 5 measured runs, marked incomplete" in capsys.readouterr().err
    document = json.loads((tmp_path / "out" / "session.json").read_text())
    assert document["incomplete"] is True
    assert [run["index"] for run in document["runs"] if not run["warmup"]] == [1, 2, 3]
    runs = data.runs(tmp_path / "bench.duckdb", [], ["k2-drafter"])
    assert runs[~runs["is_warmup"]]["output_tokens"].tolist() == [2048] * 3
    with duckdb.connect(str(tmp_path / "bench.duckdb"), read_only=True) as con:
        extra = json.loads(con.execute("SELECT extra FROM sessions").fetchone()[0])
    assert extra["incomplete"] is True


# --- bad input: one line, non-zero, nothing written -------------------------------------------------


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("refused", r"no server answers \(connection refused for 1 s\) — start the server"),
        ("status 500", r"the server answered 500 Internal Server Error: CUDA out of memory\. Tried to allocate 2\.00 GiB"),
        ("stream cut", r"the stream stopped mid-way after \d+ content chunks"),
        ("never ready", r"the server was not ready within 1 s \(last: /health answered 503\)"),
        ("wrong model", r"the server does not serve model 'kimi'; it serves: /models/Kimi-K2\.5 — pass one of those to --model"),
    ],
)
def test_bad_input_gives_one_clear_line_and_writes_nothing(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, expected: str
) -> None:
    url, extra = engine.url, ["--ready-timeout", "1"]
    if case == "refused":
        url = f"http://127.0.0.1:{free_port()}"
    elif case == "status 500":
        engine.behaviour.fail_request = 4  # measured run 2: runs before it finished, still nothing is kept
    elif case == "stream cut":
        engine.behaviour.cut_request = 3
    elif case == "never ready":
        engine.behaviour.ready = False
    elif case == "wrong model":
        extra += ["--model", "kimi"]
    assert bench(url, *extra, *files_options(tmp_path, ingest=True)) == 1
    error_lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and re.search(expected, error_lines[0]), error_lines
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "bench.duckdb").exists()


def test_a_counted_flag_below_its_least_is_refused_before_anything_is_sent(
    engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(engine.url, "--runs", "0") == 1
    assert "--runs 0: must be at least 1" in capsys.readouterr().err
    assert engine.paths == []


# --- prompts ------------------------------------------------------------------------------------


def test_prompts_from_a_file_plain_or_jsonl(engine: FakeEngine, tmp_path: Path) -> None:
    plain = tmp_path / "prompts.txt"
    plain.write_text("first prompt\n\nsecond prompt\n")
    jsonl = tmp_path / "prompts.jsonl"
    jsonl.write_text('{"prompt": "from jsonl", "id": 1}\n')
    assert command.load_prompts(plain) == ["first prompt", "second prompt"]
    assert command.load_prompts(jsonl) == ["from jsonl"]
    assert bench(engine.url, "--prompts", str(plain), "--warmup", "1", "--runs", "2", "--max-tokens", "8",
                 *files_options(tmp_path)) == 0
    assert [body["prompt"] for body in engine.bodies] == ["first prompt", "first prompt", "second prompt"]


def test_prompts_from_a_sharegpt_dataset_file(engine: FakeEngine, tmp_path: Path) -> None:
    """The file bench_serving's sharegpt dataset reads: each conversation's first human turn is a prompt."""
    dataset = tmp_path / "ShareGPT_V3_unfiltered_cleaned_split.json"
    dataset.write_text(json.dumps([
        {"id": "a1", "conversations": [{"from": "human", "value": "Tell me about tides."}, {"from": "gpt", "value": "Tides..."}]},
        {"id": "a2", "conversations": [{"from": "gpt", "value": "Hello!"}, {"from": "human", "value": "Write a haiku."}]},
        {"id": "a3", "conversations": []},
        {"id": "a4", "messages": [{"role": "user", "content": "Explain NCCL all-reduce."}]},
    ]), encoding="utf-8")
    assert command.load_prompts(dataset) == ["Tell me about tides.", "Write a haiku.", "Explain NCCL all-reduce."]
    assert bench(engine.url, "--prompts", str(dataset), "--warmup", "0", "--runs", "3", "--max-tokens", "16",
                 *files_options(tmp_path)) == 0
    assert [body["prompt"] for body in engine.bodies] == ["Tell me about tides.", "Write a haiku.", "Explain NCCL all-reduce."]
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps([{"conversations": [{"from": "gpt", "value": "Hi"}]}]), encoding="utf-8")
    with pytest.raises(BenchError, match="no conversation in the dataset has a human turn"):
        command.load_prompts(empty)


def test_a_jsonl_record_without_a_prompt_names_its_line(tmp_path: Path) -> None:
    jsonl = tmp_path / "prompts.jsonl"
    jsonl.write_text('{"prompt": "ok"}\n{"text": "no prompt key"}\n')
    with pytest.raises(BenchError, match=r'prompts\.jsonl:2: a JSONL record needs a "prompt" string'):
        command.load_prompts(jsonl)


def test_percentiles_interpolate_between_ranks() -> None:
    assert procedure.percentile([0.010, 0.020, 0.030, 0.040], 50) == pytest.approx(0.025)
    assert procedure.percentile([0.010, 0.020, 0.030, 0.040], 90) == pytest.approx(0.037)
    assert procedure.percentile([], 50) is None
