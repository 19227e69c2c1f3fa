"""Which formats ingest reads, and how a file's format is detected from its content.

Each parser module declares a ``FORMAT``; detection asks each in order whether
the first 64 KiB of the (decompressed) file look like its format. More specific
formats come first. The file name never decides.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ingest.errors import UnrecognizedFormat
from ingest.model import ParsedSource
from ingest.reader import read_head, reject_binary


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
    description: str  # what a user would call it, for "expected one of ..." messages
    sniff: Callable[[bytes], bool]
    parse: Callable[[Path, ParseOptions], ParsedSource]
    # Formats of big files: like ``parse``, but rows come as ``ParsedSource.batches`` while the file is read.
    stream: Callable[[Path, ParseOptions], ParsedSource] | None = None


def registered_formats() -> list[Format]:
    from ingest.parsers import (
        bench_console,
        bench_json,
        bench_one_batch,
        bench_serving,
        bench_table,
        cycle_timing,
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
        vllm_log.FORMAT,
        sglang_log.FORMAT,
    ]


def detect(path: Path) -> Format:
    head = read_head(path)
    reject_binary(path, head)
    if not head.strip():
        raise UnrecognizedFormat(path, "the file is empty", hint="check that the benchmark or server wrote to it")
    formats = registered_formats()
    for candidate in formats:
        if candidate.sniff(head):
            return candidate
    expected = "; ".join(f.description for f in formats)
    raise UnrecognizedFormat(
        path,
        "no known format recognized in its first 64 KiB",
        hint=f"expected one of: {expected}",
    )
