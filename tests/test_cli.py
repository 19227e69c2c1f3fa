"""The `specdash` command: one line per file, exit status, clear errors without tracebacks."""
from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from dashboard.cli import main
from tests.conftest import ROOT

DEMO_K2 = ROOT / "data" / "demo" / "phase-0" / "k2-drafter"


def test_ingest_prints_one_line_per_file(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(DEMO_K2), "--phase", "phase-0", "--variant", "k2-drafter"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    # the folder also holds the illustrative sweep and its rerun, and per-request statistics (#19, #21)
    assert len(lines) == 7
    by_name = {line.split(":")[0].rsplit("/", 1)[-1]: line for line in lines}
    assert "bench_json, 8 rows loaded" in by_name["bench.json"]
    assert sum("kineto_trace" in line for line in lines) == 2
    assert "sglang_log" in by_name["server.log"] and "rows loaded" in by_name["server.log"]
    assert "spec_request_json" in by_name["requests.jsonl"]
    assert "bench_speculative_jsonl" in by_name["bench_speculative.jsonl"]


def test_gzipped_files_are_read(isolated_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = tmp_path / "k2.json.gz"
    packed.write_bytes(gzip.compress((DEMO_K2 / "bench.json").read_bytes()))
    assert main(["ingest", str(packed)]) == 0
    assert "bench_json, 8 rows loaded" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("truncated.json", b'{"format": "specdash.bench/1", "runs": [{"tokens": 20', "invalid JSON"),
        ("nothing.log", b"hello\nthis is not a server log\n", "no format reads it; it shows nothing of any format read: text whose first line is 'hello'"),
        ("blob.bin", b"\x00\x01\x02binary\x00" * 50, "binary content"),
        ("empty.log", b"", "empty"),
        ("broken.json.gz", gzip.compress(b'{"runs": []}' * 1000, mtime=0)[:40], "gzip"),
    ],
)
def test_bad_input_gives_one_clear_line_and_exit_1(
    isolated_store: Path, tmp_path: Path, name: str, content: bytes, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    good = DEMO_K2 / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "ingest", "ingest", str(path), str(good), "--db", str(isolated_store)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    failure = [line for line in result.stderr.splitlines() if line.startswith("FAILED")]
    assert len(failure) == 1 and str(path) in failure[0] and expected in failure[0]
    assert "bench_json, 8 rows loaded" in result.stdout  # the good file still loaded
    assert f"1 of 2 files failed: {path}" in result.stderr


def test_the_command_leaves_its_output_and_store_complete(isolated_store: Path) -> None:
    """``specdash`` ends with os._exit (no interpreter teardown): what it printed and stored must all be there."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}

    def specdash(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "dashboard", *args, "--db", str(isolated_store)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)

    ingested = specdash("ingest", str(DEMO_K2 / "server.log"))
    assert ingested.returncode == 0, ingested.stderr
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        decode = con.execute("SELECT count(*) FROM decode_stats").fetchone()[0]
        stored = decode + sum(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("prefill_stats", "server_configs"))
    assert decode > 0 and f"{stored} rows loaded" in ingested.stdout
    status = specdash("status")  # prints without flushing: its output is still in the buffer at the end
    assert status.returncode == 0 and re.search(rf"\n  decode_stats +{decode:,} rows\n", status.stdout)


def test_json_reports_one_object_per_file(isolated_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, not a log\n")
    assert main(["ingest", str(DEMO_K2 / "bench.json"), str(bad), "--json"]) == 1
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (first["status"], first["kind"], first["rows_loaded"]) == ("loaded", "bench_json", 8)
    assert first["summary"].startswith(f"{DEMO_K2 / 'bench.json'}: bench_json, 8 rows loaded")
    assert second["status"] == "failed" and second["summary"].startswith(f"FAILED  {bad}:")


def test_missing_path_is_named(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "/no/such/file.log"]) == 1
    assert "/no/such/file.log: no such file" in capsys.readouterr().err


def test_status_json_reports_counts(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ingest", str(DEMO_K2 / "bench.json")])
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"]["bench_runs"] == 7 and info["sources_by_kind"] == {"bench_json": 1}


def test_db_flag_beats_environment(isolated_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.duckdb"
    assert main(["ingest", str(DEMO_K2 / "bench.json"), "--db", str(other)]) == 0
    assert other.exists() and not isolated_store.exists()


class FakeTerminal:
    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_progress_bar_shows_bytes_per_second_for_big_files(monkeypatch: pytest.MonkeyPatch) -> None:
    from ingest import progress

    monkeypatch.setattr(progress, "REDRAW_EVERY_S", 0.0)
    terminal = FakeTerminal()
    bar = progress.ProgressBar("big.log", stream=terminal)  # type: ignore[arg-type]
    bar(1_000, 2_000)  # small file: no bar
    assert terminal.text == ""
    bar(50_000_000, 100_000_000)
    assert "50.0%" in terminal.text and "50/100 MB" in terminal.text and "MB/s" in terminal.text
    bar.finish()
    assert terminal.text.endswith("\r")
    assert progress.rate_note(300_000_000, 1.0) == ", 300 MB in 1.0 s (300 MB/s)"
    assert progress.rate_note(1_000, 1.0) == ""


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


LOGS = sorted(str(path) for path in (ROOT / "tests" / "fixtures" / "logs").glob("*.log"))


def test_the_program_ingests_logs_without_loading_pandas(isolated_store: Path) -> None:
    """pyarrow would import pandas on its first array conversion (0.1 s of a small ingest)."""
    code = (
        "import sys; from dashboard.cli import main\n"
        f"code = main(['ingest', *{LOGS!r}, '--db', {str(isolated_store)!r}], own_process=True)\n"
        "loaded = 'pandas' in sys.modules\n"
        "import pyarrow as pa\n"
        "print(code, loaded, type(pa.table({'a': [1]}).to_pandas()).__name__)"
    )
    assert run_python(code) == "0 False DataFrame"  # and pyarrow still loads pandas when asked for it


def test_pyarrow_keeps_its_pandas_handling_when_ingest_runs_in_another_program(isolated_store: Path) -> None:
    code = (
        "import sys; from dashboard.cli import main\n"
        f"main(['ingest', {LOGS[0]!r}, '--db', {str(isolated_store)!r}])\n"
        "import pandas as pd, pyarrow as pa\n"
        "print(pa.array(pd.Series([1, None], dtype='Int64')).null_count)"
    )
    assert run_python(code) == "1"


def every_kind_of_input() -> list[str]:
    fixtures = ROOT / "tests" / "fixtures"
    files = [path for path in fixtures.rglob("*") if path.is_file() and not path.name.endswith(".expected.json")]
    return [str(ROOT / "data" / "demo"), *sorted(str(path) for path in files)]


def stored_rows(db: Path) -> dict[str, list[tuple]]:
    """Every table's rows, without what differs between two ingests of the same files (times, random ids)."""
    volatile = {"ingested_at", "ingest_group", "applied_at", "value"}  # value: store_meta's last-change id
    with duckdb.connect(str(db), read_only=True) as con:
        columns: dict[str, list[str]] = {}
        for table, column in con.execute(
            """SELECT table_name, column_name FROM information_schema.columns JOIN information_schema.tables USING (table_name)
               WHERE table_type = 'BASE TABLE' ORDER BY table_name, ordinal_position"""  # the views are computed from these
        ).fetchall():
            if column not in volatile:
                columns.setdefault(table, []).append(f'"{column}"')
        return {table: con.execute(f"SELECT {', '.join(kept)} FROM {table} ORDER BY ALL").fetchall() for table, kept in columns.items()}


def test_the_program_stores_what_a_process_with_pandas_loaded_stores(tmp_path: Path) -> None:
    """Keeping pandas unloaded changes how pyarrow treats pandas objects; no input of any kind may store differently."""
    inputs = every_kind_of_input()
    program, library = tmp_path / "program.duckdb", tmp_path / "library.duckdb"
    run_python(f"from dashboard.cli import main; main(['ingest', *{inputs!r}, '--db', {str(program)!r}], own_process=True)")
    run_python(f"import pandas; from dashboard.cli import main; main(['ingest', *{inputs!r}, '--db', {str(library)!r}])")
    program_rows, library_rows = stored_rows(program), stored_rows(library)
    assert len(program_rows["sources"]) >= 40 and sum(len(rows) for rows in program_rows.values()) > 1_000  # every kind of file
    assert program_rows == library_rows
