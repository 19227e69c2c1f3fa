"""SGLang `Finish:` request lines (--log-requests): per-request spec statistics from out={'meta_info': …}.

Real samples: one whole Finish line from sgl-project/sglang issue #25887 (a server not speculating: its meta_info
has no spec_* field) and, in the shared corpus, PR #18332's hard-wrapped line cut before out=. No posted Finish
line carrying spec_* fields was found, so the spec path is exercised with a splice (its fixture's .source says so;
``spliced`` rebuilds it here, in the open): the #25887 line with the spec fields of one real response (PR #33518's
comment) appended to its meta_info.
Every number asserted below is read from one of those two posts; none is made up.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dashboard.analysis import acceptance
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.parsers.sglang import request_log
from ingest.pipeline import ingest_paths
from ingest.registry import detect
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
NO_SPEC = FIXTURES / "acceptance" / "sglang-issue-25887-finish-line-no-spec.log"
SPLICED = FIXTURES / "acceptance" / "sglang-finish-line-spliced-25887-with-33518-spec.log"
SERVER_LOG = FIXTURES / "logs" / "sglang-eagle3-basic.log"
# From the #25887 line: its rid / meta_info id, prompt and completion tokens, and the collector's ISO time.
RID = "bf890d9ca8ce4008bef7ef25d97f8fba"
# PR #33518's comment (ormandj, 2026-08-07): one DSpark request's spec fields, as posted.
SPEC_33518 = ("'spec_accept_rate': 0.2930232558139535, 'spec_accept_length': 2.4651162790697674, "
              "'spec_num_correct_drafts': 63, 'spec_num_proposed_drafts': 215, "
              "'spec_verify_ct': 43, 'spec_correct_drafts_histogram': [11, 14, 11, 4, 0, 3]")


def real_line() -> str:
    return NO_SPEC.read_text().rstrip("\n")


def spliced(spec: str = SPEC_33518) -> str:
    """The #25887 line with the #33518 spec fields appended to its meta_info (which ends the line with '}}')."""
    line = real_line()
    assert line.endswith("}}")
    return f"{line[:-2]}, {spec}}}}}"


def parse(path: Path) -> ParsedSource:
    return request_log.parse(path, ParseOptions())


def write(tmp_path: Path, *lines: str, name: str = "finish.log") -> Path:
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_the_real_line_reads_but_has_nothing_to_store() -> None:
    parsed = ParsedSource(kind=request_log.KIND)
    (record,) = request_log.records_of(NO_SPEC, parsed)
    meta = request_log.finished_meta_info(NO_SPEC, parsed, record)
    assert meta is not None
    assert (meta["id"], meta["prompt_tokens"], meta["completion_tokens"]) == (RID, 32472, 23297)
    assert meta["finish_reason"]["message"] == "Request running timeout reached."
    assert request_log.logged_time(record.prefix) == "2026-05-20 08:02:44.565"
    with pytest.raises(MalformedInput, match="without spec statistics in meta_info .no spec_verify_ct") as caught:
        parse(NO_SPEC)
    assert "--speculative-algorithm" in (caught.value.hint or "")


def test_the_corpus_line_cut_before_out_fails_saying_so(corpus_dir: Path) -> None:
    path = corpus_dir / "new" / "sglang_meta_info" / "sglang-pr-18332-finish-log-wrapped.log"
    assert detect(path).kind == request_log.KIND
    with pytest.raises(MalformedInput, match=r"an SGLang `Finish:` request line \(--log-requests\), cut before its "
                                             r"out=\{'meta_info': …\}: no request statistics"):
        parse(path)


def test_a_note_that_quotes_a_finish_line_is_no_request_log(corpus_dir: Path) -> None:
    # The corpus's own .source note quotes `Finish: obj=GenerateReqInput(...), out={...}` in prose: a directory
    # ingest skips it as a note only when no format claims it.
    note = corpus_dir / "new" / "sglang_meta_info" / "sglang-pr-18332-finish-log-wrapped.source"
    assert not request_log.sniff(note.read_bytes())
    assert request_log.sniff(b"[2026-02-05 03:05:46 TP0] Finish: obj=GenerateReqInput(rid='a')")
    assert request_log.sniff(b"1779264164565\t2026-05-20T08:02:44.565Z\tFinish: obj=GenerateReqInput(rid='a')")


def test_the_spliced_fixture_is_the_two_posts_verbatim() -> None:
    assert SPLICED.read_text() == spliced() + "\n"


def test_a_request_with_spec_fields_is_one_row_as_spec_requests_builds_it() -> None:
    parsed = parse(SPLICED)
    (row,) = parsed.tables["acceptance_requests"].to_pylist()
    assert (row["request_id"], row["engine"], row["origin"], row["line_no"]) == (RID, "sglang", "SGLang meta_info", 1)
    assert (row["input_tokens"], row["output_tokens"]) == (32472, 23297)  # the #25887 request's own counts
    assert (row["spec_steps"], row["accepted_drafts"], row["draft_tokens"]) == (43, 63, 215)
    assert row["accept_length"] == pytest.approx(106 / 43)  # #33518: completion_tokens 106 ÷ 43 verify steps
    assert row["accept_rate"] == pytest.approx(63 / 215)
    assert row["histogram"] == [11, 14, 11, 4, 0, 3] and row["num_spec_tokens"] == 5
    assert json.loads(row["extra"]) == {"logged_at": "2026-05-20 08:02:44.565"}
    assert parsed.warnings == []


def test_a_hard_wrapped_line_is_joined(tmp_path: Path) -> None:
    line = spliced()
    # As PR #18332's poster wrapped theirs: about 100 characters a line, the space kept at the end of the cut.
    cuts = [line[i:i + 100] for i in range(0, len(line), 100)]
    wrapped = parse(write(tmp_path, *cuts, name="wrapped.log")).tables["acceptance_requests"].to_pylist()
    whole = parse(write(tmp_path, line)).tables["acceptance_requests"].to_pylist()
    assert len(cuts) > 20 and wrapped == whole


def test_the_histograms_first_name_is_read_as_the_histogram(tmp_path: Path) -> None:
    spec = SPEC_33518.replace("spec_correct_drafts_histogram", "spec_accept_histogram")  # PR #18332's name
    (row,) = parse(write(tmp_path, spliced(spec))).tables["acceptance_requests"].to_pylist()
    assert row["histogram"] == [11, 14, 11, 4, 0, 3] and "spec_accept_histogram" not in (row["extra"] or "")


def test_a_truncated_line_is_skipped_with_a_warning_naming_it(tmp_path: Path) -> None:
    cut = real_line()[: real_line().index("'completion_tokens'")]  # the real line, cut inside its meta_info
    parsed = parse(write(tmp_path, spliced(), cut, spliced()))
    rows = parsed.tables["acceptance_requests"].to_pylist()
    assert [row["line_no"] for row in rows] == [1, 3]
    assert parsed.warnings == [f"{tmp_path / 'finish.log'}:2: Finish line skipped: its repr does not close (cut short)"]
    assert parsed.skipped[request_log.CUT] == 1


def test_requests_without_spec_fields_are_counted_beside_those_with(tmp_path: Path) -> None:
    parsed = parse(write(tmp_path, real_line(), spliced()))
    assert [row["line_no"] for row in parsed.tables["acceptance_requests"].to_pylist()] == [2]
    assert parsed.skipped[request_log.NO_SPEC] == 1


def test_a_whole_server_log_stays_the_server_log_formats(tmp_path: Path) -> None:
    assert detect(SERVER_LOG).kind == "sglang_log"
    mixed = write(tmp_path, *SERVER_LOG.read_text().splitlines(), spliced(), name="server.log")
    assert not request_log.sniff(mixed.read_bytes()) and detect(mixed).kind == "sglang_log"
    assert detect(write(tmp_path, spliced(), name="grep.log")).kind == request_log.KIND


def test_the_acceptance_page_lists_the_requests(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    reports = ingest_paths([SPLICED], db, variant="dspark")
    assert not any(report.failed for report in reports)
    worst = acceptance.worst_requests(db)
    assert worst[["variant", "request_id", "spec_steps", "output_tokens", "line_no"]].values.tolist() == [
        ["dspark", RID, 43, 23297, 1]]
    assert worst["accept_length"].iloc[0] == pytest.approx(106 / 43)
