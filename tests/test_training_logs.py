"""Drafter training logs (issue #31, the training part): the readers, the store's training_steps, the Acceptance page.

Golden values are read by hand from the fixtures (tests/fixtures/training/, each with its .source).
"""
from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from dashboard.analysis import acceptance
from dashboard.analysis.definitions import ACCEPT
from ingest.errors import IngestError, MalformedInput
from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.parsers.training import automodel_log, specforge_log
from ingest.parsers.training.progress import pieces
from ingest.pipeline import ingest_paths
from ingest.registry import detect
from ingest.storage import store
from tests.conftest import FIXTURES
from tests.test_app import every_tab, run_page, texts
from tests.test_app_every_page import table_defects

TRAINING = FIXTURES / "training"
PAGE = "views/acceptance.py"
TAB = "Training: simulated vs served acceptance"


def read(name: str) -> tuple[ParsedSource, pd.DataFrame]:
    path = TRAINING / name
    parsed = detect(path).parse(path, ParseOptions())
    return parsed, parsed.tables["training_steps"].to_pandas()


# --- the readers -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "kind"), [
    ("automodel-eagle3-tqdm-glued.log", "automodel_training_log"),
    ("automodel-eagle3-carriage-returns.log", "automodel_training_log"),
    ("automodel-eagle3-cp-plain.log", "automodel_training_log"),
    ("automodel-eagle1-keyvalue.log", "automodel_training_log"),
    ("specforge-issue-392-bar.log", "specforge_training_log"),
    ("specforge-eagle3-constructed.log", "specforge_training_log"),
    ("specforge-eagle3-epoch-lines-constructed.log", "specforge_training_log"),
    ("specforge-unified-step-dicts-constructed.log", "specforge_training_log"),
    ("specforge-unified-tracker-keys-constructed.log", "specforge_training_log"),
])
def test_each_training_log_is_detected_from_its_content(name: str, kind: str) -> None:
    assert detect(TRAINING / name).kind == kind
    assert (TRAINING / f"{name}.source").is_file()


def test_a_tqdm_bar_glued_to_the_log_line_is_split_off_and_the_line_read() -> None:
    parsed, rows = read("automodel-eagle3-tqdm-glued.log")
    assert len(rows) == 10 and list(rows["step"]) == [14, 15, 16, 17, 18, 38, 39, 40, 41, 42]
    first = rows.iloc[0]  # line 1: "…tau=1.04]2026-07-07 22:20:44 | INFO | __main__ | epoch=0 step=14 train_loss=9.117183 …"
    assert (first["line_no"], first["epoch"], first["split"], first["origin"]) == (1, 0, "train", "log line")
    assert (first["loss"], first["accuracy"], first["simulated_accept_length"], first["learning_rate"]) == (
        9.117183, 0.026200, 1.0385, 9.297e-05)
    assert first["ts"] == datetime(2026, 7, 7, 22, 20, 44) and pd.isna(first["position"])
    last = rows.iloc[-1]  # line 10: step=42 train_loss=6.313971 train_acc=0.101078 train_tau_sim=1.1591 lr=3.592e-05
    assert (last["line_no"], last["loss"], last["accuracy"], last["simulated_accept_length"]) == (10, 6.313971, 0.101078, 1.1591)
    # the bars' postfix (tau=1.04) repeats the line rounded: counted, never loaded
    assert parsed.skipped == {"progress bar (repeats the log line's figures, rounded)": 10}


def test_carriage_return_redraws_stay_on_their_line_and_read_as_the_paste() -> None:
    _, raw = read("automodel-eagle3-carriage-returns.log")
    _, pasted = read("automodel-eagle3-tqdm-glued.log")
    assert list(raw["line_no"]) == [1, 2, 3, 4, 5]  # a \r never ends a line: numbers are the file's
    columns = ["step", "loss", "accuracy", "simulated_accept_length", "learning_rate"]
    pd.testing.assert_frame_equal(raw[columns], pasted[columns].head(5))


def test_pieces_of_a_line_are_bar_draws_and_glued_text_in_order() -> None:
    line = "\rTraining:  22%|██▏       | 14/64 [00:07<00:17,  2.94step/s, acc=0.0262, tau=1.04]epoch=0 step=14 loss=1"
    (piece,) = pieces(line)
    assert piece.bar is not None and (piece.bar.desc, piece.bar.n, piece.bar.total) == ("Training", 14, 64)
    assert piece.bar.postfix == {"acc": "0.0262", "tau": "1.04"} and piece.text == "epoch=0 step=14 loss=1"


def test_automodel_lines_without_prefix_and_the_eagle1_recipe() -> None:
    _, plain = read("automodel-eagle3-cp-plain.log")
    assert len(plain) == 14 and plain["step"].iloc[0] == 94 and plain["step"].iloc[-1] == 107
    assert plain["simulated_accept_length"].iloc[-1] == 1.2315 and plain["ts"].isna().all()
    _, eagle1 = read("automodel-eagle1-keyvalue.log")
    assert list(eagle1["step"]) == [2860, 2870, 2880, 2890, 2900, 2910, 2920]
    assert eagle1["simulated_accept_length"].isna().all()  # this recipe prints no simulated τ
    assert (eagle1["loss"].iloc[0], eagle1["accuracy"].iloc[0], eagle1["learning_rate"].iloc[0]) == (2.4707, 0.3385, 6.94775e-06)
    assert json.loads(eagle1["extra"].iloc[0]) == {"grad_norm": 0.1406, "hidden_loss": 1.776, "rank_loss": 20.31,
                                                   "token_loss": 4.913}


def test_automodel_eval_and_decode_eval_lines(tmp_path: Path) -> None:
    log = tmp_path / "train.log"  # the recipe's end-of-epoch and decode_eval formats (train_eagle3.py)
    log.write_text("epoch=0 step=100 train_loss=7.454902 train_acc=0.056396 train_tau_sim=1.1065 lr=4.039e-05\n"
                   "epoch=0 step=101 train_loss=7.049691 train_acc=0.078613 train_tau_sim=1.1523 lr=3.951e-05 (trailing flush)\n"
                   "decode_eval: step=100 accept_length=1.8400 acceptance_rate=0.28 completed=64 failed=0\n"
                   "epoch=0 val_loss=6.912000 val_acc=0.081000 val_tau_sim=1.1700\n", encoding="utf-8")
    _, rows = read_path(log)
    assert list(rows["split"]) == ["train", "train", "decode", "eval"]
    assert json.loads(rows["extra"].iloc[1]) == {"note": "trailing flush"}
    assert json.loads(rows["extra"].iloc[2]) == {"accept_length": 1.84, "acceptance_rate": 0.28, "completed": 64.0, "failed": 0.0}
    assert pd.isna(rows["simulated_accept_length"].iloc[2])  # a real decode is not a simulation
    evaluation = rows.iloc[3]
    assert pd.isna(evaluation["step"]) and (evaluation["loss"], evaluation["accuracy"], evaluation["simulated_accept_length"]) == (
        6.912, 0.081, 1.17)


def read_path(path: Path) -> tuple[ParsedSource, pd.DataFrame]:
    parsed = detect(path).parse(path, ParseOptions())
    return parsed, parsed.tables["training_steps"].to_pandas()


def test_specforge_bar_pasted_in_an_issue() -> None:
    parsed, rows = read("specforge-issue-392-bar.log")
    (row,) = rows.itertuples()
    assert (row.line_no, row.epoch, row.step, row.split, row.origin, row.loss, row.accuracy) == (
        2, 0, 155, "train", "progress bar", 0.0, 0.0)
    assert json.loads(row.extra) == {"bar": "155/2484", "time": "3.46s"}
    assert parsed.skipped == {"not a training record": 1}  # the vocab-mapping line


def test_specforge_console_bars_and_per_position_lines() -> None:
    parsed, rows = read("specforge-eagle3-constructed.log")
    bars = rows[rows["origin"] == "progress bar"]
    # the first draw at each new count carries that step's figures (tqdm redraws the count when the next step begins)
    assert list(bars["step"]) == [1, 2, 3, 4] and list(bars["loss"]) == [10.42, 9.87, 9.31, 8.95]
    assert list(bars["acceptance_rate"]) == [0.02, 0.05, 0.07, 0.11]
    assert json.loads(bars["extra"].iloc[1]) == {"bar": "2/40", "grad_norm": 5.61, "time": "3.12s"}
    lines = rows[rows["origin"] == "log line"]
    train2 = lines[(lines["split"] == "train") & (lines["step"] == 2)]
    assert list(train2["position"]) == [1, 2, 3]  # printed 0-based, stored 1-based
    first = train2.iloc[0]  # line 2 (glued to the bar), 5 and 8: Acc: 0.06, Acceptance Rate: 0.0731, pLoss: 9.652183532714844
    assert (first["line_no"], first["accuracy"], first["acceptance_rate"], first["loss"]) == (2, 0.06, 0.0731, 9.652183532714844)
    evaluation = lines[lines["split"] == "eval"]  # the words say Eval both times: the Evaluating bar before them decides
    assert list(evaluation["step"]) == [4, 4, 4] and list(evaluation["accuracy"]) == [0.13, 0.09, 0.06]
    assert list(lines[(lines["split"] == "train") & (lines["step"] == 4)]["accuracy"]) == [0.11, 0.07, 0.05]
    assert rows["simulated_accept_length"].isna().all()  # SpecForge prints none
    assert parsed.skipped["progress bar without figures"] == 5  # the count-0 bar and the Evaluating bars


def test_specforge_per_epoch_lines_of_2025() -> None:
    _, rows = read("specforge-eagle3-epoch-lines-constructed.log")
    assert list(rows["split"]) == ["train"] * 3 + ["eval"] * 3 and rows["step"].isna().all()
    assert set(rows["epoch"]) == {0}  # printed "[1/2]": epoch + 1
    assert list(rows["position"]) == [1, 2, 3, 1, 2, 3]
    assert list(rows["accuracy"]) == [0.62, 0.41, 0.27, 0.58, 0.37, 0.22]
    assert list(rows["loss"]) == [1.87, 2.64, 3.12, 2.03, 2.91, 3.47]


def test_specforge_unified_trainer_dicts_and_its_bonus_exclusive_simulated_length() -> None:
    _, rows = read("specforge-unified-step-dicts-constructed.log")
    totals = rows[rows["position"].isna()]
    assert list(zip(totals["step"], totals["split"], strict=True)) == [(10, "train"), (20, "train"), (20, "eval")]
    train10 = totals.iloc[0]  # line 1: 'acc': 0.3478922526041667, 'loss': 8.30010986328125, 'lr': 9.5e-05
    assert (train10["accuracy"], train10["loss"], train10["learning_rate"]) == (0.3478922526041667, 8.30010986328125, 9.5e-05)
    assert json.loads(train10["extra"])["grad_norm"] == 1.9176
    evaluation = totals.iloc[2]  # line 3: 'eval/simulated_acc_len': 0.8091600000000001 = accepted drafts, no bonus token
    assert evaluation["simulated_accept_length"] == pytest.approx(1.80916)
    assert json.loads(evaluation["extra"]) == {"simulated_acc_len": 0.8091600000000001}
    per_position = rows[(rows["split"] == "eval") & rows["position"].notna()]
    assert list(per_position["accuracy"]) == [0.55, 0.38, 0.24] and list(per_position["acceptance_rate"]) == [0.5702, 0.3931, 0.2518]
    # the same dicts through an external tracker: train/ prefixes, per_position_acc/0… keys
    _, tracked = read("specforge-unified-tracker-keys-constructed.log")
    columns = ["step", "split", "position", "loss", "accuracy", "acceptance_rate", "simulated_accept_length", "learning_rate"]
    pd.testing.assert_frame_equal(tracked[columns], rows[rows["line_no"] > 1][columns].reset_index(drop=True))


@pytest.mark.parametrize(("text", "key"), [
    ("epoch=0 step=14 train_loss=9.117183 train_acc=0.0262 train_tau_sim=1.0x lr=9.297e-05\n", "train_tau_sim"),
    ("Training Epoch 0:  10%|█         | 4/40 [00:15<01:51,  3.10s/it, loss=8.95, acc=0.o9]\n", "acc"),
])
def test_a_cut_value_names_the_file_line_and_key(tmp_path: Path, text: str, key: str) -> None:
    log = tmp_path / "broken.log"
    log.write_text("setup line\n" + text, encoding="utf-8")
    with pytest.raises(MalformedInput) as caught:
        detect(log).parse(log, ParseOptions())
    assert caught.value.path == str(log) and caught.value.line == 2 and caught.value.key == key


def test_a_file_with_no_training_record_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    log = tmp_path / "empty.log"
    log.write_text("Training Epoch 0:   0%|          | 0/40 [00:00<?, ?it/s]\n", encoding="utf-8")
    with pytest.raises(IngestError, match="no training record"):
        specforge_log.parse(log, ParseOptions())
    assert automodel_log.sniff(log.read_bytes()) is False


def test_out_of_domain_figures_are_kept_with_a_warning_naming_the_line(tmp_path: Path) -> None:
    log = tmp_path / "odd.log"
    log.write_text("epoch=0 step=1 train_loss=9.1 train_acc=1.5 train_tau_sim=0.8 lr=1e-4\n", encoding="utf-8")
    parsed, rows = read_path(log)
    assert len(rows) == 1 and parsed.warnings == [
        f"{log}:1: simulated accept length 0.8 is below 1 (the bonus token's floor)", f"{log}:1: accuracy 1.5 is outside 0–1"]


# --- the store ---------------------------------------------------------------------------------------------------

def test_the_store_keeps_the_rows_with_the_files_labels(isolated_store: Path) -> None:
    ingest_paths([TRAINING / "automodel-eagle3-cp-plain.log"], isolated_store, phase="phase-1", variant="k2-finetuned")
    ingest_paths([TRAINING / "specforge-issue-392-bar.log"], isolated_store)
    with store.writer(isolated_store) as con:
        labelled = con.execute("SELECT count(*), any_value(t.phase), any_value(t.variant), max(simulated_accept_length) "
                               "FROM training_steps t JOIN sources s USING (source_id) WHERE s.kind = 'automodel_training_log'"
                               ).fetchone()
        unlabelled = con.execute("SELECT t.variant, step FROM training_steps t JOIN sources s USING (source_id) "
                                 "WHERE s.kind = 'specforge_training_log'").fetchall()
    assert labelled == (14, "phase-1", "k2-finetuned", 1.2340)
    assert unlabelled == [(None, 155)]
    assert acceptance.training_variants(isolated_store)[0] == "k2-finetuned"  # the other takes its folder's name


# --- the Acceptance page ------------------------------------------------------------------------------------------

def training_tab(db: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[pd.DataFrame], list[str], int]:
    """The training tab's texts, tables, table defects and charts."""
    app = run_page(PAGE, db, monkeypatch)
    for tab, view in every_tab(app):
        if tab == f"tab {TAB}":
            return texts(view), [df.value for df in view.dataframe], table_defects(view, tab), len(view.get("plotly_chart"))
    raise AssertionError(f"no tab {TAB!r}")


def test_the_section_says_plainly_when_the_store_holds_no_training_log(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, tables, _, charts = training_tab(demo_db, monkeypatch)
    assert "No training log for these variants" in text and not tables and charts == 0


def test_simulated_accept_length_beside_the_served_one_of_the_same_variant(
        demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "with-training.duckdb"
    shutil.copy(demo_db, db)
    ingest_paths([TRAINING / "automodel-eagle3-cp-plain.log"], db, variant="k2-drafter")
    text, tables, defects, charts = training_tab(db, monkeypatch)
    assert not defects and charts == 1
    summary = tables[0]
    row = summary[summary["variant"] == "k2-drafter"].iloc[0]
    assert row["training file"] == "automodel-eagle3-cp-plain.log" and row["trainer"] == "NeMo AutoModel"
    assert row["last step"] == 107 and row["simulated τ (train)"] == pytest.approx(1.2315)
    assert ACCEPT.number(row["served τ"]) == "1.58"  # the demo K2 drafter's per-position curve, as the first tab shows
    assert row["served − simulated"] == pytest.approx(row["served τ"] - 1.2315)
    assert len(tables[1]) == 14  # every logged step


def test_out_of_domain_steps_are_left_out_and_the_page_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "odd.log"
    log.write_text("epoch=0 step=1 train_loss=9.1 train_acc=0.1 train_tau_sim=0.8 lr=1e-4\n", encoding="utf-8")
    db = tmp_path / "odd.duckdb"
    ingest_paths([log], db, variant="odd")
    text, tables, _, charts = training_tab(db, monkeypatch)
    assert "Left out: 1 logged step(s) of `odd.log` (line 1)" in text
    assert "Nothing left to show" in text and not tables and charts == 0
