"""A decision as a Markdown summary, ready to paste into a chat or a PR. No Streamlit, no plotly.

Numbers come from the decision's frozen evidence, each with its CI and definition;
the user's note is Markdown and goes in as written, except that ``<`` is escaped in it and
in every label, so no renderer that passes raw HTML through can run what a label holds.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from dashboard.analysis import definitions
from dashboard.analysis.compare import (
    CYCLE_ESTIMATED,
    CYCLE_MEASURED,
    METRIC_LABELS,
    TOKENS_OVER_TIME,
    BreakEven,
    break_even_reason,
)
from dashboard.analysis.definitions import (
    ACCEPT,
    EMPTY,
    MS,
    PERCENT,
    RATIO,
    SHARE,
    TOK_S,
    Quantity,
    missing,
)
from dashboard.analysis.evidence import headline


def _ci(low: Any, high: Any, quantity: Quantity = TOK_S, signed: bool = False) -> str:
    if missing(low) or missing(high):
        return "n/a"
    return f"[{quantity.number(low, signed)}, {quantity.number(high, signed)}]"


# --- sentences the pages show (numbers at their declared precision) ------------------------------

def cycle_how(result: BreakEven) -> str:
    """Where a break-even's cycle time comes from, in words."""
    if result.cycle_source == CYCLE_ESTIMATED:
        return "estimated from tok/s and accept length"
    if result.cycle_source != CYCLE_MEASURED:
        return result.cycle_source  # an estimate over several requests decoding together names them
    if result.estimated_cycle_ms is None:
        return "measured in a profiler trace"
    return f"measured in a profiler trace; the cycle model says {MS.text(result.estimated_cycle_ms)}"


def break_even_sentence(result: BreakEven) -> str:
    """What one drafter needs to break even, in words (the Break-even page, under the plane)."""
    how = cycle_how(result)
    if result.tau_problem:
        return f"**{result.variant}**: no break-even figure. {result.tau_problem}"
    if result.reason:
        return (f"**{result.variant}**: r = {RATIO.number(result.cost_ratio)} (cycle ≈ {MS.text(result.cycle_ms)}, {how}, "
                f"vs baseline step {MS.text(result.baseline_step_ms)}), τ = {ACCEPT.text(result.tokens_per_step)}, "
                f"S = τ ÷ r = {RATIO.number(result.predicted_speedup)}. {result.reason}")
    verdict_text = "loses to" if result.predicted_speedup < 1 else "beats"
    return (
        f"**{result.variant}**: r = {RATIO.number(result.cost_ratio)} (cycle ≈ {MS.text(result.cycle_ms)}, {how}, vs "
        f"baseline step {MS.text(result.baseline_step_ms)}), τ = {ACCEPT.text(result.tokens_per_step)}, so it "
        f"{verdict_text} baseline (S = τ ÷ r = {RATIO.number(result.predicted_speedup)}). At this cycle cost it breaks "
        f"even at τ = {ACCEPT.text(result.needed_tokens_per_step)}, i.e. **{ACCEPT.number(result.needed_accepted_drafts)} "
        f"accepted drafts per step** (now {ACCEPT.number(result.tokens_per_step - 1)}). At its accept length it would "
        f"need a cycle of **≤ {MS.text(result.needed_cycle_ms)}** (r ≤ {RATIO.number(result.tokens_per_step)})."
    )


def breakdown_sentence(row: pd.Series) -> str:
    """'Communication is 95% of k2-drafter's cycle (29.08 of 30.50 ms); verify takes 30.00 ms, 97% of it communication.'"""
    text = (f"Communication is **{SHARE.text(row['communication_share'])}** of **{row['variant']}**'s "
            f"{'cycle' if row['cycle_kind'] == 'speculative' else 'decode step'} "
            f"({MS.number(row['communication_ms'])} of {MS.text(row['cycle_ms'])})")
    if pd.notna(row["verify_ms"]) and row["verify_ms"] > 0:
        text += f"; verify takes {MS.text(row['verify_ms'])}, **{SHARE.text(row['verify_comm_share'])}** of it communication"
    return text + "."


def _safe(text: Any) -> str:
    """User text with HTML neutralized: ``<`` becomes ``&lt;``, which Markdown renders as ``<``."""
    return str(text).replace("<", "&lt;")


def table_cell(text: Any) -> str:
    """Label text safe in a Markdown table cell: no HTML, no column break (the decision summary, `specdash check`)."""
    return _safe(text).replace("|", "\\|").replace("\n", " ")


def numbers_table(evidence: dict[str, Any]) -> list[str]:
    metric = METRIC_LABELS.get(evidence.get("metric", TOKENS_OVER_TIME), "")
    lines = [
        f"| variant | runs | tok/s ({metric}) | mean of runs [95% CI] | Δ vs baseline, tok/s [95% CI, Welch] | Δ % "
        "| verdict | tokens/step | accepted drafts/step | est. cycle (ms) |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for v in evidence["variants"]:
        is_base = v["variant"] == evidence.get("baseline")
        delta = EMPTY if is_base else f"{TOK_S.number(v.get('delta'), True)} {_ci(v.get('delta_low'), v.get('delta_high'), TOK_S, True)}"
        lines.append(
            f"| {table_cell(v['variant'])}{' (baseline)' if is_base else ''} | {v['runs']} | {TOK_S.number(v['headline'])} "
            f"| {TOK_S.number(v['mean_of_runs'])} {_ci(v['ci_low'], v['ci_high'])} | {delta} "
            f"| {EMPTY if is_base else PERCENT.text(v.get('delta_pct'), signed=True)} "
            f"| {v.get('verdict') or EMPTY} | {ACCEPT.number(v.get('tokens_per_step'))} "
            f"| {ACCEPT.number(v.get('accepted_drafts_per_step'))} | {MS.number(v.get('cycle_ms_est'))} |"
        )
    return lines


def break_even_lines(evidence: dict[str, Any]) -> list[str]:
    """One line per frozen break-even figure; a figure outside its domain (τ or r below 1) says why instead."""
    return [
        f"- **{table_cell(b['variant'])}**: {reason}"
        if (reason := break_even_reason(b["tokens_per_step"], b["cost_ratio"])) else
        f"- **{table_cell(b['variant'])}**: r = {RATIO.number(b['cost_ratio'])} (cycle {MS.text(b['cycle_ms'])} — "
        f"{b['cycle_source']} — vs baseline step {MS.text(b['baseline_step_ms'])}). Breaks even at τ = "
        f"{ACCEPT.text(b['needed_tokens_per_step'])}, i.e. **{ACCEPT.number(b['needed_accepted_drafts'])} accepted "
        f"drafts/step** (has {ACCEPT.number(b['tokens_per_step'] - 1)}); at its accept length it would need a cycle ≤ "
        f"{MS.text(b['needed_cycle_ms'])}."
        for b in evidence.get("break_even", [])
    ]


def comparability_lines(evidence: dict[str, Any]) -> list[str]:
    findings = [f for f in evidence.get("comparability", [])]
    if not findings:
        return ["None beyond the drafter and its speculation settings: like-for-like."]
    lines = ["| variant | setting | baseline | this | like-for-like? |", "|---|---|---|---|---|"]
    for f in findings:
        lines.append(f"| {table_cell(f['variant'])} | {table_cell(f['setting'])} | {table_cell(f['baseline'])} | {table_cell(f['this'])} "
                     f"| {'yes (' + f['kind'] + ')' if f['like_for_like'] else '**no** (' + f['kind'] + ')'} |")
    return lines


def decision_markdown(
    decision: dict[str, Any], evidence: dict[str, Any], link: str | None = None, stale_reasons: list[str] | None = None
) -> str:
    runs = sum(len(s["measured_runs"]) for s in evidence["sessions"])
    out = [
        f"# {_safe(decision['title'])}: {decision['verdict']}",
        "",
        f"**Verdict: {decision['verdict']}** — {_safe(headline(evidence))}.",
        "",
        f"Phase: {_safe(decision.get('phase') or EMPTY)} · decided {str(decision['created_at'])[:16]} UTC · evidence: "
        f"{len(evidence['sessions'])} sessions, {runs} measured runs · baseline: {_safe(evidence.get('baseline') or 'none')}",
    ]
    if stale_reasons:
        out += ["", "> ⚠ **Stale**: the evidence has changed since this decision: " + "; ".join(stale_reasons)]
    if decision.get("note_md"):
        out += ["", "## Note", "", _safe(decision["note_md"].strip())]
    out += ["", "## Numbers (frozen when decided)", "", *numbers_table(evidence)]
    short = [f"{_safe(v['variant'])} ({v['short_runs']})" for v in evidence["variants"] if v.get("short_runs")]
    if short:
        out += ["", f"Runs that stopped before max_tokens: {', '.join(short)}. Short runs skew tok/s."]
    if evidence.get("break_even"):
        out += ["", "## Break-even", "", *break_even_lines(evidence)]
    out += ["", "## Config differences from the baseline", "", *comparability_lines(evidence)]
    out += ["", "## Definitions", "", *[f"- {text}" for text in definitions.ALL]]
    out += ["", "## Evidence sessions", ""]
    out += [f"- `{s['session_id']}` {_safe(s['variant'])} · {_safe(s['phase'] or 'no phase')} · "
            f"{str(s['started_at']).replace('T', ' ')} · "
            f"{len(s['measured_runs'])} runs · file sha256 `{s['source_sha256'][:12]}`" for s in evidence["sessions"]]
    if link:
        out += ["", f"[Open this decision in specdash]({link})"]
    return "\n".join(out) + "\n"
