"""Compare, Break-even and Run through Streamlit's AppTest on the demo store; the page helpers the other test_app_*.py share."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Tab

from dashboard.analysis import data
from ingest.pipeline import ingest_paths
from ingest.storage import store
from tests.conftest import ROOT

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ["views/compare.py", "views/breakeven.py", "views/breakdown.py", "views/run.py", "views/phases.py", "views/decisions.py", "views/ingest.py"]
# Every page of dashboard/app.py: PAGES (issue #18's) and the pages added since.
ALL_PAGES = [*PAGES, "views/sweeps.py", "views/drafters.py", "views/acceptance.py"]


def run_page(page: str, db: Path, monkeypatch: pytest.MonkeyPatch, query: dict[str, str | list[str]] | None = None,
             check: bool = True) -> AppTest:
    """``page`` of the app on store ``db`` with ``query`` in its URL; with ``check``, no exception and no error shown."""
    monkeypatch.setenv("SPECDASH_DB", str(db))
    app = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    if page != PAGES[0]:
        app.switch_page(page)
    app.run()
    if check:
        assert not app.exception, (page, query, [e.value for e in app.exception])
        assert not app.error, (page, query, [e.value for e in app.error])
    return app


def element_key(element_id: str) -> str | None:
    """The key a stateful element was given: its element id ends in it ("$$ID-<hash>-<key>")."""
    return element_id.split("-", 2)[2] if element_id.startswith("$$ID-") and element_id.count("-") >= 2 else None


def section_key(expander: Any) -> str | None:
    """The key of a section the page runs only while open (``dashboard.sections``); None for a plain expander,
    whose content always runs (it has no element id)."""
    return element_key(expander.proto.id)


def open_sections(app: AppTest, rounds: int = 3) -> AppTest:
    """Open every closed section, as a person clicking each one would, and rerun until none is left closed; then
    the page's tables, charts and texts inside them are there to check."""
    for _ in range(rounds):
        closed = [key for expander in app.expander if (key := section_key(expander)) and not expander.proto.expanded]
        if not closed:
            break
        for key in closed:
            app.session_state[key] = True
        app.run()
        assert not app.exception, [e.value for e in app.exception]
    return app


def lazy_tab_groups(app: AppTest) -> dict[str, list[str]]:
    """Each tab group that runs only its open tab (``st.tabs(..., key=..., on_change="rerun")``): key → tab labels.
    Such a group's container carries an element id ending in its key; a plain one has none."""
    groups: dict[str, list[str]] = {}

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        fields = proto.DESCRIPTOR.fields_by_name if isinstance(node, Block) and proto is not None else {}
        if "tab_container" in fields and proto.HasField("tab_container"):
            key = element_key(proto.tab_container.id)
            if key:
                groups[key] = [child.label for child in node.children.values() if isinstance(child, Tab)]
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(app._tree)
    return groups


def every_tab(app: AppTest) -> Iterator[tuple[str, AppTest]]:
    """The page with each tab of its lazy tab groups open in turn ("" for the page as it opened), the closed sections
    of each tab opened: what a person clicking through every tab and section sees, tables and charts included.
    The same ``app`` each time: read it before the next."""
    yield "", app
    for key, labels in lazy_tab_groups(app).items():
        for label in labels:
            app.session_state[key] = label
            app.run()
            assert not app.exception, (key, label, [e.value for e in app.exception])
            yield f"tab {label}", open_sections(app)


def url(app: AppTest, name: str) -> list[str]:
    value = app.query_params.get(name)
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def texts(app: AppTest) -> str:
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption] + [i.value for i in app.info]
    parts += [w.value for w in app.warning] + [s.value for s in app.success] + [e.label for e in app.expander]
    parts += [f"{m.label} {m.value} {m.delta}" for m in app.metric] + [c.value for c in app.code]
    return "\n".join(str(p) for p in parts)


@pytest.fixture
def demo_copy(demo_db: Path, tmp_path: Path) -> Path:
    db = tmp_path / "demo-copy.duckdb"
    shutil.copy(demo_db, db)
    return db


@pytest.fixture
def one_variant_db(tmp_path: Path) -> Path:
    db = tmp_path / "one.duckdb"
    ingest_paths([ROOT / "data" / "demo" / "phase-0" / "k2-drafter"], db, phase="phase-0", variant="k2-drafter")
    return db


def k2_session(db: Path) -> str:
    return data.sessions(db, ["phase-0"], ["k2-drafter"])["session_id"].iloc[0]


# --- Compare ----------------------------------------------------------------------------------

def test_compare_tells_the_phase0_story(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch)
    metrics = {m.label: (m.value, m.delta) for m in app.metric}
    assert metrics["baseline (baseline)"][0] == "82.0 tok/s"
    assert metrics["from-scratch"][0] == "60.0 tok/s"
    # the Δ under the headline is the headline's: 51.78 − 81.99 = −30.2 (51.78 ÷ 81.99 − 1 = −36.8%)
    assert metrics["k2-drafter"] == ("51.8 tok/s", "-30.2 tok/s (-36.8%) · slower")
    assert app.selectbox(key="w_baseline").value == "baseline"
    shown = texts(app)
    assert "k2-drafter: 1 run(s) stopped early — run 4 (1963 of 2048 tokens, stop)" in shown
    assert "mean of runs 51.9, 95% CI 49.2 – 54.6 · n = 5" in shown  # tok/s at 1 decimal, mean and CI alike
    assert "accept length 1.58 tokens/step = 0.58 accepted drafts/step" in shown
    assert "Comparability check: ✓ like-for-like" in shown
    assert "Demo data" in shown
    table = app.dataframe[0].value.set_index("variant").join(app.dataframe[1].value.set_index("variant"))
    assert table.loc["k2-drafter", "mean of runs"] == pytest.approx(51.88, abs=0.005)  # full precision; shown 51.9
    assert table.loc["k2-drafter", "Σtok/Σtime"] == pytest.approx(51.78, abs=0.005)
    assert table.loc["k2-drafter", "95% CI"] == "49.2 – 54.6"
    assert table.loc["k2-drafter", "tokens/step"] == pytest.approx(1.58)
    assert table.loc["k2-drafter", "drafts/step"] == pytest.approx(0.58)
    assert table.loc["k2-drafter", "cycle ms (est.)"] == pytest.approx(30.51, abs=0.005)
    assert table.loc["k2-drafter", "verdict"] == "slower"
    assert table.loc["k2-drafter", "like-for-like"] == "✓"


def test_compare_reads_its_state_from_the_url(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch,
                   {"variant": ["from-scratch", "k2-drafter"], "baseline": "from-scratch", "metric": "mean_of_runs"})
    assert app.multiselect(key="w_variants").value == ["from-scratch", "k2-drafter"]
    assert app.selectbox(key="w_baseline").value == "from-scratch"
    assert app.radio(key="w_metric").value == "mean_of_runs"
    assert {m.label for m in app.metric} == {"from-scratch (baseline)", "k2-drafter"}
    assert [m.value for m in app.metric if m.label == "k2-drafter"] == ["51.9 tok/s"]
    # against a speculative baseline the drafters' speculation settings are no longer like-for-like
    assert "Comparability check: ⚠ 2 difference(s)" in texts(app)


def test_compare_writes_its_state_back_to_the_url(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch)
    app.selectbox(key="w_baseline").set_value("from-scratch").run()
    assert url(app, "baseline") == ["from-scratch"]
    assert url(app, "variant") == []  # every variant of the phase: the link leaves them out, and opens them all
    assert url(app, "phase") == ["phase-0"]
    app.multiselect(key="w_variants").set_value(["baseline", "k2-drafter"]).run()
    assert url(app, "variant") == ["baseline", "k2-drafter"]


# --- Break-even -------------------------------------------------------------------------------

def test_breakeven_states_what_k2_would_need(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/breakeven.py", demo_db, monkeypatch)
    shown = texts(app)
    assert "one decode step ≈ **12.20 ms** (measured in the baseline's profiler trace)" in shown
    k2 = next(m.value for m in app.markdown if m.value.startswith("**k2-drafter**"))
    assert "r = 2.50 (cycle ≈ 30.51 ms, measured in a profiler trace; the cycle model says 30.51 ms" in k2
    assert "**1.50 accepted drafts per step** (now 0.58)" in k2
    assert "**≤ 19.28 ms**" in k2
    assert "r is **measured**" in shown
    # where each drafter is, then what it needs: two tables that fit the page, joined here by variant
    table = app.dataframe[0].value.set_index("variant").join(app.dataframe[1].value.set_index("variant"))
    assert round(table.loc["k2-drafter", "r"], 2) == 2.50
    assert round(table.loc["k2-drafter", "break-even drafts/step"], 2) == 1.50
    assert round(table.loc["from-scratch", "cycle ms"], 1) == 33.0  # the trace; the model says 33.3
    assert round(table.loc["from-scratch", "cycle ms (cycle model)"], 1) == 33.3


def test_long_variant_names_split_the_speed_table_so_it_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "long-names.duckdb"
    names = {"baseline": "baseline-kimi-k2.5-tp8-no-speculation", "k2-drafter": "k2-drafter-as-is-on-kimi-k2.5-tp8"}
    for variant, name in names.items():
        folder = ROOT / "data" / "demo" / "phase-0" / variant
        ingest_paths([folder / "bench.json", folder / "server.log"], db, phase="phase-0", variant=name)
    app = run_page("views/compare.py", db, monkeypatch, {"phase": "phase-0", "baseline": names["baseline"]})
    headline, delta, why = (app.dataframe[i].value for i in range(3))
    assert list(headline.columns) == ["variant", "runs", "Σtok/Σtime", "mean of runs", "95% CI"]
    assert list(delta.columns) == ["variant", "Δ tok/s", "Δ %", "Δ 95% CI", "verdict"]
    assert list(why.columns[:3]) == ["variant", "method", "speedup"]
    assert delta.set_index("variant").loc[names["k2-drafter"], "verdict"] == "slower"
    labels = [b.proto.label for b in app.get("download_button")]
    assert labels.count("CSV") == labels.count("Parquet") == len(app.dataframe)  # each table its downloads


def test_breakeven_without_traces_labels_r_an_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "no-traces.duckdb"
    for variant in ("baseline", "from-scratch", "k2-drafter"):
        folder = ROOT / "data" / "demo" / "phase-0" / variant
        ingest_paths([folder / "bench.json", folder / "server.log"], db, phase="phase-0", variant=variant)
    app = run_page("views/breakeven.py", db, monkeypatch)
    shown = texts(app)
    assert "r is an **estimate**" in shown and "one decode step ≈ **12.20 ms** (1 ÷ the baseline's tok/s)" in shown
    k2 = next(m.value for m in app.markdown if m.value.startswith("**k2-drafter**"))
    assert "r = 2.50 (cycle ≈ 30.51 ms, estimated from tok/s and accept length" in k2
    assert "**1.50 accepted drafts per step**" in k2


# --- Run --------------------------------------------------------------------------------------

def test_run_page_shows_a_session(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = open_sections(run_page("views/run.py", demo_db, monkeypatch, {"session": k2_session(demo_db)}))  # provenance too
    runs = app.dataframe[0].value
    assert len(runs) == 7 and runs["warm-up"].sum() == 2
    assert runs["flag"].tolist().count("⚠ stopped early") == 1
    # the log's figures per run sit beside its chart, in a table of their own (one table would not fit the page)
    [in_log] = [t.value for t in app.dataframe if "tokens/step (log)" in t.value.columns]
    assert in_log["tokens/step (log)"].round(2).tolist() == [1.58] * 7
    shown = texts(app)
    assert "Run 4 stopped at 1963 of 2048 tokens" in shown
    assert "**Raw lines 16–198** of `server.log`" in shown
    assert "Linked by same ingest call" in shown
    provenance = app.dataframe[-1].value
    assert provenance["role"].tolist() == ["benchmark", "server log"] and set(provenance["on disk"]) == {"present"}


def test_run_page_opens_one_run_and_searches_its_raw_lines(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/run.py", demo_db, monkeypatch, {"session": k2_session(demo_db), "run": "4", "q": "prefill"})
    assert app.selectbox(key="w_run").value == "4"
    assert app.text_input(key="w_log_search").value == "prefill"
    raw = app.code[0].value.splitlines()
    assert [line.split()[0] for line in raw] == ["131", "164"]  # its own prefill, and the next run's in the context lines
    assert all("Prefill batch" in line for line in raw)
    assert "**Raw lines 130–164** of `server.log` (run 4" in texts(app)


def test_run_page_diffs_the_config_against_the_baseline(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/run.py", demo_db, monkeypatch, {"session": k2_session(demo_db)})
    [settings] = [e for e in app.expander if e.label.startswith("Differing settings")]
    assert settings.label == "Differing settings (5): drafter, speculation setting" and not settings.proto.expanded  # expected kinds only
    app = open_sections(app)
    [config] = [t.value for t in app.dataframe if "setting" in t.value.columns]
    assert config["setting"].tolist() == ["speculative_algorithm", "speculative_draft_model_path", "speculative_eagle_topk",
                                          "speculative_num_draft_tokens", "speculative_num_steps"]
    assert list(config.columns) == ["setting", "kind", "this (k2-drafter)", "baseline (baseline)"]
    app = open_sections(app.toggle(key="w_diff_only").set_value(False).run())  # a new label: a new section
    [config] = [t.value for t in app.dataframe if "setting" in t.value.columns]
    assert len(config) > 20 and url(app, "diff_only") == ["0"]


def test_run_page_opens_the_settings_when_a_speculating_baseline_differs_in_a_speculation_setting(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Compare's rule (compare.breaks_like_for_like): against a baseline that speculates itself, a speculation
    # setting that differs is not like-for-like; against one without speculation it differs by design.
    app = run_page("views/run.py", demo_db, monkeypatch, {"session": k2_session(demo_db), "baseline": "from-scratch"})
    [settings] = [e for e in app.expander if e.label.startswith("Differing settings")]
    assert settings.label.endswith("speculation setting — not like-for-like") and settings.proto.expanded


def test_run_page_lists_every_setting_closed_when_the_baseline_is_the_session_itself(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline = data.sessions(demo_db, ["phase-0"], ["baseline"])["session_id"].iloc[0]
    app = run_page("views/run.py", demo_db, monkeypatch, {"session": baseline, "baseline": "baseline"})
    [settings] = [e for e in app.expander if "settings" in e.label.lower() and "JSON" not in e.label]
    assert settings.label.startswith("Settings (") and "not like-for-like" not in settings.label  # nothing was diffed
    assert not settings.proto.expanded


def test_run_page_says_when_the_log_file_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "k2"
    shutil.copytree(ROOT / "data" / "demo" / "phase-0" / "k2-drafter", folder)
    db = tmp_path / "moved.duckdb"
    ingest_paths([folder], db, phase="phase-0", variant="k2-drafter")
    (folder / "server.log").unlink()
    app = run_page("views/run.py", db, monkeypatch)
    assert "is gone since it was ingested" in texts(app)
    assert set(app.dataframe[-1].value["on disk"]) == {"present", "gone"}
    assert app.get("plotly_chart")  # the parsed rows still chart


def test_a_store_from_an_older_schema_asks_to_be_upgraded(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.writer(demo_copy) as con:
        con.execute("DELETE FROM schema_migrations WHERE name = '005_run_windows'")
    monkeypatch.setattr(store, "migrate", lambda con: [])  # keep it old for the app's read
    app = run_page("views/compare.py", demo_copy, monkeypatch)
    assert "predates the current schema" in texts(app) and "specdash status --db" in texts(app)


def test_the_run_pages_config_baseline_asks_for_one_when_no_variant_is_known_not_to_speculate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "store.duckdb"
    ingest_paths([ROOT / "tests" / "fixtures" / "bench_json" / "adhoc_list.json"], db)
    app = run_page("views/run.py", db, monkeypatch)
    baseline = next(box for box in app.selectbox if box.label == "Baseline (config diff)")
    assert baseline.value is None and baseline.placeholder == "pick a baseline"  # not Streamlit's "Choose an option"
