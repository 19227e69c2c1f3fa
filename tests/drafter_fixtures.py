"""The drafter checkpoints under tests/fixtures/drafters/, one per verdict, made deterministically here.

Origin: synthetic, written by this script (``python -m tests.drafter_fixtures`` rewrites them; a test
checks the committed files equal what it makes). Each is a SpecForge-style EAGLE-3 folder over a
small target vocabulary (2,048 ids, draft vocabulary 256): ``config.json`` shaped like SpecForge's
Llama drafter config, and ``model.safetensors`` with tiny stand-in weights plus the mapping under
test. The safetensors header's ``__metadata__.origin`` names this script and what the fixture shows.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ingest.parsers.drafters import safetensors

OUT = Path(__file__).resolve().parent / "fixtures" / "drafters"
VOCAB, DRAFT = 2048, 256
CONFIG = {
    "architectures": ["LlamaForCausalLMEagle3"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 16, "intermediate_size": 32, "max_position_embeddings": 2048, "model_type": "llama",
    "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 1, "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": VOCAB, "draft_vocab_size": DRAFT,
}


def used_tokens(seed: int = 7) -> np.ndarray:
    """A frequency-built draft vocabulary: ids 0-63 (bytes, specials) and a seeded sample, sorted."""
    rng = np.random.default_rng(seed)
    return np.concatenate([np.arange(64), np.sort(rng.choice(np.arange(64, VOCAB), DRAFT - 64, replace=False))])


def mask(ids: np.ndarray, size: int = VOCAB) -> np.ndarray:
    t2d = np.zeros(size, dtype=bool)
    t2d[ids[(ids >= 0) & (ids < size)]] = True
    return t2d


def stand_ins(lm_head_rows: int = DRAFT) -> dict[str, safetensors.Tensor]:
    shapes = {"embed_tokens.weight": (4, 16), "fc.weight": (16, 48), "midlayer.self_attn.q_proj.weight": (16, 16),
              "midlayer.mlp.down_proj.weight": (16, 32), "norm.weight": (16,), "lm_head.weight": (lm_head_rows, 2)}
    return {name: ("BF16", shape, bytes(2 * int(np.prod(shape)))) for name, shape in shapes.items()}


def offsets(ids: np.ndarray) -> np.ndarray:
    return ids - np.arange(len(ids))


def write(folder: Path, origin: str, d2t: np.ndarray | None, t2d: np.ndarray | None,
          config: dict[str, object] | None = None, lm_head_rows: int = DRAFT) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or CONFIG, indent=2) + "\n", encoding="utf-8")
    tensors = stand_ins(lm_head_rows)
    if d2t is not None:
        tensors["d2t"] = safetensors.tensor(d2t, "I64")
    if t2d is not None:
        tensors["t2d"] = safetensors.tensor(t2d, "BOOL")
    safetensors.write(folder / "model.safetensors", tensors, {"format": "pt", "origin": f"tests/drafter_fixtures.py: {origin}"})


def write_sharded(folder: Path, ids: np.ndarray) -> None:
    """Two shards and an index, the mapping in the second (as SpecForge's sharded saves put buffers last)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n", encoding="utf-8")
    weights = stand_ins()
    first = {k: v for k, v in weights.items() if k != "lm_head.weight"}
    second = {"lm_head.weight": weights["lm_head.weight"], "d2t": safetensors.tensor(offsets(ids), "I64"),
              "t2d": safetensors.tensor(mask(ids), "BOOL")}
    origin = {"format": "pt", "origin": "tests/drafter_fixtures.py: a sharded checkpoint, offsets OK"}
    names = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    safetensors.write(folder / names[0], first, origin)
    safetensors.write(folder / names[1], second, origin)
    weight_map = {**{k: names[0] for k in first}, **{k: names[1] for k in second}}
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}, indent=2) + "\n", encoding="utf-8")


def fixtures() -> dict[str, Callable[[Path], None]]:
    ids = used_tokens()
    collided = ids.copy()
    collided[100] = collided[99]  # two draft ids on one target id
    out_of_range = ids.copy()
    out_of_range[-3:] = VOCAB + np.arange(3)  # ids past the target vocabulary (a mapping for a bigger tokenizer)
    shifted = np.sort(np.concatenate([ids[:-8], np.setdiff1d(np.arange(VOCAB), ids)[:8]]))
    no_draft_size = {k: v for k, v in CONFIG.items() if k != "draft_vocab_size"}
    return {
        "offsets-ok": lambda f: write(f, "offsets OK", offsets(ids), mask(ids)),
        "absolute-ids": lambda f: write(f, "absolute target ids stored where offsets belong", ids, mask(ids)),
        "out-of-range": lambda f: write(f, "3 mapped ids past the target vocabulary", offsets(out_of_range), mask(ids)),
        "non-injective": lambda f: write(f, "draft ids 99 and 100 land on one target id", offsets(collided), mask(ids)),
        "t2d-inconsistent": lambda f: write(f, "t2d marks a different set than d2t", offsets(ids), mask(shifted)),
        "identity": lambda f: write(f, "all offsets 0 (the first 256 target ids)", np.zeros(DRAFT, dtype=np.int64), mask(np.arange(DRAFT))),
        "config-mismatch": lambda f: write(f, "config.json says draft_vocab_size 300, the tensors 256",
                                           offsets(ids), mask(ids), {**CONFIG, "draft_vocab_size": 300}),
        "full-vocab": lambda f: write(f, "no mapping tensors and no draft_vocab_size: the full target vocabulary",
                                      None, None, no_draft_size, lm_head_rows=VOCAB),
        "sharded": lambda f: write_sharded(f, ids),
    }


# The verdict each fixture must get: (mapping_form, overall status, the check that decides it).
EXPECTED: dict[str, tuple[str, str, str | None]] = {
    "offsets-ok": ("offsets", "ok", None),
    "absolute-ids": ("absolute ids", "wrong", "mapping form"),
    "out-of-range": ("invalid", "wrong", "in range"),
    "non-injective": ("invalid", "wrong", "injective"),
    "t2d-inconsistent": ("offsets", "wrong", "t2d consistent"),
    "identity": ("identity (all offsets 0)", "suspicious", "identity"),
    "config-mismatch": ("offsets", "wrong", "config sizes"),
    "full-vocab": ("full target vocabulary", "ok", None),
    "sharded": ("offsets", "ok", None),
}


TOKEN_COUNTS = "token-counts.csv"


def write_token_counts(path: Path) -> Path:
    """What the target 'generated' (token_counts): 10 of each of 100 draft-vocabulary ids and 5 of 20 ids outside it."""
    ids = used_tokens()
    outside = np.setdiff1d(np.arange(VOCAB), ids)[:20]
    rows = sorted([(int(i), 10) for i in ids[::2][:100]] + [(int(i), 5) for i in outside])
    path.write_text("target_id,count\n" + "".join(f"{i},{c}\n" for i, c in rows), encoding="utf-8")
    return path


def write_all(out: Path = OUT) -> list[Path]:
    written = []
    for name, make in fixtures().items():
        make(out / name)
        written.append(out / name)
    return [*written, write_token_counts(out / TOKEN_COUNTS)]


if __name__ == "__main__":
    for path in write_all():
        print(path)
