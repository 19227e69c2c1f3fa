"""Pure chart builders: DataFrame in, plotly Figure out. No Streamlit, no SQL."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D"]
FASTER, SLOWER, NEUTRAL = "#2E7D32", "#C62828", "#757575"


def variant_colors(variants: list[str]) -> dict[str, str]:
    return {variant: PALETTE[i % len(PALETTE)] for i, variant in enumerate(variants)}


def spread(index: int, count: int, width: float = 0.16) -> float:
    """Deterministic horizontal offset so a variant's runs do not hide each other."""
    return 0.0 if count <= 1 else (index / (count - 1) - 0.5) * width


def tok_per_s_points(runs: pd.DataFrame, comparison: pd.DataFrame, metric_label: str) -> go.Figure:
    """Each measured run as a point per variant, with the mean of runs and its 95% CI beside it.

    Runs that stopped short of max_tokens are drawn as crosses; points carry their
    session id so a click can open the run page.
    """
    fig = go.Figure()
    measured = runs[~runs["is_warmup"]]
    order = comparison["variant"].tolist()
    colors = variant_colors(order)
    for position, variant in enumerate(order):
        points = measured[measured["variant"] == variant].reset_index(drop=True)
        short = points["hit_max_tokens"].eq(False)
        fig.add_trace(
            go.Scatter(
                x=[position - 0.12 + spread(i, len(points)) for i in range(len(points))],
                y=points["tok_per_s"],
                mode="markers",
                name=f"{variant} runs",
                marker=dict(
                    color=colors[variant], size=11, opacity=0.8,
                    symbol=["x" if s else "circle" for s in short], line=dict(width=1, color="white"),
                ),
                customdata=points[["session_id", "run_index", "output_tokens", "max_tokens"]].to_numpy(),
                hovertemplate=(
                    "run %{customdata[1]}: %{y:.1f} tok/s<br>%{customdata[2]} of %{customdata[3]} tokens"
                    "<br>session %{customdata[0]}<extra>click to open</extra>"
                ),
                showlegend=False,
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[position + 0.18 for position in range(len(order))],
            y=comparison["mean_of_runs"],
            mode="markers",
            name="mean of runs ± 95% CI (t); × = run stopped before max_tokens",
            marker=dict(symbol="diamond", size=10, color="black"),
            error_y=dict(
                type="data", symmetric=False,
                array=(comparison["ci_high"] - comparison["mean_of_runs"]).fillna(0),
                arrayminus=(comparison["mean_of_runs"] - comparison["ci_low"]).fillna(0),
                thickness=1.5, width=8, color="black",
            ),
            customdata=comparison[["variant"]].to_numpy(),
            hovertemplate="%{customdata[0]}: mean of runs %{y:.2f} tok/s<extra>95% CI (t)</extra>",
        )
    )
    fig.update_xaxes(tickvals=list(range(len(order))), ticktext=order, range=[-0.6, len(order) - 0.4])
    fig.update_layout(
        yaxis_title="tok/s (output tokens ÷ wall time, per run)",
        xaxis_title=None,
        legend=dict(orientation="h", y=-0.15),
        margin=dict(l=10, r=10, t=30, b=10),
        height=420,
        title=dict(text=f"tok/s per run; headline = {metric_label}", font=dict(size=13)),
    )
    return fig


def decode_timeseries(series: pd.DataFrame, runs: pd.DataFrame) -> go.Figure:
    """Gen throughput and accept length over time, with measured runs shaded and warm-ups hatched grey."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=series["ts"], y=series["gen_throughput"], name="gen throughput (tok/s, server log)",
                   mode="lines+markers", marker=dict(size=4), line=dict(color=PALETTE[0]))
    )
    if series["tokens_per_step"].notna().any():
        fig.add_trace(
            go.Scatter(x=series["ts"], y=series["tokens_per_step"], name="accept length (tokens/step, bonus incl.)",
                       mode="lines+markers", marker=dict(size=4), line=dict(color=PALETTE[1]), yaxis="y2")
        )
    for _, run in runs.dropna(subset=["started_at", "ended_at"]).iterrows():
        fig.add_vrect(
            x0=run["started_at"], x1=run["ended_at"], line_width=0, layer="below",
            fillcolor="#BDBDBD" if run["is_warmup"] else "#C8E6C9", opacity=0.45,
        )
    fig.update_layout(
        yaxis=dict(title="tok/s"),
        yaxis2=dict(title="tokens per step", overlaying="y", side="right", rangemode="tozero", showgrid=False),
        legend=dict(orientation="h", y=-0.2),
        margin=dict(l=10, r=10, t=30, b=10),
        height=380,
        title=dict(text="Server log over the session (green: measured runs, grey: warm-ups)", font=dict(size=13)),
    )
    return fig
