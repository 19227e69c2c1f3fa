"""The Drafters page's tables and chart (pure builders: frames in, frames and a plotly figure out).

Columns are the ones ``definitions.COLUMNS`` declares for the page (label, help, quantity): numbers stay
numbers, shown at their quantity's decimals, and gaps read "—" through the table's placeholder.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.analysis.definitions import COLUMNS, COUNT, PERCENT, Quantity
from dashboard.analysis.drafters import JACCARD, verdict_rows
from ingest.parsers.drafters.drafter_checks import Comparison

# Words, not emoji: the dashboard is read where no emoji font is installed (Chromium draws boxes).
STATUS_MARK = {"ok": "ok", "suspicious": "SUSPICIOUS", "wrong": "WRONG", "not checked": "not checked"}

def declared(name: str) -> Quantity:
    """The quantity a declared column's numbers have (for the same number in a sentence)."""
    quantity = COLUMNS[name].quantity
    if quantity is None:
        raise KeyError(f"column {name!r} declares no quantity")
    return quantity


SIZE = declared("checkpoint size")  # KB: the checkpoint's files summed, and what ingest read of them


def drafters_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per drafter: name, overall status, mapping form, the worst verdict, vocabularies, sizes."""
    return pd.DataFrame({
        "drafter": table["name"],
        "status": table["status"].map(lambda s: STATUS_MARK.get(s, s)),
        "mapping form": table["mapping_form"],
        "worst finding": table["headline"],
        "target vocab": pd.to_numeric(table["vocab_size"], errors="coerce"),
        "draft vocab": pd.to_numeric(table["draft_vocab_size"], errors="coerce"),
        "checkpoint size": pd.to_numeric(table["size_bytes"], errors="coerce"),
    })


def verdict_lines(verdicts_json: str) -> list[str]:
    """Each verdict as a Markdown line: check, status, reason, and what to do when it is not ok."""
    lines = []
    for r in verdict_rows(verdicts_json):
        todo = f" *What to do:* {r['todo']}." if r.get("todo") and r["status"] != "ok" else ""
        lines.append(f"- **{r['check']}** · {STATUS_MARK.get(r['status'], r['status'])}: {r['reason']}.{todo}")
    return lines


def comparison_table(c: Comparison) -> pd.DataFrame:
    """The two readings side by side: position-wise and set-wise."""
    of = f" of {COUNT.number(c.positions_compared)}"
    return pd.DataFrame({
        "reading": ["position by position", "position by position", "as sets", "as sets", "as sets", "as sets"],
        "measure": ["draft ids that differ", "draft ids that agree", "target tokens shared", f"only in {c.name_a}",
                    f"only in {c.name_b}", "Jaccard (shared ÷ union)"],
        "comparison value": [COUNT.number(c.positions_differ) + of, COUNT.number(c.positions_agree) + of,
                             COUNT.number(c.shared_target_tokens), COUNT.number(c.only_a), COUNT.number(c.only_b),
                             JACCARD.number(c.jaccard)],
    })


def divergence_chart(where: pd.DataFrame, c: Comparison) -> go.Figure:
    """Share of draft ids whose target differs, per bin of draft ids: where along the ids the mappings part."""
    figure = go.Figure(go.Bar(
        x=(where["first_draft_id"] + where["last_draft_id"]) / 2, y=where["share_differing"] * 100,
        width=where["last_draft_id"] - where["first_draft_id"] + 1,
        customdata=where[["first_draft_id", "last_draft_id"]],
        hovertemplate=(f"draft ids {COUNT.hover('customdata[0]')}–{COUNT.hover('customdata[1]')}<br>"
                       f"{PERCENT.hover('y')} differ<extra></extra>"),
        marker_color="#d62728",
    ))
    first = f"first difference at draft id {COUNT.number(c.first_difference)}" if c.first_difference is not None else "no difference"
    figure.update_layout(
        title=dict(text=f"Where {c.name_a} and {c.name_b} differ ({first})", font_size=14),
        xaxis_title="draft id", yaxis_title="draft ids that differ (%)", yaxis_range=[0, 105],
        height=320, margin=dict(l=60, r=20, t=50, b=50), showlegend=False, bargap=0,
    )
    figure.update_xaxes(**COUNT.ticks())
    figure.update_yaxes(**PERCENT.ticks())
    return figure


def coverage_table(found: pd.DataFrame) -> pd.DataFrame:
    """Per drafter and token file: tokens generated, how many the draft vocabulary holds, the share."""
    return pd.DataFrame({
        "drafter": found["drafter"],
        "token file": found["tokens_path"].map(lambda p: str(p).rsplit("/", 1)[-1]),
        "generated tokens": pd.to_numeric(found["tokens"], errors="coerce"),
        "distinct ids": pd.to_numeric(found["distinct_tokens"], errors="coerce"),
        "in draft vocab": pd.to_numeric(found["covered_tokens"], errors="coerce"),
        "coverage": pd.to_numeric(found["coverage"], errors="coerce"),
    })
