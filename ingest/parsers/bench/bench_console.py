"""The ``Serving Benchmark Result`` summary that sglang.bench_serving and vllm bench serve print.

Both print, to a terminal, a block like::

    ============ Serving Benchmark Result ============
    Backend:                                 sglang
    Successful requests:                     64
    ---------------Time to First Token----------------
    Mean TTFT (ms):                          7252.11
    ==================================================

which people paste into issues and notes. Each block becomes one ``bench_serving``
row; a file may hold several. Rows are ``Label: value``; labels are normalized
(lower case, runs of non-alphanumerics to ``_``: ``Mean TTFT (ms)`` ->
``mean_ttft_ms``) and mapped to columns through ``LABEL_ALIASES``, which covers
SGLang's and vLLM's spellings (vLLM's ``Total Token throughput``, SGLang's
Jan-2025 ``Max reqeuest concurrency``). Values ``not set``/``None`` are null,
``inf`` is infinity. Labels nobody declared go to ``extra`` under their
normalized name, as do ``key: value`` lines printed just before a block (a
wrapper's ``batch size: 64``; vLLM's ``Traffic request rate: inf`` lands in its
column). The layout says which tool printed a block (``TOOL_MARKERS``).

A block ends at its closing ``=====`` line, at the next banner, or at the end of
the file (pasted excerpts are often cut short: what is there is kept). Section
rulers (``----Time to First Token----``) only structure the block.

**Section only.** vLLM prints its ``---Speculative Decoding---`` section last,
just before the closing rule (``vllm/benchmarks/serve.py``: ``Acceptance rate
(%)``, ``Acceptance length``, ``Drafts``, ``Draft tokens``, ``Accepted tokens``,
``Per-position acceptance (%)``), and people asking about acceptance paste only
that section. Outside a block, that ruler starts a block of its own: one row
with ``accept_length`` and the section's rows in ``extra`` like a whole block's,
``tool`` "vllm bench serve" (no other tool prints the section), and a warning
that the result block above it, with throughput and latency, was not pasted
(those columns are null, not 0).

Deliberately ignored: other lines (tqdm bars, shell prompts, logs), counted in ``skipped``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import (
    NULL_TEXTS,
    as_float,
    extra_json,
    map_record,
)
from ingest.parsers.bench.bench_serving import engine_of
from ingest.reader import text_lines
from ingest.tables import BENCH_SERVING, table_from_rows

KIND = "bench_serving_console"

BANNER = re.compile(r"=+\s*Serving Benchmark Result\s*=+")
# vLLM's last section, "{:-^50}".format("Speculative Decoding"); outside a block it starts one.
SPEC_SECTION = re.compile(r"^\s*-{3,}\s*Speculative Decoding\s*-{3,}\s*$")
SPEC_SECTION_ROW = re.compile(r"(?m)^\s*Acceptance (?:length|rate \(%\)):\s+\S")
SECTION_TOOL = "vllm bench serve"
CLOSING_RULE = re.compile(r"^\s*={10,}\s*$")
SECTION_RULE = re.compile(r"^\s*-{3,}[^-].*?-{3,}\s*$")
ROW = re.compile(r"^\s*(?P<label>[A-Za-z][\w .()/%#,'-]{0,80}?)\s*:\s+(?P<value>\S.*?)\s*$")
HEADER_ROW = re.compile(r"^\s*[A-Za-z][\w .()/%#,'-]{0,80}:\s*$")  # "Per-position acceptance (%):"
# Numbered rows collected into one list in extra: vLLM's "  Position 0:  74.00" under
# "Per-position acceptance (%):".
INDEXED_LABELS: dict[str, str] = {"position": "per_position_acceptance_pct"}
INDEXED = re.compile(r"^(?P<stem>[a-z_]+?)_(?P<index>\d+)$")
PREAMBLE_KEPT = 20  # key: value lines just before a banner kept as its preamble

# bench_serving column <- normalized labels (see ``label_key``), SGLang and vLLM spellings.
LABEL_ALIASES: dict[str, tuple[str, ...]] = {
    "backend": ("backend",),
    "request_rate": ("traffic_request_rate", "request_rate"),
    "max_concurrency": ("max_request_concurrency", "max_reqeuest_concurrency", "maximum_request_concurrency"),
    "completed": ("successful_requests",),
    "duration_s": ("benchmark_duration_s",),
    "total_input_tokens": ("total_input_tokens",),
    "total_output_tokens": ("total_generated_tokens",),
    "request_throughput": ("request_throughput_req_s",),
    "input_throughput": ("input_token_throughput_tok_s",),
    "output_throughput": ("output_token_throughput_tok_s",),
    "mean_ttft_ms": ("mean_ttft_ms",),
    "median_ttft_ms": ("median_ttft_ms",),
    "p99_ttft_ms": ("p99_ttft_ms",),
    "mean_tpot_ms": ("mean_tpot_ms",),
    "median_tpot_ms": ("median_tpot_ms",),
    "mean_itl_ms": ("mean_itl_ms",),
    "median_itl_ms": ("median_itl_ms",),
    "p99_itl_ms": ("p99_itl_ms",),
    "mean_e2e_latency_ms": ("mean_e2e_latency_ms", "mean_e2el_ms"),
    "accept_length": ("accept_length", "acceptance_length"),
}

# Raw labels only one tool prints; the first found decides. SGLang prints "Backend:" in the block
# and "Accept length"; vLLM capitalized "Total Token throughput" until late 2025 and prints
# failed/peak counts, E2EL and "Acceptance length".
TOOL_MARKERS: tuple[tuple[str, str], ...] = (
    ("Backend", "sglang.bench_serving"),
    ("Total generated tokens (retokenized)", "sglang.bench_serving"),
    ("Accept length", "sglang.bench_serving"),
    ("Total Token throughput (tok/s)", "vllm bench serve"),
    ("Failed requests", "vllm bench serve"),
    ("Peak output token throughput (tok/s)", "vllm bench serve"),
    ("Mean E2EL (ms)", "vllm bench serve"),
    ("Acceptance length", "vllm bench serve"),
)
DEFAULT_TOOL = "sglang.bench_serving"
TOOL_ENGINE = {"sglang.bench_serving": "sglang", "vllm bench serve": "vllm"}

NOISE = "not part of a result block"
EMPTY_BLOCK = "result block without rows"


@dataclass(frozen=True)
class Row:
    line_no: int
    label: str  # as printed
    value: str  # as printed


@dataclass
class Block:
    line_no: int
    preamble: dict[str, Row]  # label key -> row
    rows: dict[str, Row] = field(default_factory=dict)
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    section_only: bool = False  # a pasted "Speculative Decoding" section without its banner


def label_key(label: str) -> str:
    """``Mean TTFT (ms)`` -> ``mean_ttft_ms``; ``Acceptance rate (%)`` -> ``acceptance_rate_pct``."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower().replace("%", " pct ")).strip("_")


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    if BANNER.search(text):
        return True
    # A section-only paste: the ruler alone is not enough (a note may name the section), its rows are.
    return any(SPEC_SECTION.match(line) for line in text.splitlines()) and SPEC_SECTION_ROW.search(text) is not None


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND)
    with text_lines(path) as lines:
        blocks = read_blocks(lines, parsed)
    if not blocks:
        raise MalformedInput(
            path,
            "no 'Serving Benchmark Result' block or 'Speculative Decoding' section found",
            hint="paste the whole summary, from the ==== Serving Benchmark Result ==== banner to the closing ==== line",
        )
    for empty in (block for block in blocks if not block.rows):
        parsed.skipped[EMPTY_BLOCK] += 1
        parsed.warnings.append(f"{path}:{empty.line_no}: a {block_name(empty)} with no rows after it; skipped")
    blocks = [block for block in blocks if block.rows]
    if not blocks:
        raise MalformedInput(
            path,
            "no rows after the 'Serving Benchmark Result' banner or the 'Speculative Decoding' ruler",
            hint="paste the whole summary, from the ==== Serving Benchmark Result ==== banner to the closing ==== line",
        )
    for section in (block for block in blocks if block.section_only):
        parsed.warnings.append(
            f"{path}:{section.line_no}: a 'Speculative Decoding' section without its 'Serving Benchmark Result' "
            "banner: the result block's throughput and latency rows are missing (their columns are null)"
        )
    rows = [block_row(path, parsed, index, block) for index, block in enumerate(blocks)]
    parsed.engine = engine_of(rows, default=TOOL_ENGINE[rows[0]["tool"]])
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", rows)
    return parsed


def read_blocks(lines: Iterable[str], parsed: ParsedSource) -> list[Block]:
    blocks: list[Block] = []
    preamble: dict[str, Row] = {}
    current: Block | None = None
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if BANNER.search(text):  # may follow a tqdm bar on the same line
            current = Block(line_no, preamble)
            blocks.append(current)
            preamble = {}
            continue
        if current is not None and CLOSING_RULE.match(text):
            current = None
            continue
        if current is None and SPEC_SECTION.match(text):
            current = Block(line_no, preamble, section_only=True)
            blocks.append(current)
            preamble = {}
            continue
        if not text.strip() or (current is not None and (SECTION_RULE.match(text) or HEADER_ROW.match(text))):
            continue
        row = ROW.match(text)
        if row is None:
            parsed.skipped[NOISE] += 1
            continue
        key = label_key(row["label"])
        printed = Row(line_no, row["label"], row["value"])
        if current is None:
            preamble[key] = printed
            preamble = dict(list(preamble.items())[-PREAMBLE_KEPT:])
        elif key in current.rows:
            current.duplicates.append((line_no, row["label"]))
        else:
            current.rows[key] = printed
    parsed.lines_read = line_no
    return blocks


def block_row(path: Path, parsed: ParsedSource, record_index: int, block: Block) -> dict[str, Any]:
    for line_no, label in block.duplicates:
        parsed.warnings.append(f"{path}:{line_no}: label {label!r} repeated in one block; the first value is kept")
    printed = {**block.preamble, **block.rows}  # the block's own rows win over the preamble
    values, lists = split_indexed({key: row.value for key, row in printed.items()})
    mapped = map_record(values, LABEL_ALIASES, BENCH_SERVING)
    for key, problem in mapped.problems:
        row = printed[key]
        parsed.warnings.append(f"{path}:{row.line_no}: label {row.label!r}: {problem}")
    extra = {key: printed_value(value) for key, value in mapped.extra.items()}
    extra.update({key: [printed_value(value) for value in items] for key, items in lists.items()})
    return {
        **mapped.row,
        "record_index": record_index,
        "line_no": block.line_no,
        "tool": SECTION_TOOL if block.section_only else tool_of(block),
        "extra": extra_json(extra),
    }


def split_indexed(values: dict[str, str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Numbered rows (``position_0``, ``position_1``...) of ``INDEXED_LABELS`` as lists, by index."""
    plain: dict[str, str] = {}
    numbered: dict[str, dict[int, str]] = {}
    for key, value in values.items():
        match = INDEXED.match(key)
        if match and match["stem"] in INDEXED_LABELS:
            numbered.setdefault(INDEXED_LABELS[match["stem"]], {})[int(match["index"])] = value
        else:
            plain[key] = value
    return plain, {name: [items[i] for i in sorted(items)] for name, items in numbered.items()}


def block_name(block: Block) -> str:
    return "'Speculative Decoding' ruler" if block.section_only else "'Serving Benchmark Result' banner"


def tool_of(block: Block) -> str:
    labels = {row.label for row in block.rows.values()}
    return next((tool for marker, tool in TOOL_MARKERS if marker in labels), DEFAULT_TOOL)


def printed_value(text: Any) -> Any:
    """A printed value for ``extra``: a number when it reads as one, null for "not set", else the text."""
    if not isinstance(text, str):
        return text
    if text.strip().lower() in NULL_TEXTS:
        return None
    if re.fullmatch(r"[+-]?\d+", text.strip()):  # a count: exact, and as printed when beyond int64
        return int(text) if len(text.strip().lstrip("+-")) <= 18 else text.strip()
    number, problem = as_float(text)
    if problem or number is None:
        return text
    return number


FORMAT = Format(
    kind=KIND,
    description=(
        "benchmark console summary (the 'Serving Benchmark Result' block of sglang.bench_serving / vllm bench serve, "
        "or vLLM's 'Speculative Decoding' section alone)"
    ),
    sniff=sniff,
    signs=(
        Sign('=+ ?Serving Benchmark Result ?=+', "the '==== Serving Benchmark Result ====' banner"),
        Sign('^\\s*Output token throughput \\(tok/s\\):', "an 'Output token throughput (tok/s):' row"),
        Sign('^\\s*(Successful requests|Benchmark duration \\(s\\)):', "'Successful requests:' and 'Benchmark duration (s):' rows"),
        Sign('-+ ?Speculative Decoding ?-+', "a 'Speculative Decoding' section"),
        Sign('^\\s*(Acceptance rate \\(%\\)|Acceptance length|Draft tokens|Accepted tokens):\\s+[\\d.]+', "spec-decode rows ('Acceptance rate (%):')"),
    ),
    parse=parse,
    example="============ Serving Benchmark Result ============",
    precedence=70,
)

FORMATS = (FORMAT,)
