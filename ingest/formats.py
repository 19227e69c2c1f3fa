"""Which formats ingest reads, and how a file's format is detected from its content.

Each parser module declares a ``FORMAT``; detection asks each in order whether
the first 64 KiB of the (decompressed) file look like its format. More specific
formats come first. The file name never decides which format reads a file.

A file no format claims is an ``UnrecognizedFormat``; it is a ``NotExperimentData`` (which
``specdash ingest DIR`` skips for files it finds by walking) only when, besides, it is plainly no
data file: binary content (``ingest.reader.binary_kind``) or a name in ``NOT_DATA_NAMES``. The name
is asked only after every sniffer said no, so a Markdown note holding a run table still loads.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from ingest.errors import UnrecognizedFormat
from ingest.model import ParsedSource
from ingest.reader import NotExperimentData, read_head, reject_binary

# Names of files that are notes about the data, not data, as (pattern, what the skip summary calls
# them); matched case-insensitively, and only for a file no format claims.
NOT_DATA_NAMES: tuple[tuple[str, str], ...] = (
    ("readme*", "README"),
    ("*.md", "Markdown"),
    ("*.markdown", "Markdown"),
    ("*.source", "*.source notes"),
)
UNRECOGNIZED_HINT = "`specdash formats` lists the formats read, with an example line of each"


@dataclass(frozen=True)
class ParseOptions:
    """Hints a user may give; parsers ignore what does not apply to them."""

    year: int | None = None  # for log timestamps printed without a year (vLLM)
    engine: str | None = None  # "sglang" / "vllm": checked against what the content says
    extra: dict[str, str] = field(default_factory=dict)
    # Called by parsers that stream big files as (bytes_done, bytes_total); the CLI draws a bar.
    on_progress: Callable[[int, int], None] | None = field(default=None, compare=False)


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


def registered_formats() -> list[Format]:
    from ingest.parsers import (
        bench_console,
        bench_json,
        bench_one_batch,
        bench_serving,
        bench_table,
        cycle_timing,
        eagle_bench,
        kineto,
        send_one,
        sglang_log,
        vllm_bench,
        vllm_log,
    )

    return [
        kineto.FORMAT,  # a trace JSON must not be claimed by the benchmark-JSON sniffers
        cycle_timing.FORMAT,
        bench_serving.FORMAT,
        bench_one_batch.FORMAT,
        vllm_bench.FORMAT,
        bench_json.FORMAT,
        bench_console.FORMAT,
        vllm_bench.SUMMARY_FORMAT,
        bench_table.FORMAT,
        send_one.FORMAT,
        eagle_bench.FORMAT,  # its result.jsonl lines are claimed by no JSON sniffer above
        vllm_log.FORMAT,
        sglang_log.FORMAT,
    ]


def not_data_name(path: Path) -> str | None:
    """What the file's name says it is when that is a note, not data ("README", "Markdown", ...)."""
    name = path.name.lower()
    return next((what for pattern, what in NOT_DATA_NAMES if fnmatchcase(name, pattern)), None)


def detect(path: Path) -> Format:
    """The format whose sniffer claims the file's first 64 KiB; raises ``UnrecognizedFormat``
    (``NotExperimentData`` when the file is plainly not data) when none does."""
    head = read_head(path)
    reject_binary(path, head)
    note = not_data_name(path)
    if not head.strip():
        hint = "check that the benchmark or server wrote to it"
        if note is not None:
            raise NotExperimentData(path, "the file is empty", what=note, hint=hint)
        raise UnrecognizedFormat(path, "the file is empty", hint=hint)
    for candidate in registered_formats():
        if candidate.sniff(head):
            return candidate
    message = "no known format recognized in its first 64 KiB"
    if note is not None:
        raise NotExperimentData(path, message, what=note, hint=UNRECOGNIZED_HINT)
    raise UnrecognizedFormat(path, message, hint=UNRECOGNIZED_HINT)
