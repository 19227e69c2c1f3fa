"""Which formats ingest reads, and how a file's format is detected from its content.

Every module of ``ingest/parsers`` that declares ``FORMATS`` (a tuple of ``ingest.formats.Format``)
registers them by existing: adding a parser module adds its formats, with no list to edit.
Detection asks each format, lowest ``precedence`` first, whether the first 64 KiB of the
(decompressed) file look like its format. The file name never decides which format reads a file.

A file no format claims is an ``UnrecognizedFormat``; it is a ``NotExperimentData`` (which
``specdash ingest DIR`` skips for files it finds by walking) only when, besides, it is plainly no
data file: binary content (``ingest.reader.binary_kind``) or a name in ``NOT_DATA_NAMES``. The name
is asked only after every sniffer said no, so a Markdown note holding a run table still loads.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from fnmatch import fnmatchcase
from pathlib import Path

import ingest.parsers
from ingest.errors import UnrecognizedFormat
from ingest.explain import nearest
from ingest.formats import Format
from ingest.reader import NotExperimentData, read_head, reject_binary

# Names of files that are notes about the data, not data, as (pattern, what the skip summary calls
# them); matched case-insensitively, and only for a file no format claims.
NOT_DATA_NAMES: tuple[tuple[str, str], ...] = (
    ("readme*", "README"),
    ("*.md", "Markdown"),
    ("*.markdown", "Markdown"),
    ("*.source", "*.source notes"),
)
UNRECOGNIZED_HINT = "`specdash formats --explain FILE` shows the formats it came closest to"
# Parser modules that declare no format and are not imported to find formats: the compiled log
# kernels load numba and LLVM (~110 MB), which only reading a log may cost.
NOT_SCANNED = frozenset({"ingest.parsers.sglang.log_kernels", "ingest.parsers.logs.byte_kernels"})


@functools.cache
def registered_formats() -> tuple[Format, ...]:
    """Every parser module's ``FORMATS``, in the order detection asks them."""
    found: list[Format] = []
    # Readers live in one subpackage per family (sglang, vllm, bench, ...): walk them all.
    for module in pkgutil.walk_packages(ingest.parsers.__path__, prefix="ingest.parsers."):
        if not module.ispkg and module.name not in NOT_SCANNED:
            found += getattr(importlib.import_module(module.name), "FORMATS", ())
    kinds = [f.kind for f in found]
    duplicated = sorted({kind for kind in kinds if kinds.count(kind) > 1})
    if duplicated:
        raise RuntimeError(f"two parser modules declare the format kind(s) {duplicated}")
    return tuple(sorted(found, key=lambda f: (f.precedence, f.kind)))


def folder_format(folder: Path) -> Format | None:
    """The format that reads ``folder`` as one source (a drafter checkpoint), or None."""
    return next((f for f in registered_formats() if f.claims_folder is not None and f.claims_folder(folder)), None)


def not_data_name(path: Path) -> str | None:
    """What the file's name says it is when that is a note, not data ("README", "Markdown", ...)."""
    name = path.name.lower()
    return next((what for pattern, what in NOT_DATA_NAMES if fnmatchcase(name, pattern)), None)


def detect(path: Path) -> Format:
    """The format whose sniffer claims the file's first 64 KiB; raises ``UnrecognizedFormat``
    (``NotExperimentData`` when the file is plainly not data) when none does."""
    head = read_head(path)
    for candidate in registered_formats():
        if candidate.binary and candidate.sniff(head):
            return candidate
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
    message = f"no format reads it; {nearest(head, registered_formats())}"
    if note is not None:
        raise NotExperimentData(path, message, what=note, hint=UNRECOGNIZED_HINT)
    raise UnrecognizedFormat(path, message, hint=UNRECOGNIZED_HINT)
