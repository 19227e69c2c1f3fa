"""SpecForge's unified trainer (2026-07 on): one ``step N: {…}`` line per logged step, the metrics as a Python dict.

Where the line comes from (sgl-project/SpecForge@a6b6b023): ``specforge/training/assembly.py::_logger`` prints
``f"step {step}: {printable}"`` for every dict the controller logs — training metrics every ``log_interval`` optimizer
steps (``acc_{i}``, ``ploss_{i}``, ``acceptance_rate_{i}`` per TTT position, ``acc``, ``loss``, ``acceptance_rate``,
``grad_norm``, ``lr``, ``perf/…``; prefixed ``train/`` when an external tracker is configured) and evaluation metrics
(``eval/avg_loss``, ``eval/avg_acc``, ``eval/per_position_acc`` — a list, or ``…/0``, ``…/1`` keys through a
tracker — ``eval/simulated_acc_len``, ``eval/acceptance_rate_{i}``, ``eval/ploss_{i}``).

``eval/simulated_acc_len`` (specforge/eval/evaluator.py, ``_simulated_acc_len``) is a0 + a0·a1 + … over the
per-position accuracies: the expected **accepted drafts**, bonus token excluded. The column holds accept lengths
with the bonus (as AutoModel's ``tau_sim`` and every served figure), so the row gets 1 + that value and ``extra``
keeps the printed one. Without per-position accuracies the evaluator prints the mean accuracy under that name: not
an accept length, so the column stays empty then.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.parsers.training.progress import INT32_MAX, INT64_MAX, counter

DICT_LINE = re.compile(r"(?:^|\s)step (?P<step>\d{1,19}): (?P<metrics>\{.*\})\s*$")
SNIFF = re.compile(r"(?:^|\s)step \d+: \{'(?:train/|eval/)?(?:acc|avg_|loss|ploss|per_position)", re.M)
PER_POSITION = re.compile(r"^(?P<name>acc|ploss|acceptance_rate|per_position_acc)[_/](?P<index>\d{1,9})$")
POSITION_COLUMNS = {"acc": "accuracy", "per_position_acc": "accuracy", "ploss": "loss", "acceptance_rate": "acceptance_rate"}
TOTAL_COLUMNS = {"acc": "accuracy", "avg_acc": "accuracy", "loss": "loss", "avg_loss": "loss",
                 "acceptance_rate": "acceptance_rate", "lr": "learning_rate"}
SIMULATED = "simulated_acc_len"


def dict_rows(path: Path, line_no: int, text: str, epoch: int | None) -> list[dict[str, Any]] | None:
    """The rows of one ``step N: {…}`` line (a totals row and one per position, per split), or None for other text."""
    match = DICT_LINE.search(text)
    if match is None:
        return None
    try:
        metrics = ast.literal_eval(match["metrics"])
    except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
        raise MalformedInput(path, f"the metrics after 'step {match['step']}:' are not a dict literal ({error})",
                             line=line_no, hint="the line was cut or edited; fix or remove it and ingest again") from error
    if not isinstance(metrics, dict):
        return None
    step = counter(path, line_no, "step", int(match["step"]), INT64_MAX)
    splits: dict[str, dict[str, Any]] = {}
    for key, value in metrics.items():
        split, name = ("eval", key[5:]) if str(key).startswith("eval/") else ("train", str(key).removeprefix("train/"))
        if name == "per_position_acc" and isinstance(value, list):
            for index, item in enumerate(value):
                splits.setdefault(split, {})[f"per_position_acc/{index}"] = item
        else:
            splits.setdefault(split, {})[name] = value
    rows = []
    for split, values in splits.items():
        rows.extend(split_rows(path, line_no, step, epoch, split, values))
    return rows


def split_rows(path: Path, line_no: int, step: int, epoch: int | None, split: str,
               values: dict[str, Any]) -> list[dict[str, Any]]:
    common = {"line_no": line_no, "epoch": epoch, "step": step, "split": split, "origin": "log line"}
    total: dict[str, Any] = dict(common)
    positions: dict[int, dict[str, Any]] = {}
    extra: dict[str, Any] = {}
    for name, value in values.items():
        per_position = PER_POSITION.match(name)
        if per_position:
            position = counter(path, line_no, name, int(per_position["index"]) + 1, INT32_MAX)
            row = positions.setdefault(position, {**common, "position": position})
            row[POSITION_COLUMNS[per_position["name"]]] = figure(path, line_no, name, value)
        elif name in TOTAL_COLUMNS:
            total[TOTAL_COLUMNS[name]] = figure(path, line_no, name, value)
        elif name == SIMULATED:
            extra[name] = figure(path, line_no, name, value)
        else:
            extra[name] = value if isinstance(value, (int, float, str, bool)) or value is None else repr(value)
    if SIMULATED in extra and any(key.startswith("per_position_acc/") for key in values):
        total["simulated_accept_length"] = 1 + extra[SIMULATED]  # accepted drafts + the bonus token
    total["extra"] = json.dumps(extra, sort_keys=True) if extra else None
    return [total, *(positions[key] for key in sorted(positions))]


def figure(path: Path, line_no: int, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        raise MalformedInput(path, f"{key}: {value!r} is not a number", line=line_no, key=key,
                             hint="the line was cut or edited; fix or remove it and ingest again")
    return float(value)
