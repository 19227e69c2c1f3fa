"""One palette (issue #30 item 5): a variant has one colour on every page and in every export, the store's, decided
by when each variant first entered the store — so a variant ingested later recolours none of the others."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dashboard import charts, report
from dashboard.analysis import compare, data, evidence
from dashboard.analysis.palette import PALETTE, UNORDERED, VariantColors
from ingest.pipeline import ingest_paths
from tests.conftest import ROOT
from tests.test_app import run_page

DEMO_ORDER = ["baseline", "from-scratch", "k2-drafter", "k2-drafter-ft"]  # as `specdash demo` ingests them


# --- the mapping ------------------------------------------------------------------------------------

def test_a_variant_takes_its_place_in_the_store_not_in_the_chart() -> None:
    colors = VariantColors(tuple(DEMO_ORDER))
    assert colors.of(["k2-drafter", "from-scratch"]) == {"k2-drafter": PALETTE[2], "from-scratch": PALETTE[1]}
    assert colors.of(sorted(DEMO_ORDER, reverse=True)) == dict(zip(DEMO_ORDER, PALETTE, strict=False))
    assert colors.color("k2-drafter-ft") == PALETTE[3]


def test_no_two_variants_share_a_colour_while_the_palette_has_room_then_it_cycles() -> None:
    assert len(PALETTE) >= 10 and len(set(PALETTE)) == len(PALETTE)
    names = tuple(f"v{i:02d}" for i in range(len(PALETTE) + 2))
    colors = VariantColors(names).of(names)
    assert len(set(list(colors.values())[: len(PALETTE)])) == len(PALETTE)
    assert colors[names[len(PALETTE)]] == colors[names[0]]  # beyond the palette, the same order again


def test_a_variant_the_store_does_not_hold_takes_the_colours_after_the_stores() -> None:
    colors = VariantColors(("a", "b"))
    assert colors.of(["gone", "b", "also-gone"]) == {"gone": PALETTE[2], "b": PALETTE[1], "also-gone": PALETTE[3]}
    assert UNORDERED.of(["x", "y"]) == {"x": PALETTE[0], "y": PALETTE[1]}  # no store: the order met


# --- the order, from the store ------------------------------------------------------------------------

def test_the_demo_stores_variants_are_ordered_by_when_they_entered_it(demo_db: Path) -> None:
    assert data.variant_order(demo_db) == DEMO_ORDER


def late_bench(tmp_path: Path, variant: str) -> Path:
    """The K2 drafter's benchmark under another variant name (other bytes: re-ingesting the same file is a no-op)."""
    document = json.loads((ROOT / "data" / "demo" / "phase-0" / "k2-drafter" / "bench.json").read_text())
    document.update(variant=variant, started_at="2026-03-01T10:00:00")
    path = tmp_path / variant / "bench.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document, indent=2))
    return path


def test_a_variant_added_later_keeps_the_others_colours(demo_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "grown.duckdb"
    shutil.copy(demo_db, db)
    before = VariantColors(tuple(data.variant_order(db))).of(DEMO_ORDER)
    # "aaa-late" sorts before every demo variant by name: its place comes from its ingest time, last
    ingest_paths([late_bench(tmp_path, "aaa-late")], db, phase="phase-0", variant="aaa-late")
    order = data.variant_order(db)
    assert order == [*DEMO_ORDER, "aaa-late"]
    after = VariantColors(tuple(order))
    assert after.of(DEMO_ORDER) == before
    assert after.color("aaa-late") == PALETTE[len(DEMO_ORDER)] and after.color("aaa-late") not in before.values()


# --- the same colour on every page -------------------------------------------------------------------

def figure_specs(app: Any) -> list[dict[str, Any]]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def trace_color(trace: dict[str, Any]) -> str | None:
    """The colour a trace draws its variant in; None for the Δ forest's, which say faster, slower or within noise."""
    for part in ("marker", "line"):
        color = (trace.get(part) or {}).get("color")
        if isinstance(color, str):
            return None if color in charts.VERDICT_COLORS.values() else color
    return None


def variant_of(name: str, variants: set[str]) -> str | None:
    """The variant a trace draws: named by it, "<variant> runs" (Compare) or "<variant> · <origin>" (Acceptance)."""
    for candidate in (name, name.removesuffix(" runs"), name.split(" · ")[0]):
        if candidate in variants:
            return candidate
    return None


def page_colors(app: Any, variants: set[str]) -> dict[str, set[str]]:
    """Each variant's colours over every chart of a page."""
    found: dict[str, set[str]] = {}
    for spec in figure_specs(app):
        for trace in spec["data"]:
            variant = variant_of(str(trace.get("name") or ""), variants)
            color = trace_color(trace)
            if variant is not None and color is not None:
                found.setdefault(variant, set()).add(color)
    return found


PAGES = {  # page, query: the demo's default views, and a Compare of two variants whose positions are not the store's
    "Compare": ("views/compare.py", None),
    "Compare (two)": ("views/compare.py", {"variant": ["from-scratch", "k2-drafter"], "baseline": "from-scratch"}),
    "Sweeps": ("views/sweeps.py", None),
    "Acceptance": ("views/acceptance.py", None),
    "Breakdown": ("views/breakdown.py", None),
    "Phases": ("views/phases.py", None),
    "Break-even": ("views/breakeven.py", None),
}


def test_a_variant_has_the_stores_colour_on_every_page(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = VariantColors(tuple(data.variant_order(demo_db))).of(DEMO_ORDER)
    seen: dict[str, dict[str, set[str]]] = {}
    for label, (page, query) in PAGES.items():
        seen[label] = page_colors(run_page(page, demo_db, monkeypatch, query), set(DEMO_ORDER))
        assert seen[label], f"{label}: no chart drew a variant"
        for variant, colors in seen[label].items():
            assert colors == {expected[variant]}, (label, variant, colors)
    # the variants the issue named, on each page they are drawn on
    assert all("k2-drafter" in seen[label] for label in PAGES)
    assert {label for label in PAGES if "from-scratch" in seen[label]} >= {"Compare", "Compare (two)", "Sweeps", "Acceptance",
                                                                          "Breakdown", "Phases", "Break-even"}


# --- exports ------------------------------------------------------------------------------------------

def captured(monkeypatch: pytest.MonkeyPatch, name: str, position: int) -> list[Any]:
    """Replace ``report.<name>`` by a recorder of its figures argument: the figures an export is built from."""
    figures: list[Any] = []

    def record(*args: Any, **kwargs: Any) -> list[str]:
        figures.extend(args[position])
        return []

    monkeypatch.setattr(report, name, record)
    return figures


def colors_by_variant(figures: list[Any], variants: set[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for figure in figures:
        for trace in figure.to_plotly_json()["data"]:
            variant = variant_of(str(trace.get("name") or ""), variants)
            color = trace_color(trace)
            if variant is not None and color is not None:
                found.setdefault(variant, set()).add(color)
    return found


def test_the_compare_report_draws_each_variant_in_the_stores_colour(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    colors = VariantColors(tuple(data.variant_order(demo_db)))
    variants = ["k2-drafter", "from-scratch"]  # positions 0 and 1 on this report; 2 and 1 in the store
    summary = data.variant_summary(demo_db, ["phase-0"], variants)
    comparison = compare.compare_variants(summary, data.accept_length(demo_db, ["phase-0"], variants), "from-scratch")
    figures = captured(monkeypatch, "compare_report", 3)
    report.compare_report_of("two", pd.DataFrame(), pd.DataFrame(), lambda: data.runs(demo_db, ["phase-0"], variants),
                             comparison, "Σ tokens ÷ Σ time", "from-scratch", colors=colors)
    assert colors_by_variant(figures, set(variants)) == {v: {colors.color(v)} for v in variants}


def test_the_decision_report_draws_each_variant_in_the_stores_colour(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    colors = VariantColors(tuple(data.variant_order(demo_db)))
    figures = captured(monkeypatch, "figures_html", 0)
    for _, row in data.decisions(demo_db).iterrows():  # each decision's figures, from its frozen evidence
        report.decision_report(row.to_dict(), evidence.frozen(row), colors=colors)
    drawn = colors_by_variant(figures, set(DEMO_ORDER))
    assert {"k2-drafter", "k2-drafter-ft"} <= set(drawn)
    assert drawn == {variant: {colors.color(variant)} for variant in drawn}
