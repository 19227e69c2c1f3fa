"""Variant labels derived from a server configuration."""
from __future__ import annotations

import pytest

from ingest.derive.variants import derive_variant, drafter_name, variant_label


@pytest.mark.parametrize(
    ("config", "label"),
    [
        ({"speculative_algorithm": None, "speculative_draft_model_path": "x/y"}, "baseline"),
        ({}, "baseline"),
        ({"speculative_algorithm": "None"}, "baseline"),
        ({"speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "lmsys/EAGLE3-Kimi-K2"}, "eagle3:EAGLE3-Kimi-K2"),
        ({"speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "/models/k2-drafter/"}, "eagle3:k2-drafter"),
        ({"speculative_algorithm": "SpeculativeAlgorithm.EAGLE", "speculative_draft_model_path": "C:\\m\\drafter"}, "eagle:drafter"),
        ({"speculative_algorithm": "NGRAM"}, "ngram"),
        (
            {
                "speculative_algorithm": "EAGLE3",
                "speculative_draft_model_path": "/root/.cache/huggingface/hub/models--lmsys--EAGLE3-Kimi-K2/snapshots/0a1b2c",
            },
            "eagle3:EAGLE3-Kimi-K2",
        ),
    ],
)
def test_variant_label(config: dict, label: str) -> None:
    assert variant_label(config) == label
    assert derive_variant(config) == label


def test_drafter_name_of_nothing() -> None:
    assert drafter_name(None) is None and drafter_name("") is None and drafter_name(3) is None
