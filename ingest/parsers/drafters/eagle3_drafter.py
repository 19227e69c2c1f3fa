"""EAGLE-3 drafter checkpoints: a folder (config.json + safetensors), one .safetensors, or config.json alone.

Where the format comes from: SpecForge writes a drafter as a Hugging Face folder: ``config.json``
(``architectures`` such as ``LlamaForCausalLMEagle3``, ``hidden_size``, ``vocab_size`` = the target's
vocabulary, ``draft_vocab_size``) and ``model.safetensors`` (or shards listed in
``model.safetensors.index.json``) holding the weights and the two vocabulary-mapping tensors
``d2t``/``t2d`` (ingest/parsers/drafters/drafter_checks.py says what they mean and how SGLang and vLLM load them).

A folder is one source: ``specdash ingest DIR`` yields a folder holding a drafter's config.json
whole (``claims_folder``) instead of walking into it, and a file inside such a folder (its
config.json, a shard) is read as the folder. What is read: config.json, every safetensors header,
the two mapping tensors' bytes and 16 sampled 4 KiB blocks per weights file for the source's
identity (``fingerprint``: hashing a 2 GB file would read all of it, bench/bench_drafter.py). What
is deliberately not read: every other tensor. A config.json alone is recorded with "no weights:
mapping not checked".

Detection by content: a safetensors file starts with an 8-byte length and ``{"``; a drafter's
config.json is a JSON object naming ``draft_vocab_size`` or an EAGLE architecture (a target
model's config.json names neither, and stays unclaimed).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.drafters import drafter_checks, safetensors
from ingest.tables import DRAFTER_VOCAB, table_from_rows


def sniff(head: bytes) -> bool:
    return safetensors.looks_like_safetensors(head) or drafter_checks.looks_like_drafter_config(head)


def fingerprint(path: Path) -> str:
    return drafter_checks.load(path).fingerprint()


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    checkpoint = drafter_checks.load(path)
    return parsed_checkpoint(checkpoint)


def checkpoint_files(checkpoint: drafter_checks.Checkpoint) -> list[Path]:
    """The files the drafter consists of: its config.json (when one was read), the safetensors weights or shards,
    and a folder's model.safetensors.index.json. Other files in the folder (a README, a tokenizer) are not the drafter."""
    unit = checkpoint.path
    if unit.is_dir():
        config = unit / drafter_checks.CONFIG
    elif checkpoint.weights:  # one .safetensors: its config.json beside it, when one was read
        config = unit.parent / drafter_checks.CONFIG
    else:  # a config.json alone, whatever its name
        config = unit
    files = [config] if checkpoint.config is not None and config.is_file() else []
    files += checkpoint.weights
    if unit.is_dir() and (unit / drafter_checks.INDEX).is_file():
        files.append(unit / drafter_checks.INDEX)
    return list(dict.fromkeys(files))


def checkpoint_size(checkpoint: drafter_checks.Checkpoint) -> int:
    """The drafter's size on disk: its files summed (a folder's own size is its directory entry's, not its content's)."""
    return sum(file.stat().st_size for file in checkpoint_files(checkpoint))


def parsed_checkpoint(checkpoint: drafter_checks.Checkpoint) -> ParsedSource:
    found = drafter_checks.verdicts(checkpoint)
    row = {
        "path": str(checkpoint.path),
        "name": checkpoint.name,
        "architecture": checkpoint.architecture,
        "hidden_size": checkpoint.hidden_size,
        "vocab_size": checkpoint.vocab_size,
        "draft_vocab_size": checkpoint.draft_vocab_size,
        "mapping_form": drafter_checks.mapping_form(checkpoint),
        "status": drafter_checks.overall(found),
        "headline": drafter_checks.headline(found),
        "verdicts": drafter_checks.verdicts_json(found),
        "config": json.dumps(checkpoint.config, sort_keys=True) if checkpoint.config is not None else None,
        "weights_files": len(checkpoint.weights),
        "tensors": checkpoint.tensor_count,
        "has_d2t": checkpoint.d2t is not None,
        "has_t2d": checkpoint.t2d is not None,
        "bytes_read": checkpoint.bytes_read,
    }
    parsed = ParsedSource(kind=FORMAT.kind, engine="drafter", size_bytes=checkpoint_size(checkpoint))
    parsed.tables["drafters"] = table_from_rows("drafters", [row])
    targets = checkpoint.target_ids()
    if targets is not None:
        parsed.tables["drafter_vocab"] = pa.table(
            {"draft_id": np.arange(len(targets), dtype=np.int32), "target_id": targets},
            schema=DRAFTER_VOCAB,
        )
    parsed.lines_read = 1
    return parsed


FORMAT = Format(
    kind="eagle3_drafter",
    description="EAGLE-3 drafter checkpoint (a folder: config.json + safetensors; one .safetensors; or config.json alone)",
    sniff=sniff,
    signs=(
        Sign('"architectures"\\s*:', "an 'architectures' key"),
        Sign('Eagle3|eagle3|EAGLE3', 'an EAGLE-3 architecture name'),
        Sign('"(draft_vocab_size|vocab_size)"\\s*:', "'draft_vocab_size' / 'vocab_size' keys"),
    ),
    parse=parse,
    example='{"architectures": ["LlamaForCausalLMEagle3"], … "vocab_size": 2048, "draft_vocab_size": 256}',
    precedence=5,
    binary=True,
    claims_folder=drafter_checks.is_drafter_folder,
    fingerprint=fingerprint,
)
FORMATS = (FORMAT,)
