"""The demo's two drafter checkpoints: the seed's K2 drafter mapping, and a K2.5 reference mapping.

Illustrative (data/README.md): the seed story reports only the finding, that the K2 drafter's
``d2t`` differs from the K2.5 mapping at 31,748 of its 32,000 positions. These two checkpoints are
built to show exactly that, deterministically (a fixed seed):
- the reference vocabulary is 32,000 of Kimi-K2.5's 163,840 target ids, sorted: the first 200
  ids (byte and special tokens), then a seeded sample of the rest (a frequency-built mapping keeps its tokens in id order);
- the K2 vocabulary keeps the reference's first 252 tokens, adds one token before the 253rd (which
  shifts every later position by one, so those 31,748 positions all differ), drops the reference's
  last token, and swaps 2,400 tokens for neighbours the reference does not hold: the two sets still
  share most of their tokens.
``k25-generated-token-counts.csv`` stands for what K2.5 generated (``target_id,count``), so the
Drafters page can show coverage. Both ``config.json`` files carry Kimi-K2.5's dimensions (SpecForge's K2.5 config); every tensor but
d2t/t2d is a tiny stand-in (the real ones are 1-2 GB). Run: ``python data/make_demo_drafters.py``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from ingest.parsers.drafters import safetensors  # noqa: E402

OUT = Path(__file__).resolve().parent / "drafters"
VOCAB, DRAFT, AGREE, SWAPPED = 163_840, 32_000, 252, 2_400
K2 = "Kimi-K2-Instruct-eagle3"  # the folder name the demo K2-drafter server's speculative_draft_model_path ends with
REFERENCE = "kimi-k25-reference-mapping"
CONFIG = {
    "architectures": ["LlamaForCausalLMEagle3"], "attention_bias": False, "bos_token_id": 163584,
    "draft_vocab_size": DRAFT, "dtype": "bfloat16",
    "eagle_config": {"eagle_aux_hidden_state_layer_ids": [2, 30, 58], "use_aux_hidden_state": True},
    "eos_token_id": 163585, "head_dim": 128, "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432,
    "max_position_embeddings": 131072, "model_type": "llama", "num_attention_heads": 64, "num_hidden_layers": 1,
    "num_key_value_heads": 64, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": False,
    "vocab_size": VOCAB,
}
# Tiny stand-ins for the weights, named as SpecForge saves them (bf16 bytes, zeros).
STAND_INS = {
    "embed_tokens.weight": (8, 8), "fc.weight": (8, 24), "midlayer.hidden_norm.weight": (8,),
    "midlayer.input_layernorm.weight": (8,), "midlayer.self_attn.q_proj.weight": (8, 16),
    "midlayer.mlp.down_proj.weight": (8, 8), "norm.weight": (8,),
    "lm_head.weight": (DRAFT, 1),  # one column: its row count is checked against draft_vocab_size
}


def mappings(seed: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(K2.5 reference, K2) target ids in draft-id order, each sorted and 32,000 long."""
    rng = np.random.default_rng(seed)
    rest = np.sort(rng.choice(np.arange(256, VOCAB), size=DRAFT - 200, replace=False))
    reference = np.concatenate([np.arange(200), rest])
    added = int(rng.choice(np.setdiff1d(np.arange(reference[AGREE - 1] + 1, reference[AGREE]), reference)))
    tail = reference[AGREE:-1].copy()
    held = set(reference.tolist()) | {added}
    # Swap tokens for unheld neighbours that keep the sort order (every other slot at most, so a
    # neighbour's swap never crosses this one's).
    for j in sorted(rng.choice(np.arange(1, len(tail) - 1, 2), size=SWAPPED, replace=False).tolist()):
        free = [t for t in range(int(tail[j - 1]) + 1, int(tail[j + 1])) if t not in held]
        if free:
            tail[j] = free[len(free) // 2]
            held.add(int(tail[j]))
    k2 = np.concatenate([reference[:AGREE], [added], tail])
    return reference, k2


def write_drafter(folder: Path, target_ids: np.ndarray, note: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n", encoding="utf-8")
    t2d = np.zeros(VOCAB, dtype=bool)
    t2d[target_ids] = True
    tensors: dict[str, safetensors.Tensor] = {
        name: ("BF16", shape, bytes(2 * int(np.prod(shape)))) for name, shape in STAND_INS.items()
    }
    tensors["d2t"] = safetensors.tensor(target_ids - np.arange(len(target_ids)), "I64")
    tensors["t2d"] = safetensors.tensor(t2d, "BOOL")
    safetensors.write(folder / "model.safetensors", tensors, {"format": "pt", "origin": note})
    return folder


def write_token_counts(path: Path, reference: np.ndarray, seed: int = 25) -> Path:
    """Counts of 200,000 tokens K2.5 'generated': Zipf-like over the reference vocabulary (its
    frequency order is its id order here), and 2% drawn from outside it."""
    rng = np.random.default_rng(seed)
    inside = reference[np.minimum(rng.zipf(1.15, size=196_000) - 1, len(reference) - 1)]
    outside = rng.choice(np.setdiff1d(np.arange(VOCAB), reference), size=4_000)
    ids, counts = np.unique(np.concatenate([inside, outside]), return_counts=True)
    path.write_text("target_id,count\n" + "".join(f"{i},{c}\n" for i, c in zip(ids, counts, strict=True)), encoding="utf-8")
    return path


def write_demo_drafters(out: Path = OUT) -> list[Path]:
    reference, k2 = mappings()
    return [
        write_drafter(out / K2, k2, "illustrative: data/make_demo_drafters.py (K2-style mapping, the seed's K2 drafter)"),
        write_drafter(out / REFERENCE, reference, "illustrative: data/make_demo_drafters.py (K2.5 reference mapping)"),
        write_token_counts(out / "k25-generated-token-counts.csv", reference),
    ]


if __name__ == "__main__":
    for path in write_demo_drafters():
        print(path.relative_to(OUT.parent.parent))
