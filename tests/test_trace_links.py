"""A trace set joins the server lifetime that wrote it, and --link-to / --no-link override the links
(issue #16 part 1; migration 012, views trace_set_links and trace_labels, docs/schema.md).

The log is the project's two-lifetime fixture (EAGLE3, then a baseline) with SGLang's stock profiler
start message added inside the first lifetime: "Profiling starts for DECODE. Traces will be saved to:
DIR (with profile id: ID)", as python/sglang/srt/managers/scheduler_profiler_mixin.py logs it. The
trace is a fixture trace named as SGLang names its files, ``<profile id>-TP-<rank>-DECODE.trace.json.gz``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from dashboard.analysis import data
from dashboard.cli import main
from tests.conftest import ROOT
from tests.test_app import open_sections, run_page
from tests.test_cli import stored_rows

FIXTURES = ROOT / "tests" / "fixtures"
PROFILED_LOG = FIXTURES / "dashboard" / "sglang-two-lifetimes-profiled.log"
PLAIN_LOG = FIXTURES / "dashboard" / "sglang-two-lifetimes-eagle3-then-baseline.log"
BENCH = FIXTURES / "bench" / "sglang-2025-06-accept-length.jsonl"
PROFILE_ID = "1772460165.0712345"  # 2026-03-02 14:02:45 UTC: inside the log's first lifetime
EAGLE3 = "eagle3:Kimi-K2-Instruct-eagle3"
TRACE_TABLES = ("trace_ranks", "cycle_phase_times", "trace_kernels")


def folder_group(folder: Path) -> str:
    """The variant of a file given no label in a folder that is no phase layout (macro folder_variant)."""
    return f"unlabelled: {folder.name}"


def trace_named(folder: Path, stem: str, fixture: str = "eagle-stack-TP-0.trace.json.gz") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-TP-0-DECODE.trace.json.gz"
    shutil.copy(FIXTURES / "traces" / fixture, path)
    return path


def ingest(db: Path, *args: str | Path) -> int:
    return main(["ingest", *map(str, args), "--db", str(db)])


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def trace_session(db: Path) -> tuple:
    [row] = query(db, "SELECT variant, variant_from, link_method, log_segment FROM evidence_sessions WHERE origin = 'trace_set'")
    return row


def trace_table_variants(db: Path) -> set[str]:
    return {variant for table in TRACE_TABLES for (variant,) in query(db, f"SELECT DISTINCT variant FROM {table}")}


def test_a_trace_loaded_before_its_log_takes_the_lifetime_named_by_the_profile_id(tmp_path: Path, isolated_store: Path) -> None:
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID)) == 0
    assert trace_table_variants(isolated_store) == {folder_group(tmp_path)}
    assert ingest(isolated_store, PROFILED_LOG) == 0
    assert trace_session(isolated_store) == (EAGLE3, "linked server log", "profile id in the server log", 0)
    assert trace_table_variants(isolated_store) == {EAGLE3}  # every trace table: Breakdown reads them
    [(profile,)] = query(isolated_store, "SELECT profile_id FROM log_profiles")
    assert profile == PROFILE_ID


def test_the_breakdown_page_shows_the_linked_trace_under_the_lifetimes_variant(
    tmp_path: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ingest(isolated_store, PROFILED_LOG, trace_named(tmp_path, PROFILE_ID)) == 0
    assert data.variants(isolated_store, []) == [EAGLE3, "baseline"]  # one name per experiment, no "trace:…"
    app = run_page("views/breakdown.py", isolated_store, monkeypatch, {"variant": [EAGLE3]})
    assert any(EAGLE3 in m.value for m in app.markdown), "the headline sentence names the traced variant"
    run = run_page("views/run.py", isolated_store, monkeypatch, {"session": f"trace-{PROFILE_ID}"})
    assert any("profile id in the server log" in str(m.value) for m in [*run.markdown, *run.caption]), "the Run page says how"


def test_a_log_without_profiler_messages_links_a_trace_whose_profile_id_falls_in_a_lifetime(
    tmp_path: Path, isolated_store: Path
) -> None:
    assert ingest(isolated_store, PLAIN_LOG) == 0
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID)) == 0
    assert trace_session(isolated_store) == (EAGLE3, "linked server log", "trace start inside the lifetime (UTC clock)", 0)


def test_a_trace_from_another_time_stays_under_its_own_name(tmp_path: Path, isolated_store: Path) -> None:
    assert ingest(isolated_store, PLAIN_LOG) == 0
    assert ingest(isolated_store, trace_named(tmp_path, "1772470000.5")) == 0  # 16:46 UTC: between no lines
    assert trace_session(isolated_store) == (folder_group(tmp_path), "folder, no label", None, None)


def test_no_link_keeps_a_trace_to_itself(tmp_path: Path, isolated_store: Path) -> None:
    assert ingest(isolated_store, PROFILED_LOG) == 0
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID), "--no-link") == 0
    assert trace_session(isolated_store) == (folder_group(tmp_path), "folder, no label", None, None)
    assert trace_table_variants(isolated_store) == {folder_group(tmp_path)}


def test_link_to_a_session_id_overrides_the_profile_id(tmp_path: Path, isolated_store: Path) -> None:
    assert ingest(isolated_store, PROFILED_LOG) == 0
    [(second,)] = query(isolated_store, "SELECT session_id FROM evidence_sessions WHERE origin = 'server_lifetime' AND part = 1")
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID), "--link-to", second) == 0
    assert trace_session(isolated_store) == ("baseline", "linked server log", "--link-to", 1)
    assert trace_table_variants(isolated_store) == {"baseline"}


def test_link_to_a_log_with_two_lifetimes_is_refused_before_anything_loads(
    tmp_path: Path, isolated_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ingest(isolated_store, PROFILED_LOG) == 0
    before = stored_rows(isolated_store)
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID), "--link-to", PROFILED_LOG.name) == 2
    message = capsys.readouterr().err
    assert f"--link-to {PROFILED_LOG.name}: that log has 2 server lifetimes; name one by its session id" in message
    assert "-seg0" in message and "-seg1" in message
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID), "--link-to", "nothing.log") == 2
    assert "no server lifetime of that name in the store" in capsys.readouterr().err
    assert stored_rows(isolated_store) == before


def test_link_to_a_log_of_one_lifetime_by_its_file_name(tmp_path: Path, isolated_store: Path) -> None:
    one = tmp_path / "eagle3-only.log"
    one.write_text("".join(PLAIN_LOG.read_text().splitlines(keepends=True)[:15]))
    assert ingest(isolated_store, one) == 0
    assert ingest(isolated_store, trace_named(tmp_path, "1600000000.0"), "--link-to", "eagle3-only") == 0
    assert trace_session(isolated_store) == (EAGLE3, "linked server log", "--link-to", 0)


def test_a_bench_record_follows_link_to_and_no_link(isolated_store: Path) -> None:
    assert ingest(isolated_store, PLAIN_LOG) == 0
    [(first,)] = query(isolated_store, "SELECT session_id FROM evidence_sessions WHERE origin = 'server_lifetime' AND part = 0")
    assert ingest(isolated_store, BENCH, "--link-to", first) == 0
    records = query(isolated_store, "SELECT DISTINCT variant, variant_from, link_method, log_segment FROM evidence_sessions "
                                    "WHERE origin = 'bench_record'")
    assert records == [(EAGLE3, "server log named by --link-to", "--link-to", 0)]


def test_no_link_leaves_a_record_of_the_same_call_unlinked(tmp_path: Path, isolated_store: Path) -> None:
    one = tmp_path / "eagle3-only.log"
    one.write_text("".join(PLAIN_LOG.read_text().splitlines(keepends=True)[:15]))
    assert ingest(isolated_store, one, BENCH, "--no-link") == 0
    records = query(isolated_store, "SELECT DISTINCT variant_from, link_method FROM evidence_sessions WHERE origin = 'bench_record'")
    assert records == [("folder, no label", None)]


def test_a_labelled_trace_keeps_its_label_and_links_to_the_log_of_its_label(tmp_path: Path, isolated_store: Path) -> None:
    one = tmp_path / "eagle3-only.log"
    one.write_text("".join(PLAIN_LOG.read_text().splitlines(keepends=True)[:15]))
    assert ingest(isolated_store, one, trace_named(tmp_path, "profile-a"), "--variant", "k2-drafter", "--phase", "phase-0") == 0
    [row] = query(isolated_store, "SELECT phase, variant, variant_from, link_method FROM evidence_sessions WHERE origin = 'trace_set'")
    assert row == ("phase-0", "k2-drafter", "--variant", "same ingest call and variant label")


def test_reingesting_the_log_and_trace_changes_nothing(tmp_path: Path, isolated_store: Path) -> None:
    trace = trace_named(tmp_path, PROFILE_ID)
    assert ingest(isolated_store, trace, PROFILED_LOG) == 0
    before = stored_rows(isolated_store)
    assert ingest(isolated_store, PROFILED_LOG, trace) == 0
    assert stored_rows(isolated_store) == before


def test_a_profiler_only_log_from_the_corpus_names_its_traces(tmp_path: Path, isolated_store: Path, corpus_dir: Path) -> None:
    # PR 11110's log names profile 1759255878.904894; its trace files (not posted) would be named after it.
    log = corpus_dir / "logs" / "sglang-pr-11110-profile-by-stage.log"
    assert ingest(isolated_store, log, trace_named(tmp_path, "1759255878.904894")) == 0
    variant, variant_from, method, _ = trace_session(isolated_store)
    assert (variant, variant_from, method) == ("unlabelled: logs", "linked server log", "profile id in the server log")
    origins = {origin for (origin,) in query(isolated_store, "SELECT origin FROM evidence_sessions")}
    assert origins == {"trace_set"}  # profiler messages give no figures: no server-lifetime session


def test_the_kept_trace_links_hold_exactly_the_views_rows(tmp_path: Path, isolated_store: Path) -> None:
    assert ingest(isolated_store, trace_named(tmp_path, PROFILE_ID), trace_named(tmp_path, "1772460180.0", "eagle-steps-TP-1-DECODE.trace.json.gz")) == 0
    assert ingest(isolated_store, PROFILED_LOG) == 0
    kept = query(isolated_store, "SELECT * FROM trace_links ORDER BY ALL")
    assert len(kept) == 2 and kept == query(isolated_store, "SELECT * FROM trace_set_links ORDER BY ALL")


def test_the_run_page_diffs_a_lifetimes_config_against_the_baseline_lifetime(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ingest(isolated_store, PLAIN_LOG) == 0
    [(first,)] = query(isolated_store, "SELECT session_id FROM evidence_sessions WHERE part = 0")
    app = open_sections(run_page("views/run.py", isolated_store, monkeypatch, {"session": first, "baseline": "baseline"}))
    assert not [i.value for i in app.info if "No config ingested" in i.value]
    [diff] = [t.value for t in app.dataframe if "setting" in t.value.columns]
    assert "speculative_algorithm" in set(diff["setting"])
    assert any(column.startswith("baseline") for column in diff.columns), list(diff.columns)


def test_a_bench_record_from_another_call_links_to_the_lifetime_whose_config_its_server_info_equals(isolated_store: Path) -> None:
    # The demo's phase-1 files (data/demo/README: illustrative): the record's server_info is the log's server_args.
    folder = ROOT / "data" / "demo" / "phase-1" / "k2-drafter-ft"
    assert ingest(isolated_store, folder / "server.log") == 0
    assert ingest(isolated_store, folder / "bench_serving.jsonl") == 0
    records = query(isolated_store, "SELECT DISTINCT variant_from, link_method, log_source_id IS NOT NULL FROM evidence_sessions "
                                    "WHERE origin = 'bench_record'")
    assert records == [("server_info in the record", "server_info equal to the lifetime's config", True)]
    [(lifetime_variant,)] = query(isolated_store, "SELECT variant FROM evidence_sessions WHERE origin = 'server_lifetime'")
    assert {v for (v,) in query(isolated_store, "SELECT DISTINCT variant FROM evidence_sessions")} == {lifetime_variant}


def test_a_record_whose_server_info_matches_no_lifetime_stays_unlinked(isolated_store: Path) -> None:
    assert ingest(isolated_store, ROOT / "data" / "demo" / "phase-1" / "baseline" / "server.log") == 0
    assert ingest(isolated_store, ROOT / "data" / "demo" / "phase-1" / "k2-drafter-ft" / "bench_serving.jsonl") == 0
    records = query(isolated_store, "SELECT DISTINCT link_method FROM evidence_sessions WHERE origin = 'bench_record'")
    assert records == [(None,)]
