"""`specdash ingest DIR` on an ordinary results folder: data loads, notes and images are skipped in one line.

The rule (docs/formats.md, "Files that are not data"): a file found by walking a directory that no
format's sniffer claims, and that is plainly not data (a README, ``*.md``/``*.source`` notes, an
image or other binary), is skipped and counted; the exit status stays 0 when every data file
loaded. Content decides first: a Markdown note that holds a run table is data. A file named on
the command line is always read as data, and ``--strict`` makes skipped files failures again.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.errors import IngestError
from ingest.pipeline import ingest_paths
from ingest.reader import read_all
from ingest.registry import UNRECOGNIZED_HINT, detect, registered_formats
from tests.conftest import FIXTURES, ROOT

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
SGLANG_LOG = FIXTURES / "logs" / "sglang-eagle3-basic.log"
SERVING_JSONL = FIXTURES / "bench" / "sglang-2025-06-accept-length.jsonl"
MARKDOWN_TABLE = FIXTURES / "bench" / "team-phase0-markdown-table.txt"
NOT_DATA = {"README.md": "README", "x.source": "*.source notes", "plot.png": "PNG"}


def specdash(*args: str, db: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "dashboard", *args, *(["--db", str(db)] if db is not None else [])]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def stored(db: Path) -> dict[str, str]:
    """The store's ``sources`` rows as {absolute path: kind}."""
    with duckdb.connect(str(db), read_only=True) as con:
        return dict(con.execute("SELECT path, kind FROM sources").fetchall())


@pytest.fixture
def results_folder(tmp_path: Path) -> Path:
    """A results folder as people keep them: data files (one in a subfolder) beside notes and a plot."""
    folder = tmp_path / "phase-1"
    (folder / "bench").mkdir(parents=True)
    shutil.copyfile(SGLANG_LOG, folder / "server.log")
    shutil.copyfile(SERVING_JSONL, folder / "bench" / "serving.jsonl")
    shutil.copyfile(MARKDOWN_TABLE, folder / "notes.md")  # a Markdown note holding a run table: data
    (folder / "README.md").write_text("# Phase 1\n\nK2 drafter against the baseline, 5 runs each.\n")
    (folder / "x.source").write_text("https://github.com/sgl-project/sglang/issues/9585\nexcerpt of the issue's log\n")
    (folder / "plot.png").write_bytes(PNG)
    return folder


DATA_KINDS = {"server.log": "sglang_log", "bench/serving.jsonl": "bench_serving_jsonl", "notes.md": "bench_table_text"}


def test_a_results_folder_loads_its_data_and_skips_notes_and_images_in_one_line(
    results_folder: Path, isolated_store: Path
) -> None:
    result = specdash("ingest", str(results_folder), db=isolated_store)
    assert result.returncode == 0, result.stderr
    assert "FAILED" not in result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 1, result.stdout
    head, tail = "skipped 3 files that are not experiment data: ", " (--strict makes them failures)"
    assert skipped[0].startswith(head) and skipped[0].endswith(tail)
    assert sorted(skipped[0].removeprefix(head).removesuffix(tail).split(", ")) == sorted(f"1 {what}" for what in NOT_DATA.values())
    assert not any(name in result.stdout for name in NOT_DATA)  # counted, not listed
    expected = {str((results_folder / name).resolve()): kind for name, kind in DATA_KINDS.items()}
    assert stored(isolated_store) == expected  # every data file, the Markdown run table included


def test_strict_makes_the_skipped_files_failures(results_folder: Path, isolated_store: Path) -> None:
    result = specdash("ingest", str(results_folder), "--strict", db=isolated_store)
    assert result.returncode == 1
    failures = [line for line in result.stderr.splitlines() if line.startswith("FAILED")]
    assert sorted(Path(line.split()[1].rstrip(":")).name for line in failures) == sorted(NOT_DATA)
    assert "3 of 6 files failed: " in result.stderr
    assert not [line for line in result.stdout.splitlines() if line.startswith("skipped")]
    assert len(stored(isolated_store)) == len(DATA_KINDS)  # the data still loaded


@pytest.mark.parametrize("name", sorted(NOT_DATA))
def test_a_file_named_on_the_command_line_is_read_as_data(results_folder: Path, isolated_store: Path, name: str) -> None:
    path = results_folder / name
    result = specdash("ingest", str(path), str(results_folder / "server.log"), db=isolated_store)
    assert result.returncode == 1
    [failure] = [line for line in result.stderr.splitlines() if line.startswith("FAILED")]
    assert failure.startswith(f"FAILED  {path}: ")
    if name != "plot.png":  # text no format claims: the one-line hint
        assert failure.startswith(f"FAILED  {path}: no format reads it; ") and failure.endswith(f" — {UNRECOGNIZED_HINT}")
    assert "specdash formats" in failure or "PNG" in failure
    # one line that names the closest format or the content's shape, not a list of every format
    assert "expected one of" not in result.stderr and len(failure) < len(str(path)) + 260
    assert f"1 of 2 files failed: {path}" in result.stderr


def test_an_unrecognized_text_file_in_a_folder_still_fails(tmp_path: Path, isolated_store: Path) -> None:
    """``*.txt`` and ``*.log`` are where data lives: only the names of notes are skipped."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copyfile(SGLANG_LOG, folder / "server.log")
    (folder / "results.txt").write_text("hello, this is not a benchmark\n")
    (folder / "crashed.log").write_bytes(b"\x00" * 4096 + SGLANG_LOG.read_bytes()[:2000])  # text after a NUL run
    reports = {report.path.name: report for report in ingest_paths([folder], isolated_store)}
    assert reports["server.log"].status == "loaded"
    assert reports["results.txt"].failed and UNRECOGNIZED_HINT in str(reports["results.txt"].error)
    assert reports["crashed.log"].failed and "NUL" in str(reports["crashed.log"].error)


def test_binaries_are_told_from_text_by_content(tmp_path: Path, isolated_store: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "store.bin").write_bytes(bytes(range(256)) * 64)
    (folder / "figure").write_bytes(PNG)  # no extension: the magic number says PNG
    (folder / "empty.md").write_text("")
    shutil.copyfile(SGLANG_LOG, folder / "server.log")
    reports = {report.path.name: report for report in ingest_paths([folder], isolated_store)}
    assert {name: report.not_data for name, report in reports.items() if report.status == "skipped"} == {
        "store.bin": "binary (NUL bytes)", "figure": "PNG", "empty.md": "Markdown",
    }
    assert reports["server.log"].status == "loaded"


def test_json_reports_a_skipped_file_as_an_object_and_keeps_stdout_json(
    results_folder: Path, isolated_store: Path
) -> None:
    result = specdash("ingest", str(results_folder), "--json", db=isolated_store)
    assert result.returncode == 0, result.stderr
    records = {Path(record["path"]).name: record for record in map(json.loads, result.stdout.splitlines())}
    assert {name: (records[name]["status"], records[name]["not_data"]) for name in NOT_DATA} == {
        name: ("skipped", what) for name, what in NOT_DATA.items()
    }
    assert records["notes.md"]["status"] == "loaded"
    assert "skipped 3 files that are not experiment data" in result.stderr


def test_a_folder_of_notes_only_is_a_failure(tmp_path: Path, isolated_store: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("# notes\n")
    result = specdash("ingest", str(tmp_path / "docs"), db=isolated_store)
    assert result.returncode == 1
    assert f"FAILED  {tmp_path / 'docs'}: no experiment data found, only 1 README" in result.stderr


# --- specdash formats -----------------------------------------------------------------------------


def test_formats_lists_every_registered_format_with_an_example(isolated_store: Path) -> None:
    result = specdash("formats")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for file_format in registered_formats():
        assert file_format.example, f"{file_format.kind}: FORMAT declares no example line"
        header = lines.index(f"{file_format.kind}: {file_format.description}")
        assert lines[header + 1] == f"    {file_format.example}"
    assert not isolated_store.exists()  # no store is needed, none is made


def test_formats_json_has_one_object_per_format() -> None:
    result = specdash("formats", "--json")
    listed = json.loads(result.stdout)
    assert [entry["kind"] for entry in listed] == [f.kind for f in registered_formats()]
    assert all(entry["example"] and "\n" not in entry["example"] for entry in listed)


def fixture_texts_by_kind() -> dict[str, list[str]]:
    """The content of every fixture and demo file, by the kind detection gives it (whitespace removed)."""
    texts: dict[str, list[str]] = {}
    for path in sorted([*FIXTURES.rglob("*"), *(ROOT / "data" / "demo").rglob("*")]):
        if not path.is_file() or path.name.endswith((".expected.json", ".py")):
            continue
        try:
            kind = detect(path).kind
        except IngestError:
            continue
        texts.setdefault(kind, []).append(re.sub(r"\s+", "", read_all(path).decode("utf-8", errors="replace")))
    return texts


def test_every_example_line_is_taken_from_a_fixture_of_its_format() -> None:
    """Each part of an example ("…" marks what is left out) is in one fixture file of that format."""
    texts = fixture_texts_by_kind()
    for file_format in registered_formats():
        parts = [re.sub(r"\s+", "", part) for part in file_format.example.split("…")]
        parts = [part for part in parts if part]
        assert any(all(part in text for part in parts) for text in texts.get(file_format.kind, [])), (
            f"{file_format.kind}: example {file_format.example!r} is not in any fixture of that kind"
        )


# --- the shared corpus ----------------------------------------------------------------------------


# Corpus files that hold nothing to store, with why: each fails alone, by name, and is the only reason the corpus
# ingest exits 1. Add an entry only with its reason.
UNREAD_CORPUS_FILES: dict[str, str] = {
    "sglang-pr-18332-finish-log-wrapped.log": "the poster's excerpt stops inside GenerateReqInput, before "
                                              "out={'meta_info': …}: a Finish: line with no request statistics",
}


@pytest.mark.corpus
def test_the_corpus_folders_ingest_with_every_data_file_loaded(corpus_dir: Path, isolated_store: Path) -> None:
    folders = [corpus_dir / "logs", corpus_dir / "bench", corpus_dir / "new"]  # traces: test_every_file's store
    result = specdash("ingest", *map(str, folders), db=isolated_store)
    files = sorted(path for folder in folders for path in folder.rglob("*") if path.is_file())
    notes = [path for path in files if path.suffix == ".source" or path.name.startswith("README")]
    unread = {path.name for path in files if path.name in UNREAD_CORPUS_FILES}
    failed = {Path(line.split()[1].rstrip(":")).name for line in result.stderr.splitlines() if line.startswith("FAILED")}
    assert failed == unread, result.stderr  # a note that a format claims (a .source quoting a log line) fails too
    assert result.returncode == (1 if unread else 0), result.stderr
    data = {str(path.resolve()) for path in files if path not in notes and path.name not in unread}
    assert data <= set(stored(isolated_store)), sorted(data - set(stored(isolated_store)))
    sources = sum(1 for path in notes if path.suffix == ".source")
    skipped = [line for line in result.stdout.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 1 and skipped[0].startswith(
        f"skipped {len(notes)} files that are not experiment data: {sources} *.source notes"), skipped


def test_the_ingest_page_lists_the_formats_for_uploads_that_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upload no format reads fails with the hint naming `specdash formats`: the page shows the same list."""
    from tests.test_app import open_sections, run_page

    app = open_sections(run_page("views/ingest.py", tmp_path / "store.duckdb", monkeypatch))  # the list opens with a click
    [expander] = [e for e in app.expander if "specdash formats" in e.label]
    [table] = expander.dataframe
    assert list(table.value["kind"]) == [f.kind for f in registered_formats()]
    assert all(table.value["example line"])
