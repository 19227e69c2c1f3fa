"""Per-request speculative-decoding statistics, as vLLM, SGLang and AIPerf attach them to each request.

Which acceptance a *request* saw, to see through server-lifetime averages (docs/formats.md, "Per-request
acceptance"). Three shapes, each found inside a JSON object wherever it sits (a whole response, one
choice, an export record), so a file of responses, a JSONL of them or a pasted single object all read:

* **vLLM** ``metrics.speculative_decoding`` (response level, ``--per-request-spec-decode-metrics``,
  vllm PR #48915) or, in its earlier shape, ``speculative_decoding_stats`` on each choice:
  ``mean_acceptance_length`` (1 + accepted ÷ steps, bonus-inclusive), ``draft_acceptance_rate``
  (a fraction), ``acceptance_histogram`` (index or string key = drafts accepted in a step; a dense list
  or a sparse dict), ``num_spec_steps``, ``num_accepted_draft_tokens``, ``num_draft_tokens``,
  ``num_spec_tokens``; ``acceptance_histogram_by_draft_length`` is kept in ``extra``.
* **SGLang** ``meta_info`` spec fields (a response's ``meta_info``, or the fields alone):
  ``spec_verify_ct`` (verify steps), ``spec_accept_length`` (= completion tokens ÷ verify steps),
  ``spec_accept_rate`` (correct ÷ proposed drafts), ``spec_num_correct_drafts``,
  ``spec_num_proposed_drafts``, ``spec_correct_drafts_histogram`` (index = correct drafts in a step).
* **AIPerf** ``profile_export.jsonl`` records carrying ``spec_decode_acceptance`` (the vLLM fields plus
  ``engine``); the record's ``metadata.x_request_id`` and ``input/output_sequence_length`` identify it.
  AIPerf records without spec-decode fields are not this format (no sniffer claims them).

One ``acceptance_requests`` row per request. Checks that refuse the file, naming the line: a histogram
whose counts do not sum to the steps; an acceptance rate above 1 (a percentage where a fraction
belongs). An accepted count that disagrees with the histogram is a warning (AIPerf's illustrative doc
values do). Tolerated, because published samples carry them though the engines' output is valid JSON:
``[ ... ]``/``{ ... }`` placeholders (read as empty) and key/value fragments between objects (skipped,
counted). Unknown keys of the spec object go to ``extra``; everything else in the response is ignored.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions
from ingest.model import ParsedSource
from ingest.reader import text_lines
from ingest.tables import table_from_rows

KIND = "spec_request_json"
MAX_BUCKET = 4096
MARKER = re.compile(rb'"(?:speculative_decoding|speculative_decoding_stats|spec_decode_acceptance)"\s*:\s*\{|"spec_verify_ct"\s*:')
PLACEHOLDER = re.compile(r"\[\s*\.\.\.\s*\]|\{\s*\.\.\.\s*\}")
VLLM_HOLDERS = ("speculative_decoding", "speculative_decoding_stats")
AIPERF_HOLDER = "spec_decode_acceptance"
MAX_DEPTH = 4
# spec-object key -> acceptance_requests column, per shape (the rest of the object goes to extra).
VLLM_FIELDS = {
    "mean_acceptance_length": "accept_length",
    "draft_acceptance_rate": "accept_rate",
    "num_accepted_draft_tokens": "accepted_drafts",
    "num_draft_tokens": "draft_tokens",
    "num_spec_steps": "spec_steps",
    "num_spec_tokens": "num_spec_tokens",
    "acceptance_histogram": "histogram",
}
SGLANG_FIELDS = {
    "spec_accept_length": "accept_length",
    "spec_accept_rate": "accept_rate",
    "spec_num_correct_drafts": "accepted_drafts",
    "spec_num_proposed_drafts": "draft_tokens",
    "spec_verify_ct": "spec_steps",
    "spec_correct_drafts_histogram": "histogram",
    "completion_tokens": "output_tokens",
    "prompt_tokens": "input_tokens",
    "id": "request_id",
}
INT_COLUMNS = {"accepted_drafts", "draft_tokens", "spec_steps", "num_spec_tokens", "output_tokens", "input_tokens"}
DATASET_KEYS = ("dataset", "dataset_name", "category", "task")
FRAGMENT = "not a JSON object (a key/value fragment or text between objects)"


def sniff(head: bytes) -> bool:
    """A spec-decode statistics object in the first 64 KiB, with JSON's double-quoted keys."""
    return MARKER.search(head) is not None


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="vllm")
    rows: list[dict[str, Any]] = []
    for line_no, value in json_objects(path, parsed):
        for found in spec_objects(value):
            rows.append(request_row(path, parsed, line_no, len(rows), value, *found))
    if not rows:
        raise MalformedInput(
            path, "no per-request spec-decode statistics found",
            hint="expected metrics.speculative_decoding (vLLM), meta_info spec_* fields (SGLang) or "
                 "spec_decode_acceptance (AIPerf) in JSON objects",
        )
    engines = {row["engine"] for row in rows}
    parsed.engine = engines.pop() if len(engines) == 1 else "mixed"
    parsed.tables["acceptance_requests"] = table_from_rows("acceptance_requests", rows)
    return parsed


UNREADABLE = "record too deep or a number too long"


def _too_big(error: Exception) -> str:
    return "nested too deep" if isinstance(error, RecursionError) else str(error).split(";")[0]


def json_objects(path: Path, parsed: ParsedSource) -> Iterator[tuple[int, Any]]:
    """Every top-level JSON object: one per line (JSONL) or pretty-printed from a line starting with ``{``."""
    with text_lines(path) as lines:
        text_lines_ = [PLACEHOLDER.sub(lambda m: m.group(0)[0] + m.group(0)[-1], line) for line in lines]
    parsed.lines_read = len(text_lines_)
    decoder = json.JSONDecoder()
    index = 0
    while index < len(text_lines_):
        line = text_lines_[index]
        if not line.strip():
            index += 1
            continue
        if not line.startswith("{"):
            parsed.skipped[FRAGMENT] += 1
            index += 1
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            pass
        except (ValueError, RecursionError) as error:  # a number of thousands of digits, nesting thousands deep
            parsed.skipped[UNREADABLE] += 1
            parsed.warnings.append(f"{path}:{index + 1}: record skipped: {_too_big(error)}")
            index += 1
            continue
        else:
            yield index + 1, value
            index += 1
            continue
        rest = "".join(text_lines_[index:])
        try:
            value, end = decoder.raw_decode(rest)
        except json.JSONDecodeError as error:
            raise MalformedInput(path, f"JSON object does not parse: {error.msg}", line=index + 1 + rest.count("\n", 0, error.pos),
                                 hint="each record must be one JSON object") from error
        except (ValueError, RecursionError) as error:
            raise MalformedInput(path, f"JSON object cannot be read: {_too_big(error)}", line=index + 1,
                                 hint="each record must be one JSON object of ordinary size") from error
        yield index + 1, value
        index += rest.count("\n", 0, end) + 1


def spec_objects(value: Any, depth: int = 0) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(engine, origin, spec object, the object holding it) for each spec-statistics object inside ``value``."""
    if not isinstance(value, dict) or depth > MAX_DEPTH:
        return
    if "spec_verify_ct" in value:
        yield "sglang", "SGLang meta_info", value, value
        return
    for key in VLLM_HOLDERS:
        if isinstance(value.get(key), dict):
            yield "vllm", f"vLLM {key}", value[key], value
    if isinstance(value.get(AIPERF_HOLDER), dict):
        spec = value[AIPERF_HOLDER]
        yield str(spec.get("engine") or "aiperf"), "AIPerf spec_decode_acceptance", spec, value
    for key, inner in value.items():
        if key in VLLM_HOLDERS or key == AIPERF_HOLDER:
            continue
        if isinstance(inner, dict):
            yield from spec_objects(inner, depth + 1)
        elif isinstance(inner, list):
            for item in inner:
                yield from spec_objects(item, depth + 1)


def request_row(
    path: Path, parsed: ParsedSource, line_no: int, index: int, record: Any,
    engine: str, origin: str, spec: dict[str, Any], holder: dict[str, Any],
) -> dict[str, Any]:
    fields = SGLANG_FIELDS if origin.startswith("SGLang") else VLLM_FIELDS
    row: dict[str, Any] = {"record_index": index, "request_index": 0, "line_no": line_no, "engine": engine, "origin": origin}
    extra: dict[str, Any] = {}
    for key, value in spec.items():
        column = fields.get(key)
        if column is None:
            extra[key] = value
        elif column == "histogram":
            row[column] = dense_histogram(path, line_no, key, value)
        elif column in INT_COLUMNS:
            row[column] = whole(path, line_no, key, value)
        elif column == "request_id":
            row[column] = None if value is None else str(value)
        else:
            row[column] = number(path, line_no, key, value)
    if fields is SGLANG_FIELDS:
        extra = {key: value for key, value in extra.items() if key.startswith("spec_")}  # meta_info's other keys are not ours
        if row.get("histogram") is not None:
            row["num_spec_tokens"] = len(row["histogram"]) - 1
    identify(row, record, holder)
    check(path, parsed, line_no, row)
    if row.get("accept_length") is None and row.get("accepted_drafts") is not None and row.get("spec_steps"):
        row["accept_length"] = 1 + row["accepted_drafts"] / row["spec_steps"]
        extra["accept_length_from"] = "1 + accepted drafts ÷ steps"
    row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None
    return row


def identify(row: dict[str, Any], record: Any, holder: dict[str, Any]) -> None:
    """Request id, dataset and token counts from the surrounding response or export record."""
    if not isinstance(record, dict):
        return
    metadata: dict[str, Any] = record["metadata"] if isinstance(record.get("metadata"), dict) else {}
    if row.get("request_id") is None:
        found = record.get("id") or metadata.get("x_request_id") or holder.get("rid")
        row["request_id"] = None if found is None else str(found)
    sources: tuple[dict[str, Any], ...] = (record, metadata, holder)
    for source in sources:
        for key in DATASET_KEYS:
            if row.get("dataset") is None and isinstance(source.get(key), str):
                row["dataset"] = source[key]
    metrics: dict[str, Any] = record["metrics"] if isinstance(record.get("metrics"), dict) else {}
    usage: dict[str, Any] = record["usage"] if isinstance(record.get("usage"), dict) else {}
    for column, names in (("input_tokens", ("input_sequence_length", "prompt_tokens")),
                          ("output_tokens", ("output_sequence_length", "completion_tokens"))):
        for name in names:
            value = metrics.get(name, usage.get(name))
            value = value.get("value") if isinstance(value, dict) else value
            if row.get(column) is None and isinstance(value, int) and not isinstance(value, bool):
                row[column] = value


def check(path: Path, parsed: ParsedSource, line_no: int, row: dict[str, Any]) -> None:
    histogram, steps, accepted = row.get("histogram"), row.get("spec_steps"), row.get("accepted_drafts")
    rate = row.get("accept_rate")
    if rate is not None and not 0.0 <= rate <= 1.0:
        raise MalformedInput(path, f"acceptance rate {rate} is not a fraction between 0 and 1", line=line_no,
                             hint="these fields are fractions; a percentage here means another tool wrote the file")
    if histogram is not None and steps is not None and sum(histogram) != steps:
        raise MalformedInput(
            path, f"acceptance histogram counts sum to {sum(histogram)}, not to the {steps} steps", line=line_no,
            hint="each step accepts some number of drafts, so the histogram must count every step once",
        )
    if histogram is not None and accepted is not None:
        implied = sum(i * count for i, count in enumerate(histogram))
        if implied != accepted:
            parsed.warnings.append(
                f"{path}:{line_no}: histogram implies {implied} accepted drafts, the record says {accepted}; both kept"
            )


def dense_histogram(path: Path, line_no: int, key: str, value: Any) -> list[int] | None:
    """A list (index = drafts accepted) or a sparse dict with string keys, as a dense list."""
    if value is None:
        return None
    if isinstance(value, list):
        return [whole(path, line_no, key, count) or 0 for count in value] if value else None
    if isinstance(value, dict):
        try:
            counts = {int(k): whole(path, line_no, key, v) or 0 for k, v in value.items()}
        except ValueError as error:
            raise MalformedInput(path, f"{key}: bucket {error}", line=line_no, key=key) from error
        if not counts:
            return None
        if min(counts) < 0:
            raise MalformedInput(path, f"{key}: negative bucket {min(counts)}", line=line_no, key=key)
        if max(counts) > MAX_BUCKET:  # a bucket per accepted-draft count: engines draft a few dozen at most
            raise MalformedInput(path, f"{key}: bucket {max(counts)} is beyond {MAX_BUCKET} drafts", line=line_no, key=key)
        return [counts.get(i, 0) for i in range(max(counts) + 1)]
    raise MalformedInput(path, f"{key}: {type(value).__name__} is not a histogram", line=line_no, key=key)


def whole(path: Path, line_no: int, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or float(value) != int(value) or value < 0):
        raise MalformedInput(path, f"{key}: {value!r} is not a count", line=line_no, key=key)
    return int(value)


def number(path: Path, line_no: int, key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MalformedInput(path, f"{key}: {value!r} is not a finite number", line=line_no, key=key)
    return float(value)


FORMAT = Format(
    kind=KIND,
    description="per-request spec-decode statistics (vLLM metrics.speculative_decoding, SGLang meta_info spec_*, "
                "AIPerf spec_decode_acceptance)",
    sniff=sniff,
    parse=parse,
    example='"speculative_decoding": {"mean_acceptance_length": 1.2325581395348837, … "acceptance_histogram": [39, 1, 0, 3], …',
    precedence=60,
)

FORMATS = (FORMAT,)
