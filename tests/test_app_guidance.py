"""Every page guides instead of failing: an empty store, a store with one variant and no baseline, an old schema."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_app import PAGES, one_variant_db, run_page, texts  # noqa: F401 (fixture)

# --- every page: empty store, one variant without baseline ------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_empty_store_shows_how_to_ingest(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page(page, tmp_path / "missing.duckdb", monkeypatch)
    assert "specdash ingest" in texts(app)


@pytest.mark.parametrize(
    ("page", "guidance"),
    [
        ("views/compare.py", "No baseline in this selection"),
        ("views/breakeven.py", "Break-even is relative to a baseline step"),
        ("views/breakdown.py", "verify takes 30.00 ms, **97%** of it communication"),  # ms: 2 decimals
        ("views/run.py", "Run 4 stopped at 1963 of 2048 tokens"),
        ("views/phases.py", "Only one phase has runs"),
        ("views/decisions.py", "No decisions recorded yet"),
        ("views/ingest.py", "Files in the store"),
    ],
)
def test_one_variant_without_baseline_gives_guidance(page: str, guidance: str, one_variant_db: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page(page, one_variant_db, monkeypatch)
    assert guidance in texts(app) + "\n".join(h.value for h in app.subheader)
    if page == "views/compare.py":
        assert [m.value for m in app.metric] == ["51.8 tok/s"]
