"""What the text above a results table says about all its rows: the model, the batch size, the hardware.

People write the setting once, above the table (Spec-Bench: ``- Experimental Settings: Vicuna-7B-v1.3,
greedy decoding, FP16 precision, batch size = 1``; a heading ``### Vicuna-13B-v1.3``; ``Device: ...``).
The nearest mention wins: the headings (innermost first), then the lines under them (last first); the
row's ``extra`` names the line each value came from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.parsers.bench import sweeps
from ingest.parsers.tables.grid import Table

BATCH_TEXT = re.compile(r"\b(?:batch[ _-]?size|bsz?)\s*(?:=|:|of)?\s*(?P<n>\d{1,5})\b|\bBS(?P<m>\d{1,5})\b",
                        re.IGNORECASE)
MODEL_TEXT = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)?[A-Za-z][\w.]*(?:-[\w.]+)*?-\d+(?:\.\d+)?[BbMm](?:-[\w.]+)*(?![\w/])"
)
HARDWARE_TEXT = re.compile(r"^\W*(?:device|hardware|gpus?|accelerator)\s*[:=]\s*(?P<what>.+?)\s*$", re.IGNORECASE)
GPU_TEXT = re.compile(r"\b(?:\d+\s*[x×]\s*)?(?:NVIDIA\s+)?(?:(?:RTX|GeForce RTX)\s*)?"
                      r"(?:[AHBL]\d{2,3}|GB\d{3}|3090|4090|V100|T4|MI\d{3}X?|trn\d\S*)\b")


@dataclass
class Setting:
    """What the text above a table says about all its rows."""

    label: str
    model: str | None = None
    batch_size: int | None = None
    hardware: str | None = None
    simulated_by: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def setting_of(path: Path, table: Table, number: int) -> Setting:
    headings = table.headings[1:] if len(table.headings) > 1 else table.headings
    label = " · ".join(headings) or table.caption or f"{path.stem} · table {number}"
    setting = Setting(label=label)
    if table.caption:
        setting.notes["caption"] = table.caption
    # Nearest first: the headings (innermost first), then the lines under them (last first).
    texts = [*reversed(table.headings), *reversed(table.context)]
    for text in texts:
        if setting.model is None and (model := MODEL_TEXT.search(text)) is not None:
            setting.model, setting.notes["model_from"] = model.group(0), text[:120]
        if setting.batch_size is None and (batch := BATCH_TEXT.search(text)) is not None:
            setting.batch_size, setting.notes["batch_size_from"] = int(batch["n"] or batch["m"]), text[:120]
        if setting.simulated_by is None and sweeps.SIMULATED.search(text):
            setting.simulated_by = text.strip()[:80]
    named = next((found["what"] for text in texts if (found := HARDWARE_TEXT.match(text)) is not None), None)
    gpu = next((found.group(0) for text in texts if (found := GPU_TEXT.search(text)) is not None), None)
    setting.hardware = (named or gpu or "")[:120] or None
    return setting
