"""`specdash export --parquet DIR`: every table of the store as Parquet, the same rows as the store holds."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dashboard.cli import main
from ingest.errors import NoStore, StoreError
from ingest.storage import export


def store_tables(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        names = export.base_tables(con)
        return {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}


def test_every_table_of_the_demo_store_reads_back_from_parquet(demo_db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    manifest = export.export_parquet(demo_db, folder)
    counts = store_tables(demo_db)
    assert {"sources", "sessions", "bench_runs", "decode_stats", "trace_ranks", "decisions"} <= set(counts)
    assert {name: table["rows"] for name, table in manifest["tables"].items()} == counts
    assert sorted(path.name for path in folder.iterdir()) == sorted([export.MANIFEST, *(f"{n}.parquet" for n in counts)])
    with duckdb.connect(str(demo_db), read_only=True) as con:
        stored = con.execute("SELECT session_id, run_index, tok_per_s FROM bench_runs ORDER BY ALL").fetchall()
        columns = [row[0] for row in con.execute("DESCRIBE bench_runs").fetchall()]
    runs = pq.read_table(folder / "bench_runs.parquet")
    assert runs.schema.names == columns
    assert sorted(zip(*(runs[c].to_pylist() for c in ("session_id", "run_index", "tok_per_s")), strict=True)) == stored
    assert json.loads((folder / export.MANIFEST).read_text())["migrations"] == manifest["migrations"] != []


def test_the_command_prints_each_file_and_a_second_export_replaces_the_first(demo_db: Path, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "lake"
    assert main(["export", "--db", str(demo_db), "--parquet", str(folder)]) == 0
    assert main(["export", "--db", str(demo_db), "--parquet", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "bench_runs.parquet" in out and f"to {folder}/" in out
    assert not [path for path in folder.iterdir() if path.name.startswith(".export-")]  # no staging folder left
    assert pq.read_table(folder / "sessions.parquet").num_rows == store_tables(demo_db)["sessions"]


def test_a_failed_export_leaves_the_folder_as_it_was(demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "lake"
    export.export_parquet(demo_db, folder)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    written = []

    def fail_on_the_third(reader: pa.RecordBatchReader, target: Path) -> dict[str, object]:
        reader.read_all()
        written.append(target)
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        return {"file": target.name, "rows": 0, "columns": []}

    monkeypatch.setattr(export, "write_batches", fail_on_the_third)
    with pytest.raises(OSError):
        export.export_parquet(demo_db, folder)
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_no_store_and_a_file_for_a_folder_are_named(tmp_path: Path, demo_db: Path) -> None:
    with pytest.raises(NoStore, match="no store to export"):
        export.export_parquet(tmp_path / "missing.duckdb", tmp_path / "out")
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    with pytest.raises(StoreError, match="is a file, not a folder") as raised:
        export.export_parquet(demo_db, a_file)
    assert str(a_file) in str(raised.value)
