"""vLLM server logs: speculative-decoding metrics, engine throughput lines and the engine config.

Where it comes from: ``vllm serve ...`` (or the V0 ``api_server``) logs to stderr
every ``--log-stats`` interval (10 s by default): DOMAIN.md §5 and
docs/log-formats.md show every shape read.

What it reads, each line into one ``decode_stats`` row (engine "vllm"):

* ``SpecDecoding metrics: Mean acceptance length: 2.37, Accepted throughput: ...,
  Accepted: 89 tokens, Drafted: 975 tokens, Per-position acceptance rate: 0.600,
  0.385, ..., Avg Draft acceptance rate: 9.1%`` (V1, mid-2025 on), the April-2025
  ``SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted:
  66 tokens`` and the older ``Speculative metrics: Draft acceptance rate: 0.642, ...``
  (V0 and early V1; rates as fractions);
* ``[Engine 000: ]Avg prompt throughput: ..., Avg generation throughput: ..., Running:
  N reqs, ...`` → gen_throughput, running_req, queue_req, token_usage;
* ``Initializing a V1 LLM engine (v0.x) with config: model=..., speculative_config=...``
  and ``non-default args: {...}`` → a ``server_configs`` row (one per engine start).

Timestamps carry no year (``INFO 10-16 19:05:47``): it comes from ``options.year``,
else from a dated line in the file, else the ts stays null (one warning). Every
other line is counted in ``skipped`` by kind and otherwise ignored. These lines
are rare (one per interval), so candidates are found per block with Arrow and
read per line in Python.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.derive import accept
from ingest.derive.variants import chain_settings, variant_label
from ingest.errors import MalformedInput, UnrecognizedFormat
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.logs import log_lines, pyrepr
from ingest.parsers.logs.log_lines import VLLM_PREFIX, ProgressCallback
from ingest.parsers.logs.pyrepr import (
    ReprError,
    parse_call_repr,
    parse_dict_repr,
    parse_keyword_list,
)
from ingest.tables import table_from_rows

KIND = "vllm_log"
ENGINE = "vllm"

LINE = re.compile(rf"^{VLLM_PREFIX}(?P<message>.*?)\s*$")
MESSAGES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("spec", re.compile(r"^(?P<head>SpecDecoding metrics|Speculative metrics): (?P<payload>.*)$")),
    ("engine", re.compile(r"^(?:Engine (?P<engine>\d+): )?(?P<payload>Avg prompt throughput: .*)$")),
    ("config", re.compile(r"^Initializing an? (?:V1 )?LLM engine (?:\((?P<version>[^)]*)\) )?with config: (?P<payload>.*)$")),
    ("args", re.compile(r"^non-default args: (?P<payload>\{.*\})$")),
)
CANDIDATE = r"SpecDecoding metrics: |Speculative metrics: |Avg prompt throughput: |with config: |non-default args: "
SGLANG_CONTENT = r"(?:Decode|Prefill) batch(?:[.,]| \[)|server_args="

# "key: value" parts; a part without ": " continues the previous value (the per-position list).
VALUE = re.compile(r"^\[?(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\]?\s*(?P<unit>%|[A-Za-z/]+)?$")
LIST_KEYS = {"Per-position acceptance rate"}

# Logged key → decode_stats column, where the meaning matches SGLang's.
COLUMNS: dict[str, str] = {
    "Mean acceptance length": "accept_len_raw",
    "Avg Draft acceptance rate": "accept_rate_raw",
    "Draft acceptance rate": "accept_rate_raw",
    "Avg generation throughput": "gen_throughput",
    "Running": "running_req",
    "Waiting": "queue_req",  # V1
    "Pending": "queue_req",  # V0
    "GPU KV cache usage": "token_usage",  # percent in the log, a fraction in the column
}
INT_COLUMNS = {"running_req", "queue_req"}
INT32_LIMIT = 2**31
# Counter keys by their names across versions (accepted, drafted, emitted, k).
ACCEPTED = ("Accepted", "Number of accepted tokens")
DRAFTED = ("Drafted", "Number of draft tokens")
EMITTED = ("Number of emitted tokens",)
SPECULATIVE_TOKENS = ("Number of speculative tokens",)

EXPECTED_SHAPES = (
    "'INFO 10-16 19:05:47 metrics.py:367] SpecDecoding metrics: Mean acceptance length: 2.37, ...' "
    "(or 'Speculative metrics: Draft acceptance rate: ...', 'Engine 000: Avg prompt throughput: ...', "
    "'Initializing a V1 LLM engine (...) with config: ...')"
)


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    return any(_read_line(0, line) is not None for line in text.splitlines() if re.search(CANDIDATE, line))


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    return parse_with_progress(path, options, getattr(options, "on_progress", None))


@dataclass
class _Line:
    line_no: int
    kind: str
    month_day_time: tuple[int, int, str] | None
    match: re.Match[str]


@dataclass
class _BlockScan:
    """What one block holds; pure data, so blocks can be scanned on worker threads."""

    size: int
    lines: list[_Line]
    skipped: Counter[str]
    year: int | None  # of the block's first dated line, when asked for
    shows_sglang: bool
    sglang_lines: list[int]  # line numbers of SGLang stats/config lines (a mixed log)


@dataclass
class _Scan:
    path: Path
    lines: list[_Line]
    skipped: Counter[str]
    lines_read: int
    first_year: int | None
    looks_like_sglang: bool
    sglang_lines: list[int]

    @classmethod
    def of(cls, path: Path, blocks: list[_BlockScan]) -> _Scan:
        skipped: Counter[str] = Counter()
        for block in blocks:
            skipped.update(block.skipped)
        return cls(
            path,
            [line for block in blocks for line in block.lines],
            skipped,
            sum(block.size for block in blocks),
            next((block.year for block in blocks if block.year is not None), None),
            any(block.shows_sglang for block in blocks),
            [line_no for block in blocks for line_no in block.sglang_lines],
        )


def parse_with_progress(path: Path, options: ParseOptions, on_progress: ProgressCallback | None) -> ParsedSource:
    """Parse ``path``; ``on_progress(bytes_done, bytes_total)`` is called after each block when given."""
    scan_block = partial(_scan_block, need_year=options.year is None)
    scan = _Scan.of(path, log_lines.map_blocks(path, scan_block, on_progress))
    log_lines.check_engine(path, options, ENGINE if scan.lines else ("sglang" if scan.looks_like_sglang else None))
    if not scan.lines:
        raise UnrecognizedFormat(
            path,
            f"no vLLM spec-decode metrics, engine stats or engine config line in {scan.lines_read} lines",
            hint=f"expected lines like {EXPECTED_SHAPES}",
        )
    return _Reader(scan, options).result()


def _scan_block(data: np.ndarray, first_line_no: int, need_year: bool) -> _BlockScan:
    block = log_lines.make_block(data, first_line_no)
    candidates = pc.match_substring_regex(block.lines, CANDIDATE).to_numpy(zero_copy_only=False)
    read = np.zeros(block.size, dtype=bool)
    lines: list[_Line] = []
    for index in np.flatnonzero(candidates).tolist():
        line = _read_line(block.first_line_no + index, block.line_text(index))
        if line is not None:
            lines.append(line)
            read[index] = True
    rest = block.lines.filter(pa.array(~read))
    sglang = pc.match_substring_regex(block.lines, SGLANG_CONTENT).to_numpy(zero_copy_only=False) & ~read
    sglang_lines = (np.flatnonzero(sglang) + block.first_line_no).tolist()
    year = _first_year(block) if need_year else None
    return _BlockScan(block.size, lines, log_lines.count_noise(rest), year, not lines and bool(sglang_lines), sglang_lines)


YEAR_LOOKUP_LINES = 1000


def _first_year(block: log_lines.Block) -> int | None:
    """The year of the first dated line among the block's first lines. In vLLM logs a date comes
    from a capture wrapper (``kubectl logs --timestamps``, ...) that stamps every line, so the
    first lines tell; looking at all of them would cost more than the rest of the scan."""
    head = block.lines.slice(0, YEAR_LOOKUP_LINES)
    dated = np.flatnonzero(pc.match_substring_regex(head, log_lines.ANY_DATE.pattern).to_numpy(zero_copy_only=False))
    if len(dated) == 0:
        return None
    found = log_lines.ANY_DATE.match(block.line_text(int(dated[0])))
    return int(found["y"]) if found else None


def _read_line(line_no: int, text: str) -> _Line | None:
    match = LINE.match(text)
    if match is None:
        return None
    kind, message = _message_kind(match["message"])
    if kind is None or message is None:
        return None
    stamp = (int(match["v_month"]), int(match["v_day"]), match["v_time"]) if match["v_month"] else None
    return _Line(line_no, kind, stamp, message)


def _message_kind(message: str) -> tuple[str | None, re.Match[str] | None]:
    for kind, pattern in MESSAGES:
        found = pattern.match(message)
        if found:
            return kind, found
    return None, None


# --- from lines to rows ---------------------------------------------------------------------


class _Reader:
    def __init__(self, scan: _Scan, options: ParseOptions) -> None:
        self.scan = scan
        self.year = options.year or scan.first_year
        self.warnings: list[str] = []
        self.skipped = Counter(scan.skipped)
        self.configs: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.segment = 0
        self.stats_in_segment = False
        self.spec_tokens: int | None = None  # k of the current segment
        self.positions: list[dict[str, Any]] = []  # acceptance_positions rows (migration 017)

    def result(self) -> ParsedSource:
        stamps = _Stamps(self.year)
        for line in self.scan.lines:
            ts = stamps.timestamp(line.month_day_time)
            if ts is None and line.month_day_time is not None and stamps.year is not None:
                month, day, time = line.month_day_time
                self.warnings.append(
                    f"{self.scan.path}:{line.line_no}: impossible date {month:02d}-{day:02d} {time} in {stamps.year}: "
                    "timestamp left empty"
                )
            read = {"spec": self._spec_row, "engine": self._engine_row, "config": self._config, "args": self._config}[line.kind]
            try:
                read(line, ts)
            except ValueError as error:
                self.skipped[f"malformed {line.kind} line"] += 1
                self.warnings.append(f"{self.scan.path}:{line.line_no}: {error}")
        if self.scan.lines and self.scan.sglang_lines:  # a mixed log: say what was not read, and where
            lines = self.scan.sglang_lines
            self.warnings.append(
                f"{self.scan.path}:{lines[0]}: {len(lines)} SGLang stats or server_args lines in a file read as a vLLM "
                "log were not loaded (counted as other lines) — give each server its own log file"
            )
        if stamps.missing_year:
            self.warnings.append(
                f"{self.scan.path}: timestamps left empty on {stamps.missing_year} lines: vLLM prints no year "
                "and no dated line was found — pass the year (ParseOptions.year / --year)"
            )
        return ParsedSource(
            kind=KIND,
            engine=ENGINE,
            tables={
                "server_configs": table_from_rows("server_configs", self.configs),
                "decode_stats": table_from_rows("decode_stats", self.rows),
                "prefill_stats": table_from_rows("prefill_stats", []),
                # only when the log prints per-position rates (migration 017)
                **({"acceptance_positions": table_from_rows("acceptance_positions", self.positions)} if self.positions else {}),
            },
            skipped=+self.skipped,
            warnings=self.warnings,
            lines_read=self.scan.lines_read,
        )

    def _spec_row(self, line: _Line, ts: datetime | None) -> None:
        values, extra = read_pairs(line.match["payload"])
        percent = extra.pop("rate_is_percent", None)
        if percent is not None:
            extra["accept_rate_unit"] = "percent" if percent else "fraction"
        extra["source"] = line.match["head"]
        k = _first(extra, SPECULATIVE_TOKENS) or self.spec_tokens
        row = self._row(line, ts, values, extra)
        row.update(derive_accept(row.get("accept_len_raw"), extra, k))
        self.rows.append(row)
        self.positions += position_rows(self.scan.path, self.segment, line.line_no, ts, extra, k)

    def _engine_row(self, line: _Line, ts: datetime | None) -> None:
        values, extra = read_pairs(line.match["payload"])
        extra.pop("rate_is_percent", None)
        extra["source"] = "engine stats"
        if line.match["engine"] is not None:
            extra["engine_index"] = int(line.match["engine"])
        row = self._row(line, ts, values, extra)
        if row.get("token_usage") is not None:
            row["token_usage"] = row["token_usage"] / 100.0
        self.rows.append(row)

    def _row(self, line: _Line, ts: datetime | None, values: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        self.stats_in_segment = True
        row: dict[str, Any] = {"segment": self.segment, "line_no": line.line_no, "ts": ts, **values}
        if ts is None and line.month_day_time is not None:
            extra["log_time"] = "{:02d}-{:02d} {}".format(*line.month_day_time)
        row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None
        return row

    def _config(self, line: _Line, ts: datetime | None) -> None:
        config = read_config(line.kind, line.match["payload"])
        if line.kind == "config" and line.match["version"]:
            config.setdefault("vllm_version", line.match["version"])
        if self.configs and not self.stats_in_segment:
            self._merge_into_last(config)  # "non-default args" and the engine config of one start-up
            return
        if self.configs or self.stats_in_segment:
            self.segment += 1
        self.stats_in_segment = False
        self.configs.append(_config_row(self.segment, line.line_no, ts, config))
        self.spec_tokens = _spec_tokens(config)

    def _merge_into_last(self, config: dict[str, Any]) -> None:
        last = self.configs[-1]
        merged = {**json.loads(last["args"]), **config}
        self.configs[-1] = _config_row(last["segment"], last["line_no"], last["ts"], merged)
        self.spec_tokens = _spec_tokens(merged)


def read_pairs(payload: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """vLLM ``Key: value unit, ...`` → (decode_stats columns, extra). Values keep their unit in the key."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    pairs: list[tuple[str, list[str]]] = []
    for part in payload.strip().rstrip(".").rstrip(", ").split(", "):
        key, sep, value = part.partition(": ")
        if sep:
            pairs.append((key.strip(), [value.strip()]))
        elif pairs and part.strip():
            pairs[-1][1].append(part.strip())  # "Per-position acceptance rate: 0.6, 0.4, ..."
        elif part.strip():
            raise ValueError(f"{part!r} is not 'key: value'")
    for key, texts in pairs:
        if key in LIST_KEYS or len(texts) > 1:
            extra[key] = [_number(text.strip("[]"), key) for text in texts]
            continue
        number, unit = _value(texts[0], key)
        column = COLUMNS.get(key)
        if column is not None:
            values[column] = _whole(number, text=texts[0], key=key) if column in INT_COLUMNS else number
            if column == "accept_rate_raw":
                extra["rate_is_percent"] = unit == "%"
        if column is None or column == "token_usage":
            extra[f"{key} ({unit})" if unit else key] = _plain(number)
    return values, extra


def _value(text: str, key: str) -> tuple[float, str | None]:
    found = VALUE.match(text)
    if found is None:
        raise ValueError(f"{key!r}: {text!r} is not a number")
    return float(found["number"]), found["unit"]


def _whole(number: float, *, text: str, key: str) -> int:
    """A count column's value: a whole number that fits int64, else the line is malformed."""
    if not (math.isfinite(number) and number.is_integer() and abs(number) < 2**63):
        raise ValueError(f"{key!r}: {text!r} is not a whole number")
    return int(number)


def _number(text: str, key: str) -> float:
    return _value(text, key)[0]


def _plain(number: float) -> float | int:
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _first(extra: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        for key in (name, f"{name} (tokens)"):
            if key in extra:
                return extra[key]
    return None


POSITION_KEY = "Per-position acceptance rate"
POSITION_ORIGIN = "vLLM SpecDecoding metrics line"


def position_rows(
    path: Path, segment: int, line_no: int, ts: datetime | None, extra: dict[str, Any], k: int | None
) -> list[dict[str, Any]]:
    """The line's ``Per-position acceptance rate`` list as ``acceptance_positions`` rows (1-based positions).

    vLLM prints accepted-at-position ÷ drafts as fractions (vllm/v1/spec_decode/metrics.py,
    ``SpecDecodingLogging.log``), so a value above 1 is no such rate: the file is refused, naming the line.
    The interval's draft count (drafted tokens ÷ k) weights the line when intervals are pooled.
    """
    rates = extra.get(POSITION_KEY)
    if not rates:
        return []
    bad = [rate for rate in rates if not 0.0 <= rate <= 1.0]
    if bad:
        raise MalformedInput(
            path, f"per-position acceptance rate {bad[0]} is not a fraction between 0 and 1", line=line_no,
            key=POSITION_KEY, hint="vLLM prints these as fractions (0.600, 0.385, ...); percentages belong elsewhere",
        )
    drafted = _first(extra, DRAFTED)
    drafts = int(drafted // k) if drafted is not None and k else None
    return [
        {"segment": segment, "line_no": line_no, "ts": ts, "position": index, "rate": float(rate),
         "drafts": drafts, "origin": POSITION_ORIGIN, "engine_index": extra.get("engine_index")}
        for index, rate in enumerate(rates, start=1)
    ]


def derive_accept(mean_acceptance_length: float | None, extra: dict[str, Any], k: int | None) -> dict[str, Any]:
    """τ, accepted drafts per step and accept_rate_drafts from what a vLLM spec line gives (docs/metrics.md)."""
    accepted, drafted, emitted = _first(extra, ACCEPTED), _first(extra, DRAFTED), _first(extra, EMITTED)
    tokens: float | None = None
    rate: float | None = None
    if mean_acceptance_length is not None:
        tokens = accept.tokens_per_step_from_vllm_mean_acceptance_length(mean_acceptance_length)
    elif emitted is not None and drafted and k:  # V0: "accepted" counts every matching position, emitted is exact
        tokens = accept.tokens_per_step_from_emitted(emitted, drafted, k)
    elif accepted is not None and drafted and k:
        tokens = accept.tokens_per_step_from_counts(accepted, drafted, k)
    if emitted is None and accepted is not None and drafted:
        rate = accepted / drafted  # V1: accepted drafts ÷ drafted tokens, exact from the counters
    elif tokens is not None and k:
        rate = (tokens - 1.0) / k
    return {
        "tokens_per_step": tokens,
        "accepted_drafts_per_step": None if tokens is None else accept.accepted_drafts_per_step(tokens),
        "accept_rate_drafts": rate,
    }


def read_config(kind: str, payload: str) -> dict[str, Any]:
    try:
        config = parse_dict_repr(payload) if kind == "args" else parse_keyword_list(payload)
    except ReprError as error:
        raise ValueError(f"engine config could not be read ({error})") from error
    speculative = config.get("speculative_config")
    if isinstance(speculative, str) and "(" in speculative:
        try:
            _, config["speculative_config"] = parse_call_repr(speculative)
        except ReprError:
            pass  # keep the text
    return config


def _spec_tokens(config: dict[str, Any]) -> int | None:
    speculative = config.get("speculative_config")
    if isinstance(speculative, dict):
        for key in ("num_spec_tokens", "num_speculative_tokens"):
            if _int(speculative.get(key)) is not None:
                return speculative[key]
    return _int(config.get("num_speculative_tokens"))


def _config_row(segment: int, line_no: int, ts: datetime | None, config: dict[str, Any]) -> dict[str, Any]:
    nested = config.get("speculative_config")
    speculative: dict[str, Any] = nested if isinstance(nested, dict) else {}
    k = _spec_tokens(config)
    draft = speculative.get("model") or speculative.get("draft_model") or config.get("speculative_model")
    # V0 named no method: a separate draft model was the only kind (ngram spelled its model "[ngram]")
    algorithm = speculative.get("method") or config.get("speculative_method") or (
        ("ngram" if str(draft).strip("[]") == "ngram" else "draft_model") if draft else ("speculative" if k else None)
    )
    sglang_like = {"speculative_algorithm": algorithm, "speculative_draft_model_path": draft}
    steps, topk, draft_tokens = chain_settings(k)  # vLLM drafts a chain of k tokens
    return {
        "segment": segment,
        "line_no": line_no,
        "ts": ts,
        "variant": variant_label(sglang_like),
        "model_path": _text(config.get("model")),
        "tp_size": _int(config.get("tensor_parallel_size")),
        "dp_size": _int(config.get("data_parallel_size")),
        "speculative_algorithm": _text(algorithm),
        "speculative_draft_model_path": _text(draft),
        "speculative_num_steps": steps,
        "speculative_eagle_topk": topk,
        "speculative_num_draft_tokens": draft_tokens,
        "args": pyrepr.config_json_text(config),
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any) -> int | None:
    """A count for an int32 column of server_configs (with room for k + 1); the full config stays in ``args``."""
    if isinstance(value, int) and not isinstance(value, bool) and -INT32_LIMIT < value < INT32_LIMIT - 1:
        return value
    return None


class _Stamps:
    """``MM-DD HH:MM:SS`` → a timestamp, with the year given or found; a year is added when the month wraps."""

    def __init__(self, year: int | None) -> None:
        self.year = year
        self.previous_month: int | None = None
        self.missing_year = 0

    def timestamp(self, stamp: tuple[int, int, str] | None) -> datetime | None:
        if stamp is None:
            return None
        month, day, time = stamp
        if self.year is None:
            self.missing_year += 1
            return None
        year = self.year + 1 if self.previous_month is not None and month < self.previous_month else self.year  # Dec → Jan
        try:
            moment = datetime.fromisoformat(f"{year:04d}-{month:02d}-{day:02d} {time.replace(',', '.')}")
        except ValueError:  # 02-29 in a common year, 13-45: left empty, and it moves no clock
            return None
        self.year, self.previous_month = year, month
        return moment


FORMAT = Format(
    kind=KIND,
    description="vLLM server log (SpecDecoding/Speculative metrics, engine throughput, engine config)",
    sniff=sniff,
    signs=(
        Sign('^(INFO|WARNING|DEBUG)\\s+\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d', "vLLM's 'INFO MM-DD hh:mm:ss' line prefix"),
        Sign('SpecDecoding metrics|Speculative metrics', "'SpecDecoding metrics' lines"),
        Sign('Mean acceptance length|Draft acceptance rate', 'an acceptance length or rate'),
        Sign('Avg prompt throughput|Avg generation throughput', "'Avg generation throughput' lines"),
    ),
    parse=parse,
    example="INFO 08-04 20:51:08 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.37, Accepted throughput: 8.90 tokens/s, …",
    precedence=120,
)

FORMATS = (FORMAT,)
