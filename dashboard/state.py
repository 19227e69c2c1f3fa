"""Page state that lives in the URL, so a copied link reopens the same view.

Each widget's session-state key and URL parameter are declared once here. A
widget takes its initial value from the URL; after it renders, its value is
written back to the URL.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Param:
    url: str  # query parameter name
    key: str  # st.session_state key of the widget

    def url_list(self) -> list[str]:
        return st.query_params.get_all(self.url)

    def url_value(self) -> str | None:
        return st.query_params.get(self.url)

    def seed_list(self, options: list[str], default: list[str]) -> None:
        """Initialise a multiselect from the URL (unknown values dropped), else from ``default``."""
        if self.key not in st.session_state:
            wanted = [v for v in self.url_list() if v in options]
            st.session_state[self.key] = wanted or [v for v in default if v in options]
        else:
            st.session_state[self.key] = [v for v in st.session_state[self.key] if v in options]

    def seed_value(self, options: list[str], default: str | None) -> None:
        if self.key not in st.session_state or st.session_state[self.key] not in options:
            wanted = self.url_value()
            st.session_state[self.key] = wanted if wanted in options else default

    def publish(self) -> None:
        value = st.session_state.get(self.key)
        if value is None or value == []:
            st.query_params.pop(self.url, None)
        else:
            st.query_params[self.url] = value


PHASES = Param("phase", "w_phases")
VARIANTS = Param("variant", "w_variants")
BASELINE = Param("baseline", "w_baseline")
METRIC = Param("metric", "w_metric")
SESSION = Param("session", "w_session")

SHARED = (PHASES, VARIANTS, BASELINE, METRIC)


def carried_params(*params: Param) -> dict[str, str | list[str]]:
    """The current URL values of ``params`` (default: the shared ones), to carry onto a page link."""
    carried: dict[str, str | list[str]] = {}
    for param in params or SHARED:
        values = param.url_list()
        if values:
            carried[param.url] = values if len(values) > 1 else values[0]
    return carried
