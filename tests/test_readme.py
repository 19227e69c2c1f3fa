"""README.md against the app: every page is named in "The dashboard's pages", and what the README promises of
every page ("Every table on every page has its own CSV and Parquet downloads") holds on the demo store, the
sections a click opens and every tab included.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_app import ALL_PAGES, every_tab, k2_session, open_sections, run_page

README = ROOT / "README.md"
APP = ROOT / "dashboard" / "app.py"


def page_titles() -> list[str]:
    """The ``title=`` of every ``st.Page(...)`` in dashboard/app.py, in the order the navigation lists them."""
    titles = []
    for node in ast.walk(ast.parse(APP.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Page":
            titles += [k.value.value for k in node.keywords if k.arg == "title" and isinstance(k.value, ast.Constant)]
    return titles


def readme_section(heading: str) -> str:
    text = README.read_text()
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start: end if end != -1 else len(text)]


def test_every_page_is_named_in_the_readme() -> None:
    titles = page_titles()
    assert len(titles) == len(ALL_PAGES), titles  # the parse found every st.Page
    listed = re.findall(r"^- \*\*(.+?)\*\*", readme_section("## The dashboard's pages"), flags=re.MULTILINE)
    assert [t for t in titles if t not in listed] == [], listed


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_table_on_a_page_has_its_downloads(demo_db: Path, monkeypatch: pytest.MonkeyPatch, page: str) -> None:
    query = {"session": k2_session(demo_db)} if page == "views/run.py" else None
    shown = 0
    for tab, app in every_tab(open_sections(run_page(page, demo_db, monkeypatch, query))):  # closed sections opened
        labels = [b.proto.label for b in app.get("download_button")]
        tables = len(app.dataframe)
        shown += tables
        assert (labels.count("CSV"), labels.count("Parquet")) == (tables, tables), (page, tab, tables, labels)
    assert shown >= 1, page
