"""Compare: tok/s per variant with spread and confidence, Δ vs a baseline, accept length, comparability."""
from __future__ import annotations

import functools

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import charts, drafter_ui, queries, report, sections, ui, variant_ui
from dashboard.analysis import compare, data, definitions, frames, sampling
from dashboard.analysis.definitions import ACCEPT, COUNT, PERCENT, TOK_S
from dashboard.state import RUN, SESSION, Keys, carried_params

st.title("Compare variants")
store = ui.require_store()
ui.demo_note(store)

# --- controls -----------------------------------------------------------------------------------
selection = ui.selection_bar(store, with_origins=False)  # said below, with the pooled groups' warning
if not selection.variants:
    st.info("Pick at least one variant above.")
    st.stop()

# --- data ---------------------------------------------------------------------------------------
summary = queries.variant_summary(selection.phases, selection.variants)
without_throughput = [v for v in selection.variants if v not in set(summary["variant"])]
if summary.empty:
    st.info(f"No throughput for this selection: {', '.join(without_throughput)} "
            f"{'has' if len(without_throughput) == 1 else 'have'} only profiler traces (see **Breakdown**). "
            "Ingest a benchmark, `bench_serving` output or a server log for these variants "
            "(**Ingest** page, or `specdash ingest FILES --phase PHASE --variant NAME`).")
    st.stop()
runs = queries.runs(selection.phases, selection.variants)
accept = queries.accept_length(selection.phases, selection.variants)
configs = queries.configs_by_variant(selection.phases, selection.variants)
baseline = selection.baseline
models = compare.variant_models(configs, summary)
comparison = compare.with_methods(
    compare.apart_by_model(compare.compare_variants(summary, accept, baseline, selection.metric), models, baseline), configs)
has_baseline = baseline is not None and baseline in set(comparison["variant"])
findings = compare.comparability(configs, summary, accept, baseline) if has_baseline else []
not_like_for_like = {f["variant"] for f in findings if not f["like_for_like"]}
metric_label = compare.METRIC_LABELS[selection.metric]
colors = queries.variant_colors()  # the store's: each variant in one colour on every page and in the report


def open_run(session_id: str, run_index: int | None = None) -> None:
    params = {**carried_params(), SESSION.url: session_id}
    if run_index is not None:
        params[RUN.url] = str(run_index)
    st.switch_page("views/run.py", query_params=params)


if not has_baseline:
    st.info("No baseline in this selection: pick one above (a variant measured without speculation) to see deltas, "
            "significance and break-even.")
apart = {v: r for v in comparison["variant"] if (r := compare.other_model(models, v, baseline if has_baseline else None))}
if apart:
    st.warning("No Δ for " + "; ".join(f"{v}: {r}" for v, r in apart.items()) + ". A baseline is a run of the same model "
               "without speculation: pick one of that model as the baseline, or narrow the variants.")
variant_ui.origins_note(selection.phases, selection.variants, warn=True)

# With many variants the charts and cards show a page at a time (the baseline on each); tables hold them all.
pages = compare.variant_pages(list(comparison["variant"]), baseline if has_baseline else None, compare.VARIANTS_PER_VIEW)
if len(pages) > 1:
    shown_page = st.selectbox(
        f"{len(comparison)} variants: the charts show {compare.VARIANTS_PER_VIEW} at a time", range(len(pages)),
        format_func=lambda i: f"variants {i * compare.VARIANTS_PER_VIEW + 1}–{min((i + 1) * compare.VARIANTS_PER_VIEW, len(comparison))}",
        key=Keys.compare_page,
    )
    comparison_view = comparison[comparison["variant"].isin(pages[shown_page])].reset_index(drop=True)
    runs_view = runs[runs["variant"].isin(pages[shown_page])]
else:
    comparison_view, runs_view = comparison, runs

# --- headline -----------------------------------------------------------------------------------
def cards_per_row(labels: list[str]) -> int:
    """As many cards side by side as keep the longest variant name readable at 1280 px."""
    longest = max((len(label) for label in labels), default=0)
    return 4 if longest <= 20 else 3 if longest <= 32 else 2


def card_slots(count: int, per_row: int) -> list[DeltaGenerator]:
    slots: list[DeltaGenerator] = []
    for start in range(0, count, per_row):
        slots += st.columns(per_row)[: min(per_row, count - start)]
    return slots


card_labels = [f"{v}{' (baseline)' if b else ''}" for v, b in zip(comparison_view["variant"], comparison_view["is_baseline"], strict=True)]
for card, label, (_, row) in zip(card_slots(len(comparison_view), cards_per_row(card_labels)), card_labels,
                                 comparison_view.iterrows(), strict=True):
    delta = None
    if has_baseline and not row["is_baseline"] and pd.notna(row.get("delta")):
        delta = f"{TOK_S.text(row['delta'], signed=True)} ({PERCENT.text(row['delta_pct'], signed=True)}) · {row['verdict']}"
    card.metric(
        label=label,
        value=TOK_S.text(row["headline"]),
        delta=delta,
        delta_color="off" if row.get("verdict") in ("within noise", "too few runs to tell") else "normal",
        help=f"{row['basis']}: {metric_label if row['sample_unit'] == 'runs' else 'mean'} over {row['runs']} "
             f"{row['sample_unit']}. Δ: {definitions.DELTA}",
    )
    unit = str(row["sample_unit"])
    ci = TOK_S.interval(row["ci_low"], row["ci_high"], unit=False)
    if ci == definitions.EMPTY:
        ci = f"n/a (fewer than 2 {unit})" if row["runs"] < 2 else f"n/a (too few {unit} to bound it above 0 tok/s)"
    counted = unit[:-1] if row["runs"] == 1 and unit.endswith("s") else unit  # "1 record", "4 log lines"
    notes = [f"mean of runs {TOK_S.number(row['mean_of_runs'])}, 95% CI {ci} · n = {row['runs']}"
             if unit == "runs" else
             f"{row['basis']} · mean {TOK_S.number(row['mean_of_runs'])}, 95% CI {ci} · n = {row['runs']} {counted}"]
    if row["tokens_per_step"] is not None and pd.notna(row["tokens_per_step"]):
        notes.append(f"accept length {ACCEPT.text(row['tokens_per_step'])} = {ACCEPT.number(row['accepted_drafts_per_step'])} "
                     f"accepted drafts/step ({row['accept_basis']})")
    if row["short_runs"]:
        notes.append(f":orange[⚠ {row['short_runs']} short run(s)]")
    if row["variant"] in not_like_for_like:
        notes.append(":orange[⚠ not like-for-like (see below)]")
    card.caption(" · ".join(notes))

# --- charts: click a run to open it -------------------------------------------------------------
left, right = st.columns([3, 2]) if has_baseline and len(comparison_view) > 1 else (st.container(), None)
points_event = left.plotly_chart(
    queries.figure(charts.tok_per_s_points, runs_view, comparison_view, metric_label, baseline if has_baseline else None,
                   colors=colors),
    key=Keys.compare_points, on_select="rerun", selection_mode="points", width="stretch",
)
thinned = sampling.run_points_note(runs_view)
if thinned:
    left.caption(thinned)
if right is not None:
    right.plotly_chart(queries.figure(charts.delta_forest, comparison_view), width="stretch")
picked = [p.get("customdata") for p in ui.selected(points_event, "points")]
picked = [c for c in picked if c is not None and len(c) >= 2]
if picked:
    open_run(str(picked[0][0]), int(picked[0][1]))

# --- the tables: click a row to open the variant's session --------------------------------------
shown = frames.comparison_table(comparison, has_baseline, not_like_for_like)
st.caption("Click a row to open that variant's session. Δ colours: green faster, red slower, grey within noise. "
           "Hover a column name for its definition.")
picked_rows = ui.comparison_tables(shown, frames.comparison_exports(comparison, not_like_for_like), "compare-variants",
                                   (Keys.compare_table, Keys.compare_why))
if picked_rows:
    chosen = comparison.iloc[picked_rows[0]]
    if chosen["session_ids"]:
        open_run(chosen["session_ids"][-1])
if without_throughput:
    st.caption(f"No throughput for {', '.join(without_throughput)}: no benchmark runs, bench records or server-log "
               "gen throughput lines (profiler traces are on **Breakdown**).")
# The secondary sections below run their content only when opened (sections.section): a load draws the headline.
sources = queries.variant_sources(selection.phases, selection.variants)
sources_box = sections.section(f"Throughput sources ({len(sources)}) — every figure of every variant, side by side",
                               Keys.section_sources, expanded=bool((sources["basis_rank"] > 1).any()))
if sources_box.open:
    with sources_box:
        ui.table(frames.sources_table(sources, summary), lines=2)
        st.caption(definitions.HEADLINE_ORDER)
        ui.export_buttons(frames.sources_export(sources), "throughput-sources")
if accept.empty:
    st.caption("No accept length: no server log is linked to these sessions. Ingest each variant's server log with the "
               "same `--phase`/`--variant` (or in the same `specdash ingest` call as its benchmark).")

# --- warnings: short runs -----------------------------------------------------------------------
SHORT_RUNS_LISTED = 5
short = runs[(~runs["is_warmup"]) & sampling.is_short(runs)]
for variant, stopped in short.groupby("variant", sort=False):  # one line per variant, however many runs
    shown_runs = [f"run {r.run_index} ({r.output_tokens} of {r.max_tokens} tokens, {r.finish_reason or 'no finish reason'})"
                  for r in stopped.head(SHORT_RUNS_LISTED).itertuples()]
    more = f" and {len(stopped) - SHORT_RUNS_LISTED} more" if len(stopped) > SHORT_RUNS_LISTED else ""
    st.warning(f"⚠ {variant}: {len(stopped)} run(s) stopped early — {'; '.join(shown_runs)}{more}. Short runs skew tok/s.")

# --- the drafter each variant was served with (issue #20) ----------------------------------------
drafter_ui.variant_drafters(configs)

# --- comparability ------------------------------------------------------------------------------
blocking = [f for f in findings if not f["like_for_like"]]
bases = summary.drop_duplicates("variant")[["variant", "basis"]] if "basis" in summary else summary.iloc[0:0]
mixed_bases = bases["basis"].nunique() > 1  # with or without a baseline, these figures measure different loads
unknown = [f["variant"] for f in blocking if f["kind"] == "unknown"]
if unknown:
    verdict = f"⚠ not comparable: config unknown ({', '.join(dict.fromkeys(unknown))})"
elif blocking:
    verdict = f"⚠ {len(blocking)} difference(s) make a Δ not like-for-like"
elif not has_baseline:
    verdict = "⚠ throughput from different sources: not comparable" if mixed_bases else "pick a baseline"
else:
    verdict = "✓ like-for-like"


def comparability_details() -> None:
    """What the check found: the verdict's reason, the differing settings, the drafters' own differences."""
    if not has_baseline:
        st.caption("Pick a baseline to check configs and sources against it.")
        if mixed_bases:
            st.warning("These variants' throughput comes from different sources or concurrencies, so their figures measure "
                       "different loads, not only the drafter: " + "; ".join(f"{r.variant}: {r.basis}" for r in bases.itertuples()) + ".")
    elif unknown:
        st.warning("A server config was never ingested for these, so nothing shows they ran the same model, version and "
                   "parallelism as the baseline: an unknown config is not the same config. Ingest each variant's server "
                   "log (its `server_args` line) or a `bench_serving` record with `server_info`.")
    elif blocking:
        st.warning("These differ from the baseline beyond the drafter, so those variants' Δ is not purely the drafter's effect.")
    else:
        st.success("Same model, version, parallelism, CUDA graph, max_tokens and prompt lengths as the baseline "
                   "(only the drafter and its speculation settings differ).")
    if findings:
        ui.table(frames.findings_table(findings), lines=2)
        ui.export_buttons(frames.findings_table(findings), "comparability")
    between = compare.drafter_differences(configs, baseline)
    if not between.empty:
        st.caption("Speculation settings that differ between the drafters (matters when comparing drafters with each other):")
        ui.table(frames.drafter_table(between))
        ui.export_buttons(between, "drafter-settings")
    st.caption(definitions.LIKE_FOR_LIKE + " Per-run config diffs with a diff-only toggle are on the Run page.")


# Open by itself when the check found something to warn about; else the verdict in its label says it all.
comparability_box = sections.section(f"Comparability check: {verdict}", Keys.section_comparability,
                                     expanded=bool(blocking) or (not has_baseline and mixed_bases))
if comparability_box.open:
    with comparability_box:
        comparability_details()

# --- runs: click one to open it -----------------------------------------------------------------
RUNS_TABLE_SHOWN_UP_TO = 5000  # beyond, the table waits for a click: the browser takes a second per 50,000 rows


def measured_runs() -> None:
    """Every measured run of the selection, a row click opening it; the downloads hold every run."""
    measured = runs[~runs["is_warmup"]].reset_index(drop=True)
    if measured.empty:
        st.caption("No benchmark runs: these variants' throughput comes from bench records or server-log lines "
                   "(see Throughput sources).")
    elif len(measured) <= RUNS_TABLE_SHOWN_UP_TO or st.toggle(
        f"Show all {COUNT.text(len(measured))} runs", key=Keys.compare_all_runs,
        help="A long table; the chart's points open their runs too, and the downloads below hold every run.",
    ):
        runs_event = ui.table(frames.measured_runs_table(measured), key=Keys.compare_runs)
        run_rows = ui.selected(runs_event, "rows")
        if run_rows:
            picked_run = measured.iloc[run_rows[0]]
            open_run(picked_run["session_id"], int(picked_run["run_index"]))
    ui.export_buttons(queries.loader(data.runs, selection.phases, selection.variants), "runs")


runs_box = sections.section(f"Measured runs ({int((~runs['is_warmup']).sum())}) — click one to open it", Keys.section_runs)
if runs_box.open:
    with runs_box:
        measured_runs()

# --- share --------------------------------------------------------------------------------------
st.subheader("Share")
link = ui.app_url("compare", carried_params())
selection_text = f"{', '.join(selection.variants)} · {', '.join(selection.phases) or 'all phases'} · baseline: {baseline or 'none'}"
left, right = st.columns([1, 3])
with left:
    # Built when downloaded, from its arguments only: a callable defined in this page would keep all of
    # the page's frames alive as long as the browser session.
    make_report = functools.partial(
        report.compare_report_of, selection_text, shown.copy(), frames.findings_table(findings),
        queries.loader(data.runs, selection.phases, selection.variants), comparison, metric_label,
        baseline if has_baseline else None, link, store.get("demo", False), colors,
    )
    ui.download("HTML report", make_report, f"specdash-compare-{pd.Timestamp.now():%Y%m%d-%H%M}.html", "text/html",
                "This view as one self-contained HTML file (charts included, opens offline)")
with right:
    st.page_link("views/decisions.py", label="Record a decision from this view", icon=":material/gavel:",
                 query_params=carried_params())
    st.page_link("views/breakdown.py", label="Where each variant's cycle time goes (Breakdown)",
                 icon=":material/stacked_bar_chart:", query_params=carried_params())
st.caption(f"Permalink to this view: `{link}`")

definitions_box = sections.section("Definitions", Keys.section_definitions)
if definitions_box.open:
    definitions_box.markdown("\n".join(f"- {text}" for text in definitions.ALL))
