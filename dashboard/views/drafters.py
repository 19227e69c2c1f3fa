"""Drafters: is each drafter wired to the right target tokens? Verdicts on its d2t/t2d mapping, and two mappings compared."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import drafter_frames, drafter_ui, queries, ui
from dashboard.analysis import drafters
from dashboard.analysis.definitions import COUNT

st.title("Drafters")
store = ui.require_store()
ui.demo_note(store)
st.caption("An EAGLE-3 drafter predicts over its own draft vocabulary; `d2t` maps each draft id to a target id "
           "(target id = draft id + d2t[draft id]) and `t2d` marks the target ids it holds. A wrong mapping puts every "
           "draft on the wrong token and accept length collapses, with nothing in the server log to say why.")

table = drafter_ui.all_drafters()
if table.empty:
    ui.lacking(store, "no drafter checkpoint", "specdash ingest path/to/drafter/  (config.json + model.safetensors)")

# --- the drafters and their verdicts ------------------------------------------------------------
st.subheader("Checkpoints")
ui.table(drafter_frames.drafters_table(table), lines=2)
ui.export_buttons(table, "drafters")
names = list(table["name"])
ids = dict(zip(names, table["source_id"], strict=True))
first = next((i for i, n in enumerate(names) if "reference" not in n.lower()), 0)  # a drafter before a reference
picked = st.selectbox("Verdicts of", names, index=first, key="drafters_verdicts_of")
row = table[table["name"] == picked].iloc[0]
st.caption(f"`{row['path']}` · {row['architecture'] or 'no architecture named'} · "
           f"{COUNT.number(row['tensors'])} tensors in {COUNT.number(row['weights_files'])} safetensors file(s), "
           f"{drafter_frames.SIZE.text(row['size_bytes'])} · read at ingest: {drafter_frames.SIZE.text(row['bytes_read'])}"
           + (" (config, headers, d2t/t2d and 16 sampled blocks for its identity, never the whole weights)"
              if row["weights_files"] else " (config.json)"))
st.markdown("\n".join(drafter_frames.verdict_lines(row["verdicts"])))

# --- coverage of what the target generated ------------------------------------------------------
st.subheader("Coverage of what the target generated")
covered = drafter_ui.coverage()
if covered.empty:
    st.caption("No token counts yet: ingest what the target generated (`target_id,count` CSV, `{\"token_counts\": …}` JSON, "
               "or JSONL of `output_ids`; docs/formats.md) to see the share each draft vocabulary can express.")
else:
    st.caption("The share of generated tokens a draft vocabulary holds at all: an upper bound on acceptance at every "
               "draft position (a token outside it is never proposed).")
    ui.table(drafter_frames.coverage_table(covered))
    ui.export_buttons(covered, "drafter-coverage")

# --- two mappings compared ----------------------------------------------------------------------
st.subheader("Two mappings compared")
mapped = [n for n, count in zip(names, table["mapped_tokens"], strict=True) if count > 0]
if len(mapped) < 2:
    st.info("Comparing needs two drafters with a d2t mapping: ingest another drafter for the same target (or a "
            "reference mapping), or compare folders without ingesting them: `specdash drafters compare A B`.")
    st.stop()
# By default a drafter against its reference (another mapping for the same target, named 'reference' first).
default_a = next((n for n in mapped if "reference" not in n.lower() and drafters.reference_for(table, ids[n]) is not None),
                 mapped[0])
reference = drafters.reference_for(table, ids[default_a])
default_b = next((n for n in mapped if ids[n] == reference), next(n for n in mapped if n != default_a))
left, right = st.columns(2)
name_a = left.selectbox("Drafter", mapped, index=mapped.index(default_a), key="drafters_compare_a")
options_b = [n for n in mapped if n != name_a]
name_b = right.selectbox("against", options_b, index=options_b.index(default_b) if default_b in options_b else 0,
                         key="drafters_compare_b")
found = drafter_ui.comparison(ids[name_a], ids[name_b])
if found is None:
    st.info("One of the two has no d2t to compare.")
    st.stop()
c = found.comparison
if c.draft_vocab_size_a != c.draft_vocab_size_b:
    st.warning(f"The draft vocabularies differ in size ({COUNT.number(c.draft_vocab_size_a)} vs "
               f"{COUNT.number(c.draft_vocab_size_b)}): positions are compared over the first "
               f"{COUNT.number(c.positions_compared)}.")
differ, agree, shared, jaccard = st.columns(4)
differ.metric("Draft ids that differ", COUNT.number(c.positions_differ),
              help=f"Of {COUNT.number(c.positions_compared)} draft ids, position by position: draft id i stands for a different "
                   "target token in the two mappings.")
agree.metric("Draft ids that agree", COUNT.number(c.positions_agree),
             help=f"Of {COUNT.number(c.positions_compared)} draft ids.")
shared.metric("Target tokens shared", COUNT.number(c.shared_target_tokens),
              help="As sets: target ids both draft vocabularies contain, wherever they sit.")
jaccard.metric("Jaccard (shared ÷ union)", drafters.JACCARD.number(c.jaccard))
by_position, by_set = c.sentences()
st.markdown(f"- {by_position}\n- {by_set}")
ui.table(drafter_frames.comparison_table(c))
ui.export_buttons(pd.DataFrame([c.record()]), f"mappings {c.name_a} vs {c.name_b}")
st.plotly_chart(queries.figure(drafter_frames.divergence_chart, found.divergence, c), width="stretch")
