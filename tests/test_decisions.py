"""The decision ledger: evidence frozen at creation, stale when it changes, recorded from the CLI, shared as Markdown/HTML."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard import report
from dashboard.analysis import data, evidence, summary
from dashboard.cli import main
from ingest.storage import store
from ingest.storage.decisions import (
    InvalidDecision,
    canonical_json,
    evidence_hash,
    normalized,
    record_decision,
)
from tests.conftest import ROOT


@pytest.fixture
def demo_copy(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store, for tests that write."""
    db = tmp_path / "demo-copy.duckdb"
    shutil.copy(demo_db, db)
    return db


def phase0_decision(db: Path) -> dict:
    """The demo's Phase 0 verdict (the demo also decides phases 1 and 2)."""
    [row] = [r for r in data.decisions(db).to_dict("records") if r["phase"] == "phase-0"]
    return row


def phase0_sessions(db: Path) -> list[str]:
    return data.sessions(db, ["phase-0"])["session_id"].tolist()


def test_the_demo_ships_the_phase0_verdict(demo_db: Path) -> None:
    assert sorted(data.decisions(demo_db)["phase"]) == ["phase-0", "phase-1", "phase-2"]  # a decision per phase
    row = phase0_decision(demo_db)
    assert (row["title"], row["verdict"], row["phase"]) == ("K2 drafter as-is", "rejected", "phase-0")
    frozen = evidence.frozen(row)
    k2 = next(v for v in frozen["variants"] if v["variant"] == "k2-drafter")
    assert round(k2["headline"], 1) == 51.8 and k2["short_runs"] == 1
    assert round(next(v for v in frozen["variants"] if v["variant"] == "baseline")["headline"]) == 82
    assert "k2-drafter 51.8 vs baseline 82.0 tok/s" in evidence.headline(frozen)
    assert evidence.check_decision(demo_db, row).stale is False


def test_evidence_is_the_same_whatever_the_session_order(demo_db: Path) -> None:
    sessions = phase0_sessions(demo_db)
    first, second = evidence.compute_evidence(demo_db, sessions), evidence.compute_evidence(demo_db, list(reversed(sessions)))
    # DuckDB sums in parallel, so the last bits of a float can differ between two computations: equal within 1e-6
    assert evidence.equivalent(first, second)
    assert [v["variant"] for v in first["variants"]] == [v["variant"] for v in second["variants"]]


def test_float_noise_is_not_a_change() -> None:
    assert evidence_hash({"x": 0.1 + 0.2}) == evidence_hash({"x": 0.3})
    assert normalized({"a": float("nan"), "b": (1, 2.0)}) == {"a": None, "b": [1, 2.0]}
    assert evidence.equivalent({"v": [19.2796695, "slower", None]}, {"v": [19.2796696, "slower", None]})
    assert not evidence.equivalent({"v": [19.27]}, {"v": [19.28]})
    assert not evidence.equivalent({"v": [1, 2]}, {"v": [1, 2, 3]})
    assert not evidence.equivalent({"runs": 5}, {"runs": 5, "extra": 1})


def test_evidence_holds_numbers_break_even_and_comparability(demo_db: Path) -> None:
    frozen = evidence.compute_evidence(demo_db, phase0_sessions(demo_db))
    assert frozen["baseline"] == "baseline" and frozen["metric"] == "tokens_over_time"
    k2 = next(v for v in frozen["variants"] if v["variant"] == "k2-drafter")
    assert (round(k2["ci_low"], 1), round(k2["ci_high"], 1)) == (49.2, 54.6)
    assert k2["verdict"] == "slower" and round(k2["tokens_per_step"], 2) == 1.58
    be = next(b for b in frozen["break_even"] if b["variant"] == "k2-drafter")
    assert (round(be["cost_ratio"], 2), round(be["needed_accepted_drafts"], 2)) == (2.5, 1.5)
    assert all(f["like_for_like"] for f in frozen["comparability"])
    assert sum(len(s["measured_runs"]) for s in frozen["sessions"]) == 15


@pytest.mark.parametrize(
    ("title", "verdict", "sessions", "key"),
    [("", "rejected", ["s"], "title"), ("T", "maybe", ["s"], "verdict"), ("T", None, ["s"], "verdict"), ("T", "accepted", [], "sessions")],
)
def test_an_incomplete_decision_is_refused_with_a_hint(tmp_path: Path, title: str, verdict: str | None, sessions: list[str], key: str) -> None:
    with pytest.raises(InvalidDecision) as caught:
        record_decision(tmp_path / "x.duckdb", title=title, verdict=verdict or "", session_ids=sessions, evidence={})
    assert caught.value.key == key and caught.value.hint
    assert not (tmp_path / "x.duckdb").exists()  # nothing written


def test_a_decision_goes_stale_when_its_runs_change(demo_copy: Path) -> None:
    sessions = phase0_sessions(demo_copy)
    decision_id = record_decision(demo_copy, title="keep baseline", verdict="accepted", session_ids=sessions,
                                  evidence=evidence.compute_evidence(demo_copy, sessions))
    row = data.decisions(demo_copy).set_index("decision_id").loc[decision_id].to_dict() | {"decision_id": decision_id}
    assert evidence.check_decision(demo_copy, row).stale is False
    k2 = next(s for s in sessions if data.sessions(demo_copy, (), (), [s])["variant"].iloc[0] == "k2-drafter")
    with store.writer(demo_copy) as con:  # a run disappears from the session (as after re-ingesting a fixed file)
        con.execute("DELETE FROM bench_runs WHERE session_id = ? AND run_index = 4 AND NOT is_warmup", [k2])
    check = evidence.check_decision(demo_copy, row)
    assert check.stale
    assert "k2-drafter: measured runs 5 → 4" in check.reasons
    assert "k2-drafter: short runs 1 → 0" in check.reasons


def test_a_decision_whose_sessions_vanished_is_stale(demo_copy: Path) -> None:
    row = phase0_decision(demo_copy)
    with store.writer(demo_copy) as con:
        con.execute("DELETE FROM bench_runs")
        con.execute("DELETE FROM sessions")
    check = evidence.check_decision(demo_copy, row)
    assert check.stale and "none of its 3 evidence sessions" in check.reasons[0]


def test_markdown_summary_has_verdict_numbers_cis_definitions_and_a_link(demo_db: Path) -> None:
    row = phase0_decision(demo_db)
    text = summary.decision_markdown(row, evidence.frozen(row), "http://host:8501/decisions?decision=abc")
    assert text.startswith("# K2 drafter as-is: rejected\n")
    assert "**Verdict: rejected**" in text and "51.8" in text and "82" in text
    # tok/s at 1 decimal, accept length 2, ms 2: each quantity at its one declared precision (definitions.py)
    # Δ on the headline (Σtok/Σtime): 51.78 − 81.99, Welch on the ratio estimators' standard errors
    assert "| k2-drafter | 5 | 51.8 | 51.9 [49.2, 54.6] | -30.2 [-32.8, -27.6] | -36.8% | slower | 1.58 | 0.58 | 30.51 |" in text
    assert "r = 2.50" in text and "**1.50 accepted drafts/step**" in text
    assert "## Definitions" in text and "Welch" in text
    assert "[Open this decision in specdash](http://host:8501/decisions?decision=abc)" in text


def test_markdown_summary_neutralizes_html_in_user_text(demo_db: Path) -> None:
    row = phase0_decision(demo_db)
    row.update(title="<script>alert(41)</script> K2", phase="<b>p0</b>", note_md="> quoted **bold** <img src=x onerror=alert(1)>")
    text = summary.decision_markdown(row, evidence.frozen(row))
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert text.startswith("# &lt;script>alert(41)&lt;/script> K2: rejected\n")
    assert "> quoted **bold** &lt;img src=x onerror=alert(1)>" in text  # Markdown itself still works


def test_html_report_is_self_contained_and_escapes_user_text(demo_db: Path) -> None:
    row = phase0_decision(demo_db)
    row.update(title="<script>alert('t')</script> K2", note_md="**bold** <img src=x onerror=alert(1)>")
    page = report.decision_report(row, evidence.frozen(row), "http://host/decisions?decision=1")
    assert "<script>alert('t')</script>" not in page and "&lt;script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert not re.search(r"<script[^>]+src=", page)  # nothing loaded from elsewhere
    assert len(re.findall(r"Plotly\.newPlot", page)) == 3
    assert len(page) > 3_000_000  # plotly.js is inside
    assert "51.8" in page and "rejected" in page


# --- the CLI ----------------------------------------------------------------------------------

def test_cli_records_a_decision_for_a_phase_and_prints_markdown(demo_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["decide", "--db", str(demo_copy), "--phase", "phase-0", "--title", "From-scratch is not enough",
                 "--verdict", "inconclusive", "--note", "needs **more** data", "--url", "http://dash:9000"])
    out = capsys.readouterr()
    assert code == 0 and out.out.startswith("# From-scratch is not enough: inconclusive")
    decision_id = re.search(r"recorded decision (\w+)", out.err).group(1)
    assert f"(http://dash:9000/decisions?decision={decision_id})" in out.out
    assert main(["decide", "--db", str(demo_copy), "--list"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == 4 and any(decision_id in line and "inconclusive" in line for line in listing)  # + the demo's 3
    assert main(["decide", "--db", str(demo_copy), "--show", decision_id]) == 0
    assert "needs **more** data" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--title", "x", "--verdict", "rejected"], "no evidence sessions"),
        (["--title", "x", "--verdict", "rejected", "--phase", "phase-9"], "no evidence sessions"),
        (["--title", "x", "--verdict", "rejected", "--session", "nope-0"], "none of these sessions"),
        (["--verdict", "rejected", "--phase", "phase-0"], "no title"),
        (["--show", "nope"], "no decision 'nope'"),
    ],
)
def test_cli_decide_errors_are_one_clear_line(demo_copy: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str) -> None:
    assert main(["decide", "--db", str(demo_copy), *args]) == 1
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_cli_decide_without_a_store_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "--db", str(tmp_path / "none.duckdb"), "--list"]) == 1
    assert "specdash demo" in capsys.readouterr().err


def test_the_cli_path_loads_neither_streamlit_nor_plotly() -> None:
    code = ("import sys, dashboard.analysis.evidence, dashboard.analysis.summary, ingest.storage.decisions\n"
            "sys.exit(any(m.split('.')[0] in ('streamlit', 'plotly') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0


def test_stored_evidence_is_canonical_json(demo_db: Path) -> None:
    row = data.decisions(demo_db).iloc[0]
    assert row["evidence"] == canonical_json(json.loads(row["evidence"]))
    assert row["evidence_hash"] == evidence_hash(json.loads(row["evidence"]))


def test_a_stale_decision_names_what_changed_beyond_its_headline() -> None:
    """A server log linked after the decision gives the baseline a config and a measured step, not a new tok/s: the
    reasons say so, instead of blaming a parser."""
    variant = {"variant": "k2", "runs": 5, "headline": 51.8, "delta": -30.2, "tokens_per_step": None, "short_runs": 0}
    unknown = {"variant": "baseline", "setting": "server config", "baseline": "not ingested", "this": "—",
               "kind": "unknown", "like_for_like": False}
    then = {"variants": [variant], "comparability": [unknown, {**unknown, "variant": "k2", "this": "not ingested"}],
            "break_even": [{"variant": "k2", "baseline_step_ms": None}], "sessions": [], "phases": ["p"], "baseline": "baseline"}
    now = {**then, "comparability": [{**unknown, "variant": "k2", "this": "tp 8"}],
           "break_even": [{"variant": "k2", "baseline_step_ms": 12.2}]}
    assert evidence.what_changed(then, now) == []
    assert evidence.findings_changed(then, now) == [
        "baseline: server config no longer flagged (then: baseline not ingested, this —)",
        "k2: server config: this not ingested → tp 8",
    ]
    agreed = {**unknown, "variant": "k2", "baseline": "tp 8", "this": "tp 8", "kind": "same", "like_for_like": True}
    assert evidence.findings_changed(now, {**now, "comparability": [agreed]}) == [
        "k2: server config: baseline not ingested → tp 8, like-for-like no → yes"]
    assert evidence.parts_changed(then, now, headlines_named=False) == [
        "the break-even estimate (accept length, cycle and baseline step times) changed"]
    assert evidence.parts_changed(then, then, headlines_named=False) == []
    older = {**then, "comparability": [{"variant": "k2", "setting": "server config"}]}  # frozen by an earlier specdash
    assert evidence.findings_changed(older, now) == ["k2: server config: baseline None → not ingested, this None → tp 8, "
                                                     "like-for-like unknown → no"]
