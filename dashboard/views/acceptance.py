"""Acceptance: where drafts die (per position), which requests a drafter fails (per request), per dataset."""
from __future__ import annotations

import streamlit as st

from dashboard import acceptance_charts, queries, sections, ui, variant_ui
from dashboard.analysis import acceptance
from dashboard.analysis.definitions import ACCEPT, EMPTY, MS, RATIO, SHARE
from dashboard.state import (
    ACCEPTANCE_VARIANTS,  # in the URL: the Run page links here with its session's variant
    Keys,
)

st.title("Acceptance")
store = ui.require_store()
ui.demo_note(store)
st.caption(f"{acceptance.ACCEPT_LENGTH} {acceptance.POOLED}")

position_rates = queries.cached(acceptance.position_rates)
request_sources = queries.cached(acceptance.request_sources)
request_curves = queries.cached(acceptance.request_curves)
request_distribution = queries.cached(acceptance.request_distribution)
request_histogram = queries.cached(acceptance.request_histogram)
request_rates = queries.cached(acceptance.request_rates)
request_ecdf = queries.cached(acceptance.request_ecdf)
worst_requests = queries.cached(acceptance.worst_requests)
dataset_rows = queries.cached(acceptance.dataset_rows)
metric_windows = queries.cached(acceptance.metric_windows)
trace_cycle_parts = queries.cached(acceptance.trace_cycle_parts)
source_paths = queries.cached(acceptance.source_paths)
out_of_domain = queries.cached(acceptance.out_of_domain)
record_lines = queries.cached(acceptance.record_lines)
training_variants = queries.cached(acceptance.training_variants)
training_steps = queries.cached(acceptance.training_steps)

PLACES_EXPORT = ["variant", "request_id", "source_id", "path", "line_no"]  # where each request was read: whole paths
INGEST_WHAT = ("Ingest a vLLM server log with `SpecDecoding metrics` lines, a `vllm bench serve --save-result` JSON or "
               "`spec_decode.py` summary, per-request responses (vLLM `metrics.speculative_decoding`, SGLang `meta_info` "
               "spec fields, AIPerf `profile_export.jsonl`) or `/metrics` snapshots: `specdash ingest FILES --variant NAME`.")


# --- controls -----------------------------------------------------------------------------------
rates, requested, datasets, windows = position_rates(), request_sources(), dataset_rows(), metric_windows()
everything = sorted(set(rates["variant"]) | set(requested["variant"]) | set(datasets["variant"]) | set(windows["variant"])
                    | set(training_variants()))
if not everything:
    ui.lacking(store, "per-position, per-request or per-dataset acceptance", INGEST_WHAT)
left, right = st.columns([3, 1])
ACCEPTANCE_VARIANTS.seed_list(everything, everything)
variants: list[str] = left.multiselect("Variants", everything, key=ACCEPTANCE_VARIANTS.key)
ACCEPTANCE_VARIANTS.publish(every=everything)
variant_ui.origins_note([], variants)
colors = queries.variant_colors()  # the store's: each variant in the colour it has on every page
threshold = right.slider("Conditional-rate threshold", 0.05, 0.95, 0.5, 0.05, key="acceptance_threshold",
                         help="Mark the first draft position whose conditional acceptance falls below this.")
if not variants:
    st.info("Pick at least one variant above.")
    st.stop()
rates, requested = rates[rates["variant"].isin(variants)], requested[requested["variant"].isin(variants)]
curves = acceptance.joined_curves(acceptance.position_curves(acceptance.position_samples(rates)), request_curves(variants))
distribution = request_distribution(variants)
for note in acceptance.mixed_sources(curves, distribution):
    st.warning(f":material/warning: Not like-for-like. {note}")
for note in out_of_domain(variants):
    st.warning(f":material/warning: Left out: {note}")

# --- the readings, a tab each: only the open tab runs (a click reruns the page) ----------------------------
curve_sources = sorted({part for value in curves["sources"] for part in str(value).split(", ") if part})
curves, broken = acceptance.checked_curves(curves, acceptance.position_samples(rates), source_paths(curve_sources),
                                           record_lines(curve_sources))
datasets = datasets[datasets["variant"].isin(variants)]
windows = windows[windows["variant"].isin(variants)]


def per_position() -> None:
    """Survival and conditional rate per draft position, the first position below the threshold marked."""
    for warning in broken:
        st.warning(f":material/error: {warning.text()}")
    if curves.empty:
        st.info("No per-position curve left to show: each one breaks its invariants (above)." if broken
                else "No per-position acceptance for these variants. " + INGEST_WHAT)
        return
    st.caption(f"{acceptance.SURVIVAL} {acceptance.CONDITIONAL}")
    marks = {(v, o): acceptance.first_below(c, threshold) for (v, o), c in curves.groupby(["variant", "origin"])}
    st.plotly_chart(queries.figure(acceptance_charts.position_figure, curves, threshold, marks, colors), width="stretch")
    st.caption(f"First position below threshold: the first draft position whose P(k | k−1) is below "
               f"{SHARE.text(threshold)} (the threshold above).")
    summary_table = acceptance.curve_summary_table(curves, marks)
    ui.table(summary_table, lines=2)
    ui.export_buttons(summary_table, "acceptance curves")
    positions_box = sections.section("Every position", Keys.section_every_position)
    if positions_box.open:
        with positions_box:
            ui.table(acceptance.positions_table(curves), lines=2)
            ui.export_buttons(curves, "acceptance per position")


def drafting_model() -> None:
    """The modelled speedup per number of drafted tokens, from a curve and the cycle's parts."""
    if curves.empty:
        st.info("Needs a per-position curve (the first tab).")
        return
    st.caption(acceptance.MODEL)
    options = [f"{v} · {o}" for v, o in curves.groupby(["variant", "origin"]).groups]
    chosen = st.selectbox("Curve", options, key="acceptance_model_curve")
    variant, origin = chosen.split(" · ", 1)
    curve = curves[(curves["variant"] == variant) & (curves["origin"] == origin)]
    inputs = acceptance.model_inputs(trace_cycle_parts(), variant, len(curve), None)
    values: dict[str, float | None] = {}
    for column, model_input in zip(st.columns(len(inputs)), inputs, strict=True):
        values[model_input.name] = column.number_input(
            f"{model_input.name} ({model_input.unit})", min_value=0.0,
            value=model_input.value, step=0.1, format=f"%.{MS.decimals}f",
            key=f"acceptance_model_{variant}_{model_input.name}", help=model_input.origin, placeholder="enter ms")
        kind = "measured" if model_input.measured else "needed" if model_input.needed else "assumed"
        column.caption(f"**{kind}** — " + model_input.origin.split(": ", 1)[-1])
    known = {name: value for name, value in values.items() if value is not None}
    missing = [name for name in values if name not in known]
    if missing:
        st.info(f"The model needs {', '.join(missing)} for **{variant}**: nothing in this store measures "
                f"{'it' if len(missing) == 1 else 'them'}, and no other team's figure stands in. Each box above says "
                "how to measure it; enter a value to see the speedup per drafted token.")
        return
    model = acceptance.steps_model(curve["survival"].tolist(), known["draft step"], known["verify + draft-extend"],
                                   known["baseline step"], known["verify per extra token"])
    best = model[model["best"]]
    if not best.empty:
        st.markdown(f"**{variant}**: drafting **{int(best['steps'].iloc[0])}** token(s) per cycle models best, "
                    f"speedup {RATIO.text(best['speedup'].iloc[0])}× at τ = {ACCEPT.text(best['tokens_per_cycle'].iloc[0])} "
                    f"(measured up to N = {len(curve)}; the model does not extrapolate beyond it).")
    st.plotly_chart(queries.figure(acceptance_charts.steps_figure, {variant: model}, colors), width="stretch")
    ui.table(acceptance.steps_table(model))
    ui.export_buttons(model, f"drafting model {variant} {origin}")


def per_request() -> None:
    """Each request's accept length: the spread per variant, histogram and ECDF, the lowest requests; requests that
    give a rate only, apart."""
    rate_only = request_rates(variants)
    if not rate_only.empty:
        st.markdown("**Requests with an acceptance rate only**")
        st.caption("These outputs count drafted and accepted tokens but not verify steps, so they give a rate, not an "
                   "accept length (tokens/step): they are not in the figures below.")
        ui.table(acceptance.rates_table(rate_only), lines=2)
        ui.export_buttons(rate_only, "acceptance rate per request")
    if distribution.empty:
        if rate_only.empty:
            st.info("No per-request acceptance for these variants. Ingest responses carrying vLLM "
                    "`metrics.speculative_decoding`, SGLang `meta_info` spec fields, AIPerf `spec_decode_acceptance` "
                    "records or llama.cpp `timings`.")
        return
    ui.table(acceptance.distribution_table(distribution), lines=2)
    ui.export_buttons(distribution, "acceptance per request")
    st.caption("Sources: " + "; ".join(f"{v}: {o}" for v, o in zip(distribution["variant"], distribution["origins"], strict=True)))
    st.plotly_chart(queries.figure(acceptance_charts.request_figure, request_histogram(variants), request_ecdf(variants), colors),
                    width="stretch")
    st.markdown("**Lowest-acceptance requests**")
    worst = worst_requests(variants)
    ui.table(acceptance.worst_table(worst), lines=2)
    ui.export_buttons(worst, "lowest-acceptance requests")
    places_box = sections.section("Where each of these requests was read", Keys.section_request_places)
    if places_box.open:
        with places_box:
            ui.table(acceptance.worst_places(worst), lines=2)
            ui.export_buttons(worst[[c for c in PLACES_EXPORT if c in worst]], "lowest-acceptance requests, where read")


def per_dataset() -> None:
    """Accept length per dataset and variant, Δ against a reference."""
    if datasets.empty:
        st.info("No acceptance per dataset for these variants. Ingest benchmark records that name their dataset "
                "(bench_serving's `dataset_name`, an EAGLE bench summary's `task`) or per-request records tagged with one.")
        return
    dataset_variants = sorted(set(datasets["variant"]))
    reference = st.selectbox("Δ against", dataset_variants, key="acceptance_reference",
                             help="The reference drafter (or baseline) each cell's Δ accept length is taken against.")
    matrix = acceptance.dataset_matrix(datasets, reference)
    st.plotly_chart(queries.figure(acceptance_charts.dataset_figure, matrix), width="stretch")
    st.caption(f"Δ vs reference: against **{reference}**.")
    ui.table(acceptance.dataset_table(matrix), lines=2)
    ui.export_buttons(matrix, f"acceptance per dataset vs {reference}")
    cells_box = sections.section("Where each cell comes from", Keys.section_dataset_sources)
    if cells_box.open:
        with cells_box:
            ui.table(acceptance.dataset_sources(matrix), lines=2)
            ui.export_buttons(datasets, "acceptance per dataset")
    if datasets["scope"].nunique() > 1:
        st.warning(":material/warning: Not like-for-like: some figures are per run, some per request, some the "
                   "server's lifetime average (bench_serving's accept_length).")


def per_metrics_window() -> None:
    """Accept length per Prometheus window (only when /metrics snapshots were ingested)."""
    st.caption("Counter deltas between two snapshots are that window's figures; counters alone are totals since the "
               "server started; gauges are the engine's own averaging and are never differenced.")
    ui.table(acceptance.windows_table(windows), lines=2)
    ui.export_buttons(windows, "acceptance per metrics window")


def training() -> None:
    """What training promised (the simulated accept length per step) against what the variant's serving measured."""
    logged = training_steps(variants)
    if logged.empty:
        st.info("No training log for these variants: ingest a SpecForge or NeMo AutoModel training log with "
                "`specdash ingest LOG --variant NAME` (NAME: the variant its drafter is served as).")
        return
    shown, notes = acceptance.training_in_domain(logged)
    for note in notes:
        st.warning(f":material/warning: Left out: {note}")
    if shown.empty:
        st.info("Nothing left to show: every logged step breaks its invariants (above).")
        return
    served = acceptance.served_accept_lengths(curves, distribution, datasets)
    trained = acceptance.training_curves(shown)
    st.caption(acceptance.SIMULATED_VS_SERVED)
    if trained.empty:
        st.info("These training logs print no simulated accept length (SpecForge prints accuracy and acceptance rate "
                "only): the table has what they say.")
    else:
        st.plotly_chart(queries.figure(acceptance_charts.training_figure, trained, served, colors), width="stretch")
        unserved = sorted(set(trained["variant"]) - set(served["variant"]))
        if unserved:
            st.caption(f"No served acceptance for {', '.join(unserved)}: no reference line. {INGEST_WHAT}")
    table = acceptance.training_table(shown, served)
    ui.table(table, lines=2)
    ui.export_buttons(table, "training vs served acceptance")
    st.markdown("**Every logged step**")
    ui.table(acceptance.training_steps_table(shown))
    ui.export_buttons(shown, "training logs every step")  # as stored: every digit, the file and line of each


# The tab's label is its heading.
readings = {"Per draft position: where the drafts die": per_position, "How many tokens to draft": drafting_model,
            "Per request": per_request, "Per dataset": per_dataset,
            **({"From /metrics snapshots": per_metrics_window} if not windows.empty else {}),
            "Training: simulated vs served acceptance": training}
for tab, show in zip(st.tabs(list(readings), key=Keys.acceptance_tab, on_change="rerun"), readings.values(), strict=True):
    if tab.open:
        with tab:
            show()

used = sorted(set(rates["source_id"]) | set(requested["source_id"]) | set(datasets["source_id"]) | set(windows["source_id"]))
files_box = sections.section("Where these numbers come from", Keys.section_acceptance_files)
if files_box.open:
    paths = source_paths(used)
    files_box.markdown("\n".join(f"- `{source}`: `{paths.get(source, EMPTY)}`" for source in used) or EMPTY)
