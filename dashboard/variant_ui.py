"""Where each variant's name came from, said on every page that shows variants (issue #29).

A variant is a claim that its runs are one system. The store names variants from evidence (``--variant``,
a server config, a folder layout, else one unlabelled group per folder: docs/dashboard.md "Variant
identity"); this says which evidence named each one, and how to correct it.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard import queries, sections
from dashboard.analysis.definitions import COUNT
from dashboard.state import Keys

UNLABELLED_FROM = "folder, no label"
SHOWN_FROM = {"--variant": "given (--variant or specdash label)"}
LABEL_HINT = "`specdash label --variant NAME --to NEW` (or **Ingest → Label files**) renames, merges or re-phases them"


def named_from(values: Sequence[str]) -> str:
    return ", ".join(SHOWN_FROM.get(value, value) for value in values)


def origin_lines(origins: pd.DataFrame) -> list[str]:
    """One phrase per variant: its name, where the name came from, its sessions and files."""
    lines = []
    for row in origins.itertuples():
        sessions = f"{COUNT.text(row.sessions)} session{'s' if row.sessions != 1 else ''}"
        files = f"{COUNT.text(row.files)} file{'s' if row.files != 1 else ''}"
        lines.append(f"**{row.variant}** — {named_from(list(row.named_from))} · {sessions} from {files}")
    return lines


def pooled_groups(origins: pd.DataFrame) -> pd.DataFrame:
    """The unlabelled groups that pool several files: nothing but their folder says they are one system."""
    if origins.empty:
        return origins
    unlabelled = origins["named_from"].map(lambda values: list(values) == [UNLABELLED_FROM])
    return origins[unlabelled & (origins["files"] > 1)]


def origins_note(phases: Sequence[str], variants: Sequence[str], *, warn: bool = False) -> None:
    """An expander naming each shown variant's source of name; with ``warn``, a warning for pooled unlabelled groups."""
    origins = queries.variant_origins(list(phases), list(variants))
    if origins.empty:
        return
    pooled = pooled_groups(origins)
    if warn and not pooled.empty:
        groups = "; ".join(f"{row.variant} ({COUNT.text(row.files)} files, {COUNT.text(row.engines)} "
                           f"engine{'s' if row.engines != 1 else ''})" for row in pooled.itertuples())
        st.warning(f"Unlabelled groups pool files that no label or server config says are one system: {groups}. "
                   f"Their figures mix those files. {LABEL_HINT}.")
    box = sections.section(f"Where the variant names come from ({COUNT.text(len(origins))})", Keys.section_origins)
    if box.open:  # the names' sources only when asked for: the pooled groups' warning above stands alone
        box.markdown("\n".join(f"- {line}" for line in origin_lines(origins)))
        box.caption("Order of evidence: --variant or specdash label; the server config's speculation settings with "
                    f"the target model; the folder layout …/<phase>/<variant>/file; else one unlabelled group per folder. {LABEL_HINT}.")
