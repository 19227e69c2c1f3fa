"""Phases and Decisions through AppTest: the ledger, recording a decision, stale evidence (page helpers in test_app.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.analysis import data, ledger
from ingest.errors import StoreBusy
from ingest.pipeline import ingest_paths
from ingest.storage import store
from tests.conftest import FIXTURES
from tests.test_app import demo_copy, k2_session, open_sections, run_page, texts, url  # noqa: F401 (fixture)

# --- Phases -----------------------------------------------------------------------------------

def test_phases_page_lists_the_phase_and_its_decision(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/phases.py", demo_db, monkeypatch)
    table = app.dataframe[0].value.set_index("phase")
    assert list(table.index) == ["phase-0", "phase-1", "phase-2"]
    # Phase 0: 3 benchmark sessions and their 3 profiler trace sets; phase 1: 2 server lifetimes, 6 bench records.
    assert table.loc["phase-0", "sessions"] == 6 and table.loc["phase-0", "measured runs"] == 15
    assert table.loc["phase-1", "sessions"] == 8 and table.loc["phase-1", "measured runs"] == 0
    assert "k2-drafter 51.8 tok/s (τ 1.58)" in table.loc["phase-0", "headline per variant"]
    assert "k2-drafter-ft 94.9 tok/s (τ 2.60)" in table.loc["phase-1", "headline per variant"]
    assert table.loc["phase-0", "decisions"] == "K2 drafter as-is: rejected"
    assert table.loc["phase-1", "decisions"] == "Fine-tuned K2 drafter: accepted"
    assert "Only one phase has runs" not in texts(app)


def test_phases_page_trends_across_two_phases(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest_paths([FIXTURES / "dashboard" / "phase-1-two-variants.bench.json"], demo_copy)
    app = run_page("views/phases.py", demo_copy, monkeypatch)
    assert "Only one phase" not in texts(app)
    trends = app.dataframe[1].value
    k2 = trends[trends["variant"] == "k2-drafter"].set_index("phase")
    assert list(k2.index) == ["phase-0", "phase-1"]
    assert round(k2.loc["phase-1", "tok/s"], 1) == round(3 * 2048 / 65.9, 1)


# --- Decisions --------------------------------------------------------------------------------

def test_decisions_page_shows_the_phase0_verdict(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    phase0 = data.decisions(demo_db).set_index("phase").loc["phase-0", "decision_id"]
    app = open_sections(run_page("views/decisions.py", demo_db, monkeypatch, {"decision": phase0}))  # the Markdown too
    ledger = app.dataframe[0].value
    assert ledger[["title", "verdict", "evidence"]].values.tolist() == [  # newest first: a decision per phase
        ["Custom all-reduce for verify", "accepted", "✓ current"], ["Fine-tuned K2 drafter", "accepted", "✓ current"],
        ["K2 drafter as-is", "rejected", "✓ current"]]
    shown = texts(app)
    assert "The evidence sessions still give exactly these numbers" in shown
    markdown = app.code[0].value
    assert "# K2 drafter as-is: rejected" in markdown and "51.8" in markdown and "82" in markdown


def test_recording_a_decision_in_the_page(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_sections(run_page("views/decisions.py", demo_copy, monkeypatch))  # the form opens with a click
    assert len(app.multiselect(key="w_decision_sessions").value) == 3  # the phase's sessions by default
    app.text_input(key="w_decision_title").set_value("Fine-tune the K2 drafter")
    app.radio(key="w_decision_verdict").set_value("accepted")
    app.text_area(key="w_decision_note").set_value("Phase 1 goes ahead. <b>not html</b>")
    app.button[0].click().run()
    assert not app.exception
    assert "Recorded “Fine-tune the K2 drafter”" in texts(app)
    ledger = app.dataframe[0].value
    assert ledger["title"].tolist()[0] == "Fine-tune the K2 drafter"
    assert set(ledger["title"]) == {"Fine-tune the K2 drafter", "K2 drafter as-is", "Fine-tuned K2 drafter",
                                    "Custom all-reduce for verify"}
    assert app.selectbox(key="w_decision").value == url(app, "decision")[0]
    assert app.text_input(key="w_decision_title").value == ""  # the form is cleared


def test_a_decision_without_verdict_is_refused_in_the_page(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_sections(run_page("views/decisions.py", demo_copy, monkeypatch))  # the form opens with a click
    app.text_input(key="w_decision_title").set_value("Half-made")
    app.button[0].click().run()
    assert any("no verdict" in e.value for e in app.error)
    assert len(data.decisions(demo_copy)) == 3  # the demo's three, nothing new


def test_a_store_that_stays_busy_while_recording_is_said_not_thrown(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def busy(db: Path, **_: object) -> str:
        raise StoreBusy(db, "the store stayed locked by another process for 30 s", hint="wait for the other ingest to finish")

    monkeypatch.setattr(ledger, "record_decision", busy)  # the page records through the ledger
    app = open_sections(run_page("views/decisions.py", demo_copy, monkeypatch))  # the form opens with a click
    app.text_input(key="w_decision_title").set_value("Recorded while an ingest runs")
    app.radio(key="w_decision_verdict").set_value("accepted")
    app.button[0].click().run()
    assert not app.exception
    assert any("stayed locked" in e.value and "wait for the other ingest" in e.value for e in app.error)
    assert len(data.decisions(demo_copy)) == 3  # the demo's three, nothing new


def test_a_stale_decision_is_marked(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = k2_session(demo_copy)
    with store.writer(demo_copy) as con:
        con.execute("DELETE FROM bench_runs WHERE session_id = ? AND run_index = 5 AND NOT is_warmup", [session])
        store.touch_last_change(con)
    phase0 = data.decisions(demo_copy).set_index("phase").loc["phase-0", "decision_id"]
    app = run_page("views/decisions.py", demo_copy, monkeypatch, {"decision": phase0})
    assert app.dataframe[0].value["evidence"].tolist() == ["✓ current", "✓ current", "⚠ stale"]  # only phase 0's
    assert "**Stale**" in texts(app) and "k2-drafter: measured runs 5 → 4" in texts(app)


def test_a_decision_started_from_compare_takes_its_selection(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/decisions.py", demo_db, monkeypatch,
                   {"phase": "phase-0", "variant": ["baseline", "k2-drafter"], "baseline": "baseline"})
    chosen = app.multiselect(key="w_decision_sessions").value
    variants = set(data.sessions(demo_db, (), (), chosen)["variant"])
    assert variants == {"baseline", "k2-drafter"}
    assert app.selectbox(key="w_decision_baseline").value == "baseline"
    assert "Evidence that will be frozen: k2-drafter 51.8 vs baseline 82.0 tok/s" in texts(app)
