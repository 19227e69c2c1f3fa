"""A decision's evidence: the numbers of its sessions, computed as the Compare page does, frozen as JSON.

No Streamlit: the CLI (``specdash decide``) and the demo builder call this too.
``compute_evidence`` reads the store through ``dashboard.analysis.data`` and reduces with
``dashboard.analysis.compare``; ``check_decision`` recomputes it to tell whether a decision is stale: equal
hashes (``ingest.storage.decisions.evidence_hash``) settle it at once; otherwise the two
are compared value by value, numbers within a relative 1e-6 (sums computed in
parallel by DuckDB can differ in their last bits from one run to the next).
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dashboard.analysis import compare, data
from dashboard.analysis.definitions import ACCEPT, COUNT, PERCENT, TOK_S
from ingest.errors import DecisionError
from ingest.storage.decisions import evidence_hash, normalized
from ingest.storage.location import StoreRef

SCHEMA = "specdash.evidence/1"
TOLERANCE = 1e-6  # relative: a number that moved less than this has not changed
VARIANT_FIELDS = ("runs", "sessions", "headline", "tokens_over_time", "mean_of_runs", "ci_low", "ci_high", "sd",
                  "short_runs", "delta", "delta_pct", "delta_low", "delta_high", "delta_pct_low", "delta_pct_high",
                  "verdict", "speedup", "tokens_per_step", "accepted_drafts_per_step", "log_lines", "cycle_ms_est")


class NoEvidence(DecisionError):
    """None of the given sessions has measured runs in the store."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)


def _records(frame: pd.DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for _, row in frame.iterrows():
        out.append({column: _plain(row.get(column)) for column in columns})
    return out


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "item"):
        return value.item()
    return value


def session_records(db: StoreRef, session_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Each session's identity and its measured runs, so new runs or a changed file change the hash."""
    sessions = data.sessions(db, (), (), session_ids)
    runs = data.runs(db, (), (), session_ids)
    out = []
    for _, session in sessions.sort_values("session_id").iterrows():
        mine = runs[(runs["session_id"] == session["session_id"]) & ~runs["is_warmup"]]
        out.append({
            "session_id": session["session_id"],
            "variant": session["variant"],
            "phase": session["phase"],
            "started_at": _plain(session["started_at"]),
            "source_sha256": session["sha256"],
            "source_path": session["path"],
            "max_tokens": _plain(session["max_tokens"]),
            "measured_runs": [[int(r.run_index), _plain(r.output_tokens), _plain(r.duration_s), _plain(r.hit_max_tokens)]
                              for r in mine.itertuples()],
            "warmup_runs": int((runs["session_id"] == session["session_id"]).sum() - len(mine)),
        })
    return out


def compute_evidence(
    db: StoreRef, session_ids: Sequence[str], baseline: str | None = None, metric: str = compare.TOKENS_OVER_TIME
) -> dict[str, Any]:
    """The evidence numbers of these sessions: per variant means, CIs, Δ vs baseline, accept length, break-even."""
    if not session_ids:  # an empty scope means every session to the readers: evidence is of chosen sessions only
        raise NoEvidence("no evidence sessions were given")
    summary = data.variant_summary(db, (), (), session_ids)
    if summary.empty:
        raise NoEvidence("none of these sessions has throughput figures in the store (benchmark runs, bench records "
                         "or server-log lines)")
    variants = summary["variant"].tolist()
    if baseline not in variants:
        baseline = compare.default_baseline(variants, data.speculative_variants(db))
    accept = data.accept_length(db, (), (), session_ids)
    configs = data.configs_by_variant(db, (), (), session_ids)
    phases = sorted({p for ps in summary["phases"] for p in (ps if ps is not None else [])})
    comparison = compare.with_methods(compare.compare_variants(summary, accept, baseline, metric), configs)
    measured = data.measured_cycles(db, phases, variants)
    return normalized({
        "schema": SCHEMA,
        "metric": metric,
        "baseline": baseline,
        "phases": phases,
        "sessions": session_records(db, session_ids),
        "variants": [{"variant": row["variant"], **{f: _plain(row.get(f)) for f in VARIANT_FIELDS}}
                     for _, row in comparison.iterrows()],
        "break_even": [
            {"variant": b.variant, "tokens_per_step": b.tokens_per_step, "cycle_ms": b.cycle_ms,
             "cycle_source": b.cycle_source, "estimated_cycle_ms": b.estimated_cycle_ms, "baseline_step_ms": b.baseline_step_ms,
             "baseline_step_source": b.baseline_step_source, "cost_ratio": b.cost_ratio,
             "predicted_speedup": b.predicted_speedup, "needed_tokens_per_step": b.needed_tokens_per_step,
             "needed_accepted_drafts": b.needed_accepted_drafts, "needed_cycle_ms": b.needed_cycle_ms}
            for b in compare.break_even(comparison, measured, baseline)
        ],
        "comparability": sorted(compare.comparability(configs, summary, accept, baseline),
                                key=lambda f: (f["variant"], f["setting"])),
    })


def frozen(decision: pd.Series | dict[str, Any]) -> dict[str, Any]:
    return json.loads(decision["evidence"])


@dataclass
class Check:
    """Whether a decision's evidence still matches the store, and what changed if not."""

    stale: bool
    reasons: list[str] = field(default_factory=list)
    current: dict[str, Any] | None = None


def check_decision(db: StoreRef, decision: pd.Series | dict[str, Any]) -> Check:
    then = frozen(decision)
    session_ids = json.loads(decision["session_ids"])
    present = set(data.sessions(db, (), (), session_ids)["session_id"])
    missing = [s for s in session_ids if s not in present]
    try:
        now = compute_evidence(db, [s for s in session_ids if s in present], then.get("baseline"),
                               then.get("metric", compare.TOKENS_OVER_TIME))
    except NoEvidence:
        return Check(True, [f"none of its {len(session_ids)} evidence sessions is in the store any more"])
    if not missing and (evidence_hash(now) == decision["evidence_hash"] or equivalent(then, now)):
        return Check(False, [], now)
    reasons = [f"session {s} is no longer in the store (file removed or re-ingested with other bytes)" for s in missing]
    headline_changes = what_changed(then, now)
    reasons += headline_changes + findings_changed(then, now) + parts_changed(then, now, headlines_named=bool(headline_changes))
    return Check(True, reasons or [UNNAMED_CHANGE], now)


# Parts of the evidence beside the headline numbers (what_changed) and the like-for-like findings (findings_changed),
# named when they alone differ: a log linked since adds accept lengths and a measured cycle, not a new tok/s.
EVIDENCE_PARTS = {
    "break_even": "the break-even estimate (accept length, cycle and baseline step times)",
    "phases": "the phases the sessions belong to",
    "baseline": "the baseline",
}
# Also covered by what_changed's per-variant and per-session lines; named only when those found nothing.
HEADLINE_PARTS = {
    "variants": "a variant's figures beside its headline (spread, CI, accepted drafts, method)",
    "sessions": "the sessions' files or labels",
}
UNNAMED_CHANGE = ("today's computation of the evidence differs from the frozen one in a detail none of these checks "
                  "names (a newer specdash may compute it differently)")


def parts_changed(then: dict[str, Any], now: dict[str, Any], *, headlines_named: bool) -> list[str]:
    parts = {**EVIDENCE_PARTS, **({} if headlines_named else HEADLINE_PARTS)}
    return [f"{label} changed" for key, label in parts.items() if not equivalent(then.get(key), now.get(key))]


def findings_changed(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Like-for-like findings (compare.comparability) that appeared, went or changed since the decision."""
    def keyed(evidence: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        # .get: evidence frozen by an earlier specdash may lack a field a finding has today
        return {(str(f.get("variant")), str(f.get("setting"))): f for f in evidence.get("comparability", [])}

    before, after = keyed(then), keyed(now)
    changes = []
    for variant, setting in sorted(set(before) | set(after)):
        was, found = before.get((variant, setting)), after.get((variant, setting))
        if was is None and found is not None:
            changes.append(f"{variant}: {setting} newly flagged (baseline {found.get('baseline')}, this {found.get('this')})")
        elif was is not None and found is None:
            changes.append(f"{variant}: {setting} no longer flagged (then: baseline {was.get('baseline')}, this {was.get('this')})")
        elif was is not None and found is not None and not equivalent(was, found):
            moved = [f"{side} {was.get(side)} → {found.get(side)}" for side in ("baseline", "this") if was.get(side) != found.get(side)]
            if was.get("like_for_like") != found.get("like_for_like"):
                moved.append(f"like-for-like {yes_no(was.get('like_for_like'))} → {yes_no(found.get('like_for_like'))}")
            changes.append(f"{variant}: {setting}: {', '.join(moved) or 'its kind changed'}")
    return changes


def yes_no(flag: Any) -> str:
    return "yes" if flag else "no" if flag is not None else "unknown"


def equivalent(a: Any, b: Any, rel: float = TOLERANCE) -> bool:
    """Same structure and values, numbers equal within ``rel``: parallel sums in SQL differ in their last bits."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(equivalent(a[k], b[k], rel) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(equivalent(x, y, rel) for x, y in zip(a, b, strict=True))
        return a == b
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel)


def what_changed(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Human-readable differences in the headline numbers, per variant."""
    # Δ too: a decision frozen when Δ was on the mean of runs under a Σtok/Σtime headline (before issue #30) reads
    # "Δ tok/s -30.1 → -30.2", not an unexplained change.
    labels = {"runs": ("measured runs", COUNT), "headline": ("tok/s", TOK_S), "delta": ("Δ tok/s", TOK_S),
              "tokens_per_step": ("tokens/step", ACCEPT), "short_runs": ("short runs", COUNT)}
    before = {v["variant"]: v for v in then.get("variants", [])}
    after = {v["variant"]: v for v in now.get("variants", [])}
    changes = []
    for variant in sorted(set(before) | set(after)):
        if variant not in after:
            changes.append(f"{variant}: no longer among the evidence")
            continue
        if variant not in before:
            changes.append(f"{variant}: new in the evidence")
            continue
        for key, (label, quantity) in labels.items():
            shown = quantity.number(before[variant].get(key)), quantity.number(after[variant].get(key))
            if shown[0] != shown[1]:  # as people read them: "-22.0 → -22.0" would tell them nothing
                changes.append(f"{variant}: {label} {shown[0]} → {shown[1]}")
    runs_then = {s["session_id"]: s["measured_runs"] for s in then.get("sessions", [])}
    for session in now.get("sessions", []):
        if session["session_id"] in runs_then and runs_then[session["session_id"]] != session["measured_runs"]:
            changes.append(f"session {session['session_id']}: its runs changed")
    return changes


def headline(evidence: dict[str, Any]) -> str:
    """'k2-drafter 51.8 vs baseline 82.0 tok/s (−36.8%)' for each non-baseline variant."""
    base = next((v for v in evidence["variants"] if v["variant"] == evidence.get("baseline")), None)
    parts = []
    for v in evidence["variants"]:
        if base is None or v is base:
            continue
        pct = f" ({PERCENT.text(v['delta_pct'], signed=True)}, {v['verdict']})" if v.get("delta_pct") is not None else ""
        parts.append(f"{v['variant']} {TOK_S.number(v['headline'])} vs {base['variant']} {TOK_S.text(base['headline'])}{pct}")
    if not parts:
        parts = [f"{v['variant']} {TOK_S.text(v['headline'])}" for v in evidence["variants"]]
    return "; ".join(parts)


def evidence_frames(evidence: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The frozen evidence as the frames the chart builders take: comparison, runs, break-even points."""
    comparison = pd.DataFrame(evidence["variants"])
    comparison["is_baseline"] = comparison["variant"] == evidence.get("baseline")
    runs = pd.DataFrame(
        [
            {"variant": s["variant"], "session_id": s["session_id"], "run_index": r[0], "is_warmup": False,
             "output_tokens": r[1], "duration_s": r[2], "tok_per_s": r[1] / r[2] if r[1] and r[2] else None,
             "hit_max_tokens": r[3], "max_tokens": s.get("max_tokens")}
            for s in evidence["sessions"] for r in s["measured_runs"]
        ],
        columns=["variant", "session_id", "run_index", "is_warmup", "output_tokens", "duration_s", "tok_per_s",
                 "hit_max_tokens", "max_tokens"],
    )
    points = [{"label": f"{b['variant']}", "variant": b["variant"], "tokens_per_step": b["tokens_per_step"],
               "cost_ratio": b["cost_ratio"], "source": b["cycle_source"]} for b in evidence.get("break_even", [])]
    if points and evidence.get("baseline"):
        points.insert(0, {"label": evidence["baseline"], "variant": evidence["baseline"], "tokens_per_step": 1.0,
                          "cost_ratio": 1.0, "source": "baseline: one token per step by definition"})
    return comparison, runs, pd.DataFrame(points, columns=["label", "variant", "tokens_per_step", "cost_ratio", "source"])
