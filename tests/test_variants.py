"""Variant labels derived from a server configuration."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from ingest.derive.variants import derive_variant, drafter_name, variant_label
from ingest.storage.store import writer
from tests.test_app import run_page


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


# --- the speculative method: one vocabulary over the words files use (macro spec_method, views.sql) -------------

@pytest.mark.parametrize(
    ("raw", "method"),
    [
        ("EAGLE3", "EAGLE-3"), ("SpeculativeAlgorithm.EAGLE3", "EAGLE-3"), ("eagle3", "EAGLE-3"), ("EAGLE", "EAGLE"),
        ("NEXTN", "MTP"), ("deepseek_mtp", "MTP"), ("mtp", "MTP"),
        ("NGRAM", "n-gram"), ("ngram-simple", "n-gram"), ("ngram_gpu", "n-gram"), ("PLD", "n-gram"),
        ("medusa", "Medusa"), ("lookahead", "lookahead"), ("Hydra", "Hydra"),
        ("STANDALONE", "draft model"), ("draft", "draft model"), ("draft_model", "draft model"),
        ("FROZEN_KV_MTP", "MTP"),  # SGLang's SpeculativeAlgorithm members (speculative/spec_info.py)
        ("DFLASH", "DFlash"), ("dflash", "DFlash"),  # SGLang DFLASH, vLLM method "dflash"
        ("suffix", "suffix decoding"), ("mlp_speculator", "MLP speculator"),  # vLLM's SpeculativeMethod literals
        ("REST", "REST"), ("suffix_tree", "suffix_tree"),  # outside the vocabulary: kept as written
        (None, None), ("None", None), ("", None),
    ],
)
def test_spec_method_names_every_engines_word_in_one_vocabulary(
    method_store: Path, raw: str | None, method: str | None
) -> None:
    with duckdb.connect(str(method_store), read_only=True) as con:
        assert con.execute("SELECT spec_method(?)", [raw]).fetchone() == (method,)


@pytest.fixture(scope="module")
def method_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated store for every word (a store's migrations cost ~0.4 CPU-s; the macro does not change)."""
    db = tmp_path_factory.mktemp("methods") / "store.duckdb"
    with writer(db):
        pass
    return db


def test_compare_shows_each_variants_method_beside_its_speedup(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", demo_db, monkeypatch, {"phase": "phase-0"})
    why = next(table.value for table in app.dataframe if "speedup" in table.value.columns)
    assert list(why.columns[:3]) == ["variant", "method", "speedup"]
    assert dict(zip(why["variant"], why["method"], strict=True)) == {
        "baseline": "none", "from-scratch": "EAGLE-3", "k2-drafter": "EAGLE-3"}
