"""A drafter source's size is the checkpoint's: the files it consists of summed (issue #20), not the folder's
directory entry; and the Drafters page shows it."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from dashboard.analysis import definitions, drafters
from dashboard.drafter_frames import drafters_table
from ingest.parsers.drafters import drafter_checks, eagle3_drafter
from ingest.pipeline import ingest_paths
from tests import drafter_fixtures

FIXTURES = drafter_fixtures.OUT


def sizes(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        found = con.execute("SELECT d.name, s.size_bytes FROM drafters d JOIN sources s USING (source_id)").fetchall()
    return {name: size for name, size in found}


def summed(folder: Path, *names: str) -> int:
    return sum((folder / name).stat().st_size for name in names)


def test_a_folder_source_records_its_files_summed(tmp_path: Path) -> None:
    sharded, single = tmp_path / "sharded", tmp_path / "offsets-ok"
    shutil.copytree(FIXTURES / "sharded", sharded)
    shutil.copytree(FIXTURES / "offsets-ok", single)
    (sharded / "README.md").write_text("a model card: not part of the drafter\n" * 200)  # not summed
    db = tmp_path / "s.duckdb"
    ingest_paths([sharded, single], db)
    shards = sorted(p.name for p in sharded.glob("*.safetensors"))
    assert sizes(db) == {
        "sharded": summed(sharded, "config.json", *shards, "model.safetensors.index.json"),
        "offsets-ok": summed(single, "config.json", "model.safetensors"),
    }
    assert sizes(db)["sharded"] != sharded.stat().st_size  # not the directory entry (4096 on ext4)


def test_a_single_file_and_a_config_alone_record_what_was_read(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(FIXTURES / "full-vocab" / "config.json", alone / "drafter.config.json")
    weights = drafter_checks.load(FIXTURES / "offsets-ok" / "model.safetensors")  # read as its folder
    assert eagle3_drafter.checkpoint_size(weights) == summed(FIXTURES / "offsets-ok", "config.json", "model.safetensors")
    config = drafter_checks.load(alone / "drafter.config.json")
    assert eagle3_drafter.checkpoint_files(config) == [alone / "drafter.config.json"]
    assert eagle3_drafter.checkpoint_size(config) == (alone / "drafter.config.json").stat().st_size


def test_the_drafters_page_table_shows_the_checkpoint_size(tmp_path: Path) -> None:
    db = tmp_path / "p.duckdb"
    ingest_paths([FIXTURES / "sharded"], db)
    table = drafters_table(drafters.drafters(db)).set_index("drafter")
    assert table.loc["sharded", "checkpoint size"] == sizes(db)["sharded"]
    assert definitions.COLUMNS["checkpoint size"].quantity.text(10_179) == "10 KB"


@pytest.mark.parametrize("name", ["sharded", "offsets-ok", "full-vocab"])
def test_every_fixture_folder_is_its_files(name: str) -> None:
    folder = FIXTURES / name
    checkpoint = drafter_checks.load(folder)
    files = eagle3_drafter.checkpoint_files(checkpoint)
    assert folder / "config.json" in files and all(f.parent == folder for f in files)
    assert set(files) == {p for p in folder.iterdir() if p.name == "config.json" or p.suffix == ".safetensors"
                          or p.name == drafter_checks.INDEX}
