"""What the training-log readers share: physical lines, and tqdm bars glued to log text.

A trainer's console is two writers on one terminal: tqdm redraws its bar in place (``\\r`` then the bar, no
newline) and the logger prints whole lines. Captured to a file (``2>&1 | tee``, ``nohup``, a job scheduler), one
physical line then holds every redraw of the bar since the last newline, and the next log line glued to the end of
the last redraw::

    \\rTraining:  22%|██▏       | 14/64 [00:07<00:17,  2.94step/s, acc=0.0262, …]2026-07-07 22:20:44 | INFO | … epoch=0 step=14 …

Pasted into an issue the ``\\r`` are gone, the bar and the log text still share the line. So a line is split at
every ``\\r`` into *pieces*; a piece that starts with a bar is split after the bar's ``[…]`` into the bar and the
log text glued to it. Lines are split at ``\\n`` only (a ``\\r`` never ends a line here, unlike Python's universal
newlines), so line numbers are the file's.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.reader import open_binary

INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1  # epoch and position are INTEGER columns, step BIGINT
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a nested bar's cursor moves (ESC[A) and colours

# tqdm's default layout: "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
BAR = re.compile(
    r"^\s*(?:(?P<desc>[^|\r]*?):\s*)?(?P<percent>\d{1,3})%\|[^|]*\|\s*"
    r"(?P<n>\d{1,19})/(?P<total>\d{1,19}|\?)\s*\[(?P<stats>[^\]]*)\]"
)
POSTFIX_PAIR = re.compile(r"^\s*(?P<key>[A-Za-z_][\w./-]*)=(?P<value>.*?)\s*$")


@dataclass(frozen=True)
class Bar:
    """One draw of a tqdm bar: its description, count, total and the ``key=value`` postfix shown in its brackets."""

    desc: str
    n: int
    total: int | None
    postfix: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Piece:
    """What one ``\\r``-separated part of a line holds: a bar draw, log text, or a bar with log text glued after it."""

    bar: Bar | None
    text: str


def physical_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text without its line ending) for every ``\\n``-terminated line, UTF-8 with replacements."""
    with open_binary(path) as stream:
        for number, raw in enumerate(stream, start=1):
            yield number, raw.decode("utf-8", errors="replace").rstrip("\r\n")


def pieces(line: str) -> list[Piece]:
    """The line's bar draws and log texts, in the order the terminal received them."""
    result = []
    for part in ANSI_ESCAPE.sub("", line).split("\r"):
        if not part.strip():
            continue
        match = BAR.match(part)
        if match is None:
            result.append(Piece(None, part))
            continue
        total = match["total"]
        bar = Bar((match["desc"] or "").strip(), int(match["n"]), None if total == "?" else int(total),
                  postfix_pairs(match["stats"]))
        result.append(Piece(bar, part[match.end():]))
    return result


def postfix_pairs(stats: str) -> dict[str, str]:
    """The ``key=value`` items of a bar's brackets (elapsed, remaining and rate are not ``key=value``)."""
    pairs = {}
    for item in stats.split(","):
        match = POSTFIX_PAIR.match(item)
        if match:
            pairs[match["key"]] = match["value"]
    return pairs


def number(text: str) -> float | None:
    """A float from a printed value, or None (``n/a``, ``nan`` and other words are not numbers here)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def kept_value(text: str) -> float | str:
    """An unknown key's value for ``extra``: a number when it reads as one, else the text as printed."""
    value = number(text)
    return text if value is None else value


def counter(path: Path, line_no: int, key: str, value: int, largest: int = INT32_MAX) -> int:
    """An epoch, step or position as its column can hold it; a larger one is a damaged line, refused by name."""
    if value > largest:
        raise MalformedInput(path, f"{key} {value} is larger than any training run counts", line=line_no, key=key,
                             hint="the line was damaged; fix or remove it and ingest again")
    return value


def out_of_domain(path: Path, rows: list[dict[str, Any]]) -> list[str]:
    """``file:line`` notes for a training step's figures outside their domain — simulated τ below 1, an accuracy or
    acceptance rate outside 0–1 — kept as printed (the Acceptance page leaves them out)."""
    notes = []
    for row in rows:
        tau = row.get("simulated_accept_length")
        if tau is not None and tau < 1:
            notes.append(f"{path}:{row['line_no']}: simulated accept length {tau} is below 1 (the bonus token's floor)")
        notes += [f"{path}:{row['line_no']}: {column} {row[column]} is outside 0–1" for column in ("accuracy", "acceptance_rate")
                  if row.get(column) is not None and not 0 <= row[column] <= 1]
    return notes
