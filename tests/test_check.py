"""`specdash check` (issue #32): fails a planted drop outside the noise, passes a change within it, and its
Markdown carries the figures, the Welch CIs, the sessions used and permalinks a colleague can open.

Every store here is real: canonical benchmark JSON written by the test, ingested by ``ingest_paths``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dashboard import check_cli
from dashboard.analysis import compare, data, regressions
from dashboard.analysis.regressions import CheckOptions, SessionFigures
from dashboard.analysis.stats import MeanCI
from ingest.pipeline import ingest_paths

TOKENS = 2048
NOISE = (1.0, 1.01, 0.99, 1.005, 0.995)  # five runs, about 1 % apart: a quiet GPU


def session(variant: str, started_at: str, tok_s: float, noise: tuple[float, ...] = NOISE) -> dict[str, object]:
    """One session of ``len(noise)`` measured runs at ``tok_s`` × each factor (plus a warm-up, left out)."""
    runs: list[dict[str, object]] = [{"index": 1, "warmup": True, "output_tokens": 256, "duration_s": 9.0}]
    runs += [{"index": i, "output_tokens": TOKENS, "duration_s": round(TOKENS / (tok_s * f), 4), "finish_reason": "length"}
             for i, f in enumerate(noise, start=1)]
    return {"format": "specdash.bench/1", "phase": "ci", "variant": variant, "max_tokens": TOKENS,
            "started_at": started_at, "runs": runs}


def store_of(folder: Path, sessions: list[tuple[str, str, float]], noise: tuple[float, ...] = NOISE) -> Path:
    """A store holding one session per (variant, started_at, tok/s); one benchmark file per day, as a CI job
    leaves them (one file per day, not per session: each file is a transaction, and the test stays fast)."""
    db = folder / "check.duckdb"
    days = sorted({started[:10] for _, started, _ in sessions})
    paths = []
    for day in days:
        path = folder / f"bench-{day}.json"
        path.write_text(json.dumps({"sessions": [session(v, started, tok_s, noise) for v, started, tok_s in sessions
                                                 if started.startswith(day)]}), encoding="utf-8")
        paths.append(path)
    reports = ingest_paths(paths, db)
    assert not [r.summary() for r in reports if r.failed]
    return db


def run_check(db: Path | None, *flags: str) -> int:
    parser = argparse.ArgumentParser(prog="specdash")
    check_cli.add_check_command(parser.add_subparsers(dest="command", required=True), "store file")
    argv = ["check", *(["--db", str(db)] if db is not None else []), *flags]
    return check_cli.cmd_check(parser.parse_args(argv))


BEFORE, AFTER = "2026-03-01T10:00:00", "2026-03-02T10:00:00"


@pytest.fixture(scope="module")
def planted_drop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """eagle3 at 60 tok/s yesterday, 54 today (−10 %); the baseline unchanged at 50. Read only: shared."""
    return store_of(tmp_path_factory.mktemp("planted"), [("baseline", BEFORE, 50.0), ("eagle3", BEFORE, 60.0),
                               ("baseline", AFTER, 50.0), ("eagle3", AFTER, 54.0)])


def test_a_planted_ten_percent_drop_fails_and_the_summary_names_it(planted_drop: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    summary_file = tmp_path / "check.md"
    assert run_check(planted_drop, "--markdown", str(summary_file), "--base-url", "https://specdash.example.org") == 1
    out = capsys.readouterr()
    assert summary_file.read_text(encoding="utf-8") == out.out
    result = regressions.check(planted_drop, CheckOptions())
    failing = result.failures
    assert [(c.variant, c.against) for c in failing] == [("eagle3", regressions.PREVIOUS)]
    drop = failing[0]
    assert drop.delta_pct == pytest.approx(-10.0, abs=0.2)
    assert drop.delta.high is not None and drop.delta.high < 0
    assert out.out.startswith("# specdash check: 1 regression — eagle3 vs previous session: -10.0% tok/s")
    row = next(line for line in out.out.splitlines() if line.startswith("| eagle3 | previous session"))
    assert "54.0 (n = 5)" in row and "60.0 (n = 5)" in row and "-10.0%" in row and "**regression**" in row
    assert f"[{drop.delta.low:+.1f}, {drop.delta.high:+.1f}] tok/s" in row  # the Welch CI, in tok/s and in %
    assert "eagle3 vs previous session: -10.0% tok/s" in out.err  # the CI log's one line


def test_a_change_within_the_noise_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = store_of(tmp_path, [("baseline", BEFORE, 50.0), ("eagle3", BEFORE, 60.0),
                             ("baseline", AFTER, 50.5), ("eagle3", AFTER, 59.4)])  # +1 %, −1 %
    assert run_check(db) == 0
    out = capsys.readouterr().out
    assert out.startswith("# specdash check: no regression")
    assert "| eagle3 | previous session | 59.4 (n = 5) | 60.0 (n = 5) | -1.0% |" in out


def test_a_large_drop_inside_wide_noise_is_not_a_regression(tmp_path: Path) -> None:
    """Both halves of the rule: a 6 % drop beyond --max-drop, but runs 20 % apart leave its CI spanning 0."""
    noisy = (1.0, 1.2, 0.8, 1.15, 0.85)
    db = store_of(tmp_path, [("eagle3", BEFORE, 60.0), ("eagle3", AFTER, 56.4)], noise=noisy)
    result = regressions.check(db, CheckOptions())
    (only,) = result.comparisons
    assert only.delta_pct == pytest.approx(-6.0, abs=0.1)
    assert only.delta.within_noise and only.verdict == regressions.OK and not result.failed


def test_max_drop_sets_how_large_a_drop_outside_the_noise_fails(planted_drop: Path) -> None:
    assert run_check(planted_drop, "--max-drop", "12") == 0
    assert run_check(planted_drop, "--max-drop", "8") == 1


def test_slower_than_the_baseline_is_reported_and_fails_only_when_asked(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A drafter slower than the baseline but unchanged since its previous session: a finding, not a broken build."""
    db = store_of(tmp_path, [("baseline", BEFORE, 80.0), ("eagle3", BEFORE, 60.0),
                             ("baseline", AFTER, 80.0), ("eagle3", AFTER, 60.0)])
    assert run_check(db) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| eagle3 | baseline (baseline)"))
    assert "-25.0%" in row and "slower (reported; fails with --fail-vs-baseline)" in row
    assert run_check(db, "--fail-vs-baseline") == 1
    assert "# specdash check: 1 regression — eagle3 vs baseline (baseline): -25.0% tok/s" in capsys.readouterr().out


def test_the_baseline_is_taken_from_the_variants_own_phase(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline measured only in another phase (another server build) is not like-for-like: not judged against."""
    old = dict(session("baseline", BEFORE, 80.0), phase="phase-0")
    new = [dict(session("baseline", AFTER, 90.0), phase="phase-1"), dict(session("eagle3", AFTER, 60.0), phase="phase-1"),
           dict(session("k2-drafter", AFTER, 50.0), phase="phase-2")]
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"sessions": [old, *new]}), encoding="utf-8")
    assert not [r.summary() for r in ingest_paths([path], tmp_path / "check.duckdb") if r.failed]
    assert run_check(tmp_path / "check.duckdb") == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| eagle3 | baseline (baseline)"))
    assert "| 60.0 (n = 5) | 90.0 (n = 5) |" in row  # phase-1's baseline, not phase-0's 80
    assert not [line for line in out.splitlines() if line.startswith("| k2-drafter |")]
    assert "no baseline session in its phase, nothing to compare with: k2-drafter." in out


def test_check_agrees_with_the_compare_page(planted_drop: Path) -> None:
    """The Δ vs the baseline and its CI are what Compare computes for the same two sessions."""
    result = regressions.check(planted_drop, CheckOptions())
    vs_base = next(c for c in result.comparisons if c.against == regressions.BASELINE)
    sessions = [vs_base.newest.session_id, vs_base.other.session_id]
    page = compare.compare_variants(data.variant_summary(planted_drop, (), (), sessions),
                                    data.accept_length(planted_drop, (), (), sessions), "baseline")
    eagle = page.set_index("variant").loc["eagle3"]
    assert (vs_base.delta.diff, vs_base.delta.low, vs_base.delta.high) == pytest.approx(
        (eagle["delta"], eagle["delta_low"], eagle["delta_high"]))
    assert vs_base.delta_pct == pytest.approx(eagle["delta_pct"])


def test_single_run_sessions_are_not_enough_runs_and_never_fail(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    db = store_of(tmp_path, [("baseline", BEFORE, 50.0), ("eagle3", BEFORE, 60.0),
                             ("baseline", AFTER, 50.0), ("eagle3", AFTER, 30.0)], noise=(1.0,))
    assert run_check(db) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| eagle3 | previous session"))
    assert "-50.0%" in row and "n/a (fewer than 2 runs)" in row and row.endswith("| not enough runs |")


def test_permalinks_use_the_base_url_given_else_the_environment_never_localhost(
        planted_drop: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("SPECDASH_URL", raising=False)
    run_check(planted_drop)
    relative = capsys.readouterr().out
    assert "[Compare](compare?phase=ci&variant=eagle3&baseline=baseline&metric=tokens_over_time)" not in relative
    assert "[Compare](compare?phase=ci&variant=eagle3&variant=baseline&baseline=baseline&metric=tokens_over_time)" in relative
    assert "The dashboard's address is missing" in relative and "127.0.0.1" not in relative

    monkeypatch.setenv("SPECDASH_URL", "https://env.example.org/")
    run_check(planted_drop)
    from_env = capsys.readouterr().out
    assert "(https://env.example.org/compare?phase=ci&variant=eagle3&variant=baseline&baseline=baseline" in from_env
    assert "address is missing" not in from_env

    run_check(planted_drop, "--base-url", "https://specdash.example.org")
    given = capsys.readouterr().out
    eagle_sessions = data.sessions(planted_drop, (), ["eagle3"])["session_id"].tolist()  # newest first
    assert f"[newest](https://specdash.example.org/run?session={eagle_sessions[0]})" in given
    assert f"[previous](https://specdash.example.org/run?session={eagle_sessions[1]})" in given
    assert "env.example.org" not in given and "127.0.0.1" not in given


def test_a_local_base_url_is_named_as_one() -> None:
    assert all(regressions.is_local(url) for url in ("http://127.0.0.1:8501", "localhost:8501", "http://[::1]:8501/"))
    assert not regressions.is_local("https://specdash.example.org") and not regressions.is_local("http://10.0.0.7:8501")


def test_the_links_use_the_parameters_the_pages_read() -> None:
    from dashboard import state

    assert (regressions.PHASE_PARAM, regressions.VARIANT_PARAM, regressions.BASELINE_PARAM, regressions.METRIC_PARAM,
            regressions.SESSION_PARAM) == (state.PHASES.url, state.VARIANTS.url, state.BASELINE.url, state.METRIC.url,
                                           state.SESSION.url)
    app = Path(check_cli.__file__).with_name("app.py").read_text(encoding="utf-8")
    assert f'url_path="{regressions.COMPARE_PAGE}"' in app and f'url_path="{regressions.RUN_PAGE}"' in app


def test_an_unknown_baseline_exits_2_naming_the_variants(planted_drop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_check(planted_drop, "--baseline", "vanilla") == 2
    err = capsys.readouterr().err
    assert "no baseline variant 'vanilla'" in err and "one of: baseline, eagle3" in err


def test_an_empty_store_or_phase_exits_2_with_a_hint(tmp_path: Path, planted_drop: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert run_check(tmp_path / "none.duckdb") == 2
    assert "no store yet" in capsys.readouterr().err
    assert run_check(planted_drop, "--phase", "phase-9") == 2
    err = capsys.readouterr().err
    assert "no benchmark session in phase 'phase-9' (phases in the store: ci)" in err and "specdash ingest" in err


def test_one_session_per_variant_and_no_baseline_has_nothing_to_compare(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = store_of(tmp_path, [("eagle3", BEFORE, 60.0), ("k2-drafter", BEFORE, 50.0)])
    assert run_check(db) == 0
    out = capsys.readouterr().out
    assert "Nothing to compare" in out and "One session only and no baseline session in its phase, nothing to compare with: eagle3, k2-drafter." in out


def test_the_help_states_the_defaults_the_check_applies() -> None:
    assert float(check_cli.MAX_DROP_HELP) == regressions.DEFAULT_MAX_DROP_PCT
    assert float(check_cli.MAX_ACCEPT_DROP_HELP) == regressions.DEFAULT_MAX_ACCEPT_DROP_PCT


# --- accept length: the rule on its own (a store with linked server logs is the Compare tests' work) --------

def figures(tau: float | None, run_taus: tuple[float, ...] = ()) -> SessionFigures:
    return SessionFigures("s", "eagle3", "ci", None, "x.json", 5, 60.0, MeanCI(5, 60.0, 0.6, None, None), tau, run_taus)


def test_an_accept_length_collapse_confirmed_by_the_runs_is_a_regression() -> None:
    change = regressions.accept_change(figures(2.4, (2.40, 2.42, 2.38)), figures(3.0, (3.0, 3.02, 2.98)), 10.0)
    assert change.change_pct == pytest.approx(-20.0)
    assert change.ci is not None and change.ci.high is not None and change.ci.high < 0
    assert change.verdict == regressions.ACCEPT_COLLAPSE


def test_an_accept_length_drop_inside_the_runs_noise_is_not_a_collapse() -> None:
    change = regressions.accept_change(figures(2.4, (1.6, 3.2, 2.4)), figures(3.0, (2.2, 3.8, 3.0)), 10.0)
    assert change.change_pct == pytest.approx(-20.0) and change.verdict == regressions.OK


def test_accept_length_without_runs_uses_the_session_figures_and_unknown_is_never_a_collapse() -> None:
    assert regressions.accept_change(figures(2.4), figures(3.0), 10.0).verdict == regressions.ACCEPT_COLLAPSE
    assert regressions.accept_change(figures(2.9), figures(3.0), 10.0).verdict == regressions.OK
    assert regressions.accept_change(figures(None), figures(3.0), 10.0).verdict == regressions.ACCEPT_UNKNOWN


def test_adding_the_command_loads_no_pandas_or_ui() -> None:
    """`specdash ingest` keeps pandas unloaded (ingest.cli.pandas_hidden): building the parser must not load it."""
    import subprocess
    import sys

    code = ("import argparse, sys, dashboard.check_cli\n"
            "dashboard.check_cli.add_check_command(argparse.ArgumentParser().add_subparsers(), 'store')\n"
            "sys.exit(sorted(m for m in ('pandas', 'streamlit', 'plotly') if m in sys.modules) != [])")
    root = Path(check_cli.__file__).parents[1]
    assert subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60).returncode == 0
