"""Layout pieces every page shares: the store guard, the selection bar, tables shown as definitions.py declares, exports."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from dashboard import queries, variant_ui
from dashboard.analysis import compare, definitions, exports, frames
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


def opening_phase(store: dict[str, Any], phase_options: list[str]) -> str:
    """The store's start phase (the demo's phase-0), else the newest phase with a tok/s figure, else the newest."""
    if store.get("start_phase") in phase_options:
        return str(store["start_phase"])
    with_throughput = queries.throughput_phases()
    return (with_throughput or phase_options)[-1]


def selection_bar(store: dict[str, Any], with_metric: bool = True, with_origins: bool = True) -> Selection:
    """Phases, variants, baseline and headline metric: shared by Compare and Break-even, kept in the URL.

    ``store`` is the page's ``require_store()``: its ``start_phase`` (store_meta) is the default phase.
    """
    phase_options = queries.phases()
    PHASES.seed_list(phase_options, [opening_phase(store, phase_options)] if phase_options else [])
    columns = st.columns([2, 5, 2])  # the variants get room for their chips; the headline choice goes below
    columns[0].multiselect("Phases", phase_options, key=PHASES.key,
                           help="Empty = all phases. Default: the newest phase with a tok/s figure; (no phase) holds evidence ingested "
                                "without --phase (the demo opens on phase-0, where its story starts).")
    phases: list[str] = st.session_state[PHASES.key]

    variant_options = queries.variants(phases)
    VARIANTS.seed_list(variant_options, variant_options)
    columns[1].multiselect("Variants", variant_options, key=VARIANTS.key)
    variants: list[str] = st.session_state[VARIANTS.key]

    BASELINE.seed_value(variants, compare.default_baseline(variants, queries.speculative_variants()))
    columns[2].selectbox(
        "Baseline", variants, key=BASELINE.key, placeholder="pick a baseline",
        help="Deltas and break-even are against this variant. Default: the variant whose server ran without speculation.",
    )
    metric = compare.TOKENS_OVER_TIME
    if with_metric:
        options = [compare.TOKENS_OVER_TIME, compare.MEAN_OF_RUNS]
        METRIC.seed_value(options, compare.TOKENS_OVER_TIME)
        st.radio("Headline tok/s", options, key=METRIC.key, format_func=compare.METRIC_LABELS.get, horizontal=True,
                 help="Both are shown in the table; the 95% CIs are on the mean of runs.")
        metric = st.session_state[METRIC.key]
    VARIANTS.publish(every=variant_options)
    for param in (PHASES, BASELINE, METRIC) if with_metric else (PHASES, BASELINE):
        param.publish()
    if with_origins:
        variant_ui.origins_note(phases, variants)
    return Selection(phases, variants, st.session_state[BASELINE.key], metric)


def export_buttons(frame: pd.DataFrame | Callable[[], pd.DataFrame], name: str) -> None:
    """CSV and Parquet downloads of a table, generated only when clicked (widget keys derive from ``name``).

    ``frame`` may be a loader (``queries.loader``) for a large table: the buttons' callables live as
    long as the browser session, and a loader keeps them small.
    """
    stem = exports.file_stem(name)
    table = frame if callable(frame) else lambda: frame
    row = st.container(horizontal=True)  # buttons as wide as their labels, side by side
    row.download_button("CSV", data=lambda: exports.to_csv(table()), file_name=f"{stem}.csv", mime="text/csv",
                        key=f"export_{stem}_csv", on_click="ignore", icon=":material/download:", help=f"{name} as CSV")
    row.download_button("Parquet", data=lambda: exports.to_parquet(table()), file_name=f"{stem}.parquet",
                        mime="application/vnd.apache.parquet", key=f"export_{stem}_parquet", on_click="ignore",
                        icon=":material/download:", help=f"{name} as Parquet (types kept, full precision)")


def upload_outcome(statuses: list[str]) -> str:
    """What happened to the uploaded files, each outcome counted: '2 file(s): 1 ingested (new), 1 already in …'."""
    counts = {status: statuses.count(status) for status in ("loaded", "already ingested", "skipped", "failed")}
    parts = [f"{counts['loaded']} ingested (new)", f"{counts['already ingested']} already in the store (same content: unchanged)"]
    if counts["skipped"]:
        parts.append(f"{counts['skipped']} skipped (not experiment data)")
    if counts["failed"]:
        parts.append(f"{counts['failed']} failed (the store is unchanged for those)")
    return f"{len(statuses)} file(s): " + ", ".join(parts) + "."


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


SPEED_COLUMNS = ["variant", "runs", "Σtok/Σtime", "mean of runs", "95% CI", "Δ tok/s", "Δ %", "Δ 95% CI", "verdict"]
# With variant names long enough to wrap, the speed table's nine columns overflowed the page at 1280 px (by 155 px on
# the shared corpus's four "unlabelled: …" groups): it is shown in two, the headline and its spread, then the Δ.
HEADLINE_COLUMNS, DELTA_COLUMNS = SPEED_COLUMNS[:5], ["variant", *SPEED_COLUMNS[5:]]
WHY_COLUMNS = ["variant", "method", "speedup", "tokens/step", "drafts/step", "cycle ms (est.)", "short runs", "like-for-like"]
LONG_TEXT = 28  # characters: a text column holding longer values gets a fixed width and wraps (``lines`` > 1)
# Rows tall enough for wrapped text: a long cell (a path, a sentence) wraps instead of widening its column.
ROW_HEIGHTS = {1: None, 2: 70, 3: 90}  # Streamlit wraps text from 70 px rows on
SHOWN_WHOLE_UP_TO = 12  # rows: a table this short shows every row; a longer one scrolls inside ten rows' height


def long_text(values: pd.Series) -> bool:
    return bool(values.map(lambda v: isinstance(v, str) and len(v) > LONG_TEXT).any())


def wrap_width(label: str) -> int:
    """A wrapping column's width: the declared text width, or its label's if that is wider (a header is never cut)."""
    needed = len(label) * definitions.HEADER_CHAR_PX + definitions.HEADER_PADDING_PX
    return int(min(max(definitions.TEXT_WIDTH, needed), 2 * definitions.TEXT_WIDTH))


def column_config(frame: pd.DataFrame, wrap: bool = False) -> dict[str, Any]:
    """Every column as ``definitions.COLUMNS`` declares it: label with unit, help, number format, width.

    With ``wrap``, a text column of long values gets a fixed width, so its rows wrap instead of widening it.
    """
    config: dict[str, Any] = {}
    for name in frame.columns:
        declared = definitions.column(str(name)) or definitions.Column(str(name), "")
        width = declared.width or (wrap_width(declared.label) if wrap and declared.quantity is None and long_text(frame[name])
                                   else None)
        common: dict[str, Any] = {"label": declared.label, "help": declared.help or None, "width": width}
        dtype = frame[name].dtype
        if pd.api.types.is_bool_dtype(dtype):
            config[name] = st.column_config.CheckboxColumn(**common)
        elif pd.api.types.is_datetime64_any_dtype(dtype):
            config[name] = st.column_config.DatetimeColumn(**common, format=definitions.TIME_COLUMN)
        elif declared.quantity is not None:
            config[name] = st.column_config.NumberColumn(**common, format=declared.quantity.printf(declared.signed))
        else:
            config[name] = st.column_config.TextColumn(**common)
    return config


def shown_values(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as its columns display it: shares ×100 (their format adds the %); everything else untouched."""
    scaled = {name: declared.quantity.shown(frame[name]) for name in frame.columns
              if (declared := definitions.column(str(name))) is not None and declared.quantity is not None
              and declared.quantity.scale != 1}
    return frame.assign(**scaled) if scaled else frame


def table(
    frame: pd.DataFrame, *, key: str | None = None, on_select: Any = "rerun", lines: int = 1,
    style: Callable[[pd.DataFrame], Any] | None = None,
) -> Any:
    """A table as every page shows one: declared labels, help and formats, "—" for gaps, no index.

    ``key`` makes rows selectable (single row; ``on_select`` as st.dataframe takes it). ``lines`` > 1
    gives rows room to wrap long text. ``style`` colours cells (a Styler from the shown frame); the
    column formats still decide how numbers read.
    """
    shown = shown_values(frame)
    wraps = lines > 1 and any(long_text(frame[name]) for name in frame.columns)  # tall rows only where text is long
    selectable: dict[str, Any] = {"key": key, "on_select": on_select, "selection_mode": "single-row"} if key else {}
    return st.dataframe(
        style(shown) if style else shown, hide_index=True, width="stretch", placeholder=definitions.EMPTY,
        height="content" if len(frame) <= SHOWN_WHOLE_UP_TO else "auto",
        column_config=column_config(frame, wrap=wraps), row_height=ROW_HEIGHTS.get(lines) if wraps else None, **selectable,
    )


def comparison_tables(shown: pd.DataFrame, downloads: tuple[pd.DataFrame, pd.DataFrame], name: str,
                      keys: tuple[str, str] | None = None) -> list[int]:
    """The comparison as tables that fit the page — speed, then why (accept length, cycle, caveats) —
    each with its downloads (``downloads``: ``frames.comparison_exports``, named ``name``-speed and ``name``-why).
    With long variant names the speed table is two (``HEADLINE_COLUMNS``, ``DELTA_COLUMNS``; ``name``-delta).

    With ``keys`` (the speed table's, the why table's) rows are clickable; returns the positions of the rows picked.
    """
    speed, why = downloads
    long_names = long_text(shown["variant"])
    parts: list[tuple[list[str], pd.DataFrame, str, int | None]] = [(SPEED_COLUMNS, speed, "speed", 0)]
    if long_names:
        headline, delta = frames.speed_halves(speed)
        parts = [(HEADLINE_COLUMNS, headline, "speed", 0), (DELTA_COLUMNS, delta, "delta", None)]
    parts.append((WHY_COLUMNS, why, "why", 1))
    picked: list[int] = []
    for columns, download, part_name, key_index in parts:
        part = shown[[c for c in columns if c in shown]]
        key = keys[key_index] if keys and key_index is not None else None
        event = table(part, key=key, lines=2 if long_names else 1,
                      style=lambda frame: delta_style(frame, ["Δ tok/s", "Δ %", "Δ 95% CI"]))
        export_buttons(download, f"{name}-{part_name}")
        picked += selected(event, "rows") if key else []
    return picked


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
