"""A store built in two calls, unphased then phased, as a team ingests (issue #29): every page follows.

The project's own fixtures only, so this runs for anyone who cloned the repo alone. The repro of the
issue: ingest a folder without --phase, then one log with --phase p-live, and open Run — it raised
"Could not convert string 'p-live' to DOUBLE" and named a phase "nan".
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis import data
from tests.test_app import ALL_PAGES, run_page
from tests.test_every_file import FIXTURES, OWN_FILES, ingest, page_text

LIVE_LOG = FIXTURES / "logs" / "sglang-eagle3-basic.log"
GAP_WORDS = re.compile(r"(?<![\w-])(None|nan|NaN|NaT|<NA>)(?![\w-])")


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("mixed") / "mixed.duckdb"
    ingest(db, [f for f in OWN_FILES if f != LIVE_LOG])
    ingest(db, [LIVE_LOG], phase="p-live")
    return db


def open_page(db: Path, monkeypatch: pytest.MonkeyPatch, page: str, **query: str) -> AppTest:
    return run_page(page, db, monkeypatch, dict(query))


def shown_text(app: AppTest) -> str:
    metrics = [f"{m.label} {m.value}" for m in app.metric]
    return "\n".join([page_text(app), *metrics, *(s.value for s in app.subheader)])


def test_unphased_evidence_is_a_phase_of_its_own(mixed_store: Path) -> None:
    assert data.phases(mixed_store) == [data.NO_PHASE, "p-live"]
    assert data.throughput_phases(mixed_store) == [data.NO_PHASE, "p-live"]
    unphased = data.sessions(mixed_store, [data.NO_PHASE])
    assert not unphased.empty and unphased["phase"].isna().all()
    assert set(data.sessions(mixed_store, ["p-live"])["phase"]) == {"p-live"}
    # A gap in a text column is None, never NaN: NaN is truthy and binds back into SQL as a DOUBLE.
    assert all(p is None or isinstance(p, str) for p in data.sessions(mixed_store)["phase"])


def test_run_opens_every_session_of_a_mixed_store(mixed_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = data.sessions(mixed_store)
    live_variant = sessions[sessions["phase"] == "p-live"]["variant"].iloc[0]
    for session_id in sessions["session_id"]:
        app = open_page(mixed_store, monkeypatch, "views/run.py", session=session_id, baseline=live_variant)
        text = shown_text(app)
        assert not GAP_WORDS.search(text), (session_id, GAP_WORDS.findall(text))


def test_every_page_renders_without_a_gap_word(mixed_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for page in ALL_PAGES:
        text = shown_text(open_page(mixed_store, monkeypatch, page))
        assert not GAP_WORDS.search(text), (page, GAP_WORDS.findall(text))


def test_compare_opens_on_the_newest_phase_with_throughput(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "traces-last.duckdb"
    ingest(db, [FIXTURES / "logs" / "sglang-wrappers.log"])  # 2025-07: older than the trace (2026-01)
    ingest(db, [FIXTURES / "traces" / "no-phases-TP-0.trace.json.gz"], phase="p-traces")
    assert data.phases(db)[-1] == "p-traces" and data.throughput_phases(db) == [data.NO_PHASE]
    app = open_page(db, monkeypatch, "views/compare.py")
    assert app.multiselect(key="w_phases").value == [data.NO_PHASE]
    assert app.metric, "the unphased server lifetime's throughput is shown"


def test_a_stale_link_says_so_and_opens_the_nearest_valid_view(mixed_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_page(mixed_store, monkeypatch, "views/compare.py", phase="phase-9")
    [warning] = [w.value for w in app.warning if "phase-9" in w.value]
    assert "`phase-9` is not in this store: showing `p-live` instead" in warning
    app = open_page(mixed_store, monkeypatch, "views/run.py", session="doesnotexist")
    assert any("session `doesnotexist` is not in this store" in w.value for w in app.warning)


def test_the_ingest_page_labels_files_and_every_page_follows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "label.duckdb"
    ingest(db, OWN_FILES)
    before = set(data.variants(db, []))
    assert "unlabelled: bench" in before
    app = open_page(db, monkeypatch, "views/ingest.py")
    app.selectbox(key="w_label_variant").select("unlabelled: bench").run()
    app.text_input(key="w_label_new_variant").input("team-bench").run()
    app.button(key="w_label_apply").click().run()
    assert not app.exception
    assert "relabelled" in app.code[-1].value and "team-bench" in app.code[-1].value
    assert [e.label for e in app.expander if e.label.startswith("Label changes recorded")]
    after = set(data.variants(db, []))
    assert "team-bench" in after and "unlabelled: bench" not in after
    compare = open_page(db, monkeypatch, "views/compare.py", phase=data.NO_PHASE)
    assert "team-bench" in compare.multiselect(key="w_variants").options


def test_a_label_change_that_cannot_be_made_leaves_the_store_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "refused.duckdb"
    ingest(db, OWN_FILES)
    app = open_page(db, monkeypatch, "views/ingest.py")
    app.radio(key="w_label_action").set_value("move to a phase").run()
    app.text_input(key="w_label_new_phase").input("   ").run()
    assert app.button(key="w_label_apply").disabled  # nothing to apply yet: the button waits for a phase
