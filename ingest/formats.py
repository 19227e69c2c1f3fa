"""The contract between ingest and its parsers: ``Format`` (what a parser module declares) and
``ParseOptions`` (the hints a user may give). Parser modules import this module and nothing here
imports them back; ``ingest.registry`` finds their ``FORMATS`` and detects a file's format.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ingest.model import ParsedSource


@dataclass(frozen=True)
class ParseOptions:
    """Hints a user may give; parsers ignore what does not apply to them."""

    year: int | None = None  # for log timestamps printed without a year (vLLM)
    engine: str | None = None  # "sglang" / "vllm": checked against what the content says
    extra: dict[str, str] = field(default_factory=dict)
    # Called by parsers that stream big files as (bytes_done, bytes_total); the CLI draws a bar.
    on_progress: Callable[[int, int], None] | None = field(default=None, compare=False)


class Sign(NamedTuple):
    """Something a file of a format shows that a person would recognise it by: a regular expression searched
    (case-insensitively, multi-line) in the file's first 64 KiB, and what to call it when it is missing
    ("a 'num_drafts:' line"). Signs only explain a file no format read (`specdash formats --explain`);
    they never decide a format: the sniffer does."""

    pattern: str
    what: str


@dataclass(frozen=True)
class Format:
    kind: str
    description: str  # what a user would call it, as `specdash formats` lists it
    sniff: Callable[[bytes], bool]
    parse: Callable[[Path, ParseOptions], ParsedSource]
    # Formats of big files: like ``parse``, but rows come as ``ParsedSource.batches`` while the file is read.
    stream: Callable[[Path, ParseOptions], ParsedSource] | None = None
    # One short line of the format as it appears in a file (taken from a fixture; "…" marks what is
    # left out), shown by `specdash formats` so a user can tell which format their file should be.
    example: str = ""
    # Lower is asked first. Formats claim disjoint files (tests/test_format_registry.py runs every
    # sniffer on every fixture and corpus file), so this orders only the ask for a file unlike all of them.
    precedence: int = 50
    # A format of binary files (safetensors) is asked before detection turns binary content away.
    binary: bool = False
    # A format whose unit is a folder (a drafter checkpoint: config.json + weights): True for a
    # folder it reads as one source. `specdash ingest DIR` yields such a folder whole instead of
    # walking into it, and ``parse`` gets the folder.
    claims_folder: Callable[[Path], bool] | None = None
    # The source's identity, for files too big to hash whole (a 2 GB drafter: the sha256 of what
    # its parser reads); None: the sha256 of the file's bytes.
    fingerprint: Callable[[Path], str] | None = None
    # What a file of this format shows (``Sign``), for telling a user which format a file they hoped would load
    # came closest to and what it lacks.
    signs: tuple[Sign, ...] = ()
