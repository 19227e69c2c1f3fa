"""Sections a page runs only while they are open: its secondary tables, charts and lists.

A page load then queries, builds and sends only what shows (the pages are held within 1.3× of a minimal
Streamlit page: bench/bench_pages.py). ``box = sections.section(label, key)``, then ``if box.open: with box:
...``. Opening or closing one reruns the page, which is cheap: the readers (``queries.cached``) and the
figures (``queries.figure``) are cached.
"""
from __future__ import annotations

import streamlit as st
from streamlit.elements.lib.mutable_expander_container import ExpanderContainer

OPENED = "__opened"  # suffix of a section's memory key: whether the user left it open


def section(label: str, key: str, *, expanded: bool = False) -> ExpanderContainer:
    """A collapsed expander whose ``.open`` says whether to run its content.

    ``expanded`` opens it for a reason the page sees (a warning inside). A count in ``label`` gives the
    expander a new identity when the selection changes, which would close it: whether the user left it open
    is remembered under ``key`` and carried over.
    """
    remembered = f"{key}{OPENED}"
    return st.expander(label, expanded=expanded or bool(st.session_state.get(remembered)), key=key,
                       on_change=_remember, args=(key, remembered))


def _remember(key: str, remembered: str) -> None:
    st.session_state[remembered] = bool(st.session_state.get(key))
