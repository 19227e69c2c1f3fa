"""Layout pieces every page shares: the store guard, the selection bar, exports, number formatting."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from dashboard import analysis, definitions, exports, queries
from dashboard.state import BASELINE, METRIC, PHASES, VARIANTS
from ingest.errors import NoStore, SpecdashError

INGEST_HINT = (
    "No data yet — ingest some files on the **Ingest** page, or from a shell: "
    "`specdash ingest path/to/bench.json path/to/server.log --phase phase-0`, or build the demo store with `specdash demo`."
)
# url_path of every page (app.py routes them); links and reports are built from these.
DEFAULT_PAGE = "compare"
PAGE_PATHS = ("compare", "breakeven", "breakdown", "run", "phases", "decisions", "ingest")
VERDICT_BADGES: dict[str, Literal["green", "red", "gray"]] = {"accepted": "green", "rejected": "red", "inconclusive": "gray"}
DELTA_STYLES = {"faster": "color: #2E7D32; font-weight: 600", "slower": "color: #C62828; font-weight: 600",
                "within noise": "color: #757575"}


def require_store(allow_empty: bool = False) -> dict[str, Any]:
    """The store's state, or guidance and a stop when there is nothing to show (never a traceback)."""
    try:
        state = queries.store_state()
    except NoStore:
        state = {"exists": False}
    except SpecdashError as error:
        st.warning(f"{error.message}. {error.hint}")
        st.stop()
    if state.get("pending_migrations"):
        st.warning(
            f"This store predates the current schema (missing: {', '.join(state['pending_migrations'])}). "
            f"Upgrade it once with `specdash status --db {queries.db_path()}`, then refresh."
        )
        st.stop()
    if not allow_empty and (not state.get("exists") or not state.get("sources")):
        st.info(INGEST_HINT)
        st.stop()
    return state


def lacking(state: dict[str, Any], needs: str, command: str) -> None:
    """Say what the store holds and what this page lacks, with the command that would fill it; then stop.

    "No data yet" is for an empty store only: a store with files gets told what is there.
    """
    kinds = state.get("kinds") or {}
    held = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    st.info(f"The store holds {state.get('sources', 0)} file(s) ({held or 'of no known kind'}), but {needs}. "
            f"To fill this page: `{command}`.")
    st.stop()


def demo_note(state: dict[str, Any]) -> None:
    if state.get("demo"):
        st.caption(
            ":material/info: **Demo data.** The K2 drafter's runs are the Phase 0 probe as recorded; baseline, "
            "from-scratch and all logs are illustrative (see `data/README.md`)."
        )


@dataclass(frozen=True)
class Selection:
    phases: list[str]
    variants: list[str]
    baseline: str | None
    metric: str


def selection_bar(store: dict[str, Any], with_metric: bool = True) -> Selection:
    """Phases, variants, baseline and headline metric: shared by Compare and Break-even, kept in the URL.

    ``store`` is the page's ``require_store()``: its ``start_phase`` (store_meta) is the default phase.
    """
    phase_options = queries.phases()
    start = store.get("start_phase")
    PHASES.seed_list(phase_options, [start] if start in phase_options else phase_options[-1:])
    columns = st.columns([2, 3, 2, 2] if with_metric else [2, 3, 2])
    columns[0].multiselect("Phases", phase_options, key=PHASES.key,
                           help="Empty = all phases. Default: the latest (the demo opens on phase-0, where its story starts).")
    phases: list[str] = st.session_state[PHASES.key]

    variant_options = queries.variants(phases)
    VARIANTS.seed_list(variant_options, variant_options)
    columns[1].multiselect("Variants", variant_options, key=VARIANTS.key)
    variants: list[str] = st.session_state[VARIANTS.key]

    BASELINE.seed_value(variants, analysis.default_baseline(variants, queries.speculative_variants()))
    columns[2].selectbox(
        "Baseline", variants, key=BASELINE.key, placeholder="pick a baseline",
        help="Deltas and break-even are against this variant. Default: the variant whose server ran without speculation.",
    )
    metric = analysis.TOKENS_OVER_TIME
    if with_metric:
        options = [analysis.TOKENS_OVER_TIME, analysis.MEAN_OF_RUNS]
        METRIC.seed_value(options, analysis.TOKENS_OVER_TIME)
        columns[3].radio("Headline tok/s", options, key=METRIC.key, format_func=analysis.METRIC_LABELS.get,
                         help="Both are shown in the table; the 95% CIs are on the mean of runs.")
        metric = st.session_state[METRIC.key]
    for param in (PHASES, VARIANTS, BASELINE, METRIC) if with_metric else (PHASES, VARIANTS, BASELINE):
        param.publish()
    return Selection(phases, variants, st.session_state[BASELINE.key], metric)


def export_buttons(frame: pd.DataFrame | Callable[[], pd.DataFrame], name: str) -> None:
    """CSV and Parquet downloads of a table, generated only when clicked (widget keys derive from ``name``).

    ``frame`` may be a loader (``queries.loader``) for a large table: the buttons' callables live as
    long as the browser session, and a loader keeps them small.
    """
    stem = exports.file_stem(name)
    table = frame if callable(frame) else lambda: frame
    left, right, _ = st.columns([1, 1, 6])
    left.download_button("CSV", data=lambda: exports.to_csv(table()), file_name=f"{stem}.csv", mime="text/csv",
                         key=f"export_{stem}_csv", on_click="ignore", icon=":material/download:", help=f"{name} as CSV")
    right.download_button("Parquet", data=lambda: exports.to_parquet(table()), file_name=f"{stem}.parquet",
                          mime="application/vnd.apache.parquet", key=f"export_{stem}_parquet", on_click="ignore",
                          icon=":material/download:", help=f"{name} as Parquet (types kept)")


def pick_row_value(table_key: str, target_key: str, values: list[str | None]) -> None:
    """A table's on_select: the clicked row's value into ``target_key`` (rows whose value is None do nothing)."""
    rows = st.session_state[table_key].selection.rows
    if rows and values[rows[0]] is not None:
        st.session_state[target_key] = values[rows[0]]


def download(label: str, make: Callable[[], str | bytes], file_name: str, mime: str, help: str) -> None:
    st.download_button(label, data=make, file_name=file_name, mime=mime, key=f"download_{label}", on_click="ignore",
                       icon=":material/download:", help=help)


def delta_style(frame: pd.DataFrame, columns: list[str]) -> pd.io.formats.style.Styler:
    """Direction-aware colour on the Δ columns: green faster, red slower, grey within noise."""

    def by_verdict(row: pd.Series) -> list[str]:
        css = DELTA_STYLES.get(row.get("verdict", ""), "")
        return [css if column in columns or column == "verdict" else "" for column in row.index]

    return frame.style.apply(by_verdict, axis=1)


SPEED_COLUMNS = ["variant", "runs", "Σtok/Σtime", "mean of runs", "95% CI", "Δ tok/s", "Δ %", "Δ 95% CI", "verdict", "speedup"]
WHY_COLUMNS = ["variant", "tokens/step", "drafts/step", "cycle ms (est.)", "short runs", "like-for-like"]


def column_help() -> dict[str, Any]:
    return {
        "variant": st.column_config.TextColumn(pinned=True),
        "runs": st.column_config.NumberColumn(help="Measured runs (warm-ups excluded)."),
        "Σtok/Σtime": st.column_config.NumberColumn(help=definitions.TOKENS_OVER_TIME + " tok/s."),
        "mean of runs": st.column_config.NumberColumn(help=definitions.MEAN_OF_RUNS),
        "95% CI": st.column_config.TextColumn(help=definitions.CI),
        "Δ tok/s": st.column_config.NumberColumn(help=definitions.DELTA),
        "Δ %": st.column_config.NumberColumn(help=definitions.DELTA),
        "Δ 95% CI": st.column_config.TextColumn(help=definitions.DELTA),
        "speedup": st.column_config.NumberColumn(help=definitions.SPEEDUP),
        "tokens/step": st.column_config.NumberColumn(help=definitions.TOKENS_PER_STEP),
        "drafts/step": st.column_config.NumberColumn("accepted drafts/step", help=definitions.ACCEPTED_DRAFTS),
        "cycle ms (est.)": st.column_config.NumberColumn(help=definitions.CYCLE_EST),
        "short runs": st.column_config.NumberColumn(help=definitions.SHORT_RUN),
        "like-for-like": st.column_config.TextColumn(help=definitions.LIKE_FOR_LIKE),
    }


def comparison_tables(shown: pd.DataFrame, keys: tuple[str, str] | None = None) -> list[int]:
    """The comparison as two tables that fit the page — speed, then why (accept length, cycle, caveats).

    With ``keys`` rows are clickable; returns the positions of the rows picked.
    """
    picked: list[int] = []
    helps = column_help()
    for index, columns in enumerate((SPEED_COLUMNS, WHY_COLUMNS)):
        part = shown[[c for c in columns if c in shown]]
        selectable: dict[str, Any] = {"key": keys[index], "on_select": "rerun", "selection_mode": "single-row"} if keys else {}
        event = st.dataframe(
            delta_style(part, ["Δ tok/s", "Δ %", "Δ 95% CI"]).format(precision=2, na_rep="—"),
            hide_index=True, width="stretch", column_config={c: helps[c] for c in part.columns if c in helps}, **selectable,
        )
        picked += selected(event, "rows") if keys else []
    return picked


def fmt(value: Any, digits: int = 1, unit: str = "") -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()


def fmt_ci(low: Any, high: Any, digits: int = 1) -> str:
    if low is None or high is None or any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return "n/a (fewer than 2 runs)"
    return f"{low:,.{digits}f} – {high:,.{digits}f}"


def selected(event: Any, part: str) -> list[Any]:
    """The selected ``points`` (charts) or ``rows`` (tables) of a widget's event; none before a click."""
    selection = (event or {}).get("selection") or {}
    return list(selection.get(part) or [])


def app_url(page: str, params: dict[str, str | list[str]]) -> str:
    """An absolute link to a page of this app with ``params``, for reports and summaries."""
    base = (st.context.url or "http://127.0.0.1:8501").rstrip("/")
    head, _, last = base.rpartition("/")
    root = head if last in PAGE_PATHS and "//" in head else base
    query = urlencode([(k, v) for k, values in params.items() for v in ([values] if isinstance(values, str) else values)])
    path = "" if page == DEFAULT_PAGE else page  # the default page lives at the app's root
    return f"{root}/{path}" + (f"?{query}" if query else "")
