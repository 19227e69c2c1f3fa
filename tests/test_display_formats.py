"""One precision per quantity, declared once (definitions.py), and the small texts of issue #18.

The source scan fails when a display module formats a number itself (an f-string spec like ``:.2f``, a
plotly ``%{y:.1f}``, ``.round(``, a Styler ``precision=``) instead of going through a ``Quantity``.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest

from dashboard import charts, report, ui
from dashboard.analysis import compare, definitions, exports, frames, summary
from dashboard.analysis.definitions import ACCEPT, COUNT, MS, PERCENT, SHARE, TOK_S
from tests.conftest import ROOT

# The modules that show numbers to people: every page and the builders they use, and the analysis modules
# that write sentences (summaries, evidence headlines, frames). Not scanned: sampling.py, whose np.round picks
# row indices and shows nothing; and the pages below, added while the declaration was written — each leaves
# this list once its numbers go through a Quantity.
NOT_YET_DECLARED: set[str] = set()
DISPLAY_MODULES = sorted([*(p for p in (ROOT / "dashboard" / "views").glob("*.py") if p.name not in NOT_YET_DECLARED),
                          *(ROOT / "dashboard" / name for name in
                            ("charts.py", "ui.py", "report.py", "app.py", "analysis/frames.py", "analysis/summary.py",
                             "analysis/exports.py", "analysis/evidence.py", "analysis/compare.py"))])

OWN_FORMATTING = {
    "a format spec with a precision (:.2f, :+.1f, :,.0%)": re.compile(r":[+\-]?[,_]?\.\d+[a-zA-Z%]?\}"),
    "a thousands-only format spec (:,)": re.compile(r":[+\- ]?,d?\}"),
    "rounding a number (.round( / round()": re.compile(r"(\.round\(|(?<![\w.])round\()"),
    "a Styler or to_html precision (precision= / float_format=)": re.compile(r"\b(precision|float_format)\s*="),
    "a printf precision (%.2f)": re.compile(r"%[+\- ]?,?\.\d+[fdeg]"),
    "a plotly tick/hover format with a precision": re.compile(r"(tick|hover)format\s*=\s*[\"'][^\"']*\.\d"),
}


def own_formatting(source: str) -> list[str]:
    """Each line of ``source`` that formats a number itself, with what it does."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith(("'", '"', "f'", 'f"')) else line
        found += [f"{number}: {what}: {line.strip()}" for what, pattern in OWN_FORMATTING.items() if pattern.search(code)]
    return found


def test_display_modules_format_numbers_only_through_the_declaration() -> None:
    offenders = {str(path.relative_to(ROOT)): hits for path in DISPLAY_MODULES
                 if (hits := own_formatting(path.read_text(encoding="utf-8")))}
    assert offenders == {}, "format through dashboard.analysis.definitions (a Quantity) instead:\n" + "\n".join(
        f"{path}:{hit}" for path, hits in offenders.items() for hit in hits)


@pytest.mark.parametrize("snippet", [
    'f"{row[\'cycle_ms\']:.1f} ms"', 'f"{delta:+.1f} tok/s"', 'f"{share:.0%}"', '"%{y:.2f} ms<extra></extra>"',
    'f"{lines:,} decode lines"', 'table.round(2)', 'round(value, 3)', 'frame.style.format(precision=2)',
    'NumberColumn(format="%.3f")', 'fig.update_yaxes(tickformat=".1f")',
])
def test_the_scan_catches_each_way_of_formatting_a_number(snippet: str) -> None:
    assert own_formatting(f"x = {snippet}\n"), snippet


def test_the_scan_leaves_dates_and_declared_formats_alone() -> None:
    source = 'when = f"{ts:%Y-%m-%d %H:%M}"\ntext = f"{TOK_S.text(x)} · S = {s:g}"\nfig.update_yaxes(tickformat=",")\n'
    assert own_formatting(source) == []


# --- the declaration ---------------------------------------------------------------------------------

def test_each_quantity_reads_the_same_in_text_tables_and_charts() -> None:
    assert (TOK_S.text(51.8755), TOK_S.printf(), TOK_S.d3(), TOK_S.hover("y")) == ("51.9 tok/s", "%,.1f", ",.1f", "%{y:,.1f} tok/s")
    assert (MS.text(30.5124), MS.printf(), MS.hover("x")) == ("30.51 ms", "%,.2f", "%{x:,.2f} ms")
    assert (SHARE.text(0.9483), SHARE.printf(), SHARE.d3(), SHARE.hover("x")) == ("95%", "%,.0f%%", ",.0%", "%{x:,.0%}")
    assert (PERCENT.text(-36.716, signed=True), PERCENT.printf(signed=True)) == ("-36.7%", "%+,.1f%%")
    assert (ACCEPT.text(1.58), COUNT.text(12345)) == ("1.58 tokens/step", "12,345")
    assert TOK_S.interval(49.209, 54.551) == "49.2 – 54.6 tok/s" and TOK_S.interval(None, 54.5) == definitions.EMPTY
    assert [TOK_S.text(v) for v in (None, float("nan"), pd.NA, pd.NaT)] == [definitions.EMPTY] * 4


UNIT_IN_LABEL = {"tok/s": "tok/s", "ms": "(ms)", "s": "(s)", "%": "%", "tokens/step": "/step"}


def test_every_declared_column_has_a_label_with_its_unit_and_a_help() -> None:
    problems = []
    for key, column in definitions.COLUMNS.items():
        if not column.label.strip() or not column.help.strip():
            problems.append(f"{key}: label or help missing")
        if re.search(r"[a-z]_[a-z]", column.label):
            problems.append(f"{key}: label {column.label!r} reads like a raw name")
        unit = column.quantity.unit if column.quantity else ""
        if unit in UNIT_IN_LABEL and UNIT_IN_LABEL[unit] not in column.label:
            problems.append(f"{key}: label {column.label!r} does not say its unit ({unit})")
    assert problems == []


HEADER_CHAR_PX, HEADER_PADDING_PX = definitions.HEADER_CHAR_PX, definitions.HEADER_PADDING_PX
NAMED_WIDTHS = {"small": 75, "medium": 200, "large": 400}


def test_a_fixed_width_column_has_room_for_its_label() -> None:
    """A header is drawn on a canvas the browser tests cannot read: a label wider than its column is cut ("obse…")."""
    cut = {key: column.label for key, column in definitions.COLUMNS.items() if column.width is not None
           and len(column.label) * HEADER_CHAR_PX + HEADER_PADDING_PX > NAMED_WIDTHS.get(str(column.width), column.width)}
    assert cut == {}


def test_cycle_parts_agree_between_the_chart_legend_and_the_table() -> None:
    composition = pd.DataFrame({"variant": ["a", "a", "a"], "component": ["draft", "draft_extend", "verify communication"],
                                "mean_ms": [0.3, 0.15, 29.1]})
    legend = {trace.name for trace in charts.cycle_stack(composition, pd.DataFrame(columns=["variant", "cycle_ms"])).data}
    rows = set(frames.cycle_parts_table(composition)["part"])
    assert legend == {"draft", "draft-extend", "verify: communication (all-reduce)"} and legend <= rows
    assert not any("_" in name for name in legend | rows)


def test_kernel_classes_agree_between_the_chart_legend_and_the_table() -> None:
    overview = pd.DataFrame({"variant": ["t"], "rank": [0], **{key: [1.0] for key in definitions.KERNEL_CLASSES}})
    legend = {f"{trace.name} (ms)" for trace in charts.trace_class_bars(overview).data} - {"GPU idle (ms)"}
    assert legend == set(frames.kernel_classes_table(overview).columns) - {"variant", "rank"}


# --- exports carry full precision, CIs as numbers ------------------------------------------------------

def comparison() -> pd.DataFrame:
    summary_rows = pd.DataFrame({
        "variant": ["baseline", "k2"], "n_runs": [5, 5], "n_sessions": [1, 1], "mean_of_runs": [81.98, 51.88],
        "tokens_over_time": [81.992153, 51.782163], "sd": [0.794984, 2.151046], "short_runs": [0, 1],
        "session_ids": [["b"], ["k"]], "basis": ["benchmark runs"] * 2, "sample_unit": ["runs"] * 2,
    })
    accept = pd.DataFrame({"variant": ["k2"], "tokens_per_step": [1.58], "accepted_drafts_per_step": [0.58],
                           "log_lines": [180], "accept_basis": ["server log"]})
    return compare.compare_variants(summary_rows, accept, "baseline")


def test_the_compare_export_holds_each_ci_as_two_numbers_at_full_precision() -> None:
    table = pd.read_csv(io.BytesIO(exports.to_csv(frames.comparison_export(comparison(), {"k2"}))))
    k2 = table.set_index("variant").loc["k2"]
    assert {"ci_low", "ci_high", "delta_low", "delta_high"} <= set(table.columns)
    assert not any(isinstance(v, str) and "–" in v for v in table.to_numpy().ravel())  # no "80.99 – 82.97" text
    assert k2["tokens_over_time"] == pytest.approx(51.782163, abs=1e-9)  # every digit, not the 51.8 shown
    assert k2["ci_low"] == pytest.approx(49.209, abs=1e-3) and k2["ci_high"] == pytest.approx(54.551, abs=1e-3)
    assert k2["like_for_like"] == False  # noqa: E712 (a CSV boolean)


def test_the_page_table_keeps_full_precision_and_leaves_the_baselines_delta_empty() -> None:
    table = frames.comparison_table(comparison(), True).set_index("variant")
    assert table.loc["k2", "Σtok/Σtime"] == pytest.approx(51.782163)  # the column format rounds it when shown
    assert pd.isna(table.loc["baseline", "Δ tok/s"]) and table.loc["baseline", "Δ 95% CI"] == definitions.EMPTY
    assert definitions.BLANK_BASELINE in definitions.COLUMNS["Δ tok/s"].help
    assert "no speculation" in definitions.COLUMNS["tokens/step"].help  # why the baseline's accept length is empty


# --- run numbering, small texts ------------------------------------------------------------------------

def test_warm_ups_are_numbered_apart_from_measured_runs() -> None:
    runs = pd.DataFrame({"run_index": [1, 2, 1, 2, 3], "is_warmup": [True, True, False, False, False],
                         "prompt_tokens": [24] * 5, "output_tokens": [256, 256, 2048, 1963, 2048], "duration_s": [3.0] * 5,
                         "tok_per_s": [85.3] * 5, "hit_max_tokens": [False, False, True, False, True]})
    table = frames.session_runs_table(runs)
    assert table["run"].tolist() == ["W1", "W2", "1", "2", "3"] and table["run"].is_unique
    assert table["flag"].tolist() == ["warm-up (excluded)", "warm-up (excluded)", "✓ full length", "⚠ stopped early",
                                      "✓ full length"]


def test_the_upload_report_says_which_outcome_each_file_had() -> None:
    assert ui.upload_outcome(["loaded"]) == "1 file(s): 1 ingested (new), 0 already in the store (same content: unchanged)."
    text = ui.upload_outcome(["loaded", "already ingested", "already ingested", "failed"])
    assert text.startswith("4 file(s): 1 ingested (new), 2 already in the store") and "1 failed" in text


def test_reports_name_the_baseline_once(demo_db: Path) -> None:
    from dashboard.analysis import data, evidence

    row = data.decisions(demo_db).iloc[-1].to_dict()
    frozen = evidence.frozen(row)
    page = report.decision_report(row, frozen)
    assert f"baseline: {frozen['baseline']}" in page and "baseline baseline" not in page
    assert "baseline baseline" not in summary.decision_markdown(row, frozen)


def test_an_html_report_table_reads_like_the_page() -> None:
    html = report.table_html(frames.comparison_table(comparison(), True))
    assert "Σtok/Σtime (tok/s)" in html and ">51.8<" in html and ">51.78216" not in html
    assert "None" not in html and "nan" not in html


# --- charts: what the issue saw collide or go missing --------------------------------------------------

def test_break_even_tags_clear_each_other_and_the_points() -> None:
    points = pd.DataFrame({"label": ["base", "fs · p0", "fs (trace)", "k2 · p0", "k2 (trace)"],
                           "variant": ["base", "fs", "fs", "k2", "k2"],
                           "tokens_per_step": [1.0, 2.0, 2.0, 1.58, 1.58], "cost_ratio": [1.0, 2.73, 2.70, 2.50, 2.50],
                           "source": ["session", "session", "trace", "session", "trace"]})
    needs = pd.DataFrame({"variant": ["fs", "k2"], "tokens_per_step": [2.0, 1.58], "cost_ratio": [2.70, 2.50]})
    fig = charts.breakeven_plane(points, compare.ISO_SPEEDUPS, needs)
    scale = (charts.PLANE_PLOT_PX[0] / fig.layout.xaxis.range[1], charts.PLANE_PLOT_PX[1] / fig.layout.yaxis.range[1])
    boxes = [charts.tag_box(charts.Tag(a.x, a.y, a.text, "", a.xanchor, a.yanchor, a.xshift, a.yshift), scale)
             for a in fig.layout.annotations]
    markers = [charts.marker_box(x, y, scale) for x, y in zip(points["tokens_per_step"], points["cost_ratio"], strict=True)]
    clashes = [(a.text, b) for i, (a, box) in enumerate(zip(fig.layout.annotations, boxes, strict=True))
               for b in [*boxes[i + 1:], *markers] if charts.overlap(box, b)]
    assert clashes == []
    assert all(t.mode == "markers" for t in fig.data if t.name in ("fs", "k2"))  # labels in hover, not on the plane


def test_the_first_gen_throughput_after_idle_is_marked() -> None:
    t0 = pd.Timestamp("2026-02-10 14:00:00")
    series = pd.DataFrame({"ts": [t0, t0 + pd.Timedelta(seconds=40), t0 + pd.Timedelta(seconds=41)],
                           "gen_throughput": [0.39, 80.0, 81.0], "tokens_per_step": [1.6] * 3, "running_req": [1.0] * 3,
                           "first_line_no": [10, 11, 12], "lines": [1, 1, 1]})
    assert charts.after_idle(series).tolist() == [True, True, False]  # the log's first line, and one after a 40 s gap
    fig = charts.decode_window(series, pd.DataFrame(columns=["started_at", "ended_at", "is_warmup", "run_index"]))
    assert [a.text for a in fig.layout.annotations].count("after idle (left out)") == 2
    assert list(fig.data[0].marker.symbol) == ["circle-open", "circle-open", "circle"]


def test_the_per_cycle_axis_starts_at_zero_so_every_cluster_has_ticks() -> None:
    cycles = pd.DataFrame({"variant": ["base"] * 3 + ["k2"] * 3, "rank": [0] * 6, "cycle_idx": [1, 2, 3] * 2,
                           "cycle_ms": [12.2, 12.1, 12.3, 30.5, 30.4, 30.6]})
    assert charts.cycle_distribution(cycles).layout.xaxis.rangemode == "tozero"


def test_the_per_rank_chart_shows_a_baselines_communication_too() -> None:
    ranks = pd.DataFrame({"variant": ["base", "k2"], "rank": [0, 0], "complete_cycles": [20, 20],
                          "median_cycle_ms": [12.2, 30.5], "max_cycle_ms": [12.3, 30.6], "median_verify_ms": [None, 30.0],
                          "median_verify_comm_ms": [None, 29.1], "communication_ms": [152.5, 590.0]})
    communication = charts.rank_cycles(ranks).data[1]
    assert list(communication.x) == pytest.approx([152.5 / 20, 29.1])
    assert frames.rank_table(ranks)["communication per cycle (ms)"].notna().all()


def test_the_phase_charts_keep_ticks_on_one_line_and_titles_apart() -> None:
    t0 = pd.Timestamp("2026-02-09 10:00:00")
    overview = pd.DataFrame({"phase": ["p0"], "first_at": [t0], "last_at": [t0 + pd.Timedelta(hours=5)],
                             "sessions": [3], "measured_runs": [15]})
    timeline = charts.phase_timeline(overview, pd.DataFrame())
    assert all("\n" not in stop.value and "<br>" not in stop.value for stop in timeline.layout.xaxis.tickformatstops)
    assert timeline.layout.legend.y >= 1  # above the plot, away from the date axis
    trends = pd.DataFrame({"phase": ["p0"], "variant": ["k2"], "headline": [51.8], "mean_of_runs": [51.9],
                           "ci_low": [49.2], "ci_high": [54.6], "tokens_per_step": [1.58]})
    assert charts.phase_trends(trends, ["p0"], "Σ tokens ÷ Σ time").layout.title.text is None  # the subplots' titles only


def test_the_pages_sentences_read_each_quantity_at_its_precision() -> None:
    row = pd.Series({"variant": "k2", "cycle_kind": "speculative", "cycle_ms": 30.5, "communication_ms": 29.1,
                     "communication_share": 29.1 / 30.5, "verify_ms": 30.0, "verify_comm_share": 0.97})
    assert summary.breakdown_sentence(row) == (
        "Communication is **95%** of **k2**'s cycle (29.10 of 30.50 ms); verify takes 30.00 ms, **97%** of it communication."
    )
    [k2] = compare.break_even(comparison(), pd.DataFrame(), "baseline")
    sentence = summary.break_even_sentence(k2)
    assert "r = 2.50 (cycle ≈ 30.51 ms, estimated from tok/s and accept length, vs baseline step 12.20 ms)" in sentence
    assert "**1.50 accepted drafts per step** (now 0.58)" in sentence and "**≤ 19.27 ms**" in sentence


def test_paths_show_under_their_shared_folder_or_by_their_tail() -> None:
    demo = ["/work/main/data/demo/phase-0/k2/bench.json", "/work/main/data/demo/phase-0/k2/server.log"]
    assert frames.short_paths(demo) == ("/work/main/data/demo/phase-0/k2", ["bench.json", "server.log"])
    mixed = ["/tmp/store.duckdb.uploads/20261202-0339/run.json", *demo]
    assert frames.short_paths(mixed) == ("", ["…/store.duckdb.uploads/20261202-0339/run.json", "…/phase-0/k2/bench.json",
                                              "…/phase-0/k2/server.log"])
