"""Random real stores through every page (issue #29, item 7): a property-based test.

Hypothesis draws 1-8 real files (the project's fixtures; with ../shared/corpus also its files), splits them
into 1-3 ``ingest_paths`` calls, each with no label, a --phase, a --variant or both, builds the store in a temp
dir and renders every page through AppTest, each of its tabs and closed sections opened (plus Run on a few sessions and Compare against a baseline). Every
view must render without an exception or error, show no None/nan/NaT as a word or cell, keep every figure inside
its invariant (tok/s > 0, tokens/step ≥ 1, rates in [0, 1] (tables: 0-100 %), CI low ≤ mean ≤ high) and never call a comparison
like-for-like when a shown variant has no server config. Files that fail to ingest are allowed.

Budget: SPECDASH_EXAMPLES sets examples per test (default 5; CI: fixed seed); SPECDASH_SHRINK=1 shrinks a
failure to a minimal store (slow: each example renders ~14 views).
"""
from __future__ import annotations

import math
import os
import re
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from dashboard.analysis import data, definitions
from ingest.pipeline import ingest_paths
from tests.conftest import CORPUS, ROOT
from tests.test_app import ALL_PAGES, every_tab, open_sections, run_page

FIXTURES = ROOT / "tests" / "fixtures"
PHASES = ("p-live", "phase-0", "phase-1")
VARIANTS = ("k2-drafter", "baseline", "from-scratch")
RUN_SESSIONS = 3  # Run page on at most this many sessions (one per origin first)
NOT_INGESTIBLE = (".source", ".expected.json", "README.md", "make_eagle_trace.py", "make_old_stores.py")

EXAMPLES = int(os.environ.get("SPECDASH_EXAMPLES", "5"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if os.environ.get("SPECDASH_SHRINK") else []),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# A gap shown as text: Python's, pandas' and numpy's names for it as whole words ("Nonet" and "nan-x" are not).
# A whole cell "null" too, except a server argument's own value (SGLang's disaggregation_mode defaults to 'null').
MISSING = re.compile(r"(?<![\w-])(None|nan|NaN|NaT|<NA>)(?![\w-])")
MISSING_CELL = re.compile(MISSING.pattern + r"|^\s*null\s*$")
CONFIG_VALUE = re.compile(r"this \(.+\)|baseline \(.+\)|value in .+|this variant|baseline")
NUMBER = r"[-−]?\d[\d,]*(?:\.\d+)?"
CI_RANGE = re.compile(rf"^\s*({NUMBER})\s*[–-]\s*({NUMBER})\s*$")


def real_files(root: Path) -> list[Path]:
    """Every file under root a user might hand to `specdash ingest`; drafter checkpoints as their folders."""
    if not root.is_dir():
        return []
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(NOT_INGESTIBLE)
             and not (p.parent.parent.name == "drafters")]  # a drafter's config/weights: its folder below
    folders = [d for d in sorted(root.rglob("*")) if d.is_dir() and d.parent.name == "drafters"]
    return files + folders


FIXTURE_FILES = real_files(FIXTURES) + [FIXTURES / "dashboard"]  # and a folder, as the issue's repro ingests one
CORPUS_FILES = real_files(CORPUS) + ([CORPUS / "logs"] if CORPUS.is_dir() else [])


# --- strategies ---------------------------------------------------------------------------------------

def labels() -> st.SearchStrategy[dict[str, str]]:
    """No label, a phase, a variant or both."""
    phase, variant = st.sampled_from(PHASES), st.sampled_from(VARIANTS)
    return st.one_of(st.just({}), st.builds(lambda p: {"phase": p}, phase), st.builds(lambda v: {"variant": v}, variant),
                     st.builds(lambda p, v: {"phase": p, "variant": v}, phase, variant))


@st.composite
def ingest_plans(draw: st.DrawFn, pool: list[Path]) -> list[tuple[list[Path], dict[str, str]]]:
    """1-8 distinct files split, in the drawn order, into 1-3 ingest calls with their labels."""
    files = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8, unique=True))
    calls = draw(st.integers(1, min(3, len(files))))
    cuts = sorted(draw(st.lists(st.integers(1, len(files) - 1), min_size=calls - 1, max_size=calls - 1, unique=True))
                  if calls > 1 else [])
    bounds = [0, *cuts, len(files)]
    return [(files[a:b], draw(labels())) for a, b in zip(bounds, bounds[1:])]


def describe(plan: list[tuple[list[Path], dict[str, str]]]) -> str:
    def name(p: Path) -> str:
        for root in (ROOT, CORPUS.parent):
            with suppress(ValueError):
                return str(p.relative_to(root))
        return str(p)
    return "\n".join(f"  ingest_paths([{', '.join(name(p) for p in paths)}], db"
                     f"{''.join(f', {k}={v!r}' for k, v in lab.items())})" for paths, lab in plan)


# --- what a page shows --------------------------------------------------------------------------------

def render(page: str, db: Path, mp: pytest.MonkeyPatch, query: dict[str, Any]) -> AppTest:
    return run_page(page, db, mp, query, check=False)  # this test names every failure of a view itself


def url(app: AppTest, name: str) -> list[str]:
    value = app.query_params.get(name)
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def shown_texts(app: AppTest) -> list[tuple[str, str]]:
    """(element kind, text) of what a person reads, raw file lines (st.code) aside."""
    out: list[tuple[str, str]] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "error", "toast"):
        with suppress(Exception):
            out += [(kind, str(e.value)) for e in getattr(app, kind)]
    out += [("expander", str(e.label)) for e in app.expander]
    out += [("tab", str(t.label)) for t in app.tabs]
    for m in app.metric:
        out += [("metric label", str(m.label)), ("metric value", str(m.value)), ("metric delta", str(m.delta or ""))]
    for kind in ("selectbox", "multiselect", "radio"):
        for w in getattr(app, kind):
            out += [(f"{kind} {w.label!r} option", str(o)) for o in (w.options or [])]
    return out


def as_number(text: str) -> float:
    return float(text.replace("−", "-").replace(",", ""))


def table_problems(frame: pd.DataFrame, placeholder: str | None, where: str) -> list[str]:
    problems: list[str] = []
    for column in frame.columns:
        values = frame[column]
        strings = values[values.map(lambda v: isinstance(v, str))]
        rule = MISSING if CONFIG_VALUE.fullmatch(str(column)) else MISSING_CELL
        bad = sorted({v for v in strings if rule.search(v)})
        if bad:
            problems.append(f"{where}: column {column!r} shows {bad[:3]}")
        if not placeholder and values.map(lambda v: v is None or (isinstance(v, float) and math.isnan(v))).any():
            problems.append(f"{where}: column {column!r} has empty cells shown as None/nan (no placeholder)")
        declared = definitions.column(str(column))
        if declared is None or declared.quantity is None or declared.signed:
            continue
        numbers = pd.to_numeric(values, errors="coerce") if not pd.api.types.is_bool_dtype(values) else values.iloc[0:0]
        numbers = numbers.dropna()
        if numbers.empty:
            continue
        q, name = declared.quantity, str(column)
        if not numbers.map(math.isfinite).all() and name != "request rate":
            problems.append(f"{where}: {column!r} holds non-finite {sorted(set(numbers[~numbers.map(math.isfinite)]))}")
        numbers = numbers[numbers.map(math.isfinite)]
        if q.name == "throughput":
            low, rule = (0.0, "≥ 0") if name == "sd" else (1e-12, "> 0")
            broken = numbers[numbers < low]
        elif q.name == "accept length":
            if "break-even" in name:
                continue  # thresholds from r, not observed figures
            low, rule = (0.0, "≥ 0") if "drafts" in name else (1.0 - 1e-9, "≥ 1")
            broken = numbers[numbers < low]
        elif q.scale == 100 and q.unit == "%":  # a share 0..1, which ui.table hands over already ×100
            rule, broken = "in [0, 100] %", numbers[(numbers < -1e-9) | (numbers > 100 + 1e-7)]
        else:
            rule, broken = "≥ 0", numbers[numbers < 0]
        if not broken.empty:
            problems.append(f"{where}: {column!r} ({q.name}) not {rule}: {sorted(set(broken))[:4]}")
    # confidence intervals: low ≤ high, low > 0 for tok/s, the mean inside
    for ci, mean in (("95% CI", "mean of runs"), ("Δ 95% CI", "Δ tok/s")):
        if ci not in frame.columns:
            continue
        for _, row in frame.iterrows():
            match = CI_RANGE.match(str(row[ci]))
            if not match:
                continue
            low, high = as_number(match[1]), as_number(match[2])
            point, n = row.get(mean), row.get("runs", row.get("n"))
            if low > high or (ci == "95% CI" and low <= 0):
                problems.append(f"{where}: impossible {ci} {row[ci]!r}")
            elif n is not None and pd.notna(n) and float(n) < 2:
                problems.append(f"{where}: {ci} {row[ci]!r} over n = {n} (an interval needs n ≥ 2)")
            elif point is not None and pd.notna(point) and not (low - 0.051 <= float(point) <= high + 0.051):
                problems.append(f"{where}: {mean} {float(point):.3f} outside its {ci} {row[ci]!r}")
    if {"Δ 95% CI", "verdict"} <= set(frame.columns):  # faster/slower: the Δ interval excludes 0; within noise: spans it
        for _, row in frame.iterrows():
            match = CI_RANGE.match(str(row["Δ 95% CI"]))
            if match:
                spans = as_number(match[1]) <= 0 <= as_number(match[2])
                if (row["verdict"] in ("faster", "slower")) == spans:
                    problems.append(f"{where}: verdict {row['verdict']!r} with Δ 95% CI {row['Δ 95% CI']!r}")
    if "requests mean CI" in frame.columns:  # "mean (low – high)"
        for cell in frame["requests mean CI"].astype(str):
            match = re.match(rf"^({NUMBER}) \(({NUMBER}) – ({NUMBER})\)$", cell)
            if match and not as_number(match[2]) <= as_number(match[1]) <= as_number(match[3]):
                problems.append(f"{where}: impossible requests mean CI {cell!r}")
    if {"95% CI low", "95% CI high"} <= set(frame.columns):
        mean_col = "mean" if "mean" in frame.columns else None
        for _, row in frame.iterrows():
            low, high = row["95% CI low"], row["95% CI high"]
            if pd.notna(low) and pd.notna(high):
                point = row[mean_col] if mean_col else None
                if low > high or (point is not None and pd.notna(point) and not low <= point <= high):
                    problems.append(f"{where}: impossible CI low {low} high {high} mean {point}")
    return problems


def text_problems(texts: list[tuple[str, str]], where: str) -> list[str]:
    problems: list[str] = []
    for kind, text in texts:
        if MISSING.search(text):
            problems.append(f"{where}: {kind} shows {MISSING.search(text)[0]!r}: {text[:160]!r}")
        if kind == "metric value":
            for value, unit in re.findall(rf"({NUMBER})\s*(tok/s|tokens/step)", text):
                if (unit == "tok/s" and as_number(value) <= 0) or (unit == "tokens/step" and as_number(value) < 1):
                    problems.append(f"{where}: metric value {text!r} out of range")
        for mean, low, high, n in re.findall(rf"mean(?: of runs)? ({NUMBER}), 95% CI ({NUMBER}) – ({NUMBER})"
                                             rf"(?: · n = (\d+))?", text):
            m, lo, hi = as_number(mean), as_number(low), as_number(high)
            if not (0 < lo <= hi and lo - 0.051 <= m <= hi + 0.051) or (n and int(n) < 2):
                problems.append(f"{where}: impossible CI in {kind}: 'mean {mean}, 95% CI {low} – {high} · n = {n}'")
        for tau in re.findall(rf"accept length ({NUMBER}) tokens/step", text):
            if as_number(tau) < 1:
                problems.append(f"{where}: accept length {tau} tokens/step < 1 in {kind}")
        for value in re.findall(rf"(?<![Δ±+\-−\d.,])({NUMBER}) tok/s", text):
            if as_number(value) < 0 and kind != "metric delta":
                problems.append(f"{where}: negative tok/s {value} in {kind}: {text[:120]!r}")
    return problems


def comparability_problems(app: AppTest, db: Path, where: str) -> list[str]:
    """No '✓ like-for-like' when a shown variant (the baseline included) has no server config."""
    if not db.exists():
        return []
    phases, variants = url(app, "phase"), url(app, "variant")
    with suppress(Exception):
        variants = variants or list(app.multiselect(key="w_variants").value)
    try:
        with_config = set(data.configs_by_variant(db, phases, variants)["variant"])
    except Exception as exc:  # noqa: BLE001 - a broken query is a finding, not a crash of the test
        return [f"{where}: data.configs_by_variant raised {type(exc).__name__}: {str(exc)[:200]}"]
    shown = set(variants)
    for table in app.dataframe:
        if "variant" in table.value.columns:
            shown |= set(table.value["variant"].dropna().astype(str))
    blind = sorted(shown - with_config)
    if not blind:
        return []
    problems = [f"{where}: comparability check {e.label!r} although {blind} have no server config"
                for e in app.expander if e.label.startswith("Comparability check") and "✓ like-for-like" in e.label]
    for table in app.dataframe:
        frame = table.value
        if {"variant", "like-for-like"} <= set(frame.columns):
            ticked = sorted(set(frame.loc[frame["like-for-like"].astype(str).str.contains("✓"), "variant"]) & set(blind))
            if ticked:
                problems.append(f"{where}: like-for-like ✓ for {ticked}, which have no server config")
    return problems


def origin(stack: list[str]) -> str:
    """The innermost frame of the project's own code in a traceback: file:function."""
    frames = re.findall(r'File "[^"]*?/((?:dashboard|ingest)/[^"]+)", line (\d+), in (\w+)', "".join(stack or []))
    return ":".join(frames[-1]) if frames else "?"


def page_problems(app: AppTest, db: Path, where: str) -> list[str]:
    problems = [f"{where}: exception {str(e.value)[:300]!r} at {origin(e.stack_trace)}" for e in app.exception]
    problems += [f"{where}: st.error {str(e.value)[:300]!r}" for e in app.error]
    problems += text_problems(shown_texts(app), where)
    for index, table in enumerate(app.dataframe):
        problems += table_problems(table.value, table.proto.placeholder, f"{where} table {index} "
                                   f"({', '.join(map(str, table.value.columns[:3]))}…)")
    if where.startswith("views/compare.py"):
        problems += comparability_problems(app, db, where)
    return problems


# --- the property -------------------------------------------------------------------------------------

def views_of(db: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Every page as it opens, Run on a few sessions (one per origin first), Compare against a baseline."""
    views: list[tuple[str, dict[str, Any]]] = [(page, {}) for page in ALL_PAGES]
    problems: list[str] = []
    if not db.exists():  # every file failed to ingest: the pages still open, on no store
        return views, problems
    try:
        sessions = data.sessions(db)
        firsts = sessions.groupby("origin", sort=False)["session_id"].first().tolist()
        rest = [s for s in sessions["session_id"] if s not in firsts]
        views += [("views/run.py", {"session": s}) for s in (firsts + rest)[:RUN_SESSIONS]]
        variants = data.variants(db, [])
        speculative = data.speculative_variants(db)
        plain = [v for v in variants if speculative.get(v) is False]
        if variants:
            baseline = (plain or variants)[0]
            views.append(("views/compare.py", {"baseline": baseline}))
            views.append(("views/compare.py", {"phase": data.phases(db), "variant": variants, "baseline": baseline}))
    except Exception as exc:  # noqa: BLE001
        problems.append(f"listing sessions/variants raised {type(exc).__name__}: {str(exc)[:300]}")
    return views, problems


def explore(plan: list[tuple[list[Path], dict[str, str]]]) -> list[str]:
    """Build the store the plan describes, render every view; what a person would see wrong."""
    with tempfile.TemporaryDirectory(prefix="real-store-") as tmp, pytest.MonkeyPatch.context() as mp:
        db = Path(tmp) / "store.duckdb"
        for paths, lab in plan:
            ingest_paths(paths, db, **lab)  # reports may say failed (start-up-only logs): the pages must still show
        views, problems = views_of(db)
        for page, query in views:
            where = f"{page} {query}" if query else page
            try:
                for tab, app in every_tab(open_sections(render(page, db, mp, query))):  # what a click opens too
                    problems += page_problems(app, db, f"{where} {tab}".strip())
            except Exception as exc:  # noqa: BLE001 - AppTest timeouts, an exception after a click, and the like
                problems.append(f"{where}: AppTest raised {type(exc).__name__}: {str(exc)[:300]}")
        return problems


def check(plan: list[tuple[list[Path], dict[str, str]]]) -> None:
    problems = explore(plan)
    assert not problems, "store built by\n" + describe(plan) + "\nshows:\n" + "\n".join(dict.fromkeys(problems))


# The issue's repro: a folder ingested without --phase, then one log with --phase p-live; open Run.
ISSUE_REPRO = [([FIXTURES / "dashboard"], {}), ([FIXTURES / "logs" / "sglang-eagle3-basic.log"], {"phase": "p-live"})]
# Found by this test: runs of unknown max_tokens beside runs of known ones (a nullable boolean column:
# Compare's chart failed on 'boolean value of NA'); a cycle-timing file naming no variant (NULL labels).
FOUND_NA_MAX_TOKENS = [
    ([FIXTURES / "sweeps" / "user-sweep-table.md", FIXTURES / "logs" / "vllm-v1-eagle3-2025.log"], {"variant": "k2-drafter"}),
    ([FIXTURES / "traces" / "merged-eagle.trace.json.gz", FIXTURES / "traces" / "cycle-timing-bad.csv"],
     {"phase": "phase-0", "variant": "from-scratch"}),
    ([FIXTURES / "bench_json" / "adhoc_list.json"], {"phase": "p-live", "variant": "k2-drafter"}),
]
FOUND_UNLABELLED_TIMING = [([FIXTURES / "traces" / "cycle-timing-baseline.tsv", FIXTURES / "traces" / "cycle-timing.csv"], {})]


@SETTINGS
@given(plan=ingest_plans(FIXTURE_FILES))
@example(plan=ISSUE_REPRO)
@example(plan=FOUND_NA_MAX_TOKENS)
@example(plan=FOUND_UNLABELLED_TIMING)
def test_random_stores_of_the_projects_fixtures_show_every_page(plan: list[tuple[list[Path], dict[str, str]]]) -> None:
    check(plan)


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")
@SETTINGS
@given(plan=ingest_plans(CORPUS_FILES + FIXTURE_FILES))
def test_random_stores_of_real_files_show_every_page(plan: list[tuple[list[Path], dict[str, str]]]) -> None:
    check(plan)
