"""Plotly builders of the Sweeps page: speedup against batch with the crossover, accept length and step time
against batch, the config grid heatmap, and a sweep as a path in the (τ, r) plane. Pure: frames in, figures out.

A variant's colour is the store's (``palette.VariantColors``, passed by the page), the same on every page; axis
ticks carry their quantity's declared precision (``definitions``)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard import charts
from dashboard.analysis.definitions import (
    ACCEPT,
    COLUMNS,
    COUNT,
    EMPTY,
    MS,
    RATIO,
    SHARE,
    TOK_S,
    Quantity,
)
from dashboard.analysis.palette import UNORDERED, VariantColors
from dashboard.analysis.sweeps import (
    CONFIG_AXES,
    CROSSOVER_AT,
    UNKNOWN,
    X_AXES,
    Crossover,
)

LAYOUT = {"template": "plotly_white", "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
          "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0}}


def x_quantity(x: str) -> Quantity:
    """The declared quantity of a sweep's x axis (batch size, max concurrency: counts; request rate: req/s)."""
    quantity = COLUMNS[X_AXES[x]].quantity
    return quantity if quantity is not None else COUNT


def measured_axis(values: pd.Series, quantity: Quantity, x: str = "batch_size") -> dict[str, object]:
    """An axis ticked at the measured values only, each written at ``quantity``'s precision: logarithmic for a batch,
    concurrency or rate (they double from point to point), linear for a draft depth (1, 2, 3, ...)."""
    ticks = sorted(float(v) for v in values.dropna().unique() if v > 0)
    return {"type": "linear" if x in CONFIG_AXES else "log", "tickvals": ticks,
            "ticktext": [quantity.number(t) for t in ticks]}


def speedup_chart(curve: pd.DataFrame, x: str, found: list[Crossover], colors: VariantColors = UNORDERED) -> go.Figure:
    figure = go.Figure()
    colour = colors.of(sorted(curve["variant"].unique()))
    for variant, part in curve.groupby("variant", sort=True):
        error = {"type": "data", "array": part["speedup_sd"].fillna(0), "visible": bool(part["speedup_sd"].notna().any())}
        figure.add_trace(go.Scatter(
            x=part[x], y=part["speedup"], name=variant, mode="lines+markers", error_y=error,
            line={"color": colour[variant]}, customdata=part[["config", "throughput", "base_throughput"]],
            hovertemplate=(f"{X_AXES[x]} %{{x}}<br>speedup {RATIO.hover('y')}×<br>%{{customdata[0]}}<br>"
                           f"{TOK_S.hover('customdata[1]')} vs baseline {TOK_S.hover('customdata[2]')}<extra>{variant}</extra>"),
        ))
    figure.add_hline(y=1, line={"dash": "dash", "color": "#555"}, annotation_text="break-even (speedup 1×)",
                     annotation_position="bottom left")
    names = sorted(curve["variant"].unique())
    for cross in found:
        if cross.at is None:
            continue
        index = names.index(cross.variant) if cross.variant in names else 0
        tint = colour.get(cross.variant, "#555")
        if cross.low is not None and cross.high is not None:
            figure.add_vrect(x0=cross.low, x1=cross.high, fillcolor=tint, opacity=0.12, line_width=0)
        figure.add_vline(x=cross.at, line={"color": tint, "dash": "dot"})
        # an annotation on a log axis takes log10(x); shapes take x itself
        figure.add_annotation(x=cross.at if x in CONFIG_AXES else math.log10(cross.at), y=1, text=f"crossover {CROSSOVER_AT.number(cross.at)}",
                              showarrow=True, arrowhead=2, xanchor="left",
                              ax=25, ay=-35 - 25 * index, font={"color": tint})
    figure.update_layout(**LAYOUT, height=420, xaxis_title=X_AXES[x], showlegend=True,
                         yaxis_title="speedup vs baseline (×)")
    figure.update_xaxes(**measured_axis(curve[x], x_quantity(x), x))
    figure.update_yaxes(**RATIO.ticks())
    return figure


def cause_chart(curve: pd.DataFrame, base: pd.DataFrame, x: str, colors: VariantColors = UNORDERED) -> go.Figure:
    """Accept length and step (cycle) time against x: does acceptance fall, or does the cycle cost rise?"""
    figure = make_subplots(rows=1, cols=2, subplot_titles=("Accept length (τ)", "Step / cycle time"),
                           horizontal_spacing=0.12)
    colour = colors.of(sorted(curve["variant"].unique()))
    for variant, part in curve.groupby("variant", sort=True):
        figure.add_trace(go.Scatter(
            x=part[x], y=part["tau"], name=variant, mode="lines+markers", line={"color": colour[variant]},
            legendgroup=variant, customdata=part[["config"]],
            hovertemplate=f"{X_AXES[x]} %{{x}}<br>{ACCEPT.hover('y')}<br>%{{customdata[0]}}<extra>{variant}</extra>",
        ), row=1, col=1)
        figure.add_trace(go.Scatter(
            x=part[x], y=part["cycle_ms"], name=variant, mode="lines+markers", line={"color": colour[variant]},
            legendgroup=variant, showlegend=False, customdata=part[["config", "cycle_from"]],
            hovertemplate=(f"{X_AXES[x]} %{{x}}<br>cycle {MS.hover('y')}<br>%{{customdata[0]}}<br>"
                           f"%{{customdata[1]}}<extra>{variant}</extra>"),
        ), row=1, col=2)
    if not base.empty:
        figure.add_trace(go.Scatter(
            x=base[x], y=base["cycle_ms"], name="baseline step", mode="lines+markers",
            line={"color": "#555", "dash": "dash"},
            hovertemplate=f"{X_AXES[x]} %{{x}}<br>baseline step {MS.hover('y')}<extra>baseline</extra>",
        ), row=1, col=2)
    figure.update_layout(**LAYOUT, height=380)
    figure.update_layout(legend={"y": 1.12})
    for column in (1, 2):
        figure.update_xaxes(title_text=X_AXES[x], row=1, col=column,
                            **measured_axis(pd.concat([curve[x], base[x]]), x_quantity(x), x))
    figure.update_yaxes(title_text="tokens/step", row=1, col=1, rangemode="tozero", **ACCEPT.ticks())
    figure.update_yaxes(title_text="ms", row=1, col=2, rangemode="tozero", **MS.ticks())
    return figure


def depth_chart(curve: pd.DataFrame, base: pd.DataFrame, x: str, colors: VariantColors = UNORDERED) -> go.Figure:
    """A depth sweep's cause: acceptance (τ where the file gives it, else its acceptance rate) and tok/s against the
    depth, the baseline's tok/s as a line: does each deeper draft still pay for itself?"""
    by_tau = bool(curve["tau"].notna().any())
    figure = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                           subplot_titles=("Accept length (τ)" if by_tau else "Acceptance rate", "Throughput"))
    colour = colors.of(sorted(curve["variant"].unique()))
    accept = ACCEPT if by_tau else SHARE
    for variant, part in curve.groupby("variant", sort=True):
        rate = part["tau"] if by_tau else part["acceptance_rate"]  # a share: d3's % format scales it
        figure.add_trace(go.Scatter(
            x=part[x], y=rate, name=variant, mode="lines+markers", line={"color": colour[variant]}, legendgroup=variant,
            hovertemplate=f"{X_AXES[x]} %{{x}}<br>{accept.hover('y')}<extra>{variant}</extra>",
        ), row=1, col=1)
        figure.add_trace(go.Scatter(
            x=part[x], y=part["throughput"], name=variant, mode="lines+markers", line={"color": colour[variant]},
            legendgroup=variant, showlegend=False,
            hovertemplate=f"{X_AXES[x]} %{{x}}<br>{TOK_S.hover('y')}<extra>{variant}</extra>",
        ), row=1, col=2)
    if not base.empty and base["throughput"].notna().any():
        level = float(base["throughput"].mean())
        figure.add_hline(y=level, line={"dash": "dash", "color": "#555"}, row=1, col=2,
                         annotation_text=f"baseline {TOK_S.text(level)}", annotation_position="bottom right")
    figure.update_layout(**LAYOUT, height=380)
    figure.update_layout(legend={"y": 1.12})
    for column in (1, 2):
        figure.update_xaxes(title_text=X_AXES[x], row=1, col=column, **measured_axis(curve[x], x_quantity(x), x))
    figure.update_yaxes(title_text="tokens/step" if by_tau else "accepted ÷ drafted", row=1, col=1, rangemode="tozero", **accept.ticks())
    figure.update_yaxes(title_text="tok/s", row=1, col=2, rangemode="tozero", **TOK_S.ticks())
    return figure


def config_order(text: str) -> tuple[bool, int]:
    """Sort key of one config value as the grid labels it: numbers in order, ``UNKNOWN`` (no file gives it) last."""
    return (True, 0) if text == UNKNOWN else (False, int(text))


def grid_chart(cells: pd.DataFrame, by_speedup: bool, title: str) -> go.Figure:
    """One heatmap: rows 'steps · topk', columns draft tokens ('?' where no file gives the value, last); the best
    cell marked ★."""
    value = "speedup" if by_speedup else "throughput"
    quantity = RATIO if by_speedup else TOK_S
    rows = sorted(cells["row"].unique(),
                  key=lambda r: [config_order(t) for t in r.replace("steps ", "").split(" · topk ")])
    columns = sorted(cells["column"].unique(), key=config_order)
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    custom: list[list[list[str]]] = []
    best = cells.loc[cells[value].idxmax()] if cells[value].notna().any() else None
    for row in rows:
        z.append([])
        text.append([])
        custom.append([])
        for column in columns:
            hit = cells[(cells["row"] == row) & (cells["column"] == column)]
            if hit.empty:
                z[-1].append(None)
                text[-1].append("")
                custom[-1].append([EMPTY, EMPTY, EMPTY])
                continue
            cell = hit.iloc[0]
            star = " ★" if best is not None and cell.name == best.name else ""
            z[-1].append(cell[value])
            text[-1].append(quantity.number(cell[value]) + ("×" if by_speedup else "") + star)
            custom[-1].append([ACCEPT.text(cell["tau"]), MS.text(cell["cycle_ms"]), TOK_S.text(cell["throughput"])])
    figure = go.Figure(go.Heatmap(
        z=z, x=[f"draft {c}" for c in columns], y=rows, text=text, texttemplate="%{text}", customdata=custom,
        colorscale="RdYlGn", zmid=1 if by_speedup else None, xgap=2, ygap=2,
        colorbar={"title": "speedup (×)" if by_speedup else "tok/s", **quantity.ticks()},
        hovertemplate=("%{y} · %{x}<br>" + ("speedup %{z:" + RATIO.d3() + "}×" if by_speedup else TOK_S.hover("z"))
                       + "<br>accept length %{customdata[0]}<br>step time %{customdata[1]}"
                       + "<br>throughput %{customdata[2]}<extra></extra>"),
    ))
    figure.update_layout(**LAYOUT, height=max(260, 70 + 48 * len(rows)), title={"text": title, "y": 0.97})
    figure.update_layout(margin={"l": 130, "r": 20, "t": 50, "b": 40})
    return figure


def path_chart(curve: pd.DataFrame, x: str, colors: VariantColors = UNORDERED) -> go.Figure:
    """A sweep as a path in the (τ, r) plane; the diagonal τ = r is break-even (speedup 1)."""
    figure = go.Figure()
    top = max(float(curve["tau"].max()), float(curve["cost_ratio"].max()), 1.0) * 1.15
    figure.add_trace(go.Scatter(x=[1, top], y=[1, top], mode="lines", name="break-even τ = r",
                                line={"dash": "dash", "color": "#555"}, hoverinfo="skip"))
    colour = colors.of(sorted(curve["variant"].unique()))
    for variant, part in curve.groupby("variant", sort=True):
        part = part.sort_values(x)
        figure.add_trace(go.Scatter(
            x=part["tau"], y=part["cost_ratio"], name=variant, mode="lines+markers", line={"color": colour[variant]},
            marker={"size": [6 + 2 * i for i in range(len(part))]},
            customdata=part[[x, "r_from"]],
            hovertemplate=(f"{X_AXES[x]} %{{customdata[0]}}<br>τ {ACCEPT.hover('x')}<br>r {RATIO.hover('y')}<br>"
                           f"%{{customdata[1]}}<extra>{variant}</extra>"),
        ))
    figure.update_layout(**LAYOUT, height=380, xaxis_title="τ, tokens per cycle", yaxis_title="r, cycle ÷ baseline step")
    figure.update_xaxes(range=[0.9, top], **ACCEPT.ticks())
    figure.update_yaxes(range=[0.9, top], **RATIO.ticks())
    return figure


# --- sweeps on the Break-even plane ------------------------------------------------------------------

def break_even_figure(points: pd.DataFrame, iso_speedups: Sequence[float], needs: pd.DataFrame | None,
                      path: pd.DataFrame, colors: VariantColors = UNORDERED) -> go.Figure:
    """The Break-even page's figure: ``charts.breakeven_plane`` with the sweeps' paths on it (``break_even_paths``),
    one builder, so a cached plane is never changed by drawing paths on it."""
    return break_even_paths(charts.breakeven_plane(points, iso_speedups, needs, colors), path, colors)


def break_even_paths(figure: go.Figure, path: pd.DataFrame, colors: VariantColors = UNORDERED) -> go.Figure:
    """The Break-even plane (``charts.breakeven_plane``) with each sweep drawn as a path in (τ, r): how τ and the cost
    ratio move as the batch (or concurrency) grows, markers growing with it, the path's last point tagged with its
    batch. ``path``: ``analysis.sweeps.break_even_path`` rows (sweep, variant, axis, x, tau, cost_ratio, r_from). The
    plane grows to hold the paths; tags are placed clear of the plane's own tags and markers. Empty ``path``: the
    figure unchanged. Each path is drawn in its variant's colour (``colors``, the plane's own)."""
    if path.empty:
        return figure
    grow_plane(figure, float(path["tau"].max()) * 1.1, float(path["cost_ratio"].max()) * 1.1)
    x_max, y_max = figure.layout.xaxis.range[1], figure.layout.yaxis.range[1]
    scale = (charts.PLANE_PLOT_PX[0] / x_max, charts.PLANE_PLOT_PX[1] / y_max)
    # The plane's variants first, in the order the plane met them (its point traces; the legend's key skips hover):
    # given the same ``colors``, a path has the colour of its variant's points, the store's order or none.
    plane_variants = [trace.name for trace in figure.data if trace.mode == "markers" and trace.hoverinfo != "skip"]
    colours = colors.of([*plane_variants, *sorted(path["variant"].unique())])
    obstacles = [charts.marker_box(x, y, scale) for trace in figure.data
                 if trace.mode == "markers" and trace.x is not None for x, y in zip(trace.x, trace.y, strict=True)
                 if x is not None]
    # The plane's own tags are placed again with the paths' tags, at this scale (unshifted, in their order first).
    tags = [charts.Tag(a.x, a.y, a.text, a.font.color, a.xanchor, a.yanchor, a.xshift or 0, 0.0)
            for a in figure.layout.annotations]
    figure.layout.annotations = ()
    for (sweep, variant), part in path.groupby(["sweep", "variant"], sort=True):
        part = part.sort_values("x")
        axis = str(part["axis"].iloc[0])
        colour_ = colours[variant]
        steps = [f"{v:g}" for v in part["x"]]
        modelled = str(part["r_from"].iloc[0]).startswith("modelled")
        figure.add_trace(go.Scatter(
            x=part["tau"], y=part["cost_ratio"], mode="lines+markers", name=f"{variant}: sweep, {axis} {steps[0]} → {steps[-1]}",
            line={"color": colour_, "dash": "dot", "width": 1.5},
            marker={"size": [5 + 2 * i for i in range(len(part))], "color": colour_, "symbol": "diamond",
                    "line": {"width": 1, "color": "white"}},
            customdata=[[step, sweep, r_from] for step, r_from in zip(steps, part["r_from"], strict=True)],
            hovertemplate=(f"{variant} · %{{customdata[1]}}<br>{axis} %{{customdata[0]}}<br>τ = {ACCEPT.hover('x')}"
                           f"<br>r = {RATIO.hover('y')} (vs the sweep's baseline at the same {axis})"
                           "<br>r: %{customdata[2]}<extra>sweep</extra>"),
        ))
        last = part.iloc[-1]
        # the tag sits beyond the path's end, on the side the path was heading (not back across its own line)
        leftwards = len(part) > 1 and float(last["tau"]) < float(part["tau"].iloc[-2])
        tags.append(charts.Tag(float(last["tau"]), float(last["cost_ratio"]), f"{axis} {steps[-1]}"
                               + ("" if modelled else " (r est.)"), colour_, "right" if leftwards else "left", "bottom",
                               -8.0 if leftwards else 6.0))
        obstacles += [charts.marker_box(t, r, scale, 5 + 2 * i) for i, (t, r) in enumerate(zip(part["tau"], part["cost_ratio"],
                                                                                             strict=True))]
    for tag in charts.declutter(tags, obstacles, scale):
        figure.add_annotation(x=tag.x, y=tag.y, text=tag.text, showarrow=False, xanchor=tag.xanchor, yanchor=tag.yanchor,
                              xshift=tag.xshift, yshift=tag.yshift, font={"size": charts.TAG_FONT_PX, "color": tag.color})
    return figure


def grow_plane(figure: go.Figure, x_need: float, y_need: float) -> None:
    """Widen the plane's axes to hold (x_need, y_need), redrawing its losing region and iso-speedup lines (and their
    S tags) to the new edges; nothing when it already holds them."""
    x_max, y_max = figure.layout.xaxis.range[1], figure.layout.yaxis.range[1]
    if x_need <= x_max and y_need <= y_max:
        return
    x_max, y_max = max(x_max, x_need), max(y_max, y_need)
    figure.update_xaxes(range=[0, x_max])
    figure.update_yaxes(range=[0, y_max])
    speedups: dict[str, float] = {}
    for trace in figure.data:
        name = trace.name or ""
        if name.startswith("speculation loses"):
            trace.x, trace.y = [0, x_max, x_max, 0], [0, x_max, y_max, y_max]
        elif name.startswith("break-even (S = 1") or name.startswith("S = "):
            speedup = 1.0 if name.startswith("break-even") else float(name.removeprefix("S = "))
            end = min(x_max, y_max * speedup)
            trace.x, trace.y = [0, end], [0, end / speedup]
            speedups[f"S={speedup:g}"] = speedup
    for annotation in figure.layout.annotations:
        if annotation.text in speedups:
            speedup = speedups[annotation.text]
            end = min(x_max, y_max * speedup)
            at_right = end >= x_max
            annotation.update(x=end, y=end / speedup, xanchor="right" if at_right else "left",
                              yanchor="bottom" if at_right else "top", xshift=-2 if at_right else 3)
