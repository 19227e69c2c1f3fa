"""Sweeps: where speculation pays — speedup against batch size or concurrency, the crossover, its cause, the config grid."""
from __future__ import annotations

import streamlit as st

from dashboard import queries, sweep_charts, ui, variant_ui
from dashboard.analysis import sweeps
from dashboard.analysis.definitions import RATIO, SWEEP_NO_CONFIG, SWEEP_NO_X
from dashboard.state import Keys

DEFINITIONS = (f"{sweeps.SPEEDUP} {sweeps.CROSSOVER} τ = accept length (tokens per verify step, bonus included). "
               f"{sweeps.STEP_TIME} {sweeps.COST} See docs/metrics.md, 'Sweeps'.")
STATUS = {
    "pays at every point": "pays at every {x} measured: the crossover lies beyond the sweep",
    "pays at no point": "pays at no {x} measured: no crossover inside the sweep",
    "pays again": "falls below 1× and rises again: no single crossover",
    "no baseline": "no baseline at any of its points: no speedup",
}
EMPTY_HINT = ("No sweep in the store yet. Ingest a sweep: SGLang `scripts/playground/bench_speculative.py` JSONL, "
              "SpecForge `bench_eagle3.py` results or SpecBundle `data.json`, a pasted `| bs | steps | topk | num_draft "
              "| throughput | acc len |` table, or bench_serving records at several `--max-concurrency` values — "
              "`specdash ingest FILES`.")


st.title("Sweeps")
store = ui.require_store()
ui.demo_note(store)
st.caption("Where speculation pays: speedup against batch size or concurrency, relative to the baseline measured "
           "at the same batch.")

overview = queries.cached(sweeps.overview)()
if overview.empty:
    st.info(EMPTY_HINT)
    st.stop()

names = overview["sweep"].tolist()
wanted = st.query_params.get("sweep")
sweep = st.selectbox("Sweep", names, index=names.index(wanted) if wanted in names else 0,
                     help="One sweep = one model × benchmark (or one pasted table / JSONL file / group of bench records).")
st.query_params["sweep"] = sweep
analysed = queries.cached(sweeps.view)(sweep)  # the sweep's analysis, once per store change
part, x, pooled, spec, base = analysed.part, analysed.x, analysed.pooled, analysed.spec, analysed.base
info = overview.set_index("sweep").loc[sweep]
source = ", ".join(sorted({p.rsplit("/", 1)[-1] for p in part["path"].dropna()}))
st.caption(f"Source: `{source}` ({info['origin']}) · throughput: {info['kinds']}"
           + (f" · {sweeps.X_AXES[x]}: {info['x_values']}" if info["x_values"] else ""))
if "modelled from step time" in info["kinds"]:
    st.warning("This sweep's tok/s is **modelled**: bench_speculative.py's `speed` = accept length ÷ the server's p20 "
               "step time (per request), not wall-clock throughput.", icon=":material/info:")
for note in analysed.notes:
    st.warning(note, icon=":material/warning:")
variant_ui.origins_note([], sorted(part["variant"].dropna().unique()))

if analysed.axisless:
    st.info(f"No point of this table gives a batch size, concurrency or request rate, so there is no curve to draw: "
            f"its {len(part)} points as the file gives them.", icon=":material/info:")
    ui.table(sweeps.points_table(part))
    ui.export_buttons(part, f"sweep points {sweep}")
    st.stop()
if spec.empty:
    st.info("This sweep holds baseline points only: ingest the speculative runs of the same sweep to see a speedup.")
    st.stop()
by_depth = x in sweeps.CONFIG_AXES  # a depth sweep: the depth is the config, its baseline has none
if by_depth:
    st.caption(f"A depth sweep: each {sweeps.X_AXES[x]} against the baseline the file measured once, without "
               "speculation.")
configs = sorted(spec["config"].unique())
choice = "best" if by_depth else st.selectbox(
    "Config on the curves", ["best at each " + sweeps.X_AXES[x], *configs],
    help="The curves follow the highest-speedup config at each batch, or one fixed config.")
curve = sweeps.curves(spec, x, None if choice.startswith("best") else choice)
colors = queries.variant_colors()  # the store's: each variant in the colour it has on every page

# --- speedup and the crossover -----------------------------------------------------------------
if spec["speedup"].isna().all() and not info["has_baseline"]:
    st.info(f"No baseline in this sweep, so no speedup: only tok/s and accept length below. {EMPTY_HINT.split('. ')[0]}.")
elif spec["speedup"].isna().all():
    st.info((f"No file of this sweep holds both a baseline and a speculative point at the same {sweeps.X_AXES[x]} "
             "(see the warning above)" if pooled else f"No baseline at the {sweeps.X_AXES[x]} of any speculative point")
            + ", so no speedup: only tok/s and accept length below.")
else:
    found = sweeps.crossovers(curve, x)
    left, right = st.columns([3, 2])
    left.markdown(f"**Speedup against {sweeps.X_AXES[x]}**")
    if (spec["speedup_from"] == "as the file reports it").any():
        left.caption("Some speedups are the file's own figures (measured against its own baseline): this table gives "
                     "no baseline tok/s at the same point to recompute them from.")
    left.plotly_chart(queries.figure(sweep_charts.speedup_chart, curve, x, found, colors), width="stretch")
    with right:
        st.markdown("**Where speculation stops paying**")
        for cross in found:
            if cross.status == "crosses":
                at = sweeps.CROSSOVER_AT
                band = f" (range {at.interval(cross.low, cross.high)} from the spread)" if cross.low is not None else ""
                st.markdown(f"- **{cross.variant}**: crossover at {sweeps.X_AXES[x]} **{at.number(cross.at)}**{band}, "
                            f"between {cross.last_paying:g} (pays) and {cross.first_losing:g} (does not).")
            elif cross.status == "one point":
                row = curve[(curve["variant"] == cross.variant) & curve["speedup"].notna()].iloc[0]
                st.markdown(f"- **{cross.variant}**: one {sweeps.X_AXES[x]} measured ({float(row[x]):g}): speedup "
                            f"{RATIO.number(row['speedup'])}× — no crossover can be located from one point.")
            else:
                st.markdown(f"- **{cross.variant}**: {STATUS[cross.status].format(x=sweeps.X_AXES[x])}.")
        st.caption(DEFINITIONS)

# --- the cause, the (τ, r) path and the config grid: a tab each; only the open one runs ---------------------


def cause() -> None:
    """Accept length and step time against the batch: whether acceptance or the cycle's cost moves the speedup."""
    st.plotly_chart(queries.figure(sweep_charts.cause_chart, curve, base, x, colors), width="stretch")


def depth_cause() -> None:
    """Acceptance and tok/s against the depth: whether each deeper draft still pays for itself."""
    st.plotly_chart(queries.figure(sweep_charts.depth_chart, curve, base, x, colors), width="stretch")


def path() -> None:
    """Each point as (τ, r), the batch growing along the path: below the diagonal speculation pays."""
    st.caption(f"Each point as (τ, r), markers growing with the {sweeps.X_AXES[x]}: below the diagonal speculation pays. r is " +
               ("modelled from the server's p20 step time." if (curve["r_from"].str.startswith("modelled")).all()
                else "estimated from tok/s and accept length (cycle model), not a measured step time."))
    st.plotly_chart(queries.figure(sweep_charts.path_chart, curve, x, colors), width="stretch")


def config_grid() -> None:
    """Speedup (or tok/s) of every steps × topk × draft-tokens config of one variant at one batch."""
    variants = sorted(spec["variant"].unique())
    cols = st.columns(2)
    variant = cols[0].selectbox("Variant", variants)
    values = sorted(spec.loc[spec["variant"] == variant, x].dropna().unique())
    value = cols[1].selectbox(sweeps.X_AXES[x].capitalize(), values, format_func=lambda v: f"{float(v):g}")
    cells = sweeps.grid(spec, x, value, variant) if value is not None else spec.iloc[0:0]
    if cells.empty:
        st.info(SWEEP_NO_X.format(variant=variant, axis=sweeps.X_AXES[x]))
        return
    by_speedup = bool(cells["speedup"].notna().any())
    title = (f"{variant} at {sweeps.X_AXES[x]} {float(value):g}: "
             + ("speedup vs baseline" if by_speedup else "tok/s (no baseline)"))
    st.plotly_chart(queries.figure(sweep_charts.grid_chart, cells, by_speedup, title), width="stretch")
    st.caption("★ marks the best config; hover a cell for its accept length and step time. An empty cell was not measured."
               + (f" {SWEEP_NO_CONFIG}" if sweeps.config_unknown(cells) else ""))


has_path = bool(info["has_baseline"] and curve["cost_ratio"].notna().any())  # r needs a baseline at the same batch
views = ({"Acceptance and tok/s per depth": depth_cause} if by_depth else {"Accept length and step time": cause})
views |= {**({"Each point as (τ, r)": path} if has_path else {}),
          **({} if by_depth else {"Config grid: steps × topk × draft tokens": config_grid})}
for tab, show in zip(st.tabs(list(views), key=Keys.sweeps_tab, on_change="rerun"), views.values(), strict=True):
    if tab.open:
        with tab:
            show()

best = analysed.best
st.markdown(f"**{'Each' if by_depth else 'Best config at each'} {sweeps.X_AXES[x]}**")
if best["cycle_ms"].notna().any() or not by_depth:
    st.caption(f"{sweeps.STEP_TIME} Step times here: {', '.join(sorted(best['cycle_from'].unique()))}.")
else:
    st.caption("No step time: the file gives no accept length and no batch size to estimate one from.")
ui.table(sweeps.best_table(best, x))
ui.export_buttons(part, f"sweep points {sweep}")
