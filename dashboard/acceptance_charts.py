"""Plotly builders of the Acceptance page: DataFrame in, Figure out (no Streamlit, no SQL).

A variant's colour is the store's (``palette.VariantColors``, passed by the page), the same on every page; axis
ticks carry their quantity's declared precision (``definitions``)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.analysis.acceptance import HISTOGRAM_BIN
from dashboard.analysis.definitions import ACCEPT, COUNT, MS, RATIO, SHARE
from dashboard.analysis.palette import UNORDERED, VariantColors

DASHES = ["solid", "dot", "dash", "longdash", "dashdot"]
THRESHOLD_COLOR = "#C62828"
FEW_REQUESTS = 20  # below this many requests the ECDF marks each one


def _layout(fig: go.Figure, height: int, legend_y: float = -0.22) -> go.Figure:
    """Legend under the plot, so it never sits on a subplot title however many curves there are; ``legend_y``
    lower where a long x-axis title sits between the ticks and the legend."""
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10}, template="plotly_white",
                      legend={"orientation": "h", "yanchor": "top", "y": legend_y, "x": 0})
    return fig


def curve_label(variant: str, origin: str, several_origins: bool) -> str:
    return f"{variant} · {origin}" if several_origins else variant


def position_figure(curves: pd.DataFrame, threshold: float, marks: dict[tuple[str, str], int | None],
                    colors: VariantColors = UNORDERED) -> go.Figure:
    """Left: survival S(k) = P(≥ k accepted) with its p10–p90 band. Right: conditional rate c(k), the threshold line,
    and a marker at each curve's first position below it."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08, subplot_titles=(
        "Survival: P(at least k drafts accepted)", "Conditional: P(k accepted | k−1 accepted)"))
    color_of = colors.of(sorted(set(curves["variant"])))
    several = curves.groupby("variant")["origin"].nunique().max() > 1 if not curves.empty else False
    for (variant, origin), curve in curves.groupby(["variant", "origin"], sort=True):
        label = curve_label(variant, origin, bool(several))
        color, dash = color_of[variant], DASHES[sorted(set(curves["origin"])).index(origin) % len(DASHES)]
        k = curve["position"]
        if curve["low"].notna().any():
            fig.add_trace(go.Scatter(x=list(k) + list(k[::-1]), y=list(curve["high"]) + list(curve["low"][::-1]),
                                     mode="lines", fill="toself", fillcolor=color, opacity=0.15, line={"width": 0},
                                     hoverinfo="skip",
                                     showlegend=False, legendgroup=label), row=1, col=1)
        fig.add_trace(go.Scatter(
            x=k, y=curve["survival"], mode="lines+markers", name=label, legendgroup=label, line={"color": color, "dash": dash},
            customdata=np.stack([curve["samples"], curve["low"].fillna(np.nan), curve["high"].fillna(np.nan)], axis=-1),
            hovertemplate=f"{label}<br>position %{{x}}<br>P(≥ k accepted) {SHARE.hover('y')}"
                          f"<br>p10–p90 across samples {SHARE.hover('customdata[1]')} – {SHARE.hover('customdata[2]')}"
                          "<br>samples %{customdata[0]}<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(
            x=k, y=curve["conditional"], mode="lines+markers", name=label, legendgroup=label, showlegend=False,
            line={"color": color, "dash": dash},
            hovertemplate=f"{label}<br>position %{{x}}<br>P(k | k−1) {SHARE.hover('y')}<extra></extra>"), row=1, col=2)
        first = marks.get((variant, origin))
        if first is not None:
            at = curve[curve["position"] == first]
            fig.add_trace(go.Scatter(
                x=at["position"], y=at["conditional"], mode="markers", showlegend=False, legendgroup=label,
                marker={"symbol": "x", "size": 14, "color": THRESHOLD_COLOR, "line": {"width": 2}},
                hovertemplate=f"{label}: first position below the threshold (%{{x}})<extra></extra>"), row=1, col=2)
    fig.add_hline(y=threshold, line={"color": THRESHOLD_COLOR, "dash": "dash", "width": 1}, row=1, col=2,
                  annotation_text=f"threshold {SHARE.text(threshold)}", annotation_position="top left")
    for col in (1, 2):
        fig.update_xaxes(title_text="draft position k", dtick=1, row=1, col=col, **COUNT.ticks())
        fig.update_yaxes(range=[0, 1.02], row=1, col=col, **SHARE.ticks())
    return _layout(fig, 460 + 22 * max(0, len(curves.groupby(["variant", "origin"])) - 3))


def steps_figure(models: dict[str, pd.DataFrame], colors: VariantColors = UNORDERED) -> go.Figure:
    """Modelled speedup against the number of drafted tokens N, per variant; the best N marked."""
    fig = go.Figure()
    color_of = colors.of(sorted(models))
    for variant, table in sorted(models.items()):
        fig.add_trace(go.Scatter(
            x=table["steps"], y=table["speedup"], mode="lines+markers", name=variant, line={"color": color_of[variant]},
            customdata=np.stack([table["tokens_per_cycle"], table["cycle_ms"]], axis=-1),
            hovertemplate=f"{variant}<br>N = %{{x}}<br>speedup {RATIO.hover('y')}×<br>τ(N) {ACCEPT.hover('customdata[0]')}"
                          f"<br>cycle {MS.hover('customdata[1]')}<extra></extra>"))
        best = table[table["best"]]
        fig.add_trace(go.Scatter(x=best["steps"], y=best["speedup"], mode="markers+text", showlegend=False,
                                 marker={"size": 16, "symbol": "star", "color": color_of[variant]},
                                 text=[f"best N = {int(n)}" for n in best["steps"]], textposition="top center",
                                 hovertemplate=f"{variant}: best N = %{{x}}<extra></extra>"))
    fig.add_hline(y=1.0, line={"color": "#757575", "dash": "dot", "width": 1}, annotation_text="break-even (S = 1)",
                  annotation_position="bottom right")
    fig.update_xaxes(title_text="drafted tokens per cycle N", dtick=1, **COUNT.ticks())
    fig.update_yaxes(title_text="modelled speedup S", **RATIO.ticks())
    return _layout(fig, 360)


def request_figure(bins: pd.DataFrame, ecdf: pd.DataFrame, colors: VariantColors = UNORDERED) -> go.Figure:
    """Per-request accept length: requests per bin per variant (left, ``acceptance.request_histogram``) and the
    ECDF (right, ``acceptance.request_ecdf``: at most a few thousand exact points however many requests)."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("Requests by accept length", "Share of requests at or below"))
    color_of = colors.of(sorted(set(bins["variant"]) | set(ecdf["variant"])))
    for variant, group in bins.groupby("variant", sort=True):
        fig.add_trace(go.Bar(x=(group["start"] + group["end"]) / 2, y=group["requests"], width=HISTOGRAM_BIN, name=variant,
                             legendgroup=variant, marker={"color": color_of[variant]}, opacity=0.6,
                             customdata=np.column_stack([group["start"], group["end"]]),
                             hovertemplate=f"{variant}<br>{ACCEPT.hover('customdata[0]')}–{ACCEPT.hover('customdata[1]')}"
                                           "<br>%{y} requests<extra></extra>"),
                      row=1, col=1)
    for variant, points in ecdf.groupby("variant", sort=True):
        few = int(points["requests"].max()) < FEW_REQUESTS
        fig.add_trace(go.Scatter(x=points["accept_length"], y=points["share"], mode="lines+markers" if few else "lines",
                                 line_shape="hv", name=variant, legendgroup=variant, showlegend=False,
                                 line={"color": color_of[variant]},
                                 hovertemplate=f"{variant}<br>{ACCEPT.hover('x')}<br>{SHARE.hover('y')} of requests"
                                               "<extra></extra>"), row=1, col=2)
    fig.update_layout(barmode="overlay", bargap=0)
    fig.update_xaxes(title_text="accept length (tokens/step, bonus-inclusive)", **ACCEPT.ticks())
    tallest = int(bins["requests"].max()) if not bins.empty else 0
    fig.update_yaxes(title_text="requests", rangemode="tozero", row=1, col=1, **COUNT.ticks(tallest))
    fig.update_yaxes(range=[0, 1.02], row=1, col=2, **SHARE.ticks())
    return _layout(fig, 380, legend_y=-0.3)


def dataset_figure(matrix: pd.DataFrame) -> go.Figure:
    """Heatmap of accept length, variants (rows: their names can be long) × datasets, each cell labelled with its value."""
    pivot = matrix.pivot(index="variant", columns="dataset", values="accept_length")
    text = [[ACCEPT.number(v) for v in row] for row in pivot.to_numpy()]
    fig = go.Figure(go.Heatmap(
        z=pivot.to_numpy(dtype=float), x=list(pivot.columns), y=list(pivot.index), text=text, texttemplate="%{text}",
        colorscale="Blues", colorbar={"title": "tokens/step", **ACCEPT.ticks()},
        hovertemplate="%{y} · %{x}<br>accept length %{text} tokens/step<extra></extra>"))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(side="top")
    return _layout(fig, 140 + 34 * len(pivot.index))


def training_figure(curves: pd.DataFrame, served: pd.DataFrame, colors: VariantColors = UNORDERED) -> go.Figure:
    """Simulated accept length per training step, a line per log and split (eval dashed), and the same variant's
    served τ as a horizontal reference: what training promised against what serving measured."""
    fig = go.Figure()
    variants = sorted(set(curves["variant"]) | set(served["variant"]))
    color_of = colors.of(variants)
    several_files = curves.groupby("variant")["source_id"].nunique().max() > 1 if not curves.empty else False
    for (variant, _source_id, split), curve in curves.groupby(["variant", "source_id", "split"], sort=True):
        file_name = str(curve["path"].iloc[0]).rsplit("/", 1)[-1]
        label = f"{variant} · simulated ({split})" + (f" · {file_name}" if several_files else "")
        fig.add_trace(go.Scatter(
            x=curve["step"], y=curve["simulated_accept_length"], mode="lines+markers" if len(curve) < 60 else "lines",
            name=label, line={"color": color_of[variant], "dash": "dash" if split == "eval" else "solid"},
            customdata=curve[["line_no"]].to_numpy(),
            hovertemplate=f"{label}<br>step %{{x}}<br>simulated τ {ACCEPT.hover('y')}<br>{file_name} line "
                          "%{customdata[0]}<extra></extra>"))
    shown = set(curves["variant"])
    for row in served[served["variant"].isin(shown)].itertuples():
        fig.add_hline(y=float(row.served_accept_length), line={"color": color_of[row.variant], "dash": "dot", "width": 2},
                      annotation_text=f"{row.variant} · served τ {ACCEPT.text(row.served_accept_length)} ({row.served_from})",
                      annotation_position="top left")
    fig.add_hline(y=1.0, line={"color": "#757575", "dash": "dot", "width": 1}, annotation_text="floor: τ = 1 (no draft accepted)",
                  annotation_position="bottom right")
    fig.update_xaxes(title_text="training step", **COUNT.ticks())
    fig.update_yaxes(title_text="accept length τ (tokens/step)", **ACCEPT.ticks())
    return _layout(fig, 380, legend_y=-0.25)
