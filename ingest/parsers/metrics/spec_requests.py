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
  A whole AIPerf export (records whose metrics are ``{"value", "unit"}``) is the ``aiperf_records_jsonl``
  format (``ingest/parsers/bench/aiperf.py``), which loads its runs and gives these rows with this module's
  ``spec_objects``/``request_row``; this format keeps AIPerf fragments without such metrics (the docs' example).

One ``acceptance_requests`` row per request. Checks that refuse the file, naming the line: a histogram
whose counts do not sum to the steps; an acceptance rate above 1 (a percentage where a fraction
belongs). An accepted count that disagrees with the histogram is a warning (AIPerf's illustrative doc
values do). Tolerated, because published samples carry them though the engines' output is valid JSON:
``[ ... ]``/``{ ... }`` placeholders (read as empty) and key/value fragments between objects (skipped,
counted). Unknown keys of the spec object go to ``extra``; everything else in the response is ignored.

Speed (issue #19 "Scale", ``bench/bench_acceptance.py``): the common line, one vLLM response with
``metrics.speculative_decoding``, takes a fast path (msgspec into typed structs, then whole columns at once,
below ``parse``) that gives the same rows, warnings and errors as the general path (tests/test_acceptance_fast_path.py).
"""
from __future__ import annotations

import gc
import itertools
import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.reader import text_lines
from ingest.tables import SCHEMAS, table_from_rows

KIND = "spec_request_json"
MAX_BUCKET = 4096
MARKER = re.compile(rb'"(?:speculative_decoding|speculative_decoding_stats|spec_decode_acceptance)"\s*:\s*\{|"spec_verify_ct"\s*:')
# An AIPerf profile_export.jsonl record: its metrics are {"value": …, "unit": …}. Such a file is read by
# ingest/parsers/bench/aiperf.py, which loads its runs and, through this module's functions, its spec rows.
AIPERF_RECORD = re.compile(rb'"metrics"\s*:\s*\{\s*"\w+"\s*:\s*\{\s*"value"\s*:')
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
    """A spec-decode statistics object in the first 64 KiB, with JSON's double-quoted keys, outside an AIPerf
    per-request export (whose records the ``aiperf_records_jsonl`` format reads, spec fields included)."""
    return MARKER.search(head) is not None and AIPERF_RECORD.search(head) is None


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: a million decoded records hold no cycles, but its passes over
    them took half of a 657 MB parse (13 s → 7 s measured); reference counting still frees everything."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    with no_cyclic_gc():
        return _parse(path)


def _parse(path: Path) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="vllm")
    tables: list[pa.Table] = []
    rows: list[dict[str, Any]] = []  # the general path's rows since the last fast batch
    batch: list[tuple[int, _Response]] = []  # fast-path lines since the last general row
    count = 0
    warned = 0  # len(parsed.warnings) when the batch was last looked at

    def flush() -> None:
        """Rows so far into ``tables``, in file order; a fast batch's checks run (and raise) here."""
        nonlocal rows, batch, count, warned
        if rows:
            tables.append(table_from_rows("acceptance_requests", rows))
            rows = []
        if batch:
            table, found = fast_table(path, count, batch)
            parsed.warnings[warned:warned] = found  # before any warning about a later line
            tables.append(table)
            count += len(batch)
            batch = []
        warned = len(parsed.warnings)

    try:
        for line_no, value in json_objects(path, parsed):
            if len(parsed.warnings) != warned and batch:  # a later line was skipped with a warning
                flush()
            if isinstance(value, _Response):
                if rows:
                    flush()
                if not batch:
                    warned = len(parsed.warnings)
                batch.append((line_no, value))
                continue
            if batch:
                flush()
            for found in spec_objects(value):
                rows.append(request_row(path, parsed, line_no, count, value, *found))
                count += 1
    except MalformedInput:
        flush()  # an earlier fast line's error is the first one in the file
        raise
    flush()
    if not tables:
        raise MalformedInput(
            path, "no per-request spec-decode statistics found",
            hint="expected metrics.speculative_decoding (vLLM), meta_info spec_* fields (SGLang) or "
                 "spec_decode_acceptance (AIPerf) in JSON objects",
        )
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    engines = set(pc.unique(table["engine"]).to_pylist())
    parsed.engine = str(engines.pop()) if len(engines) == 1 else "mixed"
    parsed.tables["acceptance_requests"] = table
    return parsed


# --- the fast path: one vLLM response per line ------------------------------------------------------
# A million responses must ingest faster than ``json.loads`` reads them (issue #19 "Scale"). The common
# line — a vLLM response whose only spec object is ``metrics.speculative_decoding`` with vLLM's known
# keys — is decoded by msgspec into the few fields read below, skipping the rest (choices, message
# text) without building it. The types do the checks ``whole``/``number`` do (counts are non-negative
# ints, the rest finite numbers, no bools): a line that does not fit them exactly (another or a second
# spec object, an unknown spec key, ``1.0`` as a count, a placeholder, NaN, a multi-line object) fails
# the decode and goes through the general path, so both paths give the same rows. Runs of such lines
# become columns at once (``fast_table``): the same ``identify`` choices, the same ``check``s with the
# same messages and warnings, raised at the first bad line of the run before any later line is read.

Bucket = Annotated[int, msgspec.Meta(ge=0, le=2**31)]  # bounds keep the sums below in int64
Total = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Buckets = Annotated[list[Bucket], msgspec.Meta(max_length=MAX_BUCKET + 1)]
UNSET: Any = msgspec.UNSET


class _VllmSpec(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """``metrics.speculative_decoding`` with exactly the keys of ``VLLM_FIELDS``."""

    mean_acceptance_length: float | None = None
    draft_acceptance_rate: float | None = None
    acceptance_histogram: Buckets | None = None
    num_spec_steps: Total | None = None
    num_accepted_draft_tokens: Total | None = None
    num_draft_tokens: Total | None = None
    num_spec_tokens: Total | None = None


class _Labelled(msgspec.Struct, gc=False):
    """The ``DATASET_KEYS`` ``identify`` reads, from the record or its holder."""

    dataset: Any = UNSET
    dataset_name: Any = UNSET
    category: Any = UNSET
    task: Any = UNSET


class _Tokens(_Labelled, gc=False):
    """The keys ``identify`` reads for token counts (from the holder or ``usage``; a usage's labels go unread)."""

    input_sequence_length: Any = UNSET
    prompt_tokens: Any = UNSET
    output_sequence_length: Any = UNSET
    completion_tokens: Any = UNSET


class _Metrics(_Tokens, kw_only=True, gc=False):
    """The response's ``metrics``: the spec object and what ``identify`` reads from the holder."""

    speculative_decoding: _VllmSpec
    rid: Any = UNSET


class _Response(_Labelled, kw_only=True, gc=False):
    """What ``identify`` reads from a response record, and its ``metrics``."""

    metrics: _Metrics
    id: Any = UNSET
    metadata: Any = UNSET
    usage: _Tokens | None = None


FAST_DECODER = msgspec.json.Decoder(_Response)
_NO_USAGE = _Tokens()
FAST_ORIGIN = "vLLM speculative_decoding"
DERIVED_EXTRA = json.dumps({"accept_length_from": "1 + accepted drafts ÷ steps"}, ensure_ascii=False)


# A line holding any of these is read by the general path: escapes and placeholders (msgspec and json
# would read them differently), and spec objects of other shapes.
HANDED_OVER = ("\\u", "...", '"speculative_decoding_stats"', '"spec_decode_acceptance"', '"spec_verify_ct"')
SPEC_KEY = '"speculative_decoding"'
FAST_CHUNK = 4096  # lines whose hand-over checks run once, over their joined text


def _hands_over(text: str) -> bool:
    """Whether ``text`` holds one of ``HANDED_OVER`` (spelled out: a generator over them costs a line ~2 µs)."""
    return ("\\u" in text or "..." in text or '"speculative_decoding_stats"' in text or '"spec_decode_acceptance"' in text
            or '"spec_verify_ct"' in text)


def fast_decode(line: str) -> _Response | None:
    """The line as a ``_Response`` when the fast path reads it exactly as the general one would, else None."""
    if line.count(SPEC_KEY) != 1 or _hands_over(line):
        return None
    return _decoded(line)


def _decoded(line: str) -> _Response | None:
    try:
        return FAST_DECODER.decode(line)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None


def fast_lines(lines: list[str]) -> list[_Response | None]:
    """``fast_decode`` of each line that starts a JSON object (None for the others), with the hand-over checks
    run once over the lines' joined text when no line trips one: the common file, one response per line."""
    text = "".join(lines)
    if not _hands_over(text):
        decoded = [_decoded(line) if line.startswith("{") else None for line in lines]
        # each decoded line holds the key at least once (the struct requires it): equal counts mean exactly once
        if text.count(SPEC_KEY) == sum(value is not None for value in decoded):
            return decoded
    return [fast_decode(line) if line.startswith("{") else None for line in lines]


def _given(value: Any) -> Any:
    return None if value is UNSET else value


def _token(value: Any) -> int | None:
    value = value.get("value") if isinstance(value, dict) else value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _pick(held: Any, used: Any) -> int | None:
    """One token-count key: the holder's value if it has the key, else usage's."""
    value = used if held is UNSET else held
    if type(value) is int:
        return value
    return None if value is UNSET or value is None else _token(value)


def _counts(holder: _Tokens, usage: _Tokens | None) -> tuple[int | None, int | None]:
    """``identify``'s token counts (input, output): each name in turn, ``{"value": n}`` unwrapped."""
    used = usage if usage is not None else _NO_USAGE
    inputs = _pick(holder.input_sequence_length, used.input_sequence_length)
    if inputs is None:
        inputs = _pick(holder.prompt_tokens, used.prompt_tokens)
    outputs = _pick(holder.output_sequence_length, used.output_sequence_length)
    if outputs is None:
        outputs = _pick(holder.completion_tokens, used.completion_tokens)
    return inputs, outputs


def _identity(response: _Response) -> tuple[str | None, str | None, int | None, int | None]:
    """(request id, dataset, input tokens, output tokens) as ``identify`` finds them."""
    metrics = response.metrics
    metadata: dict[str, Any] = response.metadata if isinstance(response.metadata, dict) else {}
    found = response.id
    if found is UNSET or not found:
        found = metadata.get("x_request_id") or _given(metrics.rid)
    dataset = None
    for value in (response.dataset, response.dataset_name, response.category, response.task):
        if isinstance(value, str):
            dataset = value
            break
    else:  # then the metadata's, then the holder's (identify's order of sources)
        candidates = itertools.chain((metadata.get(key) for key in DATASET_KEYS), (getattr(metrics, key) for key in DATASET_KEYS))
        dataset = next((value for value in candidates if isinstance(value, str)), None)
    inputs, outputs = _counts(metrics, response.usage)
    return None if found is None else str(found), dataset, inputs, outputs


def _identities(responses: list[_Response]) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """``_identity`` of each response as four columns. The common response (a string id, a string top-level
    dataset, token counts in ``usage`` only, as ints) is read column by column; any other, one by one."""
    ids = [response.id for response in responses]
    datasets = [response.dataset for response in responses]
    usages = [response.usage for response in responses if response.usage is not None]
    common = (
        len(usages) == len(responses)
        and all(type(found) is str and found for found in ids)
        and all(type(dataset) is str for dataset in datasets)
        and all(metrics.input_sequence_length is UNSET and metrics.prompt_tokens is UNSET
                and metrics.output_sequence_length is UNSET and metrics.completion_tokens is UNSET
                for metrics in (response.metrics for response in responses))
        and all(used.input_sequence_length is UNSET and used.output_sequence_length is UNSET
                and type(used.prompt_tokens) is int and type(used.completion_tokens) is int for used in usages)
    )
    if common:
        return ids, datasets, [used.prompt_tokens for used in usages], [used.completion_tokens for used in usages]
    columns = zip(*(_identity(response) for response in responses), strict=True)
    request_ids, found_datasets, inputs, outputs = (list(column) for column in columns)
    return request_ids, found_datasets, inputs, outputs


def _floats(values: list[Any]) -> np.ndarray:
    return pa.array(values, pa.float64()).to_numpy(zero_copy_only=False)


def fast_table(path: Path, first: int, batch: list[tuple[int, _Response]]) -> tuple[pa.Table, list[str]]:
    """The ``acceptance_requests`` rows of a run of fast lines, checked as ``check`` checks; its warnings."""
    line_nos = [line_no for line_no, _ in batch]
    specs: list[_VllmSpec] = [response.metrics.speculative_decoding for _, response in batch]
    rates = [spec.draft_acceptance_rate for spec in specs]
    steps = [spec.num_spec_steps for spec in specs]
    accepted = [spec.num_accepted_draft_tokens for spec in specs]
    histograms = pa.array([spec.acceptance_histogram or None for spec in specs], pa.list_(pa.int64()))
    rate = _floats(rates)
    bad_rate = (rate < 0.0) | (rate > 1.0)
    offsets = histograms.offsets.to_numpy()
    values = histograms.values.to_numpy()
    lengths = np.diff(offsets)
    starts = np.repeat(offsets[:-1], lengths)
    sums = np.concatenate(([0], np.cumsum(values)))
    implied_all = np.concatenate(([0], np.cumsum(values * (np.arange(len(values)) - starts))))
    total = sums[offsets[1:]] - sums[offsets[:-1]]
    implied = implied_all[offsets[1:]] - implied_all[offsets[:-1]]
    has_histogram = histograms.is_valid().to_numpy(zero_copy_only=False)
    steps_array = pa.array(steps, pa.int64())
    accepted_array = pa.array(accepted, pa.int64())
    step_count = steps_array.fill_null(0).to_numpy()
    accepted_count = accepted_array.fill_null(0).to_numpy()
    bad_sum = has_histogram & steps_array.is_valid().to_numpy(zero_copy_only=False) & (total != step_count)
    bad = np.flatnonzero(bad_rate | bad_sum)
    if len(bad):
        at = int(bad[0])
        if bad_rate[at]:
            raise MalformedInput(path, f"acceptance rate {rates[at]} is not a fraction between 0 and 1", line=line_nos[at],
                                 hint="these fields are fractions; a percentage here means another tool wrote the file")
        raise MalformedInput(
            path, f"acceptance histogram counts sum to {int(total[at])}, not to the {steps[at]} steps", line=line_nos[at],
            hint="each step accepts some number of drafts, so the histogram must count every step once",
        )
    disagree = has_histogram & accepted_array.is_valid().to_numpy(zero_copy_only=False) & (implied != accepted_count)
    warnings = [f"{path}:{line_nos[i]}: histogram implies {int(implied[i])} accepted drafts, the record says {accepted[i]}; both kept"
                for i in np.flatnonzero(disagree)]
    lengths_given = [spec.mean_acceptance_length for spec in specs]
    extra: list[str | None] = [None] * len(batch)
    for i, given in enumerate(lengths_given):
        drafts, spec_steps = accepted[i], steps[i]
        if given is None and drafts is not None and spec_steps:
            lengths_given[i] = 1 + drafts / spec_steps
            extra[i] = DERIVED_EXTRA
    request_ids, datasets, inputs, outputs = _identities([response for _, response in batch])
    n = len(batch)
    columns: dict[str, Any] = {
        "record_index": pa.array(np.arange(first, first + n, dtype=np.int32)),
        "request_index": pa.array(np.zeros(n, dtype=np.int32)),
        "line_no": line_nos,
        "request_id": request_ids,
        "engine": pa.repeat(pa.scalar("vllm"), n),
        "origin": pa.repeat(pa.scalar(FAST_ORIGIN), n),
        "dataset": datasets,
        "accept_length": lengths_given,
        "accepted_drafts": accepted_array,
        "draft_tokens": [spec.num_draft_tokens for spec in specs],
        "spec_steps": steps_array,
        "num_spec_tokens": [spec.num_spec_tokens for spec in specs],
        "accept_rate": rates,
        "histogram": histograms.cast(pa.list_(pa.float64())),
        "input_tokens": inputs,
        "output_tokens": outputs,
        "extra": extra,
    }
    schema = SCHEMAS["acceptance_requests"]
    return pa.table([pa.array(columns[f.name], f.type) if not isinstance(columns[f.name], pa.Array)
                     else columns[f.name].cast(f.type) for f in schema], schema=schema), warnings


UNREADABLE = "record too deep or a number too long"


def _too_big(error: Exception) -> str:
    return "nested too deep" if isinstance(error, RecursionError) else str(error).split(";")[0]


def _empty(match: re.Match[str]) -> str:
    return match.group(0)[0] + match.group(0)[-1]


def json_objects(path: Path, parsed: ParsedSource) -> Iterator[tuple[int, Any]]:
    """Every top-level JSON object: one per line (JSONL) or pretty-printed from a line starting with ``{``."""
    with text_lines(path) as lines:
        text_lines_ = [PLACEHOLDER.sub(_empty, line) if "..." in line else line for line in lines]
    parsed.lines_read = len(text_lines_)
    decoder = json.JSONDecoder()
    index = 0
    chunk: list[_Response | None] = []  # fast_lines of the lines from chunk_start on
    chunk_start = 0
    while index < len(text_lines_):
        line = text_lines_[index]
        if not line.startswith("{"):
            if line.strip():
                parsed.skipped[FRAGMENT] += 1
            index += 1
            continue
        if index >= chunk_start + len(chunk):
            chunk_start, chunk = index, fast_lines(text_lines_[index:index + FAST_CHUNK])
        fast = chunk[index - chunk_start]
        if fast is not None:
            yield index + 1, fast
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
    finish(row, extra)
    return row


def finish(row: dict[str, Any], extra: dict[str, Any]) -> None:
    """The accept length derived where the record has none, and ``extra`` as JSON."""
    if row.get("accept_length") is None and row.get("accepted_drafts") is not None and row.get("spec_steps"):
        row["accept_length"] = 1 + row["accepted_drafts"] / row["spec_steps"]
        extra["accept_length_from"] = "1 + accepted drafts ÷ steps"
    row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None


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
    signs=(
        Sign('"(speculative_decoding\\w*|spec_decode_acceptance|spec_\\w+)"\\s*:', "spec-decode fields ('speculative_decoding', 'spec_…')"),
        Sign('"(spec_accept_length|spec_accept_rate|mean_acceptance_length|acceptance_rate|num_accepted_tokens|spec_num_correct_drafts|accepted_tokens)"\\s*:',
             "an acceptance length, rate or accepted-token count"),
        Sign('"(spec_verify_ct|num_drafts|num_draft_tokens|spec_num_proposed_drafts|draft_tokens)"\\s*:', "a draft or verify-step count"),
    ),
    parse=parse,
    example='"speculative_decoding": {"mean_acceptance_length": 1.2325581395348837, … "acceptance_histogram": [39, 1, 0, 3], …',
    precedence=60,
)

FORMATS = (FORMAT,)
