"""Why a file was not read: which format it came closest to, and what it lacks.

Each format declares its ``signs`` (``ingest.formats.Sign``): what a person would recognise a file of it by. For a
file no sniffer claims, the formats showing the largest share of their signs are the candidates; the closest one
names the failure ("looks like a vLLM spec_decode.py summary ('mean acceptance length:' line), but without a
'num_drafts:' line"). A file showing no format's signs is described by its shape (a JSON object and its keys, a
table and its columns), so a user can tell "almost right" from "nothing like any format". Signs never decide a
format: detection stays with the sniffers (``ingest.registry.detect``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ingest.formats import Format

FLAGS = re.IGNORECASE | re.MULTILINE
SHOWN_KEYS = 8  # keys or columns named in a shape description
SHOWN_TEXT = 60  # characters of a first line quoted in a shape description
TOP_LINES = 40  # lines of a cut JSON document whose quoted keys describe it


@dataclass(frozen=True)
class Candidate:
    """A format and which of its signs a file shows."""

    format: Format
    found: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def share(self) -> float:
        return len(self.found) / (len(self.found) + len(self.missing))

    @property
    def name(self) -> str:
        """The format as a person calls it: its description up to the first parenthesis."""
        return self.format.description.split(" (", 1)[0]

    def reason(self) -> str:
        shown = f"it looks like {self.name} ({', '.join(self.found)})"
        if not self.missing:
            return f"{shown}, but not in the shape its reader needs (docs/formats.md shows it)"
        return f"{shown}, but without {', '.join(self.missing)}"


def candidates(head: bytes, formats: Sequence[Format]) -> list[Candidate]:
    """Every format showing at least one of its signs in ``head``, closest first (largest share of signs shown,
    then most signs shown, then the order detection asks them)."""
    text = head.decode("utf-8", errors="replace")
    found: list[Candidate] = []
    for file_format in formats:
        shown = tuple(sign.what for sign in file_format.signs if re.search(sign.pattern, text, FLAGS))
        if shown:
            missing = tuple(sign.what for sign in file_format.signs if sign.what not in shown)
            found.append(Candidate(file_format, shown, missing))
    order = {id(f): index for index, f in enumerate(formats)}
    return sorted(found, key=lambda c: (-c.share, -len(c.found), order[id(c.format)]))


def nearest(head: bytes, formats: Sequence[Format]) -> str:
    """One line: the closest format and what the file lacks, or, when it shows no format's signs, its shape."""
    found = candidates(head, formats)
    if found:
        return found[0].reason()
    return f"it shows nothing of any format read: {shape(head)}"


def shape(head: bytes) -> str:
    """What the content is, in a person's words: a JSON object and its keys, a table and its columns, or text and
    its first line."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "no text"
    json_keys = first_json_keys(lines)
    if json_keys is not None:
        return f"JSON whose keys are {named(json_keys)}"
    table = next((line for line in lines if line.startswith("|") and line.count("|") >= 3), None)
    if table is not None:
        return f"a Markdown table whose columns are {named([cell.strip() for cell in table.strip('|').split('|')])}"
    if "," in lines[0] and len(lines) > 1 and lines[0].count(",") == lines[1].count(","):
        return f"CSV whose columns are {named([cell.strip() for cell in lines[0].split(',')])}"
    first = lines[0] if len(lines[0]) <= SHOWN_TEXT else lines[0][:SHOWN_TEXT] + "…"
    return f"text whose first line is {first!r}"


def first_json_keys(lines: Sequence[str]) -> list[str] | None:
    """The keys of the first JSON object among the first lines (a JSON file or a JSON-lines file), or None."""
    if not lines[0].startswith(("{", "[")):
        return None
    for candidate in ("\n".join(lines), lines[0]):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, list):
            value = next((item for item in value if isinstance(item, dict)), None)
        return list(value) if isinstance(value, dict) else None
    # a document cut at the head's end: the keys quoted near its top stand in
    quoted = re.findall(r'"([^"\\]{1,64})"\s*:', "\n".join(lines[:TOP_LINES]))
    return list(dict.fromkeys(quoted)) or None


def named(names: Sequence[str]) -> str:
    shown = [f"'{name}'" for name in names[:SHOWN_KEYS] if name]
    more = len(names) - SHOWN_KEYS
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "") if shown else "(none)"
