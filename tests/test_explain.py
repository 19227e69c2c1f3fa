"""A file no format reads says which format it came closest to and what it lacks (issue #31, "When a file is not
read"), in one line on ingest and in detail with `specdash formats --explain FILE`."""
from __future__ import annotations

from pathlib import Path

import pytest

from ingest.cli import main
from ingest.errors import UnrecognizedFormat
from ingest.explain import candidates, nearest, shape
from ingest.reader import read_head
from ingest.registry import UNRECOGNIZED_HINT, detect, registered_formats
from tests.conftest import CORPUS, ROOT

FIXTURES = ROOT / "tests" / "fixtures"
NOT_DATA_SUFFIXES = (".source", ".expected.json", ".md", ".py")


def readable_files() -> list[tuple[Path, str]]:
    """Every fixture and corpus text file a format reads, with that format's kind."""
    found = []
    for path in sorted([*FIXTURES.rglob("*"), *(CORPUS.rglob("*") if CORPUS.is_dir() else [])]):
        if not path.is_file() or path.name.endswith(NOT_DATA_SUFFIXES):
            continue
        try:
            file_format = detect(path)
        except Exception:  # not data, or a fixture of a broken file: other tests cover them
            continue
        if not file_format.binary:
            found.append((path, file_format.kind))
    return found


def test_every_format_declares_signs_a_person_recognises() -> None:
    for file_format in registered_formats():
        assert file_format.signs, f"{file_format.kind} declares no signs (ingest.formats.Sign)"
        assert all(sign.what.strip() for sign in file_format.signs), file_format.kind


def test_each_file_a_format_reads_shows_that_formats_signs_most() -> None:
    """The signs describe their format: on every real file, the format that reads it is among the closest."""
    formats = registered_formats()
    wrong = []
    for path, kind in readable_files():
        close = candidates(read_head(path), formats)
        best = close[0].share if close else 0.0
        if not any(c.format.kind == kind and c.share == best for c in close):
            wrong.append(f"{path.name} ({kind}): closest {[(c.format.kind, round(c.share, 2)) for c in close[:3]]}")
    assert wrong == []


def test_a_summary_missing_a_line_names_its_format_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "spec_decode.txt"
    path.write_text("mean acceptance length: 2.56\nacceptance at token 0: 0.81\nacceptance at token 1: 0.55\n")
    with pytest.raises(UnrecognizedFormat) as raised:
        detect(path)
    message = str(raised.value)
    assert message == (
        f"{path}: no format reads it; it looks like vLLM spec_decode.py summary (a 'mean acceptance length:' line, "
        f"'acceptance at token i:' lines), but without a 'num_drafts:' line — {UNRECOGNIZED_HINT}"
    )


def test_a_table_without_a_figure_column_says_so() -> None:
    assert nearest(b"| name | colour |\n|---|---|\n| a | red |\n", registered_formats()) == (
        "it looks like a results table as people post it (a table (Markdown, grid or fixed-width) with its header rule), "
        "but without a header naming a throughput, speedup, accept length or acceptance rate")


def test_content_like_no_format_is_described_by_its_shape() -> None:
    assert nearest(b'{"model": "m", "score": 0.9}\n', registered_formats()) == (
        "it shows nothing of any format read: JSON whose keys are 'model', 'score'")
    assert shape(b"| name | colour |\n|---|---|\n| a | red |\n") == "a Markdown table whose columns are 'name', 'colour'"
    assert shape(b"a,b,c\n1,2,3\n") == "CSV whose columns are 'a', 'b', 'c'"
    assert shape(b"hello world\n") == "text whose first line is 'hello world'"
    # a pretty-printed document cut at the head's end: the keys quoted near its top
    assert shape(b'{\n  "alpha": 1,\n  "beta": [1, 2,\n') == "JSON whose keys are 'alpha', 'beta'"


def test_formats_explain_prints_the_reader_or_the_closest_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unread = tmp_path / "almost.log"
    unread.write_text("mean acceptance length: 2.56\n")
    log = FIXTURES / "logs" / "sglang-eagle3-basic.log"
    assert main(["formats", "--explain", str(log), str(unread), str(tmp_path / "missing.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{log}: read as sglang_log (SGLang server log (Decode/Prefill batch stats lines, server_args dump))"
    assert lines[1].startswith(f"{unread}: not read — no format reads it; it looks like vLLM spec_decode.py summary")
    assert lines[2] == ("  vllm_spec_decode_text: shows a 'mean acceptance length:' line; "
                        "lacks a 'num_drafts:' line, 'acceptance at token i:' lines")
    assert lines[-2] == "  content: text whose first line is 'mean acceptance length: 2.56'"
    assert lines[-1] == f"{tmp_path / 'missing.json'}: not read — no such file"
