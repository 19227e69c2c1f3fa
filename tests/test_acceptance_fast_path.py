"""spec_requests' fast path (msgspec, columns at once) gives exactly the general path's rows, warnings and errors.

The fast path reads one vLLM response per line whose only spec object is ``metrics.speculative_decoding``
(issue #19 "Scale": a million of them must ingest faster than ``json.loads`` reads them). Every other
line goes through the general path. Here each file is parsed twice — as shipped, and with the fast path
switched off — and the two results must be identical, on a mix of lines that take either path, in any order.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.bench_acceptance import generate
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.parsers.metrics import spec_requests
from tests.conftest import FIXTURES

OPTIONS = ParseOptions(year=2025)


def spec(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"mean_acceptance_length": 1.2325581395348837, "draft_acceptance_rate": 0.07751937984496124,
                            "acceptance_histogram": [39, 1, 0, 3], "num_spec_steps": 43, "num_accepted_draft_tokens": 10,
                            "num_draft_tokens": 129, "num_spec_tokens": 3}
    base.update(changes)
    return {key: value for key, value in base.items() if value is not ...}


def response(i: int, sd: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"id": f"chatcmpl-{i}", "object": "chat.completion", "choices": [{"index": 0, "text": "x"}],
                              "usage": {"prompt_tokens": 10 + i, "completion_tokens": 53}, "metrics": {"speculative_decoding": sd or spec()}}
    record.update(top)
    return {key: value for key, value in record.items() if value is not ...}


# Lines of every kind: fast ones with each identify() source, and ones the fast path must hand over.
LINES: list[str] = [
    json.dumps(response(0)),
    json.dumps(response(1, dataset="gsm8k")),
    json.dumps(response(2, metadata={"x_request_id": "r-2", "category": "code"}, id="")),  # empty id: metadata's
    json.dumps(response(3, spec(mean_acceptance_length=None))),  # derived accept length, extra says so
    json.dumps(response(4, spec(mean_acceptance_length=...))),  # absent: derived as well
    json.dumps(response(5, spec(num_accepted_draft_tokens=11))),  # disagrees with the histogram: a warning
    json.dumps(response(6, spec(acceptance_histogram=[]), usage=None)),  # empty histogram, no usage
    json.dumps({"metrics": {"speculative_decoding": spec(), "rid": 77, "prompt_tokens": {"value": 5},
                            "output_sequence_length": None, "task": "mt-bench"}, "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
    json.dumps(response(8, spec(acceptance_histogram_by_draft_length={"3": [39, 1, 0, 3]}))),  # unknown key: general path
    json.dumps(response(9, spec(num_spec_steps=43.0))),  # 43.0 as a count: general path accepts it
    json.dumps(response(10, spec(acceptance_histogram={"0": 39, "1": 1, "3": 3}))),  # sparse dict: general path
    json.dumps({"choices": [{"index": 0, "speculative_decoding_stats": spec()}]}),  # per-choice shape
    json.dumps(response(12)).replace('"chatcmpl-12"', '"chatcmpl-\\u0031\\u0032"'),  # escapes: general path
    '{"choices": [ ... ], "usage": { ... }, "metrics": {"speculative_decoding": ' + json.dumps(spec()) + "}}",  # placeholders
    "not json at all",
    "",
    json.dumps(response(15, spec(draft_acceptance_rate=0.0, num_spec_steps=0, acceptance_histogram=None,
                                 num_accepted_draft_tokens=0))),
    json.dumps({"meta_info": {"id": "s-1", "spec_verify_ct": 4, "spec_accept_length": 2.0, "completion_tokens": 8,
                              "spec_correct_drafts_histogram": [1, 1, 2]}}),
    json.dumps(response(17, metrics_extra=1)),
    json.dumps(response(18, usage={"prompt_tokens": True, "completion_tokens": 3.0})),  # bool/float counts are not counts
]


def no_fast_lines(lines: list[str]) -> list[None]:  # spec_requests.fast_lines switched off
    return [None] * len(lines)


def parse_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ParsedSource, ParsedSource]:
    fast = spec_requests.parse(path, OPTIONS)
    with monkeypatch.context() as patch:
        patch.setattr(spec_requests, "fast_lines", no_fast_lines)
        general = spec_requests.parse(path, OPTIONS)
    return fast, general


def assert_same(fast: ParsedSource, general: ParsedSource) -> None:
    assert fast.tables["acceptance_requests"].to_pylist() == general.tables["acceptance_requests"].to_pylist()
    assert fast.tables["acceptance_requests"].schema == general.tables["acceptance_requests"].schema
    assert fast.warnings == general.warnings
    assert dict(fast.skipped) == dict(general.skipped)
    assert (fast.engine, fast.lines_read) == (general.engine, general.lines_read)


def test_the_fast_path_takes_the_common_line_and_hands_the_rest_over() -> None:
    taken = [spec_requests.fast_decode(line) is not None for line in LINES]
    assert taken[:8] == [True] * 8
    assert taken[8:15] == [False] * 7
    assert taken[16] and not taken[17]


def fast_taken(lines: list[str]) -> list[bool]:
    return [value is not None for value in spec_requests.fast_lines(lines)]


@pytest.mark.parametrize("token", spec_requests.HANDED_OVER)
def test_each_hand_over_token_is_checked(token: str) -> None:
    assert spec_requests._hands_over(f'{{"a": "x{token}y"}}') and not spec_requests._hands_over('{"a": "xy"}')


def test_lines_checked_together_are_taken_as_each_line_checked_alone() -> None:
    alone = [line.startswith("{") and spec_requests.fast_decode(line) is not None for line in LINES]
    assert fast_taken(LINES) == alone  # a chunk with escapes and placeholders: each line is checked
    common = [json.dumps(response(i)) for i in range(5)]
    assert fast_taken(common) == [True] * 5  # a clean chunk: checked once
    second = json.dumps(response(5, choices=[{"index": 0, "metrics": {"speculative_decoding": spec()}}]))
    assert spec_requests.fast_decode(second) is None  # a second spec object goes to the general path...
    assert fast_taken([*common, second]) == [True] * 5 + [False]  # ...in a chunk of clean lines too


@pytest.mark.parametrize("order", ["as written", "reversed", "interleaved"])
def test_both_paths_give_the_same_rows_warnings_and_counts(order: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = {"as written": LINES, "reversed": LINES[::-1], "interleaved": LINES[::2] + LINES[1::2]}[order]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, general = parse_both(path, monkeypatch)
    assert_same(fast, general)
    rows = fast.tables["acceptance_requests"].to_pylist()
    assert [r["record_index"] for r in rows] == list(range(len(rows)))
    assert len(fast.warnings) >= 1  # the disagreeing accepted count


def test_a_file_of_common_responses_reads_the_same_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "common.jsonl"
    generate(path, 300)  # the benchmark's responses: string ids and datasets, counts in usage (read column-wise)
    fast, general = parse_both(path, monkeypatch)
    assert_same(fast, general)
    rows = fast.tables["acceptance_requests"].to_pylist()
    assert len(rows) == 300 and all(row["dataset"] and row["input_tokens"] and row["request_id"] for row in rows)


@pytest.mark.parametrize("name", ["vllm-responses-per-request-spec-metrics.jsonl", "sglang-responses-meta-info-spec.jsonl"])
def test_fixtures_read_the_same_both_ways(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same(*parse_both(FIXTURES / "acceptance" / name, monkeypatch))


@pytest.mark.parametrize("bad, message", [
    (json.dumps(response(1, spec(acceptance_histogram=[39, 1, 0, 2]))), "sum to 42, not to the 43 steps"),
    (json.dumps(response(1, spec(draft_acceptance_rate=7.75))), "acceptance rate 7.75 is not a fraction"),
])
def test_the_first_bad_line_is_the_one_named_whichever_path_reads_it(
    bad: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    later_bad = json.dumps(response(9, spec(acceptance_histogram={"0": 1}, num_spec_steps=5)))  # general path, also bad
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([LINES[0], LINES[9], LINES[1], bad, LINES[2], later_bad, "{not json"]) + "\n", encoding="utf-8")
    errors = []
    for fast_lines in (spec_requests.fast_lines, no_fast_lines):
        with monkeypatch.context() as patch:
            patch.setattr(spec_requests, "fast_lines", fast_lines)
            with pytest.raises(MalformedInput) as error:
                spec_requests.parse(path, OPTIONS)
        errors.append((error.value.line, str(error.value)))
    assert errors[0] == errors[1]
    assert errors[0][0] == 4 and message in errors[0][1]


def test_a_skipped_record_warning_stays_in_line_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = '{"metrics": {"speculative_decoding": ' + "[" * 5000 + "]" * 5000 + "}}"
    path = tmp_path / "skip.jsonl"
    path.write_text("\n".join([LINES[5], deep, LINES[5], LINES[0]]) + "\n", encoding="utf-8")
    fast, general = parse_both(path, monkeypatch)
    assert_same(fast, general)
    assert [w.split(":")[1] for w in fast.warnings] == ["1", "2", "3"]
