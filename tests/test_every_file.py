"""Every file a team has reaches the analysis pages (issue #16): stores with no benchmark JSON at all.

Three stores: the real files of ../shared/corpus (other people's logs, bench outputs and traces; skipped
without the corpus), the project's own fixtures of those kinds, and one log that holds two server
lifetimes (EAGLE3, then a baseline) and nothing else.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis import data
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS, ROOT
from tests.stores import ingested_store
from tests.test_app import PAGES, open_sections, run_page

FIXTURES = ROOT / "tests" / "fixtures"
TWO_LIFETIMES = FIXTURES / "dashboard" / "sglang-two-lifetimes-eagle3-then-baseline.log"
GUIDANCE = ("Pick at least one variant", "No data yet", "No sessions yet")
# The project's own files of the kinds a bench_serving user keeps: logs, bench outputs, traces.
OWN_FILES = [
    FIXTURES / "logs" / "sglang-eagle3-basic.log",
    FIXTURES / "logs" / "sglang-dict-config-restarts.log",
    FIXTURES / "logs" / "vllm-v1-eagle3-2025.log",
    FIXTURES / "bench" / "sglang-2025-11-server-info.jsonl",
    FIXTURES / "bench" / "vllm-console-2025-spec-decoding.txt",
    FIXTURES / "bench" / "sglang-send-one-two-calls.txt",
    FIXTURES / "traces" / "eagle-stack-TP-0.trace.json.gz",
    FIXTURES / "traces" / "no-phases-TP-0.trace.json.gz",
]


def ingest(db: Path, paths: list[Path], **labels: str) -> None:
    reports = ingest_paths(paths, db, **labels)
    failed = [r.summary() for r in reports if r.failed]
    assert not failed, failed


def corpus_paths() -> list[Path]:
    kinds = [("logs", "*.log"), ("logs", "*.txt"), ("bench", "*.txt"), ("traces", "*.json.gz"),
             ("new/eagle_bench_summary", "*.txt"), ("new/eagle_bench_summary", "*.jsonl")]
    return sorted(p for sub, pattern in kinds for p in (CORPUS / sub).glob(pattern))


@pytest.fixture
def corpus_store(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ingested_store("corpus", corpus_paths(), tmp_path_factory)  # a failing start-up-only log: the rest must show


@pytest.fixture
def own_store(tmp_path: Path) -> Path:
    db = tmp_path / "own.duckdb"
    ingest(db, OWN_FILES)
    return db


def page_text(app: AppTest) -> str:
    parts = [e.value for kind in ("info", "caption", "markdown", "warning", "subheader") for e in getattr(app, kind)]
    return "\n".join(str(p) for p in parts)


def assert_every_page_shows_evidence(db: Path, monkeypatch: pytest.MonkeyPatch, baseline: str) -> None:
    for page in PAGES:
        app = run_page(page, db, monkeypatch, {"baseline": baseline})
        shown = page_text(app)
        assert not any(g in shown for g in GUIDANCE), (page, shown[:500])
        if page == "views/decisions.py":  # no decision yet: the form's preview names the evidence it would freeze
            assert "Evidence that will be frozen:" in shown and "tok/s" in shown
        else:
            assert app.dataframe or app.metric or app.get("plotly_chart"), page


# --- the three stores ---------------------------------------------------------------------------

@pytest.mark.corpus
def test_a_corpus_only_store_has_sessions_of_every_origin(corpus_store: Path) -> None:
    sessions = data.sessions(corpus_store)
    assert {"server_lifetime", "bench_record", "trace_set"} <= set(sessions["origin"])
    assert "benchmark" not in set(sessions["origin"])  # the corpus has no benchmark JSON
    assert sessions["variant"].notna().all() and (sessions["variant"] != "(unlabelled)").all()
    summary = data.variant_summary(corpus_store, [], [])
    assert len(summary) >= 2 and (summary["tokens_over_time"] > 0).all()
    assert summary["basis"].str.len().gt(0).all()


@pytest.mark.corpus
def test_every_page_shows_a_corpus_only_store(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_every_page_shows_evidence(corpus_store, monkeypatch, "unlabelled: bench")


@pytest.mark.corpus
def test_compare_names_the_corpus_variants_with_their_sources(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_sections(run_page("views/compare.py", corpus_store, monkeypatch))  # sources and names: a click away
    assert len(app.metric) >= 2
    shown = page_text(app)
    assert "bench_serving at max concurrency 16" in shown
    # found by its columns: long "unlabelled: …" names split the comparison into three tables before it
    sources = next(table.value for table in app.dataframe if "throughput from" in table.value.columns)
    assert {"throughput from", "n", "of", "tok/s"} <= set(sources.columns)
    assert "server log: gen throughput at 1 running request" in set(sources["throughput from"])
    # Unlabelled files are one group per folder, and the page says so and where every name came from.
    assert {"unlabelled: logs", "unlabelled: bench"} <= set(sources["variant"])
    [origins] = [e for e in app.expander if e.label.startswith("Where the variant names come from")]
    assert "**unlabelled: logs** — folder, no label" in shown
    assert any("Unlabelled groups pool files" in w.value for w in app.warning)
    # No baseline (none is measured without speculation), and the sources differ: never "✓ like-for-like".
    [check] = [e for e in app.expander if e.label.startswith("Comparability check")]
    assert check.label == "Comparability check: ⚠ throughput from different sources: not comparable"
    assert any("measure different loads" in w.value for w in app.warning)


@pytest.mark.corpus
def test_run_opens_a_corpus_server_lifetime(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = data.sessions(corpus_store)
    lifetime = sessions[sessions["path"].str.endswith("sglang-issue-11948-eagle3-decode-acceptrate.log")].iloc[0]
    app = open_sections(run_page("views/run.py", corpus_store, monkeypatch, {"session": lifetime["session_id"]}))
    assert any("Server lifetime" in s.value for s in app.subheader)
    assert app.get("plotly_chart"), "the lifetime's decode lines are charted"
    assert app.code and "Decode batch" in app.code[0].value


@pytest.mark.corpus
def test_breakdown_shows_corpus_traces_without_phase_markers(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/breakdown.py", corpus_store, monkeypatch, {"variant": ["unlabelled: traces"]})
    ranks = app.dataframe[0].value
    assert set(ranks["rank"]) == {0, 1} and (ranks["GPU busy (ms)"] > 0).all()


def test_every_page_shows_a_store_of_the_projects_own_files(own_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_every_page_shows_evidence(own_store, monkeypatch, "baseline")


# --- one log, two server lifetimes --------------------------------------------------------------

def test_two_lifetimes_give_two_variants_a_delta_and_a_break_even(isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(isolated_store, [TWO_LIFETIMES])
    assert set(data.variants(isolated_store, [])) == {"eagle3:Kimi-K2-Instruct-eagle3", "baseline"}
    app = run_page("views/compare.py", isolated_store, monkeypatch)
    cards = {m.label: m for m in app.metric}
    assert set(cards) == {"eagle3:Kimi-K2-Instruct-eagle3", "baseline (baseline)"}
    assert "slower" in cards["eagle3:Kimi-K2-Instruct-eagle3"].delta
    assert "server log: gen throughput at 1 running request · mean 47.3" in page_text(app)
    assert "13 log lines" in page_text(app)  # 14 lines, the first after start-up left out
    even = run_page("views/breakeven.py", isolated_store, monkeypatch).dataframe[0].value
    assert even["variant"].tolist() == ["eagle3:Kimi-K2-Instruct-eagle3"] and even["r"].iloc[0] > 1


def test_the_first_decode_line_after_idle_is_left_out(isolated_store: Path) -> None:
    ingest(isolated_store, [TWO_LIFETIMES])
    with duckdb.connect(str(isolated_store), read_only=True) as con:
        first = con.execute("SELECT gen_throughput FROM decode_stats WHERE segment = 1 ORDER BY line_no LIMIT 1").fetchone()[0]
        rest = con.execute(
            "SELECT avg(gen_throughput) FROM (SELECT * FROM decode_stats WHERE segment = 1 ORDER BY line_no OFFSET 1)"
        ).fetchone()[0]
    assert first < 1  # 0.40 tok/s: it spans the idle gap before the first request
    baseline = data.variant_summary(isolated_store, [], ["baseline"]).iloc[0]
    assert baseline["mean_of_runs"] == pytest.approx(rest)


def test_reingesting_keeps_the_same_sessions(isolated_store: Path) -> None:
    ingest(isolated_store, [TWO_LIFETIMES, *OWN_FILES])
    before = data.sessions(isolated_store)[["session_id", "variant"]]
    ingest(isolated_store, [TWO_LIFETIMES, *OWN_FILES])
    after = data.sessions(isolated_store)[["session_id", "variant"]]
    assert before.equals(after)


# --- labels -------------------------------------------------------------------------------------

def test_traces_labelled_at_ingest_reach_breakdown(isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(isolated_store, [FIXTURES / "traces" / "eagle-stack-TP-0.trace.json.gz"], phase="phase-7", variant="k2-ft")
    assert data.phases(isolated_store) == ["phase-7"]
    assert data.variants(isolated_store, ["phase-7"]) == ["k2-ft"]
    app = run_page("views/breakdown.py", isolated_store, monkeypatch)
    assert any("k2-ft" in m.value for m in app.markdown), "the headline sentence names the traced variant"


def test_an_unlabelled_trace_joins_its_folders_group(isolated_store: Path) -> None:
    ingest(isolated_store, [FIXTURES / "traces" / "no-phases-TP-0.trace.json.gz"])
    sessions = data.sessions(isolated_store)
    assert sessions[["origin", "variant", "variant_from"]].values.tolist() == [["trace_set", "unlabelled: traces", "folder, no label"]]


def test_a_bench_record_takes_its_variant_from_its_server_info(isolated_store: Path) -> None:
    ingest(isolated_store, [FIXTURES / "bench" / "sglang-2025-11-server-info.jsonl"])
    records = data.sessions(isolated_store)
    assert (records["origin"] == "bench_record").all()
    assert set(records["variant_from"]) == {"server_info in the record"}
    assert not records["variant"].str.startswith("bench:").any()


def test_a_bench_record_is_linked_to_the_only_log_of_its_ingest_call(isolated_store: Path) -> None:
    ingest(isolated_store, [FIXTURES / "bench" / "vllm-console-2025-spec-decoding.txt", FIXTURES / "logs" / "sglang-eagle3-basic.log"])
    sessions = data.sessions(isolated_store).set_index("origin")
    record = sessions.loc["bench_record"]
    assert record["link_method"] == "same ingest call, only log"
    assert record["variant"] == sessions.loc["server_lifetime"]["variant"] == "eagle3:EAGLE3-Kimi-K2-Instruct"
    assert record["variant_from"] == "server log of the same ingest call"


def test_comparability_flags_throughput_from_another_source(isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(isolated_store, [TWO_LIFETIMES])
    ingest(isolated_store, [FIXTURES / "bench" / "sglang-2025-11-server-info.jsonl"], variant="eagle3-at-load")
    app = run_page("views/compare.py", isolated_store, monkeypatch, {"baseline": "baseline"})
    findings = next(d.value for d in app.dataframe if "setting" in d.value.columns)
    flagged = findings[(findings["variant"] == "eagle3-at-load") & (findings["setting"] == "throughput from")]
    assert len(flagged) == 1 and flagged["like-for-like"].iloc[0] == False  # noqa: E712


def test_two_drafter_configs_of_one_drafter_get_their_settings_in_the_name(isolated_store: Path, tmp_path: Path) -> None:
    text = TWO_LIFETIMES.read_text()
    first, second = text.split("\n[2026-03-02 16:00:00]", 1)
    # The same drafter again, with 3 steps and 4 draft tokens instead of 2 and 3, as a second log.
    other = first.replace("speculative_num_steps=2", "speculative_num_steps=3") \
                 .replace("speculative_num_draft_tokens=3", "speculative_num_draft_tokens=4") \
                 .replace("2026-03-02 1", "2026-03-03 1")
    log = tmp_path / "steps3.log"
    log.write_text(other + "\n")
    ingest(isolated_store, [TWO_LIFETIMES, log])
    assert set(data.variants(isolated_store, [])) == {
        "baseline",
        "eagle3:Kimi-K2-Instruct-eagle3 (steps 2, topk 1, draft tokens 3)",
        "eagle3:Kimi-K2-Instruct-eagle3 (steps 3, topk 1, draft tokens 4)",
    }


def test_phases_trends_name_unphased_evidence_like_the_timeline(own_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/phases.py", own_store, monkeypatch)
    timeline, trends = app.dataframe[0].value, app.dataframe[1].value
    assert timeline["phase"].tolist() == ["(no phase)"]
    assert set(trends["phase"]) == {"(no phase)"} and len(trends) >= 2


def test_an_unlabelled_benchmark_file_counts_under_its_folders_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A benchmark file with no variant of its own, in a folder with no layout: every page names it by its folder's
    group, and Compare shows its runs under that name (it said the group 'has only profiler traces')."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "bench.json").write_text('{"runs": [{"output_tokens": 100, "duration_s": 2.0}, '
                                       '{"output_tokens": 100, "duration_s": 2.5}]}')
    db = tmp_path / "store.duckdb"
    assert not [r for r in ingest_paths([folder], db) if r.failed]
    assert data.variants(db, []) == ["unlabelled: runs"]
    assert data.variant_summary(db, [], [])["variant"].tolist() == ["unlabelled: runs"]
    app = run_page("views/compare.py", db, monkeypatch)
    assert [(m.label, m.value) for m in app.metric] == [("unlabelled: runs", "44.4 tok/s")]  # 200 tokens ÷ 4.5 s
