"""Pure chart builders: DataFrame in, plotly Figure out. No Streamlit, no SQL.

Colours: one per variant, the store's (``palette.VariantColors``: the page passes it, so a variant has one
colour on every page and in every export); deltas are direction-aware (green faster, red slower, grey within
noise). Numbers in hovers, tags, titles and axis ticks are formatted by ``definitions`` (one precision per quantity).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.analysis import sampling
from dashboard.analysis.data import IDLE_GAP_S
from dashboard.analysis.definitions import (
    ACCEPT,
    COUNT,
    CYCLE_PARTS,
    KERNEL_CLASSES,
    MS,
    PERCENT,
    RATIO,
    TOK_S,
)
from dashboard.analysis.frames import communication_per_cycle
from dashboard.analysis.palette import UNORDERED, VariantColors

# Colours of what is not a variant (a server log's series, phases, a rank's bars): never palette.PALETTE's, so a
# colour on any chart names one variant or none.
SERIES_COLORS = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D")
FASTER, SLOWER, NEUTRAL = "#2E7D32", "#C62828", "#757575"
VERDICT_COLORS = {"faster": FASTER, "slower": SLOWER, "within noise": NEUTRAL, "too few runs to tell": NEUTRAL}
LOSE_FILL = "rgba(198, 40, 40, 0.08)"
MEASURED_RUN_FILL, WARMUP_FILL, SELECTED_FILL = "#C8E6C9", "#BDBDBD", "#FFE082"
AFTER_IDLE_COLOR = "#9E9E9E"
# One SVG element per marker: beyond a few thousand the browser spends seconds drawing them; WebGL draws
# the same points (same hover, same click) at once, but a WebGL context costs a few hundred ms to set up
# in a browser without a GPU, more than SVG needs for the run-point budget (``sampling.RUN_POINTS_BUDGET``).
# So WebGL only when the floor per variant pushes the drawn points well past that budget.
WEBGL_ABOVE_POINTS = 4000
DENSE_MARKER_SIZE = 6


def spreads(count: int, width: float = 0.16) -> np.ndarray:
    """Deterministic horizontal offsets so a variant's ``count`` runs do not hide each other."""
    if count <= 1:
        return np.zeros(count)
    return (np.arange(count) / (count - 1) - 0.5) * width


def run_points(
    scatter: type, points: pd.DataFrame, variant: str, color: str, symbol: str | list[str], size: int = 12, outline: int = 1
) -> go.Scatter:
    """A variant's runs as markers carrying (session id, run index) for the click that opens one."""
    return scatter(
        x=points["x"],
        y=points["tok_per_s"],
        mode="markers",
        name=f"{variant} runs",
        marker=dict(color=color, size=size, opacity=0.85, symbol=symbol, line=dict(width=outline, color="white")),
        customdata=points[["session_id", "run_index", "output_tokens", "max_tokens"]].to_numpy(),
        hovertemplate=(
            f"run %{{customdata[1]}}: {TOK_S.hover('y')}<br>%{{customdata[2]}} of %{{customdata[3]}} tokens"
            "<br>session %{customdata[0]}<extra>click to open</extra>"
        ),
        showlegend=False,
    )


def _layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, font=dict(size=13)) if title else None,
        margin=dict(l=10, r=30, t=40 if title else 30, b=10),
        height=height,
        legend=dict(orientation="h", y=-0.18),
        template="plotly_white",
    )
    return fig


def tok_per_s_points(
    runs: pd.DataFrame, comparison: pd.DataFrame, metric_label: str, baseline: str | None = None, clickable: bool = True,
    colors: VariantColors = UNORDERED,
) -> go.Figure:
    """Each measured run as a point per variant, with the mean of runs and its 95% CI beside it.

    Runs that stopped short of max_tokens are drawn as crosses; points carry
    (session id, run index) so a click can open the run page. The baseline's
    headline is a dashed line across. Beyond ``sampling.RUN_POINTS_BUDGET`` runs a
    per-variant sample is drawn (``sampling.drawn_runs``; the page says so with
    ``sampling.run_points_note``); the means and CIs come from ``comparison``, all runs.
    """
    fig = go.Figure()
    # astype: an empty frame's object column would index columns, not rows. Without runs (bench records,
    # log lines: a decision of such evidence) only the means are drawn.
    every_run = runs[~runs["is_warmup"].astype(bool)]
    measured = sampling.drawn_runs(every_run, sampling.RUN_POINTS_BUDGET, sampling.RUN_POINTS_FLOOR) if not every_run.empty else every_run
    order = comparison["variant"].tolist()
    color_of = colors.of(order)
    many = len(measured) > WEBGL_ABOVE_POINTS
    for position, variant in enumerate(order):
        points = measured[measured["variant"] == variant].reset_index(drop=True)
        points["x"] = (position - 0.12) + spreads(len(points))
        short = sampling.is_short(points)
        if many:  # WebGL, one trace per symbol (a per-point symbol array costs seconds in plotly and in the
            # browser), smaller markers without outline: thousands of them overlap anyway, and drawing is per pixel
            for crossed in (False, True):
                fig.add_trace(run_points(go.Scattergl, points[short == crossed], variant, color_of[variant],
                                         "x" if crossed else "circle", size=DENSE_MARKER_SIZE, outline=0))
        else:
            fig.add_trace(run_points(go.Scatter, points, variant, color_of[variant], ["x" if s else "circle" for s in short]))
    fig.add_trace(
        go.Scatter(
            x=[position + 0.18 for position in range(len(order))],
            y=comparison["mean_of_runs"],
            mode="markers",
            name="mean of runs ± 95% CI (t)", showlegend=False,
            marker=dict(symbol="diamond", size=10, color="black"),
            error_y=dict(
                type="data", symmetric=False,
                array=(comparison["ci_high"] - comparison["mean_of_runs"]).fillna(0),
                arrayminus=(comparison["mean_of_runs"] - comparison["ci_low"]).fillna(0),
                thickness=1.5, width=8, color="black",
            ),
            customdata=comparison[["variant"]].to_numpy(),
            hovertemplate=f"%{{customdata[0]}}: mean of runs {TOK_S.hover('y')}<extra>95% CI (t)</extra>",
        )
    )
    base = comparison[comparison["variant"] == baseline]
    if not base.empty:
        fig.add_hline(y=float(base["headline"].iloc[0]), line_dash="dash", line_color=NEUTRAL, line_width=1,
                      annotation_text=f"baseline {TOK_S.text(base['headline'].iloc[0])} ({metric_label})",
                      annotation_position="top right", annotation_font=dict(size=10, color=NEUTRAL))
    # Names too long to sit side by side stand upright under their tick: plotly drops a slanted label that
    # would run past the figure's edge, an upright one never does. The figure grows by what they take.
    longest = max((len(v) for v in order), default=0)
    upright = len(order) * longest > 90
    # The key sits under the axis as its title: plotly keeps an axis title clear of its tick labels, upright or not.
    fig.update_xaxes(tickvals=list(range(len(order))), ticktext=order, range=[-0.6, len(order) - 0.4], automargin=True,
                     tickangle=-90 if upright else 0,
                     title=dict(text="● run · × run stopped before max_tokens · ◆ mean of runs ± 95% CI (t)", font=dict(size=11)))
    fig.update_yaxes(title="tok/s per run", automargin=True, **TOK_S.ticks())
    height = 420 + (min(int(longest * TAG_CHAR_PX), 360) if upright else 0)
    return _layout(fig, "tok/s per run (click a point to open it)" if clickable else "tok/s per run", height)


def delta_forest(comparison: pd.DataFrame) -> go.Figure:
    """Δ% of the headline vs the baseline's with its 95% Welch interval per variant (``compare.compare_variants``);
    colour says faster, slower or within noise."""
    rows = comparison[~comparison["is_baseline"]].dropna(subset=["delta_pct"]) if "delta_pct" in comparison else comparison.iloc[0:0]
    fig = go.Figure()
    for _, row in rows.iterrows():
        color = VERDICT_COLORS.get(row["verdict"], NEUTRAL)
        low, high = row.get("delta_pct_low"), row.get("delta_pct_high")
        has_ci = pd.notna(low) and pd.notna(high)
        fig.add_trace(
            go.Scatter(
                x=[row["delta_pct"]], y=[row["variant"]], mode="markers",
                marker=dict(size=12, color=color, symbol="square"),
                error_x=dict(type="data", symmetric=False, array=[high - row["delta_pct"]] if has_ci else [0],
                             arrayminus=[row["delta_pct"] - low] if has_ci else [0], color=color, thickness=2, width=6),
                name=row["variant"], showlegend=False,
                hovertemplate=(f"{row['variant']}: {PERCENT.hover('x', signed=True)} ({row['verdict']})"
                               + (f"<br>95% CI {PERCENT.interval(low, high, signed=True)}" if has_ci else "")
                               + "<extra>Welch</extra>"),
            )
        )
    fig.add_vline(x=0, line_color="black", line_width=1)
    ends = [v for v in [*rows["delta_pct"], *rows.get("delta_pct_low", []), *rows.get("delta_pct_high", [])] if pd.notna(v)] + [0.0]
    pad = max(2.0, (max(ends) - min(ends)) * 0.08)
    # two lines: beside long variant names the plot is narrow, and a one-line title stuck out of it at 1280 px
    fig.update_xaxes(title="Δ headline tok/s (%)<br>95% CI (Welch)", zeroline=False,
                     range=[min(ends) - pad, max(ends) + pad], **PERCENT.ticks())
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, "Δ vs baseline: spanning 0 = noise", max(220, 90 + 60 * len(rows)))


# --- labels that must not collide ---------------------------------------------------------------

TAG_FONT_PX = 10
TAG_CHAR_PX = 6.2  # mean glyph width of the 10 px font, generous
TAG_LINE_PX = 14
# The plane's plot area at the narrowest page width checked (1280 px, sidebar open): labels that clear
# each other there clear at any wider width, since data units only grow in pixels.
PLANE_PLOT_PX = (700.0, 380.0)


@dataclass(frozen=True)
class Tag:
    """A text label in data coordinates, anchored left/right and top/bottom, shifted in pixels."""

    x: float
    y: float
    text: str
    color: str
    xanchor: str = "left"
    yanchor: str = "bottom"
    xshift: float = 4.0
    yshift: float = 0.0


def tag_box(tag: Tag, scale: tuple[float, float]) -> tuple[float, float, float, float]:
    """The tag's box in pixels (x0, y0, x1, y1; y up) at ``scale`` px per data unit."""
    width, height = len(tag.text) * TAG_CHAR_PX, TAG_LINE_PX
    x = tag.x * scale[0] + tag.xshift
    y = tag.y * scale[1] + tag.yshift
    x0 = x if tag.xanchor == "left" else x - width
    y0 = y if tag.yanchor == "bottom" else y - height
    return x0, y0, x0 + width, y0 + height


def overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def declutter(tags: Sequence[Tag], obstacles: Sequence[tuple[float, float, float, float]],
              scale: tuple[float, float]) -> list[Tag]:
    """Each tag moved up or down by whole lines until it clears the tags placed before it and the obstacles."""
    placed: list[Tag] = []
    boxes = list(obstacles)
    for tag in tags:
        for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
            moved = Tag(**{**tag.__dict__, "yshift": tag.yshift + step * TAG_LINE_PX})
            box = tag_box(moved, scale)
            if not any(overlap(box, other) for other in boxes):
                break
        placed.append(moved)
        boxes.append(box)
    return placed


def marker_box(x: float, y: float, scale: tuple[float, float], size: float = 13) -> tuple[float, float, float, float]:
    cx, cy = x * scale[0], y * scale[1]
    return cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2


def breakeven_plane(points: pd.DataFrame, iso_speedups: Sequence[float], needs: pd.DataFrame | None = None,
                    colors: VariantColors = UNORDERED) -> go.Figure:
    """The (τ, r) plane: iso-speedup lines S = τ ÷ r, the losing region (r > τ) shaded, each point a marker.

    ``points``: label, variant, tokens_per_step (τ), cost_ratio (r), source. ``needs``: per variant τ
    and r, drawn as dashed guides to the break-even line, tagged with the τ and r that would break even.
    Points carry their label in hover, not as text: several sessions of one variant sit close together,
    and their labels would cover each other and the tags; the tags are moved apart (``declutter``).
    """
    order = list(dict.fromkeys(points["variant"])) if not points.empty else []
    color_of = colors.of(order)
    x_max = max(4.0, float(points["tokens_per_step"].max()) * 1.25) if not points.empty else 4.0
    y_max = max(3.5, float(points["cost_ratio"].max()) * 1.25) if not points.empty else 3.5
    scale = (PLANE_PLOT_PX[0] / x_max, PLANE_PLOT_PX[1] / y_max)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[0, x_max, x_max, 0], y=[0, x_max, y_max, y_max], fill="toself", fillcolor=LOSE_FILL, line=dict(width=0),
        mode="lines", name="speculation loses (S < 1: r > τ)", hoverinfo="skip",
    ))
    tags: list[Tag] = []
    for speedup in iso_speedups:
        is_even = speedup == 1.0
        end_x = min(x_max, y_max * speedup)
        fig.add_trace(go.Scatter(
            x=[0, end_x], y=[0, end_x / speedup], mode="lines", hoverinfo="skip", showlegend=is_even,
            name="break-even (S = 1: τ = r)" if is_even else f"S = {speedup:g}",
            line=dict(color="black" if is_even else "#9E9E9E", width=2 if is_even else 1, dash="solid" if is_even else "dot"),
        ))
        if not is_even:  # tagged where the line leaves the plot, inside it (the title sits above)
            at_right = end_x >= x_max
            tags.append(Tag(end_x, end_x / speedup, f"S={speedup:g}", "#757575", xanchor="right" if at_right else "left",
                            yanchor="bottom" if at_right else "top", xshift=-2 if at_right else 3))
    obstacles = [marker_box(x, y, scale) for x, y in zip(points["tokens_per_step"], points["cost_ratio"], strict=True)]
    if needs is not None:
        for _, row in needs.iterrows():
            tau, r = row["tokens_per_step"], row["cost_ratio"]
            color = color_of.get(row["variant"], NEUTRAL)
            fig.add_trace(go.Scatter(x=[tau, r], y=[r, r], mode="lines", line=dict(color=color, dash="dash", width=1),
                                     hoverinfo="skip", showlegend=False))
            fig.add_trace(go.Scatter(x=[tau, tau], y=[r, tau], mode="lines", line=dict(color=color, dash="dash", width=1),
                                     hoverinfo="skip", showlegend=False))
            # Both tags hang below-right of the point where their guide meets the break-even line: the line
            # rises to the right (τ = r), so it passes above them instead of through them.
            tags.append(Tag(r, r, f"τ ≥ {ACCEPT.number(r)}", color, "left", "top"))
            tags.append(Tag(tau, tau, f"r ≤ {RATIO.number(tau)}", color, "left", "top"))
    for tag in declutter(tags, obstacles, scale):
        fig.add_annotation(x=tag.x, y=tag.y, text=tag.text, showarrow=False, xanchor=tag.xanchor, yanchor=tag.yanchor,
                           xshift=tag.xshift, yshift=tag.yshift, font=dict(size=TAG_FONT_PX, color=tag.color))
    for variant in order:
        mine = points[points["variant"] == variant]
        traced = ["trace" in str(s) for s in mine["source"]]
        fig.add_trace(go.Scatter(
            x=mine["tokens_per_step"], y=mine["cost_ratio"], mode="markers", name=variant, text=mine["label"],
            marker=dict(size=13, color=color_of[variant], symbol=["star" if t else "circle" for t in traced],
                        line=dict(width=1, color="white")),
            customdata=mine[["label", "source"]].to_numpy(),
            hovertemplate=(f"%{{customdata[0]}}<br>τ = {ACCEPT.hover('x')}<br>r = {RATIO.hover('y')}<br>S = τ ÷ r"
                           "<br>r: %{customdata[1]}<extra></extra>"),
        ))
    if order:  # what the two marker shapes mean, once in the legend
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="● session (cycle model) · ★ profiler trace",
                                 marker=dict(size=1, color="rgba(0,0,0,0)"), hoverinfo="skip"))
    fig.update_xaxes(title="τ: tokens per cycle (accept length, bonus token included)", range=[0, x_max], **ACCEPT.ticks())
    fig.update_yaxes(title="r: cycle time ÷ baseline step time", range=[0, y_max], **RATIO.ticks())
    return _layout(fig, "Break-even: speedup S = τ ÷ r; below the black line speculation wins", 520)


# --- server log -----------------------------------------------------------------------------------

def after_idle(series: pd.DataFrame) -> pd.Series:
    """Points that are a single decode line right after an idle gap (longer than data.IDLE_GAP_S, the rule every
    figure applies) or the log's first line: their gen throughput divides by the gap and means nothing
    (DOMAIN.md §4). Averaged buckets are left alone."""
    gap = series["ts"].diff().dt.total_seconds()
    single = series["lines"].eq(1) if "lines" in series else pd.Series(True, index=series.index)
    return (gap.isna() | (gap > IDLE_GAP_S)) & single


def run_bands(runs: pd.DataFrame, selected_run: int | None, rows: Sequence[int]) -> list[dict[str, object]]:
    """Each run's time window shaded across the panels ``rows``, as ``add_vrect(row="all")`` draws it: one rectangle
    per run and panel, the panel's full height. Given to the layout at once: plotly re-validates every shape at each
    ``add_vrect``, which made the Run page's figure take a third of a second for seven runs."""
    bands: list[dict[str, object]] = []
    for run in runs.dropna(subset=["started_at", "ended_at"]).itertuples():
        selected = selected_run is not None and not run.is_warmup and run.run_index == selected_run
        fill = SELECTED_FILL if selected else WARMUP_FILL if run.is_warmup else MEASURED_RUN_FILL
        for row in rows:
            axis = "" if row == 1 else str(row)
            bands.append({"type": "rect", "xref": f"x{axis}", "yref": f"y{axis} domain", "x0": run.started_at,
                          "x1": run.ended_at, "y0": 0, "y1": 1, "fillcolor": fill, "opacity": 0.5, "layer": "below",
                          "line": {"width": 0}})
    return bands


def decode_window(
    series: pd.DataFrame, runs: pd.DataFrame, prefill: pd.DataFrame | None = None, selected_run: int | None = None
) -> go.Figure:
    """Gen throughput, accept length and running requests over time, runs shaded, prefill batches marked.

    The first line after idle is drawn hollow and grey and tagged: it spans the gap, so its near-zero
    gen throughput is no measurement (every figure leaves it out).
    """
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07, row_heights=[0.45, 0.3, 0.25],
                        subplot_titles=("gen throughput (tok/s, server log)", "accept length (tokens/step, bonus incl.)",
                                        "#running-req (line) · prefill batches (▲)"))
    idle = after_idle(series)
    fig.add_trace(go.Scatter(x=series["ts"], y=series["gen_throughput"], name="gen throughput", mode="lines+markers",
                             marker=dict(size=[9 if i else 4 for i in idle],
                                         color=[AFTER_IDLE_COLOR if i else SERIES_COLORS[0] for i in idle],
                                         symbol=["circle-open" if i else "circle" for i in idle]),
                             line=dict(color=SERIES_COLORS[0]),
                             customdata=np.column_stack([series["first_line_no"] if "first_line_no" in series
                                                         else np.full(len(series), None),
                                                         np.where(idle, "<br>first line after idle: spans the gap, "
                                                                        "left out of every figure", "")]),
                             hovertemplate=f"{TOK_S.hover('y')}<br>line %{{customdata[0]}}%{{customdata[1]}}<extra></extra>"),
                  row=1, col=1)
    for ts, value in zip(series["ts"][idle], series["gen_throughput"][idle], strict=True):
        fig.add_annotation(x=ts, y=value, text="after idle (left out)", showarrow=True, arrowhead=0, ax=40, ay=-24,
                           xanchor="left", font=dict(size=10, color=NEUTRAL), row=1, col=1)
    if series["tokens_per_step"].notna().any():
        fig.add_trace(go.Scatter(x=series["ts"], y=series["tokens_per_step"], name="accept length", mode="lines+markers",
                                 marker=dict(size=4), line=dict(color=SERIES_COLORS[1]),
                                 hovertemplate=f"{ACCEPT.hover('y')}<extra></extra>"), row=2, col=1)
    else:
        fig.add_annotation(text="no accept length in these lines (no speculation)", xref="x2 domain", yref="y2 domain",
                           x=0.5, y=0.5, showarrow=False, font=dict(color=NEUTRAL))
    fig.add_trace(go.Scatter(x=series["ts"], y=series["running_req"], name="#running-req", mode="lines",
                             line=dict(color=SERIES_COLORS[2], shape="hv")), row=3, col=1)
    if prefill is not None and not prefill.empty:
        fig.add_trace(go.Scatter(x=prefill["ts"], y=[0] * len(prefill), name="prefill batch", mode="markers",
                                 marker=dict(symbol="triangle-up", size=9, color=SERIES_COLORS[3]),
                                 customdata=prefill[["new_token", "line_no"]].to_numpy(),
                                 hovertemplate="prefill: %{customdata[0]} new tokens<br>line %{customdata[1]}<extra></extra>"),
                      row=3, col=1)
    # Only panels that hold a trace are shaded (add_vrect's exclude_empty_subplots): no accept length, no band there.
    fig.update_layout(shapes=run_bands(runs, selected_run, [1, 2, 3] if series["tokens_per_step"].notna().any() else [1, 3]))
    fig.update_yaxes(title="tok/s", row=1, col=1, **TOK_S.ticks())
    fig.update_yaxes(title="tokens/step", rangemode="tozero", row=2, col=1, **ACCEPT.ticks())
    fig.update_yaxes(title="requests", rangemode="tozero", row=3, col=1, **COUNT.ticks(series["running_req"].max()))
    fig.update_xaxes(automargin=True)
    shading = "green: measured runs, grey: warm-ups" + (", yellow: selected run" if selected_run else "")
    title = f"Server log over the session ({shading})" if not runs.empty else "Server log over the server's lifetime"
    _layout(fig, title, 660)
    fig.update_layout(margin=dict(t=90, r=30, b=10))  # room for the title above the first panel's own
    return fig


# --- phases ---------------------------------------------------------------------------------------

# One line per tick at every zoom (plotly's default adds the date under the first time tick, which then
# collides with the legend below the axis).
ONE_LINE_TICKS = [
    dict(dtickrange=[None, 86_400_000], value="%b %d %H:%M"),
    dict(dtickrange=[86_400_000, "M1"], value="%b %d"),
    dict(dtickrange=["M1", None], value="%b %Y"),
]


def phase_timeline(overview: pd.DataFrame, decisions: pd.DataFrame) -> go.Figure:
    """Each phase as a bar from its first to its last run; decisions as markers on their phase's row."""
    fig = go.Figure()
    for i, row in overview.reset_index(drop=True).iterrows():
        start, end = row["first_at"], row["last_at"]
        if pd.isna(start):
            continue
        end = end if pd.notna(end) and end > start else start + pd.Timedelta(hours=1)
        fig.add_trace(go.Scatter(
            x=[start, end], y=[row["phase"], row["phase"]], mode="lines+markers",  # markers keep a one-day phase visible
            line=dict(width=14, color=SERIES_COLORS[i % len(SERIES_COLORS)]), marker=dict(size=14, symbol="line-ns", line=dict(width=3)),
            name=row["phase"], showlegend=False,
            hovertemplate=f"{row['phase']}: {row['sessions']} sessions, {row['measured_runs']} measured runs<extra></extra>",
        ))
    if not decisions.empty:
        colors = {"accepted": FASTER, "rejected": SLOWER, "inconclusive": NEUTRAL}
        for verdict, group in decisions.groupby("verdict"):
            fig.add_trace(go.Scatter(
                x=group["created_at"], y=group["phase"].fillna("(no phase)"), mode="markers", name=f"decision: {verdict}",
                marker=dict(symbol="diamond", size=14, color=colors.get(verdict, NEUTRAL), line=dict(width=1, color="white")),
                customdata=group[["title"]].to_numpy(), hovertemplate="%{customdata[0]}<extra>" + verdict + "</extra>",
            ))
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    fig.update_xaxes(title=None, tickformatstops=ONE_LINE_TICKS, automargin=True)
    _layout(fig, "Phases over time (bars: first to last run; ◆ decisions)", max(220, 140 + 50 * len(overview)))
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1, xanchor="right"),
                      margin=dict(l=10, r=40, t=40, b=10))
    return fig


def phase_trends(trends: pd.DataFrame, phase_order: Sequence[str], metric_label: str,
                 colors: VariantColors = UNORDERED) -> go.Figure:
    """Each variant's headline tok/s (mean of runs ± 95% CI alongside) and accept length across phases.

    No figure title: the page's heading names it, and a title would sit on the panels' own.
    """
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("headline tok/s (bars: mean of runs ± 95% CI)", "accept length (tokens/step)"))
    color_of = colors.of(trends["variant"])
    for variant, rows in trends.groupby("variant", sort=False):
        rows = rows.set_index("phase").reindex([p for p in phase_order if p in set(rows["phase"])]).reset_index()
        fig.add_trace(go.Scatter(
            x=rows["phase"], y=rows["headline"], name=variant, mode="lines+markers", legendgroup=variant,
            line=dict(color=color_of[variant]), marker=dict(size=9),
            error_y=dict(type="data", symmetric=False, array=(rows["ci_high"] - rows["mean_of_runs"]).fillna(0),
                         arrayminus=(rows["mean_of_runs"] - rows["ci_low"]).fillna(0), thickness=1),
            hovertemplate=f"{variant} · %{{x}}: {TOK_S.hover('y')}<extra></extra>",
        ), row=1, col=1)
        if rows["tokens_per_step"].notna().any():
            fig.add_trace(go.Scatter(
                x=rows["phase"], y=rows["tokens_per_step"], name=variant, mode="lines+markers", legendgroup=variant,
                showlegend=False, line=dict(color=color_of[variant], dash="dot"), marker=dict(size=9),
                hovertemplate=f"{variant} · %{{x}}: {ACCEPT.hover('y')}<extra></extra>",
            ), row=1, col=2)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(phase_order))
    fig.update_yaxes(title=f"tok/s ({metric_label})", row=1, col=1, **TOK_S.ticks())
    fig.update_yaxes(title="tokens/step", rangemode="tozero", row=1, col=2, **ACCEPT.ticks())
    _layout(fig, None, 420)
    fig.update_layout(margin=dict(l=10, r=30, t=40, b=10))
    return fig


# --- trace breakdown --------------------------------------------------------------------------

CYCLE_COLORS = {  # stacking order (definitions.CYCLE_PARTS names them)
    "draft": "#72B7B2",
    "verify compute": "#4C78A8",
    "verify communication": "#E45756",
    "draft_extend": "#54A24B",
    "decode compute": "#9ECAE9",
    "decode communication": "#FF9DA6",
    "other": "#B279A2",
    "unattributed": "#9D755D",
    "idle": "#D9D9D9",
}
CYCLE_COMPONENTS = {component: (CYCLE_PARTS[component], color) for component, color in CYCLE_COLORS.items()}
ESTIMATE_COLOR = "#BDBDBD"


def cycle_stack(composition: pd.DataFrame, estimates: pd.DataFrame) -> go.Figure:
    """One horizontal bar per variant: where its pace-setting rank's mean cycle goes, in ms.

    ``composition``: variant, component, mean_ms (measured, from traces). ``estimates``: variant,
    cycle_ms for variants without a trace (the cycle model), drawn hatched and labelled as such.
    """
    fig = go.Figure()
    order = list(dict.fromkeys([*composition["variant"], *estimates["variant"]]))
    for component, (label, color) in CYCLE_COMPONENTS.items():
        part = composition[composition["component"] == component].set_index("variant")["mean_ms"]
        if part.empty:
            continue
        values = [part.get(variant) for variant in order]
        fig.add_trace(go.Bar(
            y=order, x=values, name=label, orientation="h", marker_color=color,
            hovertemplate=f"%{{y}}: {label} {MS.hover('x')}<extra></extra>",
        ))
    if not estimates.empty:
        values = estimates.set_index("variant")["cycle_ms"]
        fig.add_trace(go.Bar(
            y=order, x=[values.get(variant) for variant in order], orientation="h",
            name="whole cycle, estimated (cycle model, no trace)", marker=dict(color=ESTIMATE_COLOR, pattern_shape="/"),
            hovertemplate=f"%{{y}}: estimated cycle {MS.hover('x')} (τ ÷ tok/s)<extra></extra>",
        ))
    _layout(fig, "Where a cycle's time goes", 220 + 60 * len(order))
    fig.update_layout(barmode="stack", yaxis=dict(autorange="reversed", automargin=True), legend=dict(orientation="h", y=-0.3),
                      xaxis=dict(title="ms per cycle (mean over complete cycles, pace-setting rank)", rangemode="tozero",
                                 **MS.ticks()))
    return fig


def cycle_distribution(cycles: pd.DataFrame, colors: VariantColors = UNORDERED) -> go.Figure:
    """Cycle times of every complete cycle on every rank, as a box per variant with the points beside it.

    The axis starts at 0 so every cluster, a baseline's 12 ms steps too, sits between labelled ticks.
    """
    fig = go.Figure()
    color_of = colors.of(cycles["variant"])
    for variant, rows in cycles.groupby("variant", sort=False):
        fig.add_trace(go.Box(
            x=rows["cycle_ms"], name=variant, orientation="h", boxpoints="all", jitter=0.4, pointpos=-1.6,
            marker=dict(color=color_of[variant], size=4), customdata=rows[["rank", "cycle_idx"]].to_numpy(),
            hovertemplate=f"rank %{{customdata[0]}}, cycle %{{customdata[1]}}: {MS.hover('x')}<extra></extra>",
        ))
    fig.update_layout(xaxis=dict(title="cycle time (ms)", rangemode="tozero", showline=True, ticks="outside", **MS.ticks()),
                      showlegend=False, yaxis=dict(autorange="reversed", automargin=True))
    return _layout(fig, "Per-cycle distribution (all ranks)", 160 + 70 * len(color_of))


def rank_cycles(ranks: pd.DataFrame) -> go.Figure:
    """Median cycle per rank with its communication inside (verify's, or a baseline step's): the slowest rank sets the pace."""
    fig = go.Figure()
    labels = [f"{v} · rank {r}" for v, r in zip(ranks["variant"], ranks["rank"], strict=True)]
    fig.add_trace(go.Bar(y=labels, x=ranks["median_cycle_ms"], orientation="h", name="median cycle",
                         marker_color=SERIES_COLORS[0], hovertemplate=f"%{{y}}: median cycle {MS.hover('x')}<extra></extra>"))
    speculative = ranks["median_verify_comm_ms"].notna()
    what = ["verify communication (median)" if s else "communication per decode step (trace mean)" for s in speculative]
    fig.add_trace(go.Bar(y=labels, x=communication_per_cycle(ranks), orientation="h", customdata=np.array(what)[:, None],
                         name="of which communication", marker_color=CYCLE_COLORS["verify communication"],
                         hovertemplate=f"%{{y}}: %{{customdata[0]}} {MS.hover('x')}<extra></extra>"))
    _layout(fig, "Per rank: median complete cycle", 160 + 28 * len(labels))
    fig.update_layout(barmode="overlay", xaxis=dict(title="ms", **MS.ticks()), yaxis=dict(autorange="reversed", automargin=True),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1, xanchor="right"))
    return fig


CLASS_COLORS = {"communication_ms": "#E45756", "gemm_ms": "#4C78A8", "attention_ms": "#72B7B2", "moe_ms": "#54A24B",
                "memcpy_ms": "#B279A2", "other_kernel_ms": "#9D755D", "idle_ms": "#BAB0AC"}
TRACE_CLASSES = {column: (KERNEL_CLASSES[column][0], color) for column, color in CLASS_COLORS.items()}  # label, colour


def trace_class_bars(overview: pd.DataFrame) -> go.Figure:
    """Per trace file and rank, each kernel class's union over the whole trace (ms), grouped bars."""
    fig = go.Figure()
    labels = [f"{v} · rank {r}" for v, r in zip(overview["variant"], overview["rank"], strict=True)]
    for column, (label, colour) in TRACE_CLASSES.items():
        fig.add_bar(y=labels, x=overview[column], name=label, orientation="h", marker_color=colour,
                    hovertemplate=f"%{{y}}<br>{label}: {MS.hover('x')}<extra></extra>")
    fig.update_layout(barmode="group", height=max(280, 40 + 26 * len(labels) * 3),
                      xaxis=dict(title="ms (union over the trace)", **MS.ticks()),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0), margin=dict(l=10, r=30, t=40, b=40),
                      template="plotly_white")
    fig.update_yaxes(autorange="reversed", automargin=True)
    return fig
