"""NVIDIA NeMo AutoModel's speculative-decoding training logs: EAGLE-3 / EAGLE-1 drafter recipes.

Where the lines come from (NVIDIA-NeMo/Automodel@36044ad3, nemo_automodel/recipes/llm/train_eagle3.py): every
``log_every_steps`` optimizer steps the main rank logs::

    epoch=%s step=%s train_loss=%.6f train_acc=%.6f[ train_tau_sim=%.4f] lr=%.3e[ (trailing flush)]

after each epoch ``epoch=%s val_loss=%.6f val_acc=%.6f[ val_tau_sim=%.4f]``, and, when a decode evaluation runs
during training, ``decode_eval: step=%s accept_length=%s acceptance_rate=%s completed=%s failed=%s``. The EAGLE-1
recipe logs ``epoch=0 step=2860 loss=… acc=… lr=… grad_norm=… hidden_loss=…``. The logging prefix is
``2026-07-07 22:20:52 | INFO | __main__ | `` or none (both seen in the recipe's pull requests, #2959 and #3356).

``train_tau_sim`` is the **simulated** accept length: 1 + Σ over TTT steps of the fraction of positions whose
draft prefix up to that step matches the target's tokens (``simulated_accept_length``), the bonus token
included — what training promises, not what a server measured.

The tqdm bar (``Training:  22%|…| 14/64 […, acc=0.0262, loss=9.1172, lr=9.30e-05, tau=1.04]``) is drawn on the
same terminal: the log line lands glued to its last redraw (progress.py). Its postfix repeats the log line's
figures, rounded, so bars are counted (``skipped``) and never loaded. Keys read by name in any order; unknown
keys (grad_norm, hidden_loss, rank_loss, token_loss, …) go to ``extra``. ``decode_eval`` lines become rows of
split ``decode`` with their measured figures in ``extra``: a real decode, not a simulation.
"""
from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.training.progress import (
    INT32_MAX,
    INT64_MAX,
    counter,
    kept_value,
    number,
    out_of_domain,
    physical_lines,
    pieces,
)
from ingest.tables import table_from_rows

KIND = "automodel_training_log"
TABLE = "training_steps"
HINT = ("expected NeMo AutoModel training lines such as 'epoch=0 step=14 train_loss=9.117183 train_acc=0.026200 "
        "train_tau_sim=1.0385 lr=9.297e-05' (docs/formats.md, 'Drafter training logs')")

PREFIX = re.compile(
    r"^(?:(?P<ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?) \| )?(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \| )?"
    r"(?:[\w.<>-]+ \| )?"
)
RECORD = re.compile(r"^(?:epoch=\d+ (?:step=\d+ )?\S*=|decode_eval: step=)")
PAIR = re.compile(r"(?P<key>[A-Za-z_]\w*)=(?P<value>\S+)")
TRAILING_NOTE = re.compile(r"\s*\((?P<note>[^()]*)\)\s*$")
SNIFF = re.compile(r"(?:^|[\]|] ?)epoch=\d+ (?:step=\d+ \S*loss=|val_loss=)", re.M)

# Which printed key fills which column, per split: the mapping is data, the reading is one loop.
TRAIN_FIELDS = {"train_loss": "loss", "loss": "loss", "train_acc": "accuracy", "acc": "accuracy",
                "train_tau_sim": "simulated_accept_length", "tau_sim": "simulated_accept_length", "lr": "learning_rate"}
EVAL_FIELDS = {"val_loss": "loss", "val_acc": "accuracy", "val_tau_sim": "simulated_accept_length", "lr": "learning_rate"}
COUNTERS = {"epoch": ("epoch", INT32_MAX), "step": ("step", INT64_MAX)}  # printed key -> column, largest value


def sniff(head: bytes) -> bool:
    return SNIFF.search(head.decode("utf-8", errors="replace")) is not None


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="training")
    rows: list[dict[str, Any]] = []
    for line_no, line in physical_lines(path):
        parsed.lines_read += 1
        for piece in pieces(line):
            if piece.bar is not None:
                parsed.skipped["progress bar (repeats the log line's figures, rounded)"] += 1
            if piece.text.strip():
                row = record(path, line_no, piece.text)
                if row is None:
                    parsed.skipped["not a training record"] += 1
                else:
                    rows.append(row)
    if not rows:
        raise MalformedInput(path, "no training record (epoch=… step=… lines)", hint=HINT)
    parsed.warnings.extend(out_of_domain(path, rows))
    parsed.tables[TABLE] = table_from_rows(TABLE, rows)
    return parsed


def record(path: Path, line_no: int, text: str) -> dict[str, Any] | None:
    """One ``training_steps`` row from a log text, or None when the text is not a training record."""
    prefix = PREFIX.match(text)
    message = text[prefix.end():].strip() if prefix else text.strip()
    if not RECORD.match(message):
        return None
    extra: dict[str, Any] = {}
    note = TRAILING_NOTE.search(message)
    if note:
        extra["note"] = note["note"]
        message = message[:note.start()]
    pairs = {match["key"]: match["value"] for match in PAIR.finditer(message)}
    decode = message.startswith("decode_eval:")
    split = "decode" if decode else "eval" if any(key.startswith("val_") for key in pairs) else "train"
    fields = {} if decode else EVAL_FIELDS if split == "eval" else TRAIN_FIELDS
    row: dict[str, Any] = {"line_no": line_no, "split": split, "origin": "log line",
                           "ts": timestamp(prefix["ts"]) if prefix and prefix["ts"] else None}
    for key, value in pairs.items():
        if key in COUNTERS:
            column, largest = COUNTERS[key]
            row[column] = counter(path, line_no, key, whole(path, line_no, key, value), largest)
        elif key in fields:
            row[fields[key]] = measured(path, line_no, key, value)
        else:
            extra[key] = kept_value(value)
    row["extra"] = json.dumps(extra, sort_keys=True) if extra else None
    return row


def whole(path: Path, line_no: int, key: str, value: str) -> int:
    if not (value.isascii() and value.isdigit()):
        raise MalformedInput(path, f"{key}={value} is not a whole number", line=line_no, key=key, hint=HINT)
    if len(value) > 19:  # past any BIGINT (and int() refuses texts of thousands of digits)
        raise MalformedInput(path, f"{key}={value[:24]}… is larger than any training run counts", line=line_no, key=key,
                             hint="the line was damaged; fix or remove it and ingest again")
    return int(value)


def measured(path: Path, line_no: int, key: str, value: str) -> float:
    result = number(value)
    if result is None:
        raise MalformedInput(path, f"{key}={value} is not a number", line=line_no, key=key,
                             hint="the line was cut or edited; fix or remove it and ingest again")
    return result


def timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        return None


FORMAT = Format(
    kind=KIND,
    description="NeMo AutoModel drafter training log (EAGLE-3 / EAGLE-1 recipes: epoch=… step=… train_loss=… train_tau_sim=…)",
    sniff=sniff,
    parse=parse,
    example="2026-07-07 22:20:44 | INFO | __main__ | epoch=0 step=14 train_loss=9.117183 train_acc=0.026200 train_tau_sim=1.0385 lr=9.297e-05",
    precedence=40,
    signs=(Sign(r"epoch=\d+ step=\d+ ", "an 'epoch=N step=N …' line"),
           Sign(r"loss=[\d.e+-]+ \S*acc=", "a 'train_loss=… train_acc=…' pair (space-separated, no comma)")),
)

FORMATS = (FORMAT,)
