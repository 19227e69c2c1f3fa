"""A big log is read in blocks and handed to the store in batches: the result must not depend
on where the blocks or batches are cut, memory must not hold the whole file, and a file that
fails halfway must leave the store as it was."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from ingest.formats import ParseOptions
from ingest.parsers.logs import log_lines
from ingest.parsers.sglang import sglang_log
from ingest.pipeline import ingest_file

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
SGLANG_FIXTURES = sorted(FIXTURES.glob("sglang-*.log"))


def as_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: (row.get("line_no") or 0, row.get("segment") or 0))


@pytest.mark.parametrize("source", SGLANG_FIXTURES, ids=lambda path: path.stem)
def test_tiny_blocks_and_batches_give_the_same_tables(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = sglang_log.parse(source, ParseOptions())
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 300)  # a few lines per block: every boundary case occurs
    monkeypatch.setattr(sglang_log, "FLUSH_ROWS", 2)
    streamed = sglang_log.stream(source, ParseOptions())
    batches = list(streamed.batches or [])
    assert streamed.rows_streamed == sum(table.num_rows for _, table in batches)
    streamed.batches = iter(batches)
    cut = streamed.drain()
    for name in ("decode_stats", "prefill_stats", "server_configs"):
        assert as_rows(cut.tables[name]) == as_rows(whole.tables[name]), name
    assert cut.skipped == whole.skipped
    assert sorted(cut.warnings) == sorted(whole.warnings)


def test_rows_come_in_batches_while_the_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "long.log"
    source.write_text((FIXTURES / "sglang-eagle3-basic.log").read_text() * 40)
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(sglang_log, "FLUSH_ROWS", 50)
    read: list[int] = []
    parsed = sglang_log.stream(source, ParseOptions(on_progress=lambda done, total: read.append(done)))
    assert parsed.batches is not None
    first_name, first = next(parsed.batches)
    assert first_name in ("decode_stats", "prefill_stats") and first.num_rows > 0
    assert read and read[-1] < source.stat().st_size  # the first batch came before the end of the file
    rest = list(parsed.batches)
    assert len(rest) >= 2
    assert parsed.tables["server_configs"].num_rows == 40  # final tables only once the batches are exhausted


def test_the_accept_rate_formula_is_kept_on_the_segments_config(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    report = ingest_file(FIXTURES / "sglang-eagle3-basic.log", db)
    assert report.error is None
    with duckdb.connect(str(db), read_only=True) as con:
        formulas = con.execute("SELECT accept_rate_formulas FROM server_configs").fetchall()
        extras = con.execute("SELECT count(*) FROM decode_stats WHERE extra LIKE '%accept_rate_formulas%'").fetchone()
    assert [json.loads(value) for (value,) in formulas] == [["tau/(num_steps+1)", "tau/num_draft_tokens"]]
    assert extras == (0,)


def test_a_file_failing_after_many_batches_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.duckdb"
    assert ingest_file(FIXTURES / "sglang-wrappers.log", db).error is None
    before = store_rows(db)
    source = tmp_path / "long.log"
    source.write_text((FIXTURES / "sglang-eagle3-basic.log").read_text() * 40)
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(sglang_log, "FLUSH_ROWS", 50)
    calls = {"blocks": 0}
    real_scan = sglang_log.scan_block

    def failing_scan(data: bytes, first_line_no: int, **options: object) -> sglang_log.BlockResult:
        calls["blocks"] += 1
        if calls["blocks"] == 6:
            raise OSError("disk went away")
        return real_scan(data, first_line_no, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(sglang_log, "scan_block", failing_scan)
    report = ingest_file(source, db)
    assert report.error is not None and "disk went away" in str(report.error)
    assert store_rows(db) == before
    assert not list(tmp_path.glob(".specdash-spool-*"))  # the parked batches are gone too


def test_parked_batches_are_removed_after_a_load(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    assert ingest_file(FIXTURES / "sglang-eagle3-basic.log", db).error is None
    assert not list(tmp_path.glob(".specdash-spool-*"))


def store_rows(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            table: con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("sources", "decode_stats", "prefill_stats", "server_configs")
        }


def test_a_streamed_file_already_stored_is_recognized_while_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.duckdb"
    source = tmp_path / "long.log"
    source.write_text((FIXTURES / "sglang-eagle3-basic.log").read_text() * 40)
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(sglang_log, "FLUSH_ROWS", 50)
    first = ingest_file(source, db)
    assert first.status == "loaded" and first.rows_loaded > 0
    before = store_rows(db)
    again = ingest_file(source, db)
    assert (again.status, again.source_id, again.error) == ("already ingested", first.source_id, None)
    assert store_rows(db) == before
    replaced = ingest_file(source, db, replace=True)
    assert replaced.status == "loaded" and store_rows(db) == before
