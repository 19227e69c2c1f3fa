"""Page state that lives in the URL, so a copied link reopens the same view; every key declared once.

A widget takes its value from the URL when the URL changed from outside (a
pasted permalink, a link from another page), else keeps what the user picked. After
it renders, its value is written back to the URL and remembered in the session, so
navigating through the sidebar (which drops the URL's parameters) keeps the view.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

TRUE, FALSE = "1", "0"
MISSING_OPTIONS_SHOWN = 6  # a stale link's warning lists this many valid values


@dataclass(frozen=True)
class Param:
    url: str  # query parameter name
    key: str  # st.session_state key of the widget

    @property
    def memory_key(self) -> str:
        return f"published_{self.url}"

    def url_list(self) -> list[str]:
        return st.query_params.get_all(self.url)

    def url_value(self) -> str | None:
        return st.query_params.get(self.url)

    def remembered(self) -> list[str] | str | None:
        return st.session_state.get(self.memory_key)

    def _changed_outside(self, from_url: list[str] | str | None) -> bool:
        """The URL names a value the app did not publish: a permalink or a link from another page."""
        return bool(from_url) and from_url != self.remembered()

    def seed_list(self, options: list[str], default: list[str]) -> None:
        """Initialise a multiselect: URL (unknown values dropped), else what was picked, else ``default``."""
        from_url = self.url_list()
        if self._changed_outside(from_url) or self.key not in st.session_state:
            remembered = self.remembered()
            wanted = from_url or (remembered if isinstance(remembered, list) else None) or default
            st.session_state[self.key] = [v for v in wanted if v in options] or [v for v in default if v in options]
            self._say_missing([v for v in from_url if v not in options], options, st.session_state[self.key])
        else:
            st.session_state[self.key] = [v for v in st.session_state[self.key] if v in options]

    def seed_value(self, options: list[str], default: str | None) -> None:
        from_url = self.url_value()
        current = st.session_state.get(self.key)
        if self._changed_outside(from_url) or self.key not in st.session_state or current not in options:
            remembered = self.remembered()
            chosen = next((c for c in (from_url, remembered if isinstance(remembered, str) else None, default)
                           if c in options), default)
            st.session_state[self.key] = chosen
            if self._changed_outside(from_url) and from_url not in options:
                self._say_missing([str(from_url)], options, [] if chosen is None else [chosen])

    def _say_missing(self, names: list[str], options: list[str], shown: list[str]) -> None:
        """A link that names what this store does not hold says so, and what opens instead (never silently)."""
        if not names:
            return
        valid = ", ".join(f"`{o}`" for o in options[:MISSING_OPTIONS_SHOWN])
        more = f" (+{len(options) - MISSING_OPTIONS_SHOWN} more)" if len(options) > MISSING_OPTIONS_SHOWN else ""
        instead = f"showing {', '.join(f'`{v}`' for v in shown)} instead" if shown else "nothing to show instead"
        st.warning(f"This link's {self.url} {', '.join(f'`{n}`' for n in names)} is not in this store: {instead}. "
                   f"Valid: {valid or 'none yet'}{more}.", icon=":material/link_off:")

    def seed_bool(self, default: bool) -> None:
        from_url = self.url_value()
        if self._changed_outside(from_url) or self.key not in st.session_state:
            remembered = self.remembered()
            raw = from_url if from_url in (TRUE, FALSE) else remembered if remembered in (TRUE, FALSE) else None
            st.session_state[self.key] = default if raw is None else raw == TRUE

    def seed_text(self, default: str = "") -> None:
        from_url = self.url_value()
        if self._changed_outside(from_url) or self.key not in st.session_state:
            remembered = self.remembered()
            st.session_state[self.key] = from_url or (remembered if isinstance(remembered, str) else None) or default

    def publish(self, every: list[str] | None = None) -> None:
        """Write the widget's value to the URL and remember it for this session's other pages.

        A multiselect holding ``every`` option is left out of the URL (a link without it opens every option, as
        the page does by default), so a store of 39 variants keeps a short link. It is still remembered as the
        list it is: a variant ingested later is offered, not selected behind the user's back.
        """
        value = st.session_state.get(self.key)
        if isinstance(value, bool):
            value = TRUE if value else FALSE
        if value is None or value == [] or value == "":
            st.query_params.pop(self.url, None)
            st.session_state[self.memory_key] = None
            return
        st.session_state[self.memory_key] = list(value) if isinstance(value, list) else str(value)
        if every is not None and isinstance(value, list) and len(value) > 1 and set(value) == set(every):
            st.query_params.pop(self.url, None)
        else:
            st.query_params[self.url] = value

    def link_value(self) -> str | list[str] | None:
        """What to put in a link to another page: the URL's value, else the last published one."""
        values = self.url_list() or self.remembered()
        if isinstance(values, list):
            return None if not values else values if len(values) > 1 else values[0]
        return values


# URL parameters: the selection shared by pages, then each page's own.
PHASES = Param("phase", "w_phases")
VARIANTS = Param("variant", "w_variants")
BASELINE = Param("baseline", "w_baseline")
METRIC = Param("metric", "w_metric")
SESSION = Param("session", "w_session")
RUN = Param("run", "w_run")
DIFF_ONLY = Param("diff_only", "w_diff_only")
LOG_SEARCH = Param("q", "w_log_search")
DECISION = Param("decision", "w_decision")
AS_OF = Param("as_of", "w_as_of")  # Run: a lake's snapshot to read the store as of
# The Acceptance page's own variant choice: kept apart from VARIANTS, which Compare and Break-even share.
ACCEPTANCE_VARIANTS = Param("acceptance_variant", "acceptance_variants")

SHARED = (PHASES, VARIANTS, BASELINE, METRIC)


class Keys:
    """Session-state keys of widgets whose value does not belong in the URL, and of the app's own memory."""

    change_id = "store_change_id"  # (db, last_change) read by this rerun's store guard
    as_of = "store_as_of"  # the lake snapshot this rerun's readers read (queries.read_as_of), None: now

    compare_points = "w_compare_points"
    compare_page = "w_compare_page"
    compare_table = "w_compare_table"
    compare_why = "w_compare_why"
    compare_runs = "w_compare_runs"
    compare_all_runs = "w_compare_all_runs"
    breakeven_plane = "w_breakeven_plane"
    run_table = "w_run_table"
    decision_table = "w_decision_table"
    decision_title = "w_decision_title"
    decision_phase = "w_decision_phase"
    decision_verdict = "w_decision_verdict"
    decision_sessions = "w_decision_sessions"
    decision_baseline = "w_decision_baseline"
    decision_note = "w_decision_note"
    decision_created = "decision_just_created"
    decision_error = "decision_error"
    upload_files = "w_upload_files"
    upload_phase = "w_upload_phase"
    upload_variant = "w_upload_variant"
    upload_reports = "upload_reports"
    upload_round = "upload_round"
    label_by = "w_label_by"  # Ingest → Label files (dashboard/label_ui.py)
    label_variant = "w_label_variant"
    label_files = "w_label_files"
    label_action = "w_label_action"
    label_new_variant = "w_label_new_variant"
    label_new_phase = "w_label_new_phase"
    label_delete_sure = "w_label_delete_sure"
    label_apply = "w_label_apply"
    label_outcome = "label_outcome"
    # Sections whose content runs only while open (sections.section): "section_" + what they hold.
    section_sources = "section_sources"
    section_comparability = "section_comparability"
    section_runs = "section_runs"
    section_definitions = "section_definitions"
    section_origins = "section_origins"
    section_plane_points = "section_plane_points"
    section_formats = "section_formats"
    section_label_changes = "section_label_changes"
    section_server_args = "section_server_args"
    section_config_settings = "section_config_settings"  # Run: the config diff table
    section_run_log = "section_run_log"  # Run: the log's figures per run
    section_decision_markdown = "section_decision_markdown"
    section_record_decision = "section_record_decision"
    section_provenance = "section_provenance"
    section_raw_lines = "section_raw_lines"  # + the log file's position on the Run page
    section_every_position = "section_every_position"
    section_request_places = "section_request_places"
    section_dataset_sources = "section_dataset_sources"
    section_acceptance_files = "section_acceptance_files"
    # Tab groups that run only the open tab (st.tabs(..., on_change="rerun")).
    breakdown_tab = "tab_breakdown"  # Breakdown: per cycle, per rank, top kernels
    acceptance_tab = "tab_acceptance"  # Acceptance's readings, a tab each
    sweeps_tab = "tab_sweeps"  # Sweeps: the cause, the (τ, r) path, the config grid


def carried_params(*params: Param) -> dict[str, str | list[str]]:
    """The current values of ``params`` (default: the shared selection), to carry onto a page link."""
    carried: dict[str, str | list[str]] = {}
    for param in params or SHARED:
        value = param.link_value()
        if value:
            carried[param.url] = value
    return carried
