"""Every page, through AppTest, on the demo store and on a corpus-only store: no table shows a "None", "nan",
"NaT" or "<NA>" cell, and every column a table shows has its label, help and format from the one label table
(``definitions.COLUMNS``). The corpus store is skipped without ../shared/corpus; the demo store always runs.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.analysis import data, definitions
from tests.conftest import CORPUS
from tests.stores import ingested_store
from tests.test_app import ALL_PAGES, every_tab, open_sections, run_page
from tests.test_every_file import corpus_paths

PAGES = ALL_PAGES
# Python's and pandas' names for a gap, as str() writes them into a cell ("null" counts only as a whole
# cell: inside a sample JSON line it is the file's own text).
SHOWN_AS_MISSING = re.compile(r"(?<![\w-])(None|nan|NaN|NaT|<NA>)(?![\w-])|^\s*null\s*$")


def table_defects(app: AppTest, where: str) -> list[str]:
    """What a person would see wrong in the page's tables: gaps shown as None/nan, columns without their label."""
    problems: list[str] = []
    for index, table in enumerate(app.dataframe):
        frame, proto = table.value, table.proto
        name = f"{where}, table {index} ({', '.join(map(str, frame.columns[:3]))}…)"
        config: dict[str, Any] = json.loads(proto.columns or "{}")
        for column in frame.columns:
            declared = definitions.column(str(column))
            if declared is None:
                problems.append(f"{name}: column {column!r} has no label in definitions.COLUMNS")
                continue
            shown = config.get(str(column), {})
            if shown.get("label") != declared.label or not shown.get("help"):
                problems.append(f"{name}: column {column!r} is not shown with its declared label and help ({shown})")
            numeric = (not frame.empty and pd.api.types.is_numeric_dtype(frame[column])
                       and not pd.api.types.is_bool_dtype(frame[column]))
            if numeric and declared.quantity is None:
                problems.append(f"{name}: numbers of {column!r} have no declared quantity (unit, decimals)")
            elif numeric and shown.get("type_config", {}).get("format") != declared.quantity.printf(declared.signed):
                problems.append(f"{name}: numbers of {column!r} are not formatted by their quantity ({shown})")
        if proto.placeholder != definitions.EMPTY and frame.isna().to_numpy().any():
            problems.append(f"{name}: empty cells would read 'None' (no placeholder {definitions.EMPTY!r})")
        for column in frame.columns:
            texts = frame[column][frame[column].map(lambda v: isinstance(v, str))]
            bad = [v for v in texts if SHOWN_AS_MISSING.search(v) or v.strip() == ""]
            if bad:
                problems.append(f"{name}: column {column!r} shows {bad[:3]}")
    return problems


def assert_pages_read_finished(db: Path, monkeypatch: pytest.MonkeyPatch, views: list[tuple[str, dict[str, Any]]]) -> None:
    problems: list[str] = []
    for page, query in views:
        # the tables inside closed sections and behind every tab too
        for tab, app in every_tab(open_sections(run_page(page, db, monkeypatch, query))):
            problems += table_defects(app, f"{page} {query or ''} {tab}".strip())
    assert problems == [], "\n".join(problems)


def every_view(db: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each page as it opens, plus the Run page on one session of each origin, Compare and Break-even on each phase."""
    sessions = data.sessions(db)
    views: list[tuple[str, dict[str, Any]]] = [(page, {}) for page in PAGES]
    views += [("views/run.py", {"session": group["session_id"].iloc[0]}) for _, group in sessions.groupby("origin")]
    views += [(page, {"phase": phase}) for phase in data.phases(db) for page in ("views/compare.py", "views/breakeven.py")]
    views += [("views/decisions.py", {"decision": d}) for d in data.decisions(db)["decision_id"]]
    return views


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return ingested_store("corpus", corpus_paths(), tmp_path_factory)


def test_every_page_of_the_demo_store_reads_finished(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_pages_read_finished(demo_db, monkeypatch, every_view(demo_db))


@pytest.mark.corpus
def test_every_page_of_a_corpus_only_store_reads_finished(corpus_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    views = every_view(corpus_store)
    traced = sorted(v for v in data.sessions(corpus_store)["variant"] if v.startswith("trace:"))
    views.append(("views/breakdown.py", {"variant": traced}))  # traces without phase markers: their own tables
    assert_pages_read_finished(corpus_store, monkeypatch, views)


# --- the check itself catches what it is for ----------------------------------------------------------

def render(script: str, tmp_path: Path) -> AppTest:
    path = tmp_path / "page.py"
    path.write_text(script)
    app = AppTest.from_file(str(path), default_timeout=30)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_the_check_fails_on_a_none_cell_a_raw_column_and_an_unformatted_number(tmp_path: Path) -> None:
    app = render(
        "import pandas as pd, streamlit as st\n"
        "st.dataframe(pd.DataFrame({'variant': ['a', 'b'], 'tok_per_s': [1.0, None], 'phase': ['None', 'nan']}))\n"
        "st.dataframe(pd.DataFrame({'tok/s': [51.8755]}))\n",
        tmp_path,
    )
    problems = "\n".join(table_defects(app, "probe"))
    assert "column 'tok_per_s' has no label" in problems
    assert "empty cells would read 'None'" in problems
    assert "column 'phase' shows ['None', 'nan']" in problems
    assert "'variant' is not shown with its declared label" in problems
    assert "'tok/s' is not shown with its declared label" in problems
    assert "numbers of 'tok/s' are not formatted by their quantity" in problems


def test_the_check_passes_a_table_shown_through_the_declaration(tmp_path: Path) -> None:
    app = render(
        "import pandas as pd\n"
        "from dashboard import ui\n"
        "ui.table(pd.DataFrame({'variant': ['a', 'b'], 'tok/s': [51.8755, None], 'phase': ['phase-0', '—']}))\n",
        tmp_path,
    )
    assert table_defects(app, "probe") == []
    assert app.dataframe[0].value["tok/s"].iloc[0] == 51.8755  # rounded only when shown: "%,.1f"
