"""The Drafters page's tables and chart (pure builders: frames in, frames and a plotly figure out).

Numbers are formatted here as text ("32,000", "486 KB"), and gaps as "—", so no cell reads "None".
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.analysis.drafters import verdict_rows
from ingest.drafter_checks import Comparison

GAP = "—"
# Words, not emoji: the dashboard is read where no emoji font is installed (Chromium draws boxes).
STATUS_MARK = {"ok": "ok", "suspicious": "SUSPICIOUS", "wrong": "WRONG", "not checked": "not checked"}


def _count(value: Any) -> str:
    return f"{int(value):,}" if value is not None and not pd.isna(value) else GAP


def _bytes(value: Any) -> str:
    if value is None or pd.isna(value):
        return GAP
    size = float(value)
    return f"{size / 1e6:,.2f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} KB"


def drafters_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per drafter: name, overall status, mapping form, the worst verdict, sizes, what was read."""
    return pd.DataFrame({
        "drafter": table["name"],
        "status": table["status"].map(lambda s: STATUS_MARK.get(s, s)),
        "mapping form": table["mapping_form"],
        "worst finding": table["headline"],
        "target vocab": table["vocab_size"].map(_count),
        "draft vocab": table["draft_vocab_size"].map(lambda v: _count(v) if not pd.isna(v) else "full (none set)"),
        "read": [f"{_count(files)} file(s), {_bytes(size)}" if files else "config.json only"
                 for files, size in zip(table["weights_files"], table["bytes_read"], strict=True)],
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
    return pd.DataFrame({
        "reading": ["position by position", "position by position", "as sets", "as sets", "as sets", "as sets"],
        "measure": ["draft ids that differ", "draft ids that agree", "target tokens shared", f"only in {c.name_a}",
                    f"only in {c.name_b}", "Jaccard (shared ÷ union)"],
        "value": [f"{c.positions_differ:,} of {c.positions_compared:,}", f"{c.positions_agree:,} of {c.positions_compared:,}",
                  f"{c.shared_target_tokens:,}", f"{c.only_a:,}", f"{c.only_b:,}", f"{c.jaccard:.3f}"],
    })


def divergence_chart(where: pd.DataFrame, c: Comparison) -> go.Figure:
    """Share of draft ids whose target differs, per bin of draft ids: where along the ids the mappings part."""
    figure = go.Figure(go.Bar(
        x=(where["first_draft_id"] + where["last_draft_id"]) / 2, y=where["share_differing"] * 100,
        width=where["last_draft_id"] - where["first_draft_id"] + 1,
        customdata=where[["first_draft_id", "last_draft_id"]],
        hovertemplate="draft ids %{customdata[0]:,}–%{customdata[1]:,}<br>%{y:.1f}% differ<extra></extra>",
        marker_color="#d62728",
    ))
    first = f"first difference at draft id {c.first_difference:,}" if c.first_difference is not None else "no difference"
    figure.update_layout(
        title=dict(text=f"Where {c.name_a} and {c.name_b} differ ({first})", font_size=14),
        xaxis_title="draft id", yaxis_title="draft ids that differ (%)", yaxis_range=[0, 105],
        height=320, margin=dict(l=60, r=20, t=50, b=50), showlegend=False, bargap=0,
    )
    figure.update_xaxes(tickformat=",d")
    return figure


def coverage_table(found: pd.DataFrame) -> pd.DataFrame:
    """Per drafter and token file: tokens generated, how many the draft vocabulary holds, the share."""
    return pd.DataFrame({
        "drafter": found["drafter"],
        "generated tokens from": found["tokens_path"].map(lambda p: str(p).rsplit("/", 1)[-1]),
        "tokens": found["tokens"].map(_count),
        "distinct ids": found["distinct_tokens"].map(_count),
        "in the draft vocabulary": found["covered_tokens"].map(_count),
        "coverage": found["coverage"].map(lambda v: f"{float(v) * 100:.1f}%" if not pd.isna(v) else GAP),
    })
