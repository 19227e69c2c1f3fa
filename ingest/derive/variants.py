"""A short, readable variant label derived from a server configuration.

``speculative_algorithm`` absent/None → ``"baseline"``; otherwise
``"<algorithm>:<drafter name>"``, e.g. ``"eagle3:EAGLE3-Kimi-K2"``, where the
drafter name is the last component of ``speculative_draft_model_path`` (a Hub id
``org/name`` or a local directory). A Hugging Face cache snapshot path
(``.../models--org--name/snapshots/<hash>``) is named after the model, not the
hash. Algorithms without a drafter model (n-gram) are labelled by the algorithm
alone. Works for SGLang ``server_args`` and vLLM ``speculative_config`` alike.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

BASELINE = "baseline"
NO_ALGORITHM = {"", "none", "null", "speculativealgorithm.none"}
HF_CACHE_SNAPSHOT = re.compile(r"models--(?P<org>[^/\\]+?)--(?P<name>[^/\\]+)[/\\]snapshots[/\\][^/\\]+$")


def variant_label(config: Mapping[str, Any]) -> str:
    algorithm = algorithm_name(config.get("speculative_algorithm"))
    if algorithm is None:
        return BASELINE
    drafter = drafter_name(config.get("speculative_draft_model_path"))
    return f"{algorithm}:{drafter}" if drafter else algorithm


derive_variant = variant_label  # the name other ingest modules import


def algorithm_name(value: Any) -> str | None:
    """``'EAGLE3'``, ``SpeculativeAlgorithm.EAGLE3`` → ``"eagle3"``; None-like → None."""
    if value is None:
        return None
    text = str(value).strip().strip("'\"")
    if text.lower() in NO_ALGORITHM:
        return None
    return text.rsplit(".", 1)[-1].lower()


def drafter_name(path: Any) -> str | None:
    """The last meaningful component of a drafter model path or Hub id."""
    if not path or not isinstance(path, str):
        return None
    path = path.strip().rstrip("/\\")
    snapshot = HF_CACHE_SNAPSHOT.search(path)
    if snapshot:
        return snapshot["name"]
    name = re.split(r"[/\\]", path)[-1]
    return name or None


def chain_settings(k: int | None) -> tuple[int | None, int | None, int | None]:
    """A chain of ``k`` drafted tokens (vLLM's ``num_speculative_tokens``, an archive's ``k``) in SGLang's terms:
    (num_steps, topk, num_draft_tokens) = (k, 1, k + 1), the verified root counting as a draft token."""
    return k, 1 if k else None, k + 1 if k else None
