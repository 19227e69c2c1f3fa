"""What the target generated, as token counts: the input of a drafter's coverage (docs/formats.md).

Coverage is the share of generated tokens that a drafter's draft vocabulary can express at all: an
upper bound on acceptance at every draft position (a token outside the draft vocabulary is never
proposed). Three shapes are read, each by its content:
- CSV with the header ``target_id,count`` (``token_id,count`` also), one row per token id;
- JSON ``{"token_counts": {"<id>": count, ...}}`` (optionally with ``"model"``), or with
  ``"token_counts"`` a list of ``{"target_id"|"token_id": id, "count": n}``;
- JSONL of output token ids, one generated sequence per line: ``{"output_ids": [...]}`` (SGLang's
  ``/generate`` with ``return_output_ids``-style responses), ``{"token_ids": [...]}`` (vLLM's
  ``CompletionOutput``) or ``{"output_token_ids": [...]}``; lines without such a key are skipped
  and counted.
Counts of one id are summed; negative ids or counts are an error naming the line.
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.reader import decode_text, read_all
from ingest.tables import TOKEN_COUNTS

CSV_HEADER = re.compile(rb"^\s*(target_id|token_id)\s*,\s*count\s*(\r?\n|$)")
JSON_HEAD = re.compile(rb'^\s*\{\s*("model"\s*:\s*"[^"]*"\s*,\s*)?"token_counts"\s*:')
JSONL_HEAD = re.compile(rb'^\s*\{[^\n]*"(output_ids|token_ids|output_token_ids)"\s*:\s*\[\s*-?\d')
ID_KEYS = ("output_ids", "token_ids", "output_token_ids")
HINT = "docs/formats.md (token counts) shows the three shapes read"


def sniff(head: bytes) -> bool:
    return bool(CSV_HEADER.match(head) or JSON_HEAD.match(head) or JSONL_HEAD.match(head))


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    raw = read_all(path)
    text = decode_text(path, raw)
    parsed = ParsedSource(kind=FORMAT.kind, engine="tokens")
    if CSV_HEADER.match(raw):
        counts = _csv(path, text, parsed)
    elif JSON_HEAD.match(raw):
        counts = _json(path, text)
    else:
        counts = _jsonl(path, text, parsed)
    if not counts:
        raise MalformedInput(path, "no token counts in the file", hint=HINT)
    ids = sorted(counts)
    parsed.tables["token_counts"] = pa.table(
        {"target_id": ids, "count": [counts[i] for i in ids]}, schema=TOKEN_COUNTS)
    return parsed


def _checked(path: Path, line: int | None, token: Any, count: Any) -> tuple[int, int]:
    try:
        token_id, number = int(token), int(count)
    except (TypeError, ValueError) as error:
        raise MalformedInput(path, f"not an integer token id and count ({token!r}, {count!r})", line=line, hint=HINT) from error
    if token_id < 0 or number < 0:
        raise MalformedInput(path, f"negative token id or count ({token_id}, {number})", line=line, hint=HINT)
    return token_id, number


def _csv(path: Path, text: str, parsed: ParsedSource) -> Counter[int]:
    counts: Counter[int] = Counter()
    reader = csv.reader(io.StringIO(text))
    next(reader)
    for line_no, row in enumerate(reader, start=2):
        parsed.lines_read += 1
        if not row or not "".join(row).strip():
            continue
        if len(row) < 2:
            raise MalformedInput(path, f"expected target_id,count, got {','.join(row)!r}", line=line_no, hint=HINT)
        token_id, number = _checked(path, line_no, row[0].strip(), row[1].strip())
        counts[token_id] += number
    return counts


def _json(path: Path, text: str) -> Counter[int]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedInput(path, f"not JSON ({error.msg})", line=error.lineno, hint=HINT) from error
    except (ValueError, RecursionError) as error:  # a 5,000-digit number, lists nested 5,000 deep
        raise MalformedInput(path, f"not token counts ({type(error).__name__})", hint=HINT) from error
    given = document.get("token_counts") if isinstance(document, dict) else None
    counts: Counter[int] = Counter()
    if isinstance(given, dict):
        for token, count in given.items():
            token_id, number = _checked(path, None, token, count)
            counts[token_id] += number
    elif isinstance(given, list):
        for entry in given:
            if not isinstance(entry, dict):
                raise MalformedInput(path, "token_counts entries must be objects {target_id, count}", key="token_counts", hint=HINT)
            token_id, number = _checked(path, None, entry.get("target_id", entry.get("token_id")), entry.get("count"))
            counts[token_id] += number
    else:
        raise MalformedInput(path, "token_counts must be an object {id: count} or a list", key="token_counts", hint=HINT)
    return counts


def _jsonl(path: Path, text: str, parsed: ParsedSource) -> Counter[int]:
    counts: Counter[int] = Counter()
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parsed.lines_read += 1
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise MalformedInput(path, f"not a JSON line ({error.msg})", line=line_no, hint=HINT) from error
        except (ValueError, RecursionError) as error:  # a 5,000-digit number, lists nested 5,000 deep
            raise MalformedInput(path, f"not a line of token ids ({type(error).__name__})", line=line_no, hint=HINT) from error
        ids = next((record[key] for key in ID_KEYS if isinstance(record, dict) and isinstance(record.get(key), list)), None)
        if ids is None:
            parsed.skipped["no output token ids"] += 1
            continue
        for token in ids:
            token_id, _ = _checked(path, line_no, token, 1)
            counts[token_id] += 1
    return counts


FORMAT = Format(
    kind="token_counts",
    description="tokens the target generated, for a drafter's coverage (target_id,count CSV; {\"token_counts\": …} JSON; "
                "JSONL of output_ids / token_ids)",
    sniff=sniff,
    signs=(
        Sign('^\\s*target_id\\s*,\\s*count', "a 'target_id,count' header"),
        Sign('"(token_counts|output_ids|token_ids)"\\s*:', "a 'token_counts' or 'output_ids' key"),
    ),
    parse=parse,
    example="target_id,count",
    precedence=15,
)
FORMATS = (FORMAT,)
