"""`specdash check`: has the newest benchmark of each variant regressed? For CI jobs after a benchmark.

For each variant, its newest benchmark session is compared with its own previous session and with the
baseline variant's newest session in its phase. The figures are the Compare page's: each session's headline tok/s is
Σtokens ÷ Σtime of its measured runs (``data.variant_summary`` scoped to that one session), and Δ is
``compare.welch_from_summary`` on the two headlines' own spreads (``compare.headline_spread``), so a Δ
printed here is the Δ the page shows for the same runs. Accept length τ is ``data.accept_length`` per
session (the server-log lines inside the measured runs' windows), per run from ``data.session_runs``.

The rule (docs/check.md): a comparison is a *regression* when tok/s dropped by more than ``max_drop_pct``
AND the Welch 95% interval of Δ lies below 0 (the drop is outside the noise), or when τ dropped by more
than ``max_accept_drop_pct`` (and, when both sessions have per-run τ, Welch's interval of that drop
lies below 0 too). Fewer than 2 measured runs on either side is *not enough runs*: said, never failed.
Only the comparisons with the previous session fail by default: a drafter slower than the baseline is
a finding to report, not a broken build (``fail_vs_baseline`` makes it one).

UI-free: pandas and the analysis layer only. Sessions are benchmark sessions (table ``sessions``); bench
records and server lifetimes carry one sample or log lines, not runs, and are not checked.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import pandas as pd

from dashboard.analysis import compare, data
from dashboard.analysis.definitions import ACCEPT, EMPTY, PERCENT, TOK_S, missing
from dashboard.analysis.stats import DiffCI, MeanCI, welch_diff_ci
from dashboard.analysis.summary import table_cell
from ingest.errors import SpecdashError
from ingest.storage.location import StoreRef

DEFAULT_MAX_DROP_PCT = 5.0
DEFAULT_MAX_ACCEPT_DROP_PCT = 10.0
MIN_RUNS = 2  # below this a session has no spread, so no interval can say a change is outside the noise
METRIC = compare.TOKENS_OVER_TIME  # the Compare page's default headline

REGRESSION = "regression"
OK = "ok"
NOT_ENOUGH_RUNS = "not enough runs"
ACCEPT_COLLAPSE = "collapse"
ACCEPT_UNKNOWN = "unknown"

PREVIOUS = "previous session"
BASELINE = "baseline"

# The dashboard's page paths (dashboard/app.py url_path) and the URL parameters Compare and Run read
# (dashboard/state.py: PHASES, VARIANTS, BASELINE, METRIC, SESSION). Written here because state.py imports
# Streamlit, which the analysis layer never does; tests/test_check.py holds the names to state.py's.
COMPARE_PAGE, RUN_PAGE = "compare", "run"
PHASE_PARAM, VARIANT_PARAM, BASELINE_PARAM, METRIC_PARAM, SESSION_PARAM = "phase", "variant", "baseline", "metric", "session"
NO_PHASE_LABEL = "(no phase)"  # how the pages name evidence ingested without --phase (data.IN_SCOPE)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")


class NothingToCheck(SpecdashError):
    """The store (or the phase asked for) holds no benchmark session, or the baseline named is not in it."""

    title = "Nothing to check"


@dataclass(frozen=True)
class CheckOptions:
    baseline: str | None = None  # None: the variant served without speculation (compare.default_baseline)
    phase: str | None = None  # None: every phase
    max_drop_pct: float = DEFAULT_MAX_DROP_PCT
    max_accept_drop_pct: float = DEFAULT_MAX_ACCEPT_DROP_PCT
    fail_vs_baseline: bool = False
    base_url: str | None = None  # the dashboard's address for permalinks; None: relative links, and a note


@dataclass(frozen=True)
class SessionFigures:
    """One benchmark session's headline and accept length, as the Compare page computes them."""

    session_id: str
    variant: str
    phase: str | None
    started_at: str | None
    path: str
    runs: int
    headline: float  # Σ output tokens ÷ Σ wall time of the measured runs, tok/s
    spread: MeanCI  # the headline with its estimator's sd, for Welch's Δ
    tokens_per_step: float | None  # τ, bonus token included; None without a linked server log
    run_taus: tuple[float, ...] = ()  # τ of each measured run that has one


@dataclass(frozen=True)
class AcceptChange:
    newest: float | None
    other: float | None
    change_pct: float | None
    ci: DiffCI | None  # Welch's interval of the per-run τ difference, when both sessions have 2+ per-run τ
    verdict: str  # ACCEPT_COLLAPSE, OK or ACCEPT_UNKNOWN


@dataclass(frozen=True)
class Comparison:
    """The newest session of ``variant`` against ``other`` (its previous session, or the baseline's newest in its phase)."""

    variant: str
    against: str  # PREVIOUS or BASELINE
    newest: SessionFigures
    other: SessionFigures
    delta: DiffCI  # newest − other, tok/s, Welch 95%
    delta_pct: float
    delta_pct_low: float | None
    delta_pct_high: float | None
    throughput_verdict: str  # REGRESSION, OK or NOT_ENOUGH_RUNS
    accept: AcceptChange
    fails: bool  # a regression that makes `specdash check` exit 1
    compare_link: str
    run_links: tuple[str, str]  # the newest session's Run page, the other's

    @property
    def verdict(self) -> str:
        if self.throughput_verdict == REGRESSION or self.accept.verdict == ACCEPT_COLLAPSE:
            return REGRESSION
        return self.throughput_verdict

    @property
    def against_label(self) -> str:
        return PREVIOUS if self.against == PREVIOUS else f"{self.other.variant} (baseline)"


@dataclass(frozen=True)
class CheckResult:
    options: CheckOptions
    baseline: str | None
    comparisons: list[Comparison]
    sessions: list[SessionFigures]  # every session a comparison used, oldest first
    alone: list[str] = field(default_factory=list)  # variants with one session and no baseline in its phase

    @property
    def failures(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.fails]

    @property
    def failed(self) -> bool:
        return bool(self.failures)


# --- which sessions --------------------------------------------------------------------------------

def benchmark_sessions(db: StoreRef, phase: str | None) -> pd.DataFrame:
    """The benchmark sessions in scope with measured runs, oldest first: by start time, else (no time in the file)
    ingest time."""
    found = data.sessions(db, [phase] if phase else [])
    found = found[(found["origin"] == "benchmark") & (found["n_runs"] > 0)].copy()  # runs all warm-ups: no figure
    found["order_at"] = pd.to_datetime(found["started_at"]).fillna(pd.to_datetime(found["ingested_at"]))
    return found.sort_values(["order_at", "ingested_at", "session_id"], kind="stable").reset_index(drop=True)


def newest_two(sessions: pd.DataFrame) -> dict[str, tuple[pd.Series, pd.Series | None]]:
    """variant → (its newest session, its previous one or None), in the order variants were last measured."""
    pairs: dict[str, tuple[pd.Series, pd.Series | None]] = {}
    for variant, mine in sessions.groupby("variant", sort=False):
        rows = [row for _, row in mine.iterrows()]
        pairs[str(variant)] = (rows[-1], rows[-2] if len(rows) > 1 else None)
    return pairs


def baseline_beside(sessions: pd.DataFrame, baseline: str | None, newest: pd.Series) -> pd.Series | None:
    """The baseline's newest session in the phase of ``newest``: a baseline measured in another phase (another
    server, another build) is not like-for-like, so a variant without one in its phase is not judged against it."""
    phase = newest["phase"]
    mine = sessions[(sessions["variant"] == baseline)
                    & (sessions["phase"].isna() if phase is None or pd.isna(phase) else sessions["phase"] == phase)]
    return None if mine.empty else mine.iloc[-1]


def choose_baseline(db: StoreRef, variants: list[str], asked: str | None) -> str | None:
    """``asked`` if the scope holds it (else NothingToCheck naming what it holds); else the Compare page's default."""
    if asked is not None:
        if asked not in variants:
            raise NothingToCheck(db, f"no baseline variant {asked!r} among the benchmark sessions checked", key="baseline",
                                 hint=f"pass --baseline with one of: {', '.join(variants)}")
        return asked
    return compare.default_baseline(variants, data.speculative_variants(db))


# --- the sessions' figures ------------------------------------------------------------------------

def session_figures(db: StoreRef, sessions: Sequence[pd.Series]) -> dict[str, SessionFigures]:
    """session id → its headline and accept length, read for all ``sessions`` at once (two queries, not two each)."""
    ids = list(dict.fromkeys(str(s["session_id"]) for s in sessions))
    headlines = data.session_headlines(db, ids).set_index("session_id")
    accept = data.accept_length(db, (), (), ids, by="session")
    taus = {str(sid): _number(tau) for sid, tau in zip(accept["session_id"], accept["tokens_per_step"], strict=True)}
    return {str(s["session_id"]): figures_of(db, s, headlines.loc[str(s["session_id"])], taus.get(str(s["session_id"])))
            for s in sessions}


def figures_of(db: StoreRef, session: pd.Series, headline: pd.Series, tau: float | None) -> SessionFigures:
    return SessionFigures(
        session_id=str(session["session_id"]),
        variant=str(session["variant"]),
        phase=session["phase"],
        started_at=None if missing(session["started_at"]) else str(session["started_at"]),
        path=str(session["path"]),
        runs=int(headline["n_runs"]),
        headline=float(headline[METRIC]),
        spread=compare.headline_spread(headline, METRIC),
        tokens_per_step=tau,
        run_taus=run_taus(db, str(session["session_id"])) if tau is not None else (),  # only a session with a log has them
    )


def run_taus(db: StoreRef, session_id: str) -> tuple[float, ...]:
    runs = data.session_runs(db, session_id)
    measured = runs[~runs["is_warmup"].astype(bool)]
    return tuple(float(t) for t in measured["tokens_per_step"] if not missing(t))


def _number(value: Any) -> float | None:
    return None if missing(value) else float(value)


# --- the rule --------------------------------------------------------------------------------------

def throughput_verdict(newest: SessionFigures, other: SessionFigures, delta: DiffCI, max_drop_pct: float) -> str:
    """A drop larger than ``max_drop_pct`` whose Welch interval lies wholly below 0; too few runs is said, not judged."""
    if min(newest.runs, other.runs) < MIN_RUNS or delta.high is None:
        return NOT_ENOUGH_RUNS
    dropped_pct = -delta.diff / other.headline * 100
    return REGRESSION if dropped_pct > max_drop_pct and delta.high < 0 else OK


def accept_change(newest: SessionFigures, other: SessionFigures, max_drop_pct: float) -> AcceptChange:
    """τ's change; a collapse is a drop beyond ``max_drop_pct`` that per-run τ (when both sides have it) confirms."""
    if newest.tokens_per_step is None or other.tokens_per_step is None or other.tokens_per_step <= 0:
        return AcceptChange(newest.tokens_per_step, other.tokens_per_step, None, None, ACCEPT_UNKNOWN)
    change_pct = (newest.tokens_per_step - other.tokens_per_step) / other.tokens_per_step * 100
    ci = (welch_diff_ci(newest.run_taus, other.run_taus)
          if min(len(newest.run_taus), len(other.run_taus)) >= MIN_RUNS else None)
    outside_noise = ci is None or ci.high is None or ci.high < 0
    collapsed = -change_pct > max_drop_pct and outside_noise
    return AcceptChange(newest.tokens_per_step, other.tokens_per_step, change_pct, ci, ACCEPT_COLLAPSE if collapsed else OK)


def compare_sessions(newest: SessionFigures, other: SessionFigures, against: str, options: CheckOptions,
                     baseline: str | None) -> Comparison:
    delta = compare.welch_from_summary(newest.spread, other.spread)
    verdict = throughput_verdict(newest, other, delta, options.max_drop_pct)
    accept = accept_change(newest, other, options.max_accept_drop_pct)
    regressed = verdict == REGRESSION or accept.verdict == ACCEPT_COLLAPSE
    counts = against == PREVIOUS or options.fail_vs_baseline
    return Comparison(
        variant=newest.variant, against=against, newest=newest, other=other, delta=delta,
        delta_pct=delta.diff / other.headline * 100,
        delta_pct_low=None if delta.low is None else delta.low / other.headline * 100,
        delta_pct_high=None if delta.high is None else delta.high / other.headline * 100,
        throughput_verdict=verdict, accept=accept, fails=regressed and counts,
        compare_link=compare_link(options.base_url, [newest, other], baseline),
        run_links=(run_link(options.base_url, newest.session_id), run_link(options.base_url, other.session_id)),
    )


def check(db: StoreRef, options: CheckOptions = CheckOptions()) -> CheckResult:
    """Every variant's newest session against its previous one and against the baseline's newest in its phase."""
    sessions = benchmark_sessions(db, options.phase)
    if sessions.empty:
        raise NothingToCheck(db, nothing_found(db, options.phase), key="phase" if options.phase else None,
                             hint=f"ingest a benchmark first: `specdash ingest FILE.bench.json{' --phase ' + options.phase if options.phase else ''}`")
    pairs = newest_two(sessions)
    baseline = choose_baseline(db, list(pairs), options.baseline)
    baselines = {variant: baseline_beside(sessions, baseline, newest) for variant, (newest, _) in pairs.items()
                 if baseline is not None and variant != baseline}
    compared = [s for pair in pairs.values() for s in pair if s is not None] + [s for s in baselines.values() if s is not None]
    figures = session_figures(db, list({str(s["session_id"]): s for s in compared}.values()))

    def of(session: pd.Series) -> SessionFigures:
        return figures[str(session["session_id"])]

    comparisons, alone = [], []
    for variant, (newest, previous) in pairs.items():
        if previous is not None:
            comparisons.append(compare_sessions(of(newest), of(previous), PREVIOUS, options, baseline))
        if (beside := baselines.get(variant)) is not None:
            comparisons.append(compare_sessions(of(newest), of(beside), BASELINE, options, baseline))
        elif previous is None and variant != baseline:
            alone.append(variant)
    position = {session_id: i for i, session_id in enumerate(sessions["session_id"])}
    used = sorted(figures.values(), key=lambda f: position[f.session_id])
    return CheckResult(options, baseline, comparisons, used, alone)


def nothing_found(db: StoreRef, phase: str | None) -> str:
    if phase is None:
        return "the store holds no benchmark session (runs with tokens and times)"
    phases = data.phases(db)
    return f"no benchmark session in phase {phase!r} (phases in the store: {', '.join(phases) or 'none'})"


# --- links -----------------------------------------------------------------------------------------

def page_link(base_url: str | None, page: str, params: Sequence[tuple[str, str]]) -> str:
    query = f"{page}?{urlencode(list(params))}"
    return f"{base_url.rstrip('/')}/{query}" if base_url else query


def compare_link(base_url: str | None, sessions: Sequence[SessionFigures], baseline: str | None) -> str:
    """Compare on the compared sessions' phases and variants (the baseline among them when it is one)."""
    phases = dict.fromkeys(s.phase or NO_PHASE_LABEL for s in sessions)
    variants = dict.fromkeys(s.variant for s in sessions)
    params = [(PHASE_PARAM, p) for p in phases] + [(VARIANT_PARAM, v) for v in variants]
    if baseline in variants:
        params.append((BASELINE_PARAM, baseline))
    return page_link(base_url, COMPARE_PAGE, [*params, (METRIC_PARAM, METRIC)])


def run_link(base_url: str | None, session_id: str) -> str:
    return page_link(base_url, RUN_PAGE, [(SESSION_PARAM, session_id)])


def is_local(base_url: str) -> bool:
    """A loopback or wildcard address: a link to it opens nothing on a colleague's machine."""
    return urlsplit(base_url if "://" in base_url else f"http://{base_url}").hostname in LOCAL_HOSTS


# --- the Markdown ----------------------------------------------------------------------------------

def verdict_cell(comparison: Comparison) -> str:
    if comparison.verdict != REGRESSION:
        return comparison.verdict
    return "**regression**" if comparison.fails else "slower (reported; fails with --fail-vs-baseline)"


def tau_cell(accept: AcceptChange) -> str:
    if accept.verdict == ACCEPT_UNKNOWN:
        return EMPTY if accept.newest is None and accept.other is None else \
            f"{ACCEPT.number(accept.newest)} vs {ACCEPT.number(accept.other)}"
    text = f"{ACCEPT.number(accept.newest)} vs {ACCEPT.number(accept.other)} ({PERCENT.text(accept.change_pct, signed=True)})"
    return text + (" **collapse**" if accept.verdict == ACCEPT_COLLAPSE else "")


def ci_cell(comparison: Comparison) -> str:
    if comparison.delta.low is None or comparison.delta.high is None:
        return "n/a (fewer than 2 runs)"
    return (f"[{TOK_S.number(comparison.delta.low, True)}, {TOK_S.number(comparison.delta.high, True)}] tok/s · "
            f"[{PERCENT.text(comparison.delta_pct_low, True)}, {PERCENT.text(comparison.delta_pct_high, True)}]")


def comparison_rows(comparisons: Sequence[Comparison]) -> list[str]:
    lines = ["| variant | against | newest tok/s | other tok/s | Δ % | 95% CI of Δ (Welch) | τ newest vs other | verdict |",
             "|---|---|---:|---:|---:|---|---|---|"]
    for c in comparisons:
        lines.append(
            f"| {table_cell(c.variant)} | {table_cell(c.against_label)} | {TOK_S.number(c.newest.headline)} (n = {c.newest.runs}) "
            f"| {TOK_S.number(c.other.headline)} (n = {c.other.runs}) | {PERCENT.text(c.delta_pct, signed=True)} "
            f"| {ci_cell(c)} | {tau_cell(c.accept)} | {verdict_cell(c)} |"
        )
    return lines


def headline_sentence(result: CheckResult) -> str:
    if result.failed:
        named = "; ".join(f"{c.variant} vs {c.against_label}: {PERCENT.text(c.delta_pct, signed=True)} tok/s"
                          + (f", τ {PERCENT.text(c.accept.change_pct, signed=True)}" if c.accept.verdict == ACCEPT_COLLAPSE else "")
                          for c in result.failures)
        return f"# specdash check: {len(result.failures)} regression{'s' if len(result.failures) > 1 else ''} — {named}"
    return "# specdash check: no regression"


def rule_sentence(options: CheckOptions) -> str:
    scope = "previous session and the baseline" if options.fail_vs_baseline else "previous session (vs the baseline: reported only)"
    return (f"Rule: a regression is a tok/s drop of more than {PERCENT.text(options.max_drop_pct)} whose Welch 95% CI lies "
            f"below 0, or an accept-length drop of more than {PERCENT.text(options.max_accept_drop_pct)} (confirmed by "
            f"Welch's CI when runs carry τ); it fails against the {scope}. Fewer than {MIN_RUNS} runs: not judged.")


def link_lines(result: CheckResult) -> list[str]:
    lines = []
    for c in result.comparisons:
        newest_run, other_run = c.run_links
        lines.append(f"- {table_cell(c.variant)} vs {table_cell(c.against_label)}: [Compare]({c.compare_link}) · "
                     f"runs: [newest]({newest_run}), [{'previous' if c.against == PREVIOUS else 'baseline'}]({other_run})")
    base_url = result.options.base_url
    if not base_url:
        lines.append("\nThe dashboard's address is missing, so these links are relative: pass `--base-url URL` or set "
                     "`$SPECDASH_URL` to the address your colleagues open.")
    elif is_local(base_url):
        lines.append(f"\nThe links point at {table_cell(base_url)}, a local address: only this machine can open them.")
    lines.append("\nCompare pools every session of a variant in the phase; each Run link opens exactly one compared session.")
    return lines


def markdown(result: CheckResult) -> str:
    """The check as a pull-request comment: verdict, one table, the sessions used, permalinks, the rule."""
    out = [headline_sentence(result), "", f"Baseline: {table_cell(result.baseline or 'none found (pass --baseline)')} · "
           f"phase: {table_cell(result.options.phase or 'all')} · tok/s = {compare.METRIC_LABELS[METRIC]}", ""]
    if result.comparisons:
        out += comparison_rows(result.comparisons)
    else:
        out.append("Nothing to compare: every variant has one benchmark session and there is no baseline.")
    if result.alone:
        out += ["", f"One session only and no baseline session in its phase, nothing to compare with: "
                    f"{', '.join(table_cell(v) for v in result.alone)}."]
    out += ["", rule_sentence(result.options), "", "## Sessions used", ""]
    out += [f"- `{s.session_id}` {table_cell(s.variant)} · {table_cell(s.phase or NO_PHASE_LABEL)} · "
            f"{table_cell(s.started_at or 'no start time')} · {s.runs} runs · `{table_cell(s.path)}`" for s in result.sessions]
    out += ["", "## Links", "", *link_lines(result)]
    return "\n".join(out) + "\n"


def text_summary(result: CheckResult) -> str:
    """One line for a CI log: the verdict and the failing comparisons."""
    if not result.failed:
        judged = sum(c.verdict != NOT_ENOUGH_RUNS for c in result.comparisons)
        return f"specdash check: no regression ({judged} of {len(result.comparisons)} comparisons judged)"
    return headline_sentence(result).removeprefix("# ")
