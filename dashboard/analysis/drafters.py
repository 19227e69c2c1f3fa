"""Ingested drafters, their mappings compared, and which drafter a served variant used (UI-free).

The comparison itself is ``ingest.parsers.drafters.drafter_checks.compare`` (the CLI compares folders with it too);
this module reads its inputs from the store (tables ``drafters`` and ``drafter_vocab``, migration
015). A variant's drafter is the ingested drafter whose path equals the server's
``speculative_draft_model_path``, or whose name is that path's last component (the folder name:
a checkpoint is rarely ingested from the path the server loaded it from).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from dashboard.analysis.data import frame, reader, relations
from dashboard.analysis.definitions import Quantity
from ingest.errors import IngestError, MalformedInput
from ingest.parsers.drafters import drafter_checks
from ingest.parsers.drafters.drafter_checks import Comparison, compare, divergence
from ingest.storage.location import StoreRef, as_store

COLUMNS = ("source_id", "name", "path", "architecture", "hidden_size", "vocab_size", "draft_vocab_size",
           "mapping_form", "status", "headline", "verdicts", "weights_files", "tensors", "has_d2t", "has_t2d", "bytes_read")


# Jaccard = shared ÷ union of two draft vocabularies: three decimals (0.865), on the page and in the CLI alike.
JACCARD = Quantity("jaccard", "", 3)


def has_drafters(db_path: str | StoreRef) -> bool:
    with reader(db_path) as con:
        return "drafters" in relations(con)


def drafters(db_path: str | StoreRef) -> pd.DataFrame:
    """Every ingested drafter, newest first, with its verdicts (a JSON list) and mapping summary."""
    if not has_drafters(db_path):
        return pd.DataFrame(columns=[*COLUMNS, "mapped_tokens", "size_bytes", "ingested_at"])
    return frame(db_path, f"""
        SELECT {', '.join('d.' + c for c in COLUMNS)},
               (SELECT count(*) FROM drafter_vocab v WHERE v.source_id = d.source_id) AS mapped_tokens,
               s.size_bytes, s.ingested_at
        FROM drafters d JOIN sources s USING (source_id)
        ORDER BY s.ingested_at DESC, d.name
    """)


def coverage(db_path: str | StoreRef) -> pd.DataFrame:
    """Per drafter and token-count file (view drafter_coverage): the share of generated tokens its
    draft vocabulary can express at all."""
    with reader(db_path) as con:
        if "drafter_coverage" not in relations(con):
            return pd.DataFrame(columns=["drafter", "tokens_path", "tokens", "distinct_tokens", "covered_tokens", "coverage"])
        return con.execute("SELECT * FROM drafter_coverage ORDER BY drafter, tokens_path").df()


def verdict_rows(verdicts_json: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(verdicts_json)
    return found


def target_ids(db_path: str | StoreRef, source_id: str) -> np.ndarray:
    """A drafter's draft id → target id array (empty without a d2t)."""
    ids = frame(db_path, "SELECT target_id FROM drafter_vocab WHERE source_id = ? ORDER BY draft_id", [source_id])
    return ids["target_id"].to_numpy(dtype=np.int64)


@dataclass(frozen=True)
class DrafterComparison:
    comparison: Comparison
    divergence: pd.DataFrame  # first_draft_id, last_draft_id, share_differing


def comparison(db_path: str | StoreRef, source_a: str, source_b: str, bins: int = 64) -> DrafterComparison | None:
    """Two ingested drafters' mappings compared; None when either has no d2t."""
    names = drafters(db_path).set_index("source_id")["name"]
    a, b = target_ids(db_path, source_a), target_ids(db_path, source_b)
    if not len(a) or not len(b):
        return None
    where = pd.DataFrame(divergence(a, b, bins), columns=["first_draft_id", "last_draft_id", "share_differing"])
    return DrafterComparison(compare(a, b, str(names.get(source_a, "A")), str(names.get(source_b, "B"))), where)


def reference_for(table: pd.DataFrame, source_id: str) -> str | None:
    """The drafter to compare one against by default: another with a mapping for the same target
    vocabulary and draft size, a name saying 'reference' first."""
    own = table[table["source_id"] == source_id]
    if own.empty:
        return None
    row = own.iloc[0]
    others = table[(table["source_id"] != source_id) & (table["mapped_tokens"] > 0)
                   & (table["vocab_size"] == row["vocab_size"]) & (table["draft_vocab_size"] == row["draft_vocab_size"])]
    if others.empty:
        return None
    ranked = others.assign(ref=~others["name"].str.contains("reference", case=False)).sort_values(["ref", "name"])
    return str(ranked["source_id"].iloc[0])


def drafter_for_path(table: pd.DataFrame, draft_model_path: str | None) -> pd.Series | None:
    """The ingested drafter a server loaded as ``speculative_draft_model_path``: same path, else same folder name."""
    if not isinstance(draft_model_path, str) or not draft_model_path or table.empty:
        return None
    wanted = draft_model_path.rstrip("/")
    same_path = table[table["path"].str.rstrip("/") == wanted]
    if not same_path.empty:
        return same_path.iloc[0]
    name = PurePosixPath(wanted).name
    same_name = table[table["name"] == name]
    return same_name.iloc[0] if not same_name.empty else None


def variant_drafter_notes(db_path: str | StoreRef, configs: pd.DataFrame) -> list[str]:
    """One line per variant whose draft model path matches an ingested drafter: its verdict, and how its
    mapping compares with its reference ("k2-drafter: Kimi-K2-Instruct-eagle3 — mapping differs from
    kimi-k25-reference-mapping at 31,748 of 32,000 draft ids; the vocabularies share 29,689 target tokens")."""
    if configs.empty or "speculative_draft_model_path" not in configs:
        return []
    table = drafters(db_path)
    notes = []
    for variant, path in configs[["variant", "speculative_draft_model_path"]].drop_duplicates().itertuples(index=False):
        row = drafter_for_path(table, path)
        if row is None:
            continue
        parts = [f"{variant}: drafter {row['name']} — {row['headline']}"]
        reference = reference_for(table, str(row["source_id"]))
        found = comparison(db_path, str(row["source_id"]), reference) if reference else None
        if found is not None:
            c = found.comparison
            parts.append(f"mapping differs from {c.name_b} at {c.positions_differ:,} of {c.positions_compared:,} draft ids; "
                         f"the vocabularies share {c.shared_target_tokens:,} target tokens (Jaccard {c.jaccard:.3f})")
        notes.append("; ".join(parts))
    return notes


def variant_drafter_notes_for(db_path: str | StoreRef, pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """``variant_drafter_notes`` for (variant, speculative_draft_model_path) pairs (hashable, for a cache)."""
    return variant_drafter_notes(db_path, pd.DataFrame(list(pairs), columns=["variant", "speculative_draft_model_path"]))


def resolve(db_path: str | StoreRef | None, given: str) -> tuple[str, np.ndarray]:
    """(name, target ids) of a drafter folder or file (read now, ingested or not), else of an ingested
    drafter of that name. Raises ``MalformedInput`` for a checkpoint without d2t, ``IngestError`` for neither."""
    path = Path(given)
    if path.exists():
        checkpoint = drafter_checks.load(path)
        ids = checkpoint.target_ids()
        if ids is None:
            found = drafter_checks.verdicts(checkpoint)
            raise MalformedInput(path, f"no d2t mapping to compare ({drafter_checks.headline(found)})",
                                 hint="compare drafters whose safetensors hold d2t")
        return checkpoint.name, ids
    if db_path is not None and as_store(db_path).exists():
        table = drafters(db_path)
        named = table[table["name"] == given]
        if not named.empty:
            ids = target_ids(db_path, str(named["source_id"].iloc[0]))
            if not len(ids):
                raise MalformedInput(given, "this ingested drafter has no d2t mapping to compare",
                                     hint="compare drafters whose safetensors hold d2t")
            return given, ids
    raise IngestError(given, "no such drafter folder or file, and no ingested drafter of that name",
                      hint="pass a drafter folder (config.json + model.safetensors), a .safetensors file, or a name "
                           "from the Drafters page")


def compare_given(db_path: str | StoreRef | None, a: str, b: str) -> Comparison:
    """``specdash drafters compare A B``: two drafters (folders, files or ingested names) compared."""
    (name_a, ids_a), (name_b, ids_b) = resolve(db_path, a), resolve(db_path, b)
    return compare(ids_a, ids_b, name_a, name_b)
