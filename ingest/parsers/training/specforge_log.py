"""SpecForge's EAGLE-3 training console, in its three generations (the line's shape decides, not a version).

* 2025-08..11 (scripts/train_eagle3_online.py@3c7449ea): after each epoch a plain print per TTT position,
  ``Train Epoch [{epoch + 1}/{num_epochs}], position {i},  Acc: {acc:.2f}`` and ``…, pLoss: {loss:.2f}``, then
  ``Eval Epoch […]`` the same: epoch-level rows (no step).
* 2025-11..2026-07 (scripts/train_eagle3.py@20e2e3f0):

  - the bar, ``tqdm(train_dataloader, desc=f"Training Epoch {epoch}")``, with a postfix set every step:
    ``loss``, ``acc`` (both ``.2f``), since 2026-03 ``acceptance_rate`` (the mean over TTT positions of the
    expected acceptance rate), ``time`` (seconds per step), ``grad_norm`` on optimizer steps. For many users this is
    the only per-step record (the logger below is often silent), e.g. SpecForge issue #392:
    ``Training Epoch 0:   6%|███…| 155/2484 [09:06<2:14:55,  3.48s/it, loss=0.00, acc=0.00, time=3.46s]``.
  - ``record_metrcs`` every ``log_interval`` steps (mode ``train``) and after each evaluation (mode ``eval``), one
    ``print_on_rank0`` (a logger.info) per TTT position: ``Eval - Step {step} [{step + 1}/{num_epochs}], position
    {i},  Acc: {acc:.2f}``, ``… Acceptance Rate: {rate:.4f}`` (since 2026-03), ``… pLoss: {loss}``. The words say
    ``Eval`` in both modes, so the split is taken from the bar drawn last: after an ``Evaluating Epoch N`` bar the
    lines are the evaluation's, else training's.

* 2026-07 on, the unified trainer: ``step N: {…}`` metric dicts, with ``eval/simulated_acc_len`` (specforge_dicts.py).

``position`` is stored 1-based (the first drafted token is position 1, as in ``acceptance_positions``); a printed
``num_epochs`` is kept in ``extra``.

Which step a bar's postfix belongs to: tqdm draws count n when step n+1 begins, then ``set_postfix`` redraws the
same count with step n+1's figures. So the *first* draw at each new count carries step n's figures (the count-0
bar has none); a pasted single bar is read as the count it shows. A bar row's step is the run's step,
``epoch × total + n`` (resumed runs skip batches, but the bar still counts them). Only the unified trainer prints a
simulated accept length; the older consoles leave the column empty and keep the per-position figures as printed.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.training import specforge_dicts
from ingest.parsers.training.progress import (
    INT64_MAX,
    Bar,
    counter,
    kept_value,
    number,
    out_of_domain,
    physical_lines,
    pieces,
)
from ingest.tables import table_from_rows

KIND = "specforge_training_log"
TABLE = "training_steps"
HINT = ("expected SpecForge train_eagle3.py console output: 'Training Epoch 0: …| 155/2484 […, loss=…, acc=…]' bars "
        "or 'Eval - Step N [N+1/E], position i,  Acc: …' lines (docs/formats.md, 'Drafter training logs')")

TRAINING_BAR = re.compile(r"^Training Epoch (?P<epoch>\d{1,19})$")
EVALUATING_BAR = re.compile(r"^Evaluating Epoch (?P<epoch>\d+)$")
METRIC_LINE = re.compile(
    r"(?:(?:Eval|Train) - Step (?P<step>\d{1,19}) \[\d+/(?P<epochs>\d{1,19})\]"
    r"|(?P<mode>Train|Eval) Epoch \[(?P<epoch>\d{1,19})/(?P<of_epochs>\d{1,19})\])"
    r", position (?P<position>\d{1,19}),\s+(?P<what>Acc|Acceptance Rate|pLoss): (?P<value>\S+)"
)
SNIFF = re.compile(r"Training Epoch \d+:\s+\d+%\||(?:Eval|Train) (?:- Step \d+ |Epoch )\[\d+/\d+\], position \d+,")

METRIC_COLUMNS = {"Acc": "accuracy", "Acceptance Rate": "acceptance_rate", "pLoss": "loss"}
POSTFIX_COLUMNS = {"loss": "loss", "acc": "accuracy", "acceptance_rate": "acceptance_rate"}


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    return SNIFF.search(text) is not None or specforge_dicts.SNIFF.search(text) is not None


class Reading:
    """The state a SpecForge console carries from line to line: the last bar drawn, and rows read so far."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last_bar: Bar | None = None
        self.split = "train"
        self.epoch: int | None = None
        self.bar_rows: list[dict[str, Any]] = []
        self.metric_rows: dict[tuple[str, int | None, int | None, int], dict[str, Any]] = {}
        self.dict_rows: list[dict[str, Any]] = []

    def bar(self, line_no: int, bar: Bar, parsed: ParsedSource) -> None:
        training, evaluating = TRAINING_BAR.match(bar.desc), EVALUATING_BAR.match(bar.desc)
        new_count = self.last_bar is None or (self.last_bar.desc, self.last_bar.n) != (bar.desc, bar.n)
        self.last_bar = bar
        if evaluating:
            self.split = "eval"
        if not training:
            parsed.skipped["progress bar without figures"] += 1
            return
        self.split, self.epoch = "train", counter(self.path, line_no, "epoch", int(training["epoch"]))
        if not bar.postfix:
            parsed.skipped["progress bar without figures"] += 1
            return
        if not new_count or bar.n == 0:
            parsed.skipped["progress bar redraw (its figures belong to the next step)"] += 1
            return
        row: dict[str, Any] = {"line_no": line_no, "epoch": self.epoch, "split": "train", "origin": "progress bar",
                               "step": counter(self.path, line_no, "step", self.epoch * (bar.total or 0) + bar.n, INT64_MAX)}
        extra: dict[str, Any] = {"bar": f"{bar.n}/{bar.total if bar.total is not None else '?'}"}
        for key, value in bar.postfix.items():
            if key in POSTFIX_COLUMNS:
                row[POSTFIX_COLUMNS[key]] = measured(self.path, line_no, key, value)
            else:
                extra[key] = kept_value(value)
        row["extra"] = json.dumps(extra, sort_keys=True)
        self.bar_rows.append(row)

    def text(self, line_no: int, text: str, parsed: ParsedSource) -> None:
        rows = specforge_dicts.dict_rows(self.path, line_no, text, self.epoch)
        if rows is not None:
            self.dict_rows.extend(rows)
            return
        match = METRIC_LINE.search(text)
        if match is None:
            parsed.skipped["not a training record"] += 1
            return
        position = counter(self.path, line_no, "position", int(match["position"]) + 1)
        if match["mode"]:  # 2025-08..11: one line per epoch, "Train Epoch [{epoch + 1}/{num_epochs}]"
            split, step, epochs = match["mode"].lower(), None, match["of_epochs"]
            epoch: int | None = counter(self.path, line_no, "epoch", int(match["epoch"])) - 1
        else:
            split, epoch, epochs = self.split, self.epoch, match["epochs"]
            step = counter(self.path, line_no, "Step", int(match["step"]), INT64_MAX)
        row = self.metric_rows.setdefault((split, step, epoch, position), {
            "line_no": line_no, "epoch": epoch, "step": step, "split": split, "position": position,
            "origin": "log line", "extra": json.dumps({"num_epochs": int(epochs)})})
        row[METRIC_COLUMNS[match["what"]]] = measured(self.path, line_no, match["what"], match["value"])


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="training")
    reading = Reading(path)
    for line_no, line in physical_lines(path):
        parsed.lines_read += 1
        for piece in pieces(line):
            if piece.bar is not None:
                reading.bar(line_no, piece.bar, parsed)
            if piece.text.strip():
                reading.text(line_no, piece.text, parsed)
    rows = reading.bar_rows + list(reading.metric_rows.values()) + reading.dict_rows
    if not rows:
        raise MalformedInput(path, "no training record: no 'Training Epoch' bar with figures, no 'Eval - Step' or "
                             "'Train Epoch' line and no 'step N: {…}' metrics line", hint=HINT)
    rows.sort(key=lambda row: row["line_no"])
    parsed.warnings.extend(out_of_domain(path, rows))
    parsed.tables[TABLE] = table_from_rows(TABLE, rows)
    return parsed


def measured(path: Path, line_no: int, key: str, value: str) -> float:
    result = number(value)
    if result is None:
        raise MalformedInput(path, f"{key}: {value} is not a number", line=line_no, key=key,
                             hint="the line was cut or edited; fix or remove it and ingest again")
    return result


FORMAT = Format(
    kind=KIND,
    description="SpecForge drafter training console (train_eagle3.py: 'Training Epoch N' bar, 'Eval - Step … position i' lines)",
    sniff=sniff,
    parse=parse,
    example="Training Epoch 0:   6%|███…| 155/2484 [09:06<2:14:55,  3.48s/it, loss=0.00, acc=0.00, time=3.46s]",
    precedence=40,
    signs=(Sign(r"Training Epoch \d+:", "a 'Training Epoch N:' progress bar"),
           Sign(r"(?:Eval|Train) (?:- Step \d+ |Epoch )\[\d+/\d+\], position \d+",
                "an 'Eval - Step N [..], position i' or 'Train Epoch [e/N], position i' line"),
           Sign(r"step \d+: \{'", "a 'step N: {…}' metrics line")),
)

FORMATS = (FORMAT,)
