"""Variant identity (migration 019) and `specdash label`: names come from evidence, never one variant per
file, and a person can rename, merge, re-phase and delete after ingest, with every change recorded (on a DuckDB file
and on DuckLake on PostgreSQL)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dashboard import cli
from dashboard.analysis import data
from ingest.pipeline import ingest_paths
from ingest.storage import labels, store
from ingest.storage.location import StoreRef
from tests.conftest import FIXTURES
from tests.postgres import any_store, postgres  # noqa: F401 (fixtures)

LOGS = FIXTURES / "logs"
# Relabelling reads seven views of every file (labels.SHOWN_VARIANTS): ~5 s a change on a lake, where each table
# scanned asks the catalog for its files. The PostgreSQL catalog stands for both lakes here; tests/test_store.py runs
# on all three kinds.
ON_A_FILE_AND_A_TEAM_STORE = pytest.mark.parametrize("any_store", ["file", "postgres"], indirect=True)
NO_CONFIG = ["sglang-custom-logging.log", "sglang-gpu-prefix-2024.log", "sglang-wrappers.log"]  # no server config


def laid_out(root: Path, layout: dict[str, list[str]]) -> list[Path]:
    """Copy fixture logs into ``root/<folder>/`` as the layout says; returns the folders."""
    folders = []
    for folder, names in layout.items():
        target = root / folder
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(LOGS / name, target / name)
        folders.append(target)
    return folders


def variants_by_origin(db: StoreRef) -> set[tuple[str | None, str, str]]:
    sessions = data.sessions(db)
    return {(None if phase is None or phase != phase else phase, variant, variant_from)
            for phase, variant, variant_from in sessions[["phase", "variant", "variant_from"]].itertuples(index=False)}


def table_rows(db: StoreRef) -> dict[str, list[tuple]]:
    with store.writer(db) as con:
        names = [row[0] for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "AND table_catalog = current_database() ORDER BY 1").fetchall()]
        return {name: sorted(con.execute(f"SELECT * FROM {name}").fetchall(), key=repr) for name in names}


def test_files_without_labels_form_one_group_per_folder_not_one_variant_per_file(tmp_path: Path, isolated_store: Path) -> None:
    [runs] = laid_out(tmp_path, {"runs": NO_CONFIG})
    ingest_paths([runs], isolated_store)
    assert variants_by_origin(isolated_store) == {(None, "unlabelled: runs", "folder, no label")}


def test_a_phase_variant_folder_layout_names_both(tmp_path: Path, isolated_store: Path) -> None:
    laid_out(tmp_path / "exp", {"phase-1/k2-ft": NO_CONFIG[:1], "phase-1/scratch": NO_CONFIG[1:2], "notes": NO_CONFIG[2:]})
    ingest_paths([tmp_path / "exp"], isolated_store)
    assert variants_by_origin(isolated_store) == {
        ("phase-1", "k2-ft", "folder layout"), ("phase-1", "scratch", "folder layout"),
        (None, "unlabelled: notes", "folder, no label"),
    }


def test_a_server_config_names_its_variant_before_the_folder_and_keeps_models_apart(tmp_path: Path, isolated_store: Path) -> None:
    laid_out(tmp_path, {"runs": ["sglang-eagle3-basic.log", "sglang-dict-config-restarts.log"]})
    ingest_paths([tmp_path / "runs"], isolated_store)
    sessions = data.sessions(isolated_store)
    assert set(sessions["variant_from"]) == {"server config"}
    # Two baselines of different target models are two systems: each name carries its model.
    models = sessions.groupby("variant")["model"].nunique()
    assert (models <= 1).all(), models
    assert not any(variant.startswith("unlabelled") for variant in sessions["variant"])


@ON_A_FILE_AND_A_TEAM_STORE
def test_label_renames_merges_rephases_and_the_pages_follow(tmp_path: Path, any_store: StoreRef) -> None:
    first, second = laid_out(tmp_path, {"a": NO_CONFIG[:2], "b": NO_CONFIG[2:]})
    ingest_paths([first], any_store)
    ingest_paths([second], any_store)
    assert sorted(data.variants(any_store, [])) == ["unlabelled: a", "unlabelled: b"]

    renamed = labels.relabel(any_store, labels.LabelChange(variant="unlabelled: a", new_variant="eagle3-run"))
    assert renamed.action == "variant" and len(renamed.files) == 2
    assert sorted(data.variants(any_store, [])) == ["eagle3-run", "unlabelled: b"]

    labels.relabel(any_store, labels.LabelChange(variant="unlabelled: b", new_variant="eagle3-run"))  # a merge
    assert data.variants(any_store, []) == ["eagle3-run"]

    labels.relabel(any_store, labels.LabelChange(sources=[NO_CONFIG[2]], new_phase="phase-2"))
    assert variants_by_origin(any_store) == {(None, "eagle3-run", "--variant"), ("phase-2", "eagle3-run", "--variant")}
    assert "phase-2" in data.phases(any_store)

    history = labels.history(any_store)
    assert [h["action"] for h in history].count("variant") == 3 and history[0]["action"] == "phase"
    assert history[0]["old_variant"] == "eagle3-run" and history[0]["new_phase"] == "phase-2"


@ON_A_FILE_AND_A_TEAM_STORE
def test_delete_removes_a_files_rows_and_records_it(tmp_path: Path, any_store: StoreRef) -> None:
    [runs] = laid_out(tmp_path, {"runs": NO_CONFIG[:2]})
    ingest_paths([runs], any_store)
    report = labels.relabel(any_store, labels.LabelChange(sources=[NO_CONFIG[0]], delete=True))
    assert [Path(str(f["path"])).name for f in report.files] == [NO_CONFIG[0]]
    rows = table_rows(any_store)
    assert [Path(row[1]).name for row in rows["sources"]] == [NO_CONFIG[1]]
    assert all(report.files[0]["source_id"] not in repr(table) for name, table in rows.items() if name != "label_changes")
    assert [(h["action"], Path(str(h["path"])).name) for h in labels.history(any_store)] == [("delete", NO_CONFIG[0])]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (labels.LabelChange(variant="no such variant", new_variant="x"), "no file shows variant 'no such variant'"),
        (labels.LabelChange(sources=["nothing.log"], new_variant="x"), "no ingested file is 'nothing.log'"),
        (labels.LabelChange(variant="unlabelled: runs"), "say what to change"),
        (labels.LabelChange(variant="unlabelled: runs", new_variant="x", delete=True), "--delete removes"),
        (labels.LabelChange(new_variant="x"), "name the files to label"),
    ],
)
def test_a_change_that_cannot_be_made_names_why_and_leaves_the_store_as_it_was(
    tmp_path: Path, isolated_store: Path, change: labels.LabelChange, message: str
) -> None:
    [runs] = laid_out(tmp_path, {"runs": NO_CONFIG[:2]})
    ingest_paths([runs], isolated_store)
    before = table_rows(isolated_store)
    with pytest.raises(labels.LabelError, match=message.replace("(", r"\(")):
        labels.relabel(isolated_store, change)
    assert table_rows(isolated_store) == before


def test_a_variant_that_shares_a_file_with_another_is_refused_by_file(isolated_store: Path) -> None:
    ingest_paths([FIXTURES / "dashboard" / "sglang-two-lifetimes-eagle3-then-baseline.log"], isolated_store)
    before = table_rows(isolated_store)
    with pytest.raises(labels.LabelError, match="and of other variants: .*sglang-two-lifetimes-eagle3-then-baseline.log"):
        labels.relabel(isolated_store, labels.LabelChange(variant="baseline", new_variant="x"))
    assert table_rows(isolated_store) == before


def test_the_cli_labels_lists_sessions_and_history(tmp_path: Path, isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [runs] = laid_out(tmp_path, {"runs": NO_CONFIG[:1]})
    assert cli.main(["ingest", str(runs)]) == 0
    assert cli.main(["label", "--variant", "unlabelled: runs", "--to", "k2", "--phase", "p-live"]) == 0
    assert "relabelled 1 file(s)" in capsys.readouterr().out
    assert cli.main(["status", "--sessions"]) == 0
    listing = capsys.readouterr().out
    [session_id] = data.sessions(isolated_store)["session_id"]
    assert "p-live · k2  (variant from --variant)" in listing and session_id in listing
    assert cli.main(["label", "--history"]) == 0
    assert NO_CONFIG[0] in capsys.readouterr().out
    assert cli.main(["label", "--variant", "gone", "--to", "x"]) == 1
    assert "no file shows variant 'gone'" in capsys.readouterr().err
