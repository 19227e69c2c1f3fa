"""The Run page's per-position acceptance (issue #19, "Run links"): a session's window, from vLLM's per-position
lines in its linked server log, with a link to the Acceptance page filtered to it; nothing where there are none."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis import acceptance, data
from ingest.pipeline import ingest_paths
from tests.test_app import run_page, texts
from tests.test_app_every_page import table_defects

FIXTURE_LOG = Path(__file__).parent / "fixtures" / "logs" / "vllm-v1-eagle3-2025.log"
SECTION = "Acceptance per draft position"
DRAFT_LINE = ("Accepted throughput: 90.00 tokens/s, Drafted throughput: 180.00 tokens/s, Accepted: 900 tokens, "
              "Drafted: 1800 tokens, Per-position acceptance rate: {}, Avg Draft acceptance rate: 50.0%")


def vllm_line(time: str, body: str) -> str:
    return f"(APIServer pid=1) INFO 02-10 {time} [metrics.py:96] {body}"


def write_session(folder: Path) -> list[Path]:
    """A vLLM log with one per-position line in the warm-up and one in each of two measured runs, and its benchmark."""
    stats = ("Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 150.0 tokens/s, Running: 1 reqs, "
             "Waiting: 0 reqs, GPU KV cache usage: 0.9%, Prefix cache hit rate: 0.0%")
    lines = ["2026-02-10 14:00:00 capture started (the dated line vLLM's year-less stamps take their year from)",
             vllm_line("14:00:00", "non-default args: {'model': 'm', 'speculative_config': {'method': 'eagle3', "
                                   "'model': 'd', 'num_speculative_tokens': 3}}")]
    for time, rates in (("14:00:10", "0.900, 0.800, 0.700"), ("14:01:10", "0.800, 0.500, 0.200"),
                        ("14:02:10", "0.600, 0.300, 0.100")):
        lines += [vllm_line(time, stats), vllm_line(time, "SpecDecoding metrics: Mean acceptance length: 2.50, "
                                                           + DRAFT_LINE.format(rates))]
    log = folder / "server.log"
    log.write_text("\n".join(lines) + "\n")
    runs = [{"index": index, "warmup": warmup, "prompt_tokens": 24, "output_tokens": 2048, "duration_s": 20.0,
             "started_at": f"2026-02-10T14:0{minute}:00", "ended_at": f"2026-02-10T14:0{minute}:20", "finish_reason": "length"}
            for index, warmup, minute in ((1, True, 0), (1, False, 1), (2, False, 2))]
    bench = folder / "bench.json"
    bench.write_text(json.dumps({"format": "specdash.bench/1", "endpoint": "http://localhost:8000/v1/completions",
                                 "model": "m", "phase": "p", "variant": "eagle3", "max_tokens": 2048, "warmup": 1,
                                 "started_at": "2026-02-10T14:00:00", "runs": runs}))
    return [bench, log]


@pytest.fixture(scope="module")
def positions_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark with its log, and the fixture's vLLM server lifetime (another variant, a log of its own)."""
    folder = tmp_path_factory.mktemp("run-positions")
    db = folder / "store.duckdb"
    reports = ingest_paths(write_session(folder), db, phase="p", variant="eagle3")
    reports += ingest_paths([FIXTURE_LOG], db)
    assert not [r.summary() for r in reports if r.failed]
    return db


def session_of(db: Path, origin: str) -> str:
    sessions = data.sessions(db)
    return str(sessions[sessions["origin"] == origin]["session_id"].iloc[0])


def test_the_reader_takes_the_measured_runs_windows_only(positions_db: Path) -> None:
    session = session_of(positions_db, "benchmark")
    whole = data.session_positions(positions_db, session)
    assert sorted(set(whole["line_no"])) == [6, 8]  # the warm-up's line (4) is outside every measured window
    assert set(data.session_positions(positions_db, session, 2)["line_no"]) == {8}
    assert data.session_positions(positions_db, session, 7).empty
    curve = acceptance.session_curve(whole, "eagle3")
    assert curve["survival"].tolist() == pytest.approx([0.7, 0.4, 0.15])  # equal drafts (600 each): the plain mean
    assert curve["accept_length"].iloc[0] == pytest.approx(2.25)


def link_targets(app: AppTest) -> list[tuple[str, str]]:
    return [(link.proto.page, link.proto.query_string) for link in app.get("page_link")]


def test_run_page_shows_the_windows_curve_and_links_to_the_acceptance_page(positions_db: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/run.py", positions_db, monkeypatch, {"session": session_of(positions_db, "benchmark")})
    assert SECTION in [h.value for h in app.subheader]
    assert "From 2 vLLM `SpecDecoding metrics` line(s)" in texts(app) and "**2.25 tokens/step**" in texts(app)
    table = next(t.value for t in app.dataframe if "P(≥ k)" in t.value.columns)
    assert table["P(≥ k)"].tolist() == pytest.approx([70.0, 40.0, 15.0])  # shares, shown ×100 with their %
    assert table_defects(app, "run") == []
    assert any(page.endswith("acceptance") and query == "acceptance_variant=eagle3" for page, query in link_targets(app))


def test_one_run_shows_that_runs_line_only(positions_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/run.py", positions_db, monkeypatch, {"session": session_of(positions_db, "benchmark"), "run": "1"})
    table = next(t.value for t in app.dataframe if "P(≥ k)" in t.value.columns)
    assert table["P(≥ k)"].tolist() == pytest.approx([80.0, 50.0, 20.0]) and "run 1's window" in texts(app)


def test_a_server_lifetime_shows_its_whole_logs_curve(positions_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/run.py", positions_db, monkeypatch, {"session": session_of(positions_db, "server_lifetime")})
    table = next(t.value for t in app.dataframe if "P(≥ k)" in t.value.columns)
    pooled = (0.738 * 65 + 0.786 * 602) / 667  # the fixture's two lines, weighted by their drafts
    assert table["P(≥ k)"].iloc[0] == pytest.approx(100 * pooled) and "the whole server lifetime" in texts(app)


def test_the_acceptance_page_opens_filtered_to_the_linked_variant(positions_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/acceptance.py", positions_db, monkeypatch, {"acceptance_variant": "eagle3"})
    assert app.multiselect(key="acceptance_variants").value == ["eagle3"]
    assert len(app.multiselect(key="acceptance_variants").options) == 2  # the lifetime's variant is there, not picked
    summary = app.dataframe[0].value
    assert summary["variant"].tolist() == ["eagle3"]


def test_no_per_position_lines_no_section(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for _, session in data.sessions(demo_db).groupby("origin"):
        app = run_page("views/run.py", demo_db, monkeypatch, {"session": session["session_id"].iloc[0]})
        assert SECTION not in [h.value for h in app.subheader]
        assert "SpecDecoding metrics" not in texts(app)
        assert not any(page.endswith("acceptance") for page, _ in link_targets(app))
    assert isinstance(data.session_positions(demo_db, session["session_id"].iloc[0]), pd.DataFrame)


def test_the_run_pages_accept_length_series_weighs_only_lines_that_carry_one(positions_db: Path) -> None:
    """vLLM prints the engine's throughput and its SpecDecoding metrics on separate lines of one timestamp: a
    bucket holding both must read the logged 2.50, not 2.50 averaged with the throughput line's blank (1.25)."""
    keys = [f"{source}:{'' if pd.isna(segment) else int(segment)}" for source, segment in
            data.frame(positions_db, "SELECT DISTINCT source_id, segment FROM decode_stats WHERE tokens_per_step IS NOT NULL")
            .itertuples(index=False)]
    series = data.decode_series(positions_db, keys)
    assert series["tokens_per_step"].dropna().tolist() and set(series["tokens_per_step"].dropna().round(6)) == {2.5}
