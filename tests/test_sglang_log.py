"""The SGLang server-log parser, read as a spec.

Every line shape of DOMAIN.md §4 has a fixture of its own under
tests/fixtures/logs/ with a golden ``*.expected.json``; the real excerpts of the
shared corpus are checked row by row; and the parser must give the same answer
however the file is cut into blocks, compressed or line-ended.
"""
from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from ingest.errors import IngestError, UnrecognizedFormat
from ingest.formats import ParseOptions
from ingest.parsers.logs import log_lines, pyrepr
from ingest.parsers.sglang import sglang_log
from ingest.registry import detect
from tests.conftest import corpus_files
from tests.log_golden import assert_matches_golden, load_golden, parse_for_golden

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
SGLANG_GOLDENS = sorted(FIXTURES.glob("sglang-*.expected.json"))
SGLANG_FIXTURES = sorted(FIXTURES.glob("sglang-*.log"))
NO_OPTIONS = ParseOptions()


def parse(path: Path, **options: object) -> sglang_log.ParsedSource:
    return sglang_log.parse(path, ParseOptions(**options))  # type: ignore[arg-type]


def rows(path: Path, table: str = "decode_stats") -> list[dict]:
    return parse(path).tables[table].to_pylist()


# --- one fixture per line shape, each with its golden ---------------------------------


@pytest.mark.parametrize("golden", SGLANG_GOLDENS, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_fixture_matches_its_golden(golden: Path) -> None:
    source, expected = load_golden(golden)
    assert_matches_golden(source, parse_for_golden(source, expected), expected)


def test_every_fixture_has_a_golden() -> None:
    assert {p.name.removesuffix(".log") for p in SGLANG_FIXTURES} == {
        p.name.removesuffix(".expected.json") for p in SGLANG_GOLDENS
    }


@pytest.mark.parametrize("source", SGLANG_FIXTURES, ids=lambda p: p.name)
def test_every_line_is_loaded_or_counted(source: Path) -> None:
    result = parse(source)
    loaded = sum(table.num_rows for table in result.tables.values())
    assert loaded + result.lines_skipped == result.lines_read


def test_the_story_accept_length_is_bonus_inclusive() -> None:
    # DOMAIN.md §1/§3: SGLang prints 1.58; "accept length 0.58" is accepted drafts per step.
    first = rows(FIXTURES / "sglang-eagle3-basic.log")[0]
    assert first["accept_len_raw"] == 1.58
    assert first["tokens_per_step"] == 1.58
    assert first["accepted_drafts_per_step"] == pytest.approx(0.58)
    # speculative_num_draft_tokens=3 in its server_args: 2 drafts proposed per step
    assert first["accept_rate_drafts"] == pytest.approx(0.58 / 2)


def test_dead_drafter_reads_as_zero_accepted_drafts() -> None:
    dead = rows(FIXTURES / "sglang-dp-attention-2026.log")[-1]
    assert (dead["accept_len_raw"], dead["accepted_drafts_per_step"], dead["accept_rate_drafts"]) == (1.0, 0.0, 0.0)


def test_cap_len_and_block_accept_len_are_not_the_accept_length() -> None:
    first = rows(FIXTURES / "sglang-dp-attention-2026.log")[0]
    extra = json.loads(first["extra"])
    assert first["accept_len_raw"] == 2.50
    assert (extra["cap len"], extra["block accept len"]) == (3.0, 2.75)


def test_per_dp_rank_lines_stay_separate_rows() -> None:
    decode = rows(FIXTURES / "sglang-dp-attention-2026.log")
    assert [(row["dp_rank"], row["tp_rank"]) for row in decode] == [(0, 0), (1, 1), (2, 2)]
    assert [json.loads(row["extra"])["ep_rank"] for row in decode] == [0, 1, 2]


def test_a_restart_starts_a_new_segment_with_its_own_config() -> None:
    result = parse(FIXTURES / "sglang-dict-config-restarts.log")
    configs = result.tables["server_configs"].to_pylist()
    assert [(c["segment"], c["variant"]) for c in configs] == [(0, "eagle3:EAGLE3-Kimi-K2-Instruct"), (1, "baseline")]
    decode = result.tables["decode_stats"].to_pylist()
    assert [(row["segment"], row["accept_len_raw"]) for row in decode] == [(0, 1.58), (0, 1.62), (1, None)]


def test_lines_before_the_first_config_are_segment_zero_without_config() -> None:
    result = parse(FIXTURES / "sglang-mid-run-restart.log")
    assert [c["segment"] for c in result.tables["server_configs"].to_pylist()] == [1]
    decode = result.tables["decode_stats"].to_pylist()
    assert [row["segment"] for row in decode] == [0, 0, 1]
    # no config for segment 0: no num_draft_tokens, so no drafts-only rate (and one warning saying why)
    assert [row["accept_rate_drafts"] is None for row in decode] == [True, True, False]
    assert sum("accept_rate_drafts left empty on 2 decode lines" in w for w in result.warnings) == 1


def test_config_dump_becomes_columns_and_full_args() -> None:
    config = parse(FIXTURES / "sglang-eagle3-basic.log").tables["server_configs"].to_pylist()[0]
    assert config["speculative_num_draft_tokens"] == 3
    assert config["tp_size"] == 8
    args = json.loads(config["args"])
    assert args["cuda_graph_bs"] == [1, 2, 4, 8]
    assert args["json_model_override_args"] == "{}"
    assert args["quantization"] is None


def test_time_only_prefix_takes_its_date_from_an_earlier_dated_line_and_crosses_midnight() -> None:
    stamps = [str(row["ts"]) for row in rows(FIXTURES / "sglang-time-only-2024.log")]
    assert stamps == ["2024-09-30 23:59:59", "2024-10-01 00:00:02"]


def test_time_only_prefix_without_any_date_keeps_the_time_in_extra() -> None:
    decode = rows(FIXTURES / "sglang-no-date-2024.log")
    assert decode[0]["ts"] is None
    assert json.loads(decode[0]["extra"])["log_time"] == "16:43:31"


def test_profiler_decode_batch_text_is_not_a_stats_line() -> None:
    result = parse(FIXTURES / "sglang-noise-and-malformed.log")
    assert 8 not in result.tables["decode_stats"].column("line_no").to_pylist()
    assert result.skipped["noise: profiler"] == 1  # the other profiler line names a profile id: read (log_profiles)


def test_profiler_start_message_gives_the_profile_id_its_traces_are_named_after() -> None:
    [profile] = parse(FIXTURES / "sglang-noise-and-malformed.log").tables["log_profiles"].to_pylist()
    assert profile["profile_id"] == "1770714063.5" and profile["output_dir"] == "/tmp/profiles"
    assert profile["line_no"] == 9 and str(profile["ts"]) == "2026-02-10 09:01:03"


def test_malformed_lines_are_skipped_with_file_line_warnings_and_the_rest_loads() -> None:
    source = FIXTURES / "sglang-noise-and-malformed.log"
    result = parse(source)
    assert result.tables["decode_stats"].column("line_no").to_pylist() == [7, 13]
    assert result.skipped["malformed stats line"] == 4
    assert f"{source}:10: Decode batch line skipped: '#token': '12x' is not an integer" in result.warnings
    assert f"{source}:11: Decode batch line skipped: 'cuda graph': 'maybe' is not True/False" in result.warnings
    assert any(w.startswith(f"{source}:22: ") for w in result.warnings)  # cut short at the end of the file


# --- Python logging formats: the prefix a logging config of one's own prints ------------------

PYTHON_LOGGING_PREFIXES = [
    # (format string, the prefix it prints, ts, (dp_rank, tp_rank), other rank tags)
    ("%(asctime)s [%(levelname)s] %(name)s: %(message)s",
     "2026-01-02 10:11:12,345 [INFO] sglang.srt.managers.scheduler: ", "2026-01-02 10:11:12.345000", (None, None), {}),
    ("%(asctime)s - %(name)s - %(levelname)s - %(message)s",
     "2026-01-02 10:11:12,345 - sglang.srt.managers.scheduler - INFO - ", "2026-01-02 10:11:12.345000", (None, None), {}),
    ("%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s",
     "INFO 2026-01-02 10:11:12.345 scheduler.py:1234] ", "2026-01-02 10:11:12.345000", (None, None), {}),
    ("[%(asctime)s{ranks}] %(filename)s:%(lineno)d - %(message)s",
     "[2026-01-02 10:11:12 DP1 TP3 EP1] scheduler_metrics_mixin.py:287 - ", "2026-01-02 10:11:12", (1, 3), {"ep_rank": 1}),
    ("%(asctime)s | %(levelname)-8s | %(name)s | %(message)s",
     "2026-01-02 10:11:12,345 | INFO     | sglang.srt.managers.scheduler | ", "2026-01-02 10:11:12.345000", (None, None), {}),
    ("[%(asctime)s] [%(name)s] [%(levelname)s] %(message)s",
     "[2026-01-02 10:11:12] [sglang.srt.managers.scheduler] [INFO] ", "2026-01-02 10:11:12", (None, None), {}),
    ("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
     "2026-01-02 10:11:12,345 151972 INFO sglang.srt.managers.scheduler: ", "2026-01-02 10:11:12.345000", (None, None), {}),
    ("%(asctime)s %(message)s", "2026-01-02 10:11:12,345 ", "2026-01-02 10:11:12.345000", (None, None), {}),
]
DECODE_MESSAGE = (
    "Decode batch, #running-req: 1, #token: 402, token usage: 0.00, accept len: 1.58, accept rate: 0.40, "
    "cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, "
)


@pytest.mark.parametrize(("prefix", "ts", "ranks", "other_ranks"), [case[1:] for case in PYTHON_LOGGING_PREFIXES],
                         ids=[case[0] for case in PYTHON_LOGGING_PREFIXES])
def test_a_python_logging_prefix_gives_the_time_and_rank_tags(
    prefix: str, ts: str, ranks: tuple[int | None, int | None], other_ranks: dict, tmp_path: Path
) -> None:
    source = tmp_path / "logging.log"
    source.write_text(f"{prefix}{DECODE_MESSAGE}\n{prefix}{DECODE_MESSAGE.replace('Decode batch,', 'Decode batch [7],')}\n")
    assert detect(source).kind == "sglang_log"
    decode = rows(source)
    assert len(decode) == 2
    for row in decode:
        assert (str(row["ts"]), (row["dp_rank"], row["tp_rank"])) == (ts, ranks)
        assert (row["accept_len_raw"], row["gen_throughput"]) == (1.58, 0.39)
    assert json.loads(decode[0]["extra"] or "{}") == other_ranks
    assert json.loads(decode[1]["extra"]) == {**other_ranks, "forward_ct": 7}


@pytest.mark.parametrize(
    "line",
    [
        # a profiler's message after a logging prefix: "PROFILE: " is message text, not a logger name
        "2026-01-02 10:11:13,002 [INFO] sglang.srt.managers.scheduler: PROFILE: Decode batch 1/10 processed",
        "2026-01-02 10:11:13,002 PROFILE: Decode batch, #running-req: 1",
        "[2025-09-30 11:11:19 TP2] PROFILE: Decode batch, #running-req: 1",
        # the stem starts the message but no key list follows it
        "2026-01-02 10:11:13,450 [INFO] sglang.srt.managers.scheduler: Decode batch 2/10 processed",
        # words of a message before the stem are no prefix
        "2026-01-02 10:11:13,450 [INFO] sglang.srt.managers.scheduler: after warmup Decode batch, #running-req: 1",
        "2026-01-02 10:11:13 replay of Decode batch, #running-req: 1",
    ],
)
def test_decode_batch_text_inside_a_message_after_a_logging_prefix_is_no_stats_line(line: str, tmp_path: Path) -> None:
    source = tmp_path / "profile.log"
    source.write_text(f"{line}\n{PYTHON_LOGGING_PREFIXES[0][1]}{DECODE_MESSAGE}\n")
    result = parse(source)
    assert result.tables["decode_stats"].column("line_no").to_pylist() == [2]
    assert not result.skipped["malformed stats line"] and not sglang_log.sniff(line.encode())


def test_the_python_logging_fixture_counts_no_profiler_or_unfinished_stem_line() -> None:
    result = parse(FIXTURES / "sglang-python-logging-format.log")
    assert result.tables["decode_stats"].column("line_no").to_pylist() == [4, 8, 9, 10, 12]
    assert result.tables["prefill_stats"].column("line_no").to_pylist() == [3, 11]
    # line 6: "PROFILE: Decode batch 1/10 processed"; line 7: "Decode batch 2/10 processed"
    assert (result.skipped["noise: profiler"], result.skipped["other log line"]) == (1, 2)
    assert result.tables["server_configs"].column("variant").to_pylist() == ["eagle3:sglang-EAGLE3-LLaMA3.1-Instruct-8B"]


def test_noise_is_counted_by_kind() -> None:
    skipped = parse(FIXTURES / "sglang-noise-and-malformed.log").skipped
    assert skipped == Counter(
        {
            "noise: traceback": 5,
            "malformed stats line": 4,
            "noise: http access": 2,
            "noise: tqdm": 2,
            "noise: profiler": 1,
            "other log line": 2,
            "blank line": 1,
            "other text": 1,
        }
    )


# --- the shared corpus of real excerpts ---------------------------------------------------

CORPUS_EXPECTED: dict[str, dict] = {
    "fastrl-pr-4-custom-logfmt-decode.log": {
        "rows": {"server_configs": 0, "log_profiles": 0, "decode_stats": 3, "prefill_stats": 0},
        "skipped": {},
        "spot": ("decode_stats", 2, {"ts": "2025-12-04 20:34:02", "accept_len_raw": 1.0, "accepted_drafts_per_step": 0.0,
                                      "accept_rate_raw": 0.11, "cuda_graph": True, "gen_throughput": 6138.60}),
    },
    "sglang-issue-11948-eagle3-decode-acceptrate.log": {
        "rows": {"server_configs": 0, "log_profiles": 0, "decode_stats": 5, "prefill_stats": 1},
        "skipped": {},
        "spot": ("decode_stats", 0, {"ts": "2025-10-22 10:27:57", "tp_rank": 0, "accept_len_raw": 2.17,
                                      "accept_rate_raw": 0.54, "gen_throughput": 0.39, "num_tokens": 108}),
    },
    "sglang-issue-2777-eagle2-prefill-old.log": {
        "rows": {"server_configs": 0, "log_profiles": 0, "decode_stats": 0, "prefill_stats": 7},
        "skipped": {"noise: http access": 1},
        "spot": ("prefill_stats", 1, {"line_no": 3, "new_token": 75, "queue_req": 62, "token_usage": 0.01,
                                       "extra": {"cache hit rate (%)": 0.0}}),
    },
    "sglang-issue-9187-pd-prefill-tp-ep.log": {
        "rows": {"server_configs": 0, "log_profiles": 0, "decode_stats": 0, "prefill_stats": 4},
        "skipped": {"noise: http access": 4},
        "spot": ("prefill_stats", 1, {"line_no": 5, "new_seq": 2, "cached_token": 1, "running_req": None,
                                       "input_throughput": 559732.25,
                                       "extra": {"#unbootstrapped-req": 0, "#transferring-req": 1, "ep_rank": 0}}),
    },
    "sglang-pr-13023-nov2025-decode-comma-trailing.log": {
        "rows": {"server_configs": 0, "log_profiles": 0, "decode_stats": 8, "prefill_stats": 0},
        "skipped": {},
        "spot": ("decode_stats", 2, {"ts": "2025-11-11 04:06:30", "tp_rank": None, "running_req": 28, "cuda_graph": True,
                                      "accept_len_raw": None, "queue_req": 0, "gen_throughput": 1086.59}),
    },
}
# Real SGLang logs of a server's start-up only: no stats, no server_args (docker compose prefix;
# DP/TP/EP tags and tqdm bars). They load with no rows and a warning.
STARTUP_ONLY = {
    "sglang-issue-8186-docker-compose-prefix-startup.log": {"other log line": 4},
    "sglang-pr-17392-dp-tp-ep-prefix-startup.log": {"other log line": 1, "noise: tqdm": 14, "blank line": 1},
}
# An SGLang branch's profiler lines and nothing else: read for the profile id that links its traces.
PROFILER_ONLY = "sglang-pr-11110-profile-by-stage.log"


@pytest.mark.corpus
@pytest.mark.parametrize("source", corpus_files("logs", "sglang-*.log") + corpus_files("logs", "fastrl-*.log"), ids=lambda p: p.name)
def test_corpus_log(source: Path, corpus_dir: Path) -> None:
    if source.name == PROFILER_ONLY:
        return  # test_corpus_profiler_only_log_names_its_profile
    if source.name in STARTUP_ONLY:
        return  # test_corpus_startup_only_log
    expected = CORPUS_EXPECTED[source.name]
    result = parse(source)
    assert {name: table.num_rows for name, table in result.tables.items()} == expected["rows"]
    assert dict(result.skipped) == expected["skipped"]
    table, index, values = expected["spot"]
    row = result.tables[table].to_pylist()[index]
    for column, value in values.items():
        if column == "extra":
            assert json.loads(row["extra"]) == value
        elif column == "ts":
            assert str(row["ts"]) == value
        else:
            assert row[column] == (pytest.approx(value) if isinstance(value, float) else value), column


@pytest.mark.corpus
def test_corpus_profiler_only_log_names_its_profile(corpus_dir: Path) -> None:
    # PR 11110's branch: "PROFILER STARTING for decode: Traces will be saved to DIR (profile_id: ID, …)" on 4 ranks,
    # and "PROFILE: Decode batch i/N processed" lines that are not stats lines.
    source = corpus_dir / "logs" / PROFILER_ONLY
    assert detect(source).kind == "sglang_log"
    result = parse(source)
    profiles = result.tables["log_profiles"].to_pylist()
    assert sorted(row["tp_rank"] for row in profiles) == [0, 1, 2, 3]
    assert {row["profile_id"] for row in profiles} == {"1759255878.904894"}
    assert {row["stage"] for row in profiles} == {"DECODE"}
    assert result.tables["decode_stats"].num_rows == 0 and result.skipped == Counter({"noise: profiler": 7})
    [warning] = result.warnings
    assert "profiler messages only (profile 1759255878.904894)" in warning and "linked to it" in warning


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(STARTUP_ONLY))
def test_corpus_startup_only_log_loads_no_rows_and_says_what_to_keep(name: str, corpus_dir: Path) -> None:
    source = corpus_dir / "logs" / name
    assert detect(source).kind == "sglang_log"
    result = parse(source)
    assert {table: rows.num_rows for table, rows in result.tables.items()} == {
        "server_configs": 0, "log_profiles": 0, "decode_stats": 0, "prefill_stats": 0,
    }
    assert dict(result.skipped) == STARTUP_ONLY[name] and result.lines_skipped == result.lines_read
    [warning] = result.warnings
    assert warning.startswith(f"{source}: SGLang start-up lines only")
    assert "no Decode batch or Prefill batch stats lines" in warning
    assert "keep the part of the log written while the server had traffic" in warning


@pytest.mark.corpus
def test_corpus_startup_only_log_with_the_other_engine_is_refused(corpus_dir: Path) -> None:
    with pytest.raises(IngestError, match="content is a sglang server log"):
        parse(corpus_dir / "logs" / "sglang-issue-8186-docker-compose-prefix-startup.log", engine="vllm")


@pytest.mark.corpus
def test_corpus_send_one_output_is_not_a_server_log(corpus_dir: Path) -> None:
    # send_one.py output ("acc_length=2.20 / speed=125.59 token/s") has its own parser; this one rejects it clearly.
    source = corpus_dir / "logs" / "sglang-pr-4951-send-one-acc-length.txt"
    with pytest.raises(UnrecognizedFormat, match="no SGLang stats or server_args line in 5 lines"):
        parse(source)
    assert detect(source).kind != "sglang_log"


@pytest.mark.corpus
@pytest.mark.parametrize("source", corpus_files("logs", "vllm-*.log"), ids=lambda p: p.name)
def test_corpus_vllm_log_is_pointed_to_the_vllm_parser(source: Path, corpus_dir: Path) -> None:
    with pytest.raises(UnrecognizedFormat) as raised:
        parse(source)
    assert "vllm_log" in raised.value.hint
    assert detect(source).kind == "vllm_log"


# --- engine hint, empty input, sniffing ----------------------------------------------------


def test_engine_hint_must_match_the_content() -> None:
    with pytest.raises(IngestError, match="content is a sglang server log") as raised:
        parse(FIXTURES / "sglang-eagle3-basic.log", engine="vllm")
    assert "--engine sglang" in raised.value.hint
    assert parse(FIXTURES / "sglang-eagle3-basic.log", engine="sglang").tables["decode_stats"].num_rows == 3


def test_vllm_content_with_engine_sglang_is_refused_with_the_engine_shown() -> None:
    with pytest.raises(IngestError, match="content is a vllm server log"):
        parse(FIXTURES / "vllm-v1-eagle3-2025.log", engine="sglang")


def test_a_file_with_nothing_recognizable_names_the_expected_shapes(tmp_path: Path) -> None:
    source = tmp_path / "notes.log"
    source.write_text("[2025-07-19 23:29:33] run 3 started, see the dashboard\n\n")
    with pytest.raises(UnrecognizedFormat, match="no SGLang stats or server_args line in 2 lines") as raised:
        parse(source)
    assert "Decode batch." in raised.value.hint


def test_a_startup_only_log_loads_no_rows_with_a_warning(tmp_path: Path) -> None:
    source = tmp_path / "startup.log"
    source.write_text(
        "[2025-07-19 23:29:33] Load weight end. type=Gemma3ForConditionalGeneration, avail mem=21.49 GB\n"
        "2026-01-02 10:11:14,120 - sglang.srt.model_executor.model_runner - INFO - KV Cache is allocated. #tokens: 22095\n"
        "Capturing batches (bs=1 avail_mem=10.17 GB): 100%|██████████| 6/6 [00:59<00:00,  9.12s/it]\n"
    )
    assert detect(source).kind == "sglang_log"
    result = parse(source)
    assert sum(table.num_rows for table in result.tables.values()) == 0
    assert result.warnings == [
        sglang_log.STARTUP_ONLY_WARNING.format(path=source, startup=2, lines=3)
    ]


@pytest.mark.parametrize(
    "text",
    [
        # prose about a server: the start-up messages, but not as a server logs them
        "We saw Load weight end. and then KV Cache is allocated. before it hung.\n"
        "Capture cuda graph begin. took minutes\n",
        # a random text file
        "lorem ipsum dolor sit amet\n2026-01-02 10:11:12 backup finished\n[notes] Memory pool end. is fine\n",
        # a message that merely quotes one after a log prefix
        "[2025-07-19 23:29:33] the docs say: Load weight end. means the model is in memory\n",
    ],
)
def test_startup_words_without_an_sglang_prefix_are_not_an_sglang_log(text: str, tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text(text)
    with pytest.raises(UnrecognizedFormat):
        detect(source)
    with pytest.raises(UnrecognizedFormat, match="no SGLang stats or server_args line"):
        parse(source)


def test_a_lone_config_line_is_a_valid_log(tmp_path: Path) -> None:
    source = tmp_path / "config-only.log"
    source.write_text("[2025-07-19 23:29:00] server_args=ServerArgs(model_path='m', speculative_algorithm=None)\n")
    result = parse(source)
    assert result.tables["server_configs"].to_pylist()[0]["variant"] == "baseline"
    assert result.tables["decode_stats"].num_rows == 0


@pytest.mark.parametrize("source", SGLANG_FIXTURES, ids=lambda p: p.name)
def test_sniff_recognizes_every_sglang_fixture(source: Path) -> None:
    assert sglang_log.sniff(source.read_bytes()[:65536])
    assert detect(source).kind == "sglang_log"


def test_sniff_ignores_other_logs() -> None:
    assert not sglang_log.sniff((FIXTURES / "vllm-v1-eagle3-2025.log").read_bytes())
    assert not sglang_log.sniff(b"[2025-09-30 11:11:19 TP2] PROFILE: Decode batch 1/10 processed\n")
    assert not sglang_log.sniff(b"2026-01-02 10:11:13,002 [INFO] sglang.srt.managers.scheduler: PROFILE: Decode batch 1/10 processed\n")


# --- blocks: same answer however the bytes arrive ----------------------------------------


def synthetic_log(lines: int) -> str:
    """A log mixing every common shape, long enough to span many small blocks."""
    out = ["2024-09-30 23:59:00 launch.sh: starting", "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', "
           "speculative_algorithm='EAGLE3', speculative_draft_model_path='d/x', speculative_num_steps=3, "
           "speculative_eagle_topk=1, speculative_num_draft_tokens=4)"]
    for index in range(lines):
        minute, second = divmod(index, 60)
        stamp = f"2025-01-01 00:{minute % 60:02d}:{second:02d}"
        shape = index % 6
        if shape == 0:
            out.append(f"[{stamp} DP{index % 4} TP{index % 4} EP{index % 4}] Decode batch [{index}], #running-req: {index % 7}, "
                       f"#token: {index * 3}, token usage: 0.{index % 100:02d}, accept len: {1 + (index % 200) / 100:.2f}, "
                       f"accept rate: 0.50, cuda graph: True, gen throughput (token/s): {index * 1.5:.2f}, #queue-req: 0, ")
        elif shape == 1:
            out.append(f"(SGLangEngine pid=7) [{stamp} TP1] Prefill batch, #new-seq: 1, #new-token: {index}, #cached-token: 0, "
                       f"token usage: 0.01, #running-req: 2, #queue-req: 0, cache hit rate: 12.50%")
        elif shape == 2:
            out.append(f'[{stamp}] INFO:     127.0.0.1:{40000 + index} - "POST /generate HTTP/1.1" 200 OK')
        elif shape == 3:
            out.append(f"[{minute % 24:02d}:{second:02d}:00 TP0] Decode batch. #running-req: 1, #token: {index}, "
                       f"token usage: 0.00, gen throughput (token/s): 10.00, #queue-req: 0")
        elif shape == 4:
            out.append(f"2025-01-01 00:00:{second:02d} INFO 1 [DP1 TP1 EP1 scheduler.py:1] Decode batch. #running-req: 3, "
                       f"#token: {index}, token usage: 0.02, mystery key: v{index}, gen throughput (token/s): 1.00")
        else:
            out.append("Capturing batches (bs=1 avail_mem=10.17 GB): 100%|██████████| 6/6 [00:59<00:00,  9.12s/it]")
    return "\n".join(out) + "\n"


def tables_as_rows(result: sglang_log.ParsedSource) -> dict[str, list[dict]]:
    return {name: table.to_pylist() for name, table in result.tables.items()}


def test_small_blocks_give_the_same_tables_as_one_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "synthetic.log"
    source.write_text(synthetic_log(600))
    whole = parse(source)
    # 1499-byte reads cut lines everywhere; each block then ends at its last newline
    monkeypatch.setattr(log_lines, "iter_blocks", _small_blocks(log_lines.iter_blocks, 1499))
    pieces = parse(source)
    assert tables_as_rows(pieces) == tables_as_rows(whole)
    assert (pieces.skipped, pieces.warnings, pieces.lines_read) == (whole.skipped, whole.warnings, whole.lines_read)
    assert whole.lines_read == 602 and whole.tables["decode_stats"].num_rows == 300


@pytest.mark.parametrize("block_bytes", [7, 64, 1499])
@pytest.mark.parametrize("zipped", [False, True], ids=["plain", "gzip"])
def test_blocks_end_at_newlines_and_join_back_to_the_file(tmp_path: Path, block_bytes: int, zipped: bool) -> None:
    # lines longer than a read (7 bytes), a last line without a newline, an empty line
    text = ("short\n" + "x" * 40 + "\n\n" + "a line of medium length\n") * 20 + "no newline at the end"
    source = tmp_path / ("log.gz" if zipped else "log")
    source.write_bytes(gzip.compress(text.encode()) if zipped else text.encode())
    blocks = [block.tobytes() for block in log_lines.iter_blocks(source, block_bytes=block_bytes)]
    assert b"".join(blocks) == text.encode()
    assert all(block.endswith(b"\n") for block in blocks[:-1]) and blocks[-1].endswith(b"the end")
    assert sum(log_lines._line_count(np.frombuffer(block, dtype=np.uint8)) for block in blocks) == text.count("\n") + 1


def test_a_block_still_held_is_never_read_over(tmp_path: Path) -> None:
    # blocks are read into buffers used again once nothing refers to them: here every block is kept
    text = "".join(f"line {index} " + "x" * (index % 50) + "\n" for index in range(3000))
    source = tmp_path / "log"
    source.write_text(text)
    kept = list(log_lines.iter_blocks(source, block_bytes=1000))
    assert len(kept) > 50
    assert b"".join(block.tobytes() for block in kept) == text.encode()


def _small_blocks(iter_blocks, size):  # type: ignore[no-untyped-def]
    return lambda path, on_progress=None, block_bytes=size: iter_blocks(path, on_progress, size)


def test_gzip_and_crlf_give_the_same_tables(tmp_path: Path) -> None:
    text = synthetic_log(300)
    plain = tmp_path / "plain.log"
    plain.write_text(text)
    zipped = tmp_path / "zipped.log.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    expected = tables_as_rows(parse(plain))
    assert tables_as_rows(parse(zipped)) == expected
    assert tables_as_rows(parse(crlf)) == expected


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    source = tmp_path / "latin1.log"
    source.write_bytes(
        b"[2025-01-01 00:00:00] caf\xe9 opened\n"
        b"[2025-01-01 00:00:01] Decode batch, #running-req: 2, #token: 9, gen throughput (token/s): 3.50, #queue-req: 0\n"
    )
    decode = parse(source).tables["decode_stats"].to_pylist()
    assert [(row["line_no"], row["running_req"]) for row in decode] == [(2, 2)]


def test_progress_is_reported_up_to_the_file_size(tmp_path: Path) -> None:
    source = tmp_path / "synthetic.log"
    source.write_text(synthetic_log(600))
    seen: list[tuple[int, int]] = []
    sglang_log.parse_with_progress(source, NO_OPTIONS, lambda done, total: seen.append((done, total)))
    size = source.stat().st_size
    assert seen and seen[-1] == (size, size)
    assert all(total == size for _, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_tables_have_the_store_schema() -> None:
    from ingest.tables import SCHEMAS

    result = parse(FIXTURES / "sglang-dp-attention-2026.log")
    for name, table in result.tables.items():
        assert table.schema.equals(SCHEMAS[name]), name
        assert isinstance(table, pa.Table)


def test_noise_is_classified_the_same_by_block_and_by_line() -> None:
    text = (FIXTURES / "sglang-noise-and-malformed.log").read_bytes()
    block = log_lines.make_block(text, 1)
    by_line = Counter(log_lines.classify_line(block.line_text(index)) for index in range(block.size))
    assert log_lines.count_noise(block.lines) == +by_line


def test_a_date_less_time_after_midnight_of_its_dated_line_is_the_next_day() -> None:
    dating = sglang_log._DateFill()
    assert str(dating.stamp("2024-09-30 23:59", "01:00:00")) == "2024-10-01 01:00:00"
    assert str(dating.stamp("2024-09-30 23:59", "00:59:30")) == "2024-10-01 00:59:30"  # later in the file, same night
    assert dating.stamp(None, "01:00:00") is None


def test_parse_reports_progress_through_the_options(tmp_path: Path) -> None:
    source = tmp_path / "synthetic.log"
    source.write_text(synthetic_log(60))
    seen: list[tuple[int, int]] = []
    sglang_log.parse(source, ParseOptions(on_progress=lambda done, total: seen.append((done, total))))
    assert seen[-1] == (source.stat().st_size, source.stat().st_size)


@pytest.mark.parametrize("config", [
    {"model_path": "/m", "cuda_graph_bs": [1, 2], "nested": {"d": (1, 2)}, "name": "ü"},
    {"ratio": math.inf, "scores": [math.nan, -math.inf]},
    {"outer": [{"inner": {None: 1, True: 2}}]},  # json.dumps would spell these keys null/true
    {"odd": object()},
])
def test_config_json_text_is_the_same_on_the_fast_path(config: dict[str, Any]) -> None:
    slow = json.dumps(pyrepr._finite(config), ensure_ascii=False, default=str)
    assert pyrepr.config_json_text(config) == slow


@pytest.mark.parametrize("line", [
    "[2025-10-22 10:20:00] server_args=ServerArgs(model_path='m', tp_size=8)\n",
    "sglang-1  | [2026-05-07 05:50:00.123 DP0 TP0 EP0] server_args={'tp_size': 4}",
    "server_args=ServerArgs(tp_size=2)",
    "Loading server_args= 10%|#  | 1/10 [00:01<00:09, 1.0it/s]\r[2025-10-22 10:20:00] server_args=ServerArgs(tp_size=8)",
    "[2025-10-22 10:20:00] Not a dump: server_args=ServerArgs(tp_size=8)",
])
def test_the_config_prefix_is_read_from_the_line_head_as_from_the_whole_line(line: str) -> None:
    head, whole = sglang_log._config_prefix(line), sglang_log.CONFIG_LINE.match(line)
    assert (head is None) == (whole is None)
    if head is not None and whole is not None:
        assert head.end() == whole.end() and head.groupdict() == whole.groupdict()


def test_an_integer_beyond_a_float_s_digits_is_read_exactly(tmp_path: Path) -> None:
    source = tmp_path / "big-counts.log"
    source.write_text("[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 1, #token: 1234567890123456789, weird: 1\n"
                      "[2026-01-01 10:00:01 TP0] Decode batch. #running-req: 2, #token: 12.0\n")
    rows = sglang_log.parse(source, ParseOptions()).tables["decode_stats"].to_pylist()
    assert [row["num_tokens"] for row in rows] == [1234567890123456789, 12]
