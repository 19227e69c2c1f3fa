"""Ingest → Label files: what `specdash label` does, from the app (issue #29).

A variant is a claim that runs are one system; the store names variants from evidence, and this is
where a person corrects that claim: rename, merge, re-phase or delete files and variants. The change
runs in ``ingest.storage.labels.relabel`` (one transaction, recorded in ``label_changes``); the store's change
id moves, so every page follows at once.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import queries, sections, ui
from dashboard.analysis import frames
from dashboard.state import Keys
from ingest.errors import SpecdashError
from ingest.storage import labels

BY_VARIANT, BY_FILE = "a variant's files", "files by name"
RENAME, REPHASE, DELETE = "rename, or merge into another variant", "move to a phase", "delete from the store"


def label_section(sources: pd.DataFrame) -> None:
    st.subheader("Label files")
    st.caption("Rename, merge, re-phase or delete files and variants after ingest, as `specdash label` does. "
               "Each change is one transaction, recorded (`specdash label --history`, and below).")
    chosen = _chosen_files(sources)
    change = _asked_change(chosen)
    if st.button("Apply the label change", icon=":material/label:", disabled=change is None, key=Keys.label_apply):
        try:
            report = labels.relabel(queries.store_ref(), change) if change else None
        except SpecdashError as error:  # a file that also shows another variant, an empty name, a busy store
            st.session_state[Keys.label_outcome] = ("error", str(error))
        else:
            st.session_state[Keys.label_outcome] = ("done", report.summary() if report else "")
        st.rerun()
    outcome = st.session_state.get(Keys.label_outcome)
    if outcome:
        kind, text = outcome
        (st.error if kind == "error" else st.success)("The store is unchanged." if kind == "error" else "Labels changed.")
        st.code(text, language=None, wrap_lines=True)
    _history()


def _chosen_files(sources: pd.DataFrame) -> labels.LabelChange:
    left, right = st.columns([2, 3])
    by = left.radio("Which files", [BY_VARIANT, BY_FILE], horizontal=True, key=Keys.label_by)
    if by == BY_VARIANT:
        variant = right.selectbox("Variant", queries.variants([]), key=Keys.label_variant,
                                  help="Every file whose evidence the pages show under this variant.")
        return labels.LabelChange(variant=variant)
    paths = right.multiselect("Files", sources["path"].tolist(), key=Keys.label_files, format_func=lambda p: Path(p).name,
                              help="The files to label, whatever variants they show.")
    return labels.LabelChange(sources=tuple(paths))


def _asked_change(chosen: labels.LabelChange) -> labels.LabelChange | None:
    """``chosen`` with the change asked for; None until the form says enough to apply it."""
    left, right = st.columns([2, 3])
    action = left.radio("Change", [RENAME, REPHASE, DELETE], key=Keys.label_action)
    if not (chosen.variant or chosen.sources):
        return None
    if action == RENAME:
        name = right.text_input("New variant name", key=Keys.label_new_variant, placeholder="e.g. k2-drafter",
                                help="An existing name merges the files into that variant.").strip()
        return labels.LabelChange(chosen.sources, chosen.variant, new_variant=name) if name else None
    if action == REPHASE:
        phase = right.text_input("New phase", key=Keys.label_new_phase, placeholder=f"e.g. phase-1, or {labels.NO_PHASE}",
                                 help=f"'{labels.NO_PHASE}' clears the phase.").strip()
        return labels.LabelChange(chosen.sources, chosen.variant, new_phase=phase) if phase else None
    sure = right.checkbox("Yes, remove these files' rows (the files on disk stay)", key=Keys.label_delete_sure)
    return labels.LabelChange(chosen.sources, chosen.variant, delete=True) if sure else None


def _history() -> None:
    changes = queries.label_changes()
    if changes.empty:
        return
    box = sections.section(f"Label changes recorded ({len(changes)} file(s))", Keys.section_label_changes)
    if box.open:
        with box:
            columns = ["changed_at", "action", "path", "old_variant", "old_phase", "new_variant", "new_phase"]
            ui.table(frames.label_changes_table(changes[columns]), lines=2)
            ui.export_buttons(changes, "label-changes")
