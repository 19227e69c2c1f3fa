"""The app's non-UI helpers: raw log windows read back from files, browser uploads, table exports."""
from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from dashboard import uploads
from dashboard.analysis import data, exports, rawlog
from tests.conftest import ROOT

DEMO_K2 = ROOT / "data" / "demo" / "phase-0" / "k2-drafter"


def numbered_log(path: Path, lines: int, packed: bool = False) -> Path:
    text = "".join(f"[2026-02-10 14:00:{i % 60:02d}] line {i}\n" for i in range(1, lines + 1)).encode()
    path.write_bytes(gzip.compress(text) if packed else text)
    return path


@pytest.mark.parametrize("packed", [False, True])
def test_raw_window_streams_the_line_range_with_context(tmp_path: Path, packed: bool) -> None:
    log = numbered_log(tmp_path / ("s.log.gz" if packed else "s.log"), 100, packed)
    window = rawlog.read_window(str(log), log.stat().st_size, 40, 45)
    assert window.problem is None and not window.truncated
    assert [n for n, _ in window.lines] == list(range(38, 48))  # 2 lines of context either side
    assert window.lines[2] == (40, "[2026-02-10 14:00:40] line 40")


def test_raw_window_is_capped(tmp_path: Path) -> None:
    log = numbered_log(tmp_path / "big.log", 500)
    window = rawlog.read_window(str(log), None, 1, 500, cap=100)
    assert len(window.lines) == 100 and window.truncated


def test_a_gone_or_changed_file_is_reported_not_read(tmp_path: Path) -> None:
    log = numbered_log(tmp_path / "s.log", 10)
    changed = rawlog.read_window(str(log), log.stat().st_size + 1, 1, 5)
    assert changed.lines == [] and "changed since it was ingested" in (changed.problem or "")
    log.unlink()
    gone = rawlog.read_window(str(log), 10, 1, 5)
    assert gone.lines == [] and "is gone" in (gone.problem or "")


def test_search_and_text_rendering() -> None:
    lines = [(9, "Prefill batch, #new-seq: 1"), (10, "Decode batch, accept len: 1.58"), (11, "INFO: POST")]
    assert rawlog.matching(lines, "  ACCEPT ") == [(10, "Decode batch, accept len: 1.58")]
    assert rawlog.matching(lines, "") == lines
    assert rawlog.as_text(lines[:2]) == " 9  Prefill batch, #new-seq: 1\n10  Decode batch, accept len: 1.58"


def test_uploads_are_ingested_together_under_their_own_names(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    files = [("bench.json", io.BytesIO((DEMO_K2 / "bench.json").read_bytes())),
             ("../../etc/server.log", io.BytesIO((DEMO_K2 / "server.log").read_bytes())),
             ("notes.txt", io.BytesIO(b"hello, not a log\n"))]
    progress: list[tuple[int, int]] = []
    reports = uploads.ingest_uploads(files, db, phase="phase-0", variant="k2-drafter",
                                     on_progress=lambda done, total, _: progress.append((done, total)))
    assert [(r.name, r.status) for r in reports] == [("bench.json", "loaded"), ("../../etc/server.log", "loaded"),
                                                     ("notes.txt", "failed")]
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert "bench.json: bench_json, 8 rows loaded" in reports[0].summary
    assert reports[2].summary.startswith("FAILED  notes.txt:") and str(tmp_path) not in reports[2].summary
    kept = sorted(p.name for p in uploads.upload_root(db).rglob("*") if p.is_file())
    assert kept == ["bench.json", "server.log"]  # the failed file is removed; nothing escaped the upload folder
    linked = data.frame(db, "SELECT DISTINCT link_method FROM session_logs")["link_method"].tolist()
    assert linked == ["same ingest call"]


def test_uploads_are_ingested_outside_the_dashboard_process(tmp_path: Path) -> None:
    """Reading a log loads numba and LLVM (~160 MB a process keeps): the dashboard's server must not."""
    code = (
        "import io, sys\n"
        "from pathlib import Path\n"
        "from dashboard import uploads\n"
        f"log = Path({str(DEMO_K2 / 'server.log')!r}).read_bytes()\n"
        f"[report] = uploads.ingest_uploads([('server.log', io.BytesIO(log))], Path({str(tmp_path / 'store.duckdb')!r}))\n"
        "print(report.status, 'numba' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["loaded", "False"], result.stderr
    assert data.frame(tmp_path / "store.duckdb", "SELECT count(*) AS n FROM decode_stats")["n"].item() > 0


def test_files_the_ingest_never_reported_on_are_failed_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.duckdb"
    monkeypatch.setattr(uploads, "ingest_records", lambda paths, db_path, **_: iter([]))  # as if the child was killed
    progress: list[tuple[int, int]] = []
    reports = uploads.ingest_uploads([("a.json", io.BytesIO(b"{}")), ("b.log", io.BytesIO(b"x\n"))], db,
                                     on_progress=lambda done, total, _: progress.append((done, total)))
    assert [(r.name, r.status) for r in reports] == [("a.json", "failed"), ("b.log", "failed")]
    assert reports[0].summary == f"FAILED  a.json: {uploads.NOT_REPORTED}" and progress == [(1, 2), (2, 2)]
    assert not uploads.upload_root(db).exists() or not any(uploads.upload_root(db).rglob("*.*"))


def test_uploading_the_same_bytes_again_is_a_no_op(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    first = uploads.ingest_uploads([("bench.json", io.BytesIO((DEMO_K2 / "bench.json").read_bytes()))], db)
    again = uploads.ingest_uploads([("copy.json", io.BytesIO((DEMO_K2 / "bench.json").read_bytes()))], db)
    assert (first[0].status, again[0].status) == ("loaded", "already ingested")
    assert [p.name for p in uploads.upload_root(db).rglob("*") if p.is_file()] == ["bench.json"]


@pytest.mark.parametrize(("name", "safe"), [("a/b/../c.log", "c.log"), ("..", "upload"), ("x y$%.json", "x y_.json"), ("C:\\t\\r.log", "r.log")])
def test_safe_names_keep_only_the_base_name(name: str, safe: str) -> None:
    assert uploads.safe_name(name) == safe


def test_exports_round_trip(tmp_path: Path) -> None:
    frame = pd.DataFrame({"variant": ["k2"], "tok/s": [51.78], "sessions": [["a", "b"]],
                          "at": [pd.Timestamp("2026-02-10 14:02:35")], "flag": [True]})
    assert exports.to_csv(frame).decode().splitlines() == ["variant,tok/s,sessions,at,flag",
                                                           'k2,51.78,"[""a"", ""b""]",2026-02-10 14:02:35,True']
    table = pq.read_table(io.BytesIO(exports.to_parquet(frame)))
    assert table.column("tok/s").to_pylist() == [51.78] and str(table.schema.field("at").type).startswith("timestamp")
    assert exports.file_stem("runs: k2/phase 0") == "runs-k2-phase-0"


def test_store_state_reports_a_store_that_needs_migrating(tmp_path: Path, demo_db: Path) -> None:
    db = tmp_path / "old.duckdb"
    shutil.copy(demo_db, db)
    import duckdb

    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM schema_migrations WHERE name = '005_run_windows'")
    assert data.store_state(db)["pending_migrations"] == ["005_run_windows"]
    assert data.store_state(demo_db)["pending_migrations"] == []


def test_compare_report_is_self_contained_and_escapes_labels() -> None:
    from dashboard import charts, report

    table = pd.DataFrame({"variant": ["<script>x</script>"], "Σtok/Σtime": [51.78]})
    figure = charts.delta_forest(pd.DataFrame({"variant": ["a"], "is_baseline": [False], "delta_pct": [-36.7],
                                               "delta_pct_low": [-40.0], "delta_pct_high": [-33.0], "verdict": ["slower"]}))
    page = report.compare_report("<b>sel</b>", table, pd.DataFrame(), [figure, figure], "http://h/?a=1&b=2")
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<b>sel</b>" not in page and page.count("Plotly.newPlot") == 2
    assert page.count("window.PlotlyConfig") == 1 and len(page) > 3_000_000  # plotly.js inlined once, for the first chart
    assert 'href="http://h/?a=1&amp;b=2"' in page
