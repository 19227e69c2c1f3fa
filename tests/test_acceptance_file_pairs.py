"""Two /metrics snapshots saved as two files give per-window counter deltas (issue #19; migration 018).

``curl …/metrics > before.prom``, run, ``curl …/metrics > after.prom``: each file is parsed alone (one
transaction per source) and records its snapshots' scrape times and its modification time
(``metric_snapshots``); the views ``metric_file_order``/``metric_file_pairs``/``metric_file_deltas`` pair
consecutive files of one folder and --variant, and the Acceptance views read the pairs as windows.
The files are built from real samples: the project's two-snapshot fixture split in two, and the corpus'
vLLM DP8 UI paste and SGLang exposition sample with their counters moved on.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb
import pytest

from ingest.formats import ParseOptions
from ingest.parsers.metrics import prometheus_text
from ingest.pipeline import ingest_paths
from tests.conftest import FIXTURES

HERE = FIXTURES / "acceptance"
TWO_SNAPSHOTS = HERE / "vllm-metrics-two-snapshots-dp2.prom"
T0 = 1_790_000_000  # an mtime, seconds


def split_snapshots(folder: Path, before: str = "before.prom", after: str = "after.prom") -> tuple[Path, Path]:
    """The fixture's two scrapes (appended to one file) as two files, as a user who used ``>`` has them."""
    lines = TWO_SNAPSHOTS.read_text(encoding="utf-8").splitlines(keepends=True)
    first_type = next(i for i, line in enumerate(lines) if line.startswith("# TYPE"))
    second = next(i for i, line in enumerate(lines) if i > first_type and line == lines[first_type]) - 1  # its # HELP line
    folder.mkdir(parents=True, exist_ok=True)
    (folder / before).write_text("".join(lines[:second]), encoding="utf-8")
    (folder / after).write_text("".join(lines[second:]), encoding="utf-8")
    return folder / before, folder / after


def set_mtime(path: Path, seconds: int) -> None:
    os.utime(path, (seconds, seconds))


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_each_file_records_its_snapshots_and_modification_time(tmp_path: Path) -> None:
    before, _ = split_snapshots(tmp_path)
    set_mtime(before, T0)
    parsed = prometheus_text.parse(before, ParseOptions())
    [row] = parsed.tables["metric_snapshots"].to_pylist()
    assert row["snapshot"] == 0 and row["samples"] == len(parsed.tables["metric_samples"]) and row["scraped_at"] is None
    assert row["file_mtime"].timestamp() == pytest.approx(T0, abs=1) or row["file_mtime"].year == 2026  # naive UTC
    assert parsed.tables["counter_deltas"].num_rows == 0  # one snapshot: no window inside the file


def test_before_and_after_files_give_the_window_that_one_file_of_both_gives(tmp_path: Path) -> None:
    before, after = split_snapshots(tmp_path / "run")
    set_mtime(before, T0)
    set_mtime(after, T0 + 600)  # by name "after.prom" sorts first: the modification times decide
    db = tmp_path / "s.duckdb"
    reports = ingest_paths([after, before], db, variant="eagle3")
    assert not any(r.failed for r in reports)
    [pair] = query(db, "SELECT before_path, after_path, ordered_by FROM metric_file_pairs")
    assert (Path(pair[0]).name, Path(pair[1]).name, pair[2]) == ("before.prom", "after.prom", "file modification time")
    window = query(db, "SELECT \"window\", reset, engines, drafts, accepted, accept_length FROM acceptance_metric_windows "
                       "WHERE scope = 'counter delta'")
    # the same figures as the fixture's own window 0→1 (test_acceptance_parsers): drafts 2000+1200, accepted 2200+1400
    assert window == [("before.prom → after.prom", False, 2, 3200.0, 3600.0, pytest.approx(1 + 3600 / 3200))]
    rates = query(db, "SELECT engine_index, position, rate, drafts FROM acceptance_position_rates "
                      "WHERE origin = 'Prometheus counter delta between files' ORDER BY engine_index, position")
    assert rates[:3] == [(0, 1, 0.6, 2000), (0, 2, 0.35, 2000), (0, 3, 0.15, 2000)]
    assert len(rates) == 6
    gauges = query(db, "SELECT count(*) FROM metric_file_deltas WHERE metric LIKE '%_created'")
    assert gauges == [(0,)]  # _created series are gauges here: never differenced
    assert query(db, "SELECT count(*) FROM metric_file_deltas WHERE warning IS NOT NULL") == [(0,)]


def test_a_counter_that_went_down_between_files_is_a_restart_warning_naming_both(tmp_path: Path) -> None:
    before, after = split_snapshots(tmp_path / "run")
    text = before.read_text(encoding="utf-8")
    # the later scrape of a restarted server: engine 0's drafts counted from zero again
    restarted = after.read_text(encoding="utf-8").replace(
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3000.0',
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 400.0')
    assert restarted != after.read_text(encoding="utf-8") and text
    after.write_text(restarted, encoding="utf-8")
    set_mtime(before, T0)
    set_mtime(after, T0 + 60)
    db = tmp_path / "s.duckdb"
    reports = ingest_paths([before, after], db)
    assert not any(r.failed for r in reports)  # no crash: each file alone is fine
    [(delta, reset, warning)] = query(db, "SELECT delta, reset, warning FROM metric_file_deltas WHERE reset")
    assert (delta, reset) == (400.0, True)  # the window counts from zero
    assert warning.startswith("server restarted between snapshots: vllm:spec_decode_num_drafts_total")
    assert str(before) in warning and str(after) in warning and "1000.0" in warning and "400.0" in warning
    assert query(db, "SELECT reset FROM acceptance_metric_windows WHERE scope = 'counter delta'") == [(True,)]


def test_order_falls_back_from_scrape_time_to_modification_time_to_name(tmp_path: Path) -> None:
    # scrape times printed in every file of the folder decide over the modification times
    folder = tmp_path / "stamped"
    before, after = split_snapshots(folder, "a.prom", "b.prom")
    for path, ms in ((before, 1_756_736_800_000), (after, 1_756_737_400_000)):
        stamped = re.sub(r"^(vllm:\S+ \S+)$", rf"\1 {ms}", path.read_text(encoding="utf-8"), flags=re.M)
        path.write_text(stamped, encoding="utf-8")
    set_mtime(before, T0 + 600)  # copied later than the other: the mtimes lie, the scrape times do not
    set_mtime(after, T0)
    # no scrape times and the same modification time (an archive unpacked): names decide
    named = tmp_path / "named"
    first, second = split_snapshots(named, "metrics-1.prom", "metrics-2.prom")
    set_mtime(first, T0)
    set_mtime(second, T0)
    db = tmp_path / "s.duckdb"
    assert not any(r.failed for r in ingest_paths([after, before, second, first], db))
    pairs = query(db, "SELECT before_path, after_path, ordered_by FROM metric_file_pairs ORDER BY folder")
    assert [(Path(b).name, Path(a).name, by) for b, a, by in pairs] == [
        ("metrics-1.prom", "metrics-2.prom", "file modification time"),  # equal mtimes: ties by name
        ("a.prom", "b.prom", "scrape time"),
    ]
    assert query(db, "SELECT count(*) FROM metric_file_deltas WHERE reset") == [(0,)]


def test_files_of_other_folders_or_variants_are_not_paired(tmp_path: Path) -> None:
    before, after = split_snapshots(tmp_path / "x")
    other_before, other_after = split_snapshots(tmp_path / "y")
    for path in (other_before, other_after):  # another server's scrapes: not the same bytes (those load once)
        path.write_text(path.read_text(encoding="utf-8").replace("Llama-3.1-8B", "Llama-3.1-70B"), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([before], db, variant="k2")
    ingest_paths([after], db, variant="scratch")  # same folder, another variant
    ingest_paths([other_before, other_after], db)
    pairs = query(db, "SELECT before_path, after_path FROM metric_file_pairs")
    assert [(Path(b).parent.name, Path(a).parent.name) for b, a in pairs] == [("y", "y")]


@pytest.mark.corpus
def test_corpus_vllm_dp8_paste_before_and_after(corpus_dir: Path, tmp_path: Path) -> None:
    """The real DP8 UI paste (vllm PR #24049) as the before file; the after file has every engine's drafts +10."""
    source = corpus_dir / "new" / "prometheus" / "vllm-pr-24049-prom-query-dp8-drafts.txt"
    folder = tmp_path / "dp8"
    folder.mkdir()
    before, after = folder / "before.txt", folder / "after.txt"
    text = source.read_text(encoding="utf-8")
    before.write_text(text, encoding="utf-8")
    after.write_text(re.sub(r"(spec_decode_num_drafts_total\{.*\} \| )(\d+)", lambda m: f"{m[1]}{int(m[2]) + 10}", text),
                     encoding="utf-8")
    set_mtime(before, T0)
    set_mtime(after, T0 + 300)
    db = tmp_path / "s.duckdb"
    assert not any(r.failed for r in ingest_paths([before, after], db))
    deltas = query(db, "SELECT engine_index, delta FROM metric_file_deltas ORDER BY engine_index")
    assert deltas == [(engine, 10.0) for engine in range(8)]  # the _created row is not a counter: not differenced
    assert query(db, "SELECT drafts, engines FROM acceptance_metric_windows WHERE scope = 'counter delta'") == [(80.0, 8)]


@pytest.mark.corpus
def test_corpus_sglang_exposition_gauges_are_never_differenced(corpus_dir: Path, tmp_path: Path) -> None:
    """The SGLang docs' /metrics sample as the before file; after: its counters moved on and a gauge changed."""
    source = corpus_dir / "new" / "prometheus" / "sglang-docs-metrics-example-apr2025.prom"
    folder = tmp_path / "sglang"
    folder.mkdir()
    before, after = folder / "before.prom", folder / "after.prom"
    text = source.read_text(encoding="utf-8")
    before.write_text(text, encoding="utf-8")
    moved = text.replace('sglang:generation_tokens_total{model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.557572e+06',
                         'sglang:generation_tokens_total{model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.567572e+06')
    moved = moved.replace('sglang:token_usage{model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.28',
                          'sglang:token_usage{model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.05')
    assert moved.count("7.567572e+06") == 1 and "} 0.05" in moved
    after.write_text(moved, encoding="utf-8")
    set_mtime(before, T0)
    set_mtime(after, T0 + 300)
    db = tmp_path / "s.duckdb"
    assert not any(r.failed for r in ingest_paths([before, after], db))
    kinds = query(db, "SELECT DISTINCT s.kind FROM metric_file_deltas d JOIN metric_samples s "
                      "ON s.source_id = d.after_source_id AND s.metric = d.metric AND s.labels = d.labels")
    assert kinds == [("counter",)]
    assert query(db, "SELECT count(*) FROM metric_file_deltas WHERE metric = 'sglang:token_usage'") == [(0,)]
    assert query(db, "SELECT delta FROM metric_file_deltas WHERE metric = 'sglang:generation_tokens_total'") == [(10_000.0,)]
    assert query(db, "SELECT count(*) FROM metric_file_deltas WHERE delta <> 0") == [(1,)]
