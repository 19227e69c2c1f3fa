"""A decision as a Markdown summary, ready to paste into a chat or a PR. No Streamlit, no plotly.

Numbers come from the decision's frozen evidence, each with its CI and definition;
the user's note is Markdown and goes in as written, except that ``<`` is escaped in it and
in every label, so no renderer that passes raw HTML through can run what a label holds.
"""
from __future__ import annotations

from typing import Any

from dashboard import definitions
from dashboard.analysis import METRIC_LABELS, TOKENS_OVER_TIME
from dashboard.evidence import headline


def _n(value: Any, digits: int = 2, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _ci(low: Any, high: Any, digits: int = 2, signed: bool = False) -> str:
    return "n/a" if low is None or high is None else f"[{_n(low, digits, signed)}, {_n(high, digits, signed)}]"


def _safe(text: Any) -> str:
    """User text with HTML neutralized: ``<`` becomes ``&lt;``, which Markdown renders as ``<``."""
    return str(text).replace("<", "&lt;")


def _cell(text: Any) -> str:
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
        lines.append(
            f"| {_cell(v['variant'])}{' (baseline)' if is_base else ''} | {v['runs']} | {_n(v['headline'])} "
            f"| {_n(v['mean_of_runs'])} {_ci(v['ci_low'], v['ci_high'])} "
            f"| {'—' if is_base else _n(v.get('delta'), 2, True) + ' ' + _ci(v.get('delta_low'), v.get('delta_high'), 2, True)} "
            f"| {'—' if is_base or v.get('delta_pct') is None else _n(v['delta_pct'], 1, True) + '%'} "
            f"| {v.get('verdict') or '—'} | {_n(v.get('tokens_per_step'))} | {_n(v.get('accepted_drafts_per_step'))} "
            f"| {_n(v.get('cycle_ms_est'), 1)} |"
        )
    return lines


def break_even_lines(evidence: dict[str, Any]) -> list[str]:
    return [
        f"- **{_cell(b['variant'])}**: r = {b['cost_ratio']:.2f} (cycle {b['cycle_ms']:.1f} ms — {b['cycle_source']} — vs "
        f"baseline step {b['baseline_step_ms']:.1f} ms). Breaks even at τ = {b['needed_tokens_per_step']:.2f} tokens/step, "
        f"i.e. **{b['needed_accepted_drafts']:.2f} accepted drafts/step** (has {b['tokens_per_step'] - 1:.2f}); at its "
        f"accept length it would need a cycle ≤ {b['needed_cycle_ms']:.1f} ms."
        for b in evidence.get("break_even", [])
    ]


def comparability_lines(evidence: dict[str, Any]) -> list[str]:
    findings = [f for f in evidence.get("comparability", [])]
    if not findings:
        return ["None beyond the drafter and its speculation settings: like-for-like."]
    lines = ["| variant | setting | baseline | this | like-for-like? |", "|---|---|---|---|---|"]
    for f in findings:
        lines.append(f"| {_cell(f['variant'])} | {_cell(f['setting'])} | {_cell(f['baseline'])} | {_cell(f['this'])} "
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
        f"Phase: {_safe(decision.get('phase') or '—')} · decided {str(decision['created_at'])[:16]} UTC · evidence: "
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
    out += [f"- `{s['session_id']}` {_safe(s['variant'])} · {_safe(s['phase'] or 'no phase')} · {s['started_at']} · "
            f"{len(s['measured_runs'])} runs · file sha256 `{s['source_sha256'][:12]}`" for s in evidence["sessions"]]
    if link:
        out += ["", f"[Open this decision in specdash]({link})"]
    return "\n".join(out) + "\n"
