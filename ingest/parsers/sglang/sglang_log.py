"""SGLang server logs: the scheduler's periodic ``Decode batch`` / ``Prefill batch``
stats lines and the ``server_args=`` configuration dump.

Where it comes from: ``python -m sglang.launch_server ...`` writes these to
stderr, often captured through docker compose, Ray or a custom logging config
(DOMAIN.md §4; docs/log-formats.md lists every shape read, with examples).

What it reads:

* ``server_args=ServerArgs(...)`` or ``server_args={...}`` → one
  ``server_configs`` row per server lifetime: a new dump (a restart) starts a new
  segment;
* ``Profiling starts[ for DECODE]. Traces will be saved to: DIR (with profile id: ID)`` →
  one ``log_profiles`` row: the profile id links the trace files named after it to this lifetime;
* ``Decode batch.`` / ``Decode batch,`` / ``Decode batch [N],`` and the same for
  ``Prefill batch`` → ``decode_stats`` / ``prefill_stats`` rows; key:value pairs
  are read order-independently, unknown keys kept in ``extra``
  (line templates read most of them, ``sglang_templates``; the general reader the rest,
  ``sglang_stats``).

What it deliberately ignores, counted in ``skipped`` by kind: every other line
(start-up chatter, HTTP access lines, tqdm bars, tracebacks, other profiler messages)
and "Decode batch" text that is not at the start of a message
(``PROFILE: Decode batch 1/10 processed``).

A log of a server that never served (start-up lines only: no stats, no ``server_args``) is
still SGLang's log: it is told by SGLang's start-up messages right after an SGLang prefix
(``STARTUP_LINE``), loads with no rows, and a warning says what the log should have kept.

Speed and memory: the file is read in blocks of a few MB cut at newlines; two blocks
are scanned at once on worker threads (``log_lines.iter_mapped_blocks``). Lines whose
shape the file has already shown are read by position (``sglang_templates``), the rest
by the general reader, which applies the grammar a line at a time (``sglang_stats``).
Blocks are finished in file order (segments, dates, accept columns) and handed over as
batches (``stream``), so memory does not grow with the file.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.derive import accept
from ingest.derive.variants import variant_label
from ingest.errors import MalformedInput, UnrecognizedFormat
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.logs import log_lines
from ingest.parsers.logs.log_lines import (
    SGLANG_LOG_PREFIX,
    SGLANG_PREFIX,
    Block,
    ProgressCallback,
    prefix_fields,
    rank_tags,
)
from ingest.parsers.logs.pyrepr import ReprError, read_config
from ingest.parsers.sglang.sglang_grammar import CONFIG_SEARCH, STATS_LINE
from ingest.parsers.sglang.sglang_stats import (
    StatsRows,
    merge_rows,
    read_lines,
)
from ingest.parsers.sglang.sglang_templates import TemplateBook, read_templated
from ingest.tables import SCHEMAS, table_from_rows

KIND = "sglang_log"
ENGINE = "sglang"
MALFORMED_STATS = "malformed stats line"

CONFIG_LINE = re.compile(rf"^{SGLANG_PREFIX}{CONFIG_SEARCH}")  # the dump is the rest of the line: not matched, ~6-18 KB
# The profiler's start message names the profile id its trace files are named after
# (scheduler_profiler_mixin: "Profiling starts[ for DECODE]. Traces will be saved to: DIR (with profile
# id: ID)"; PR 11110's branch: "PROFILER STARTING for decode: Traces will be saved to DIR (profile_id: ID, …)").
PROFILE_SEARCH = "Traces will be saved to"
PROFILE_LINE = re.compile(
    rf"^{SGLANG_PREFIX}(?:Profiling starts|PROFILER STARTING)(?: for (?P<stage>\w+))?[.:]? "
    rf"{PROFILE_SEARCH}:? (?P<output_dir>.*?) \((?:with profile id|profile_id): (?P<profile_id>[^,)\s]+)"
)
# Messages every SGLang server prints while it starts (model_runner, scheduler, http_server), each at
# the start of a message after a prefix: what tells a start-up-only log from any other text. The
# prefix is required (a time in SGLang's brackets, or a logging format's): these words alone in a
# text prove nothing.
STARTUP_MESSAGES = (
    r"Init torch distributed (?:begin|ends)\.",
    r"Load weight (?:begin|end)\.",
    r"KV Cache is allocated\.",
    r"Memory pool end\.",
    r"Capture (?:cuda |cpu |npu |musa |piecewise cuda )?graph (?:begin|end)\.",
    r"max_total_num_tokens=\d+",
    r"The server is fired up and ready to roll!",
)
STARTUP_LINE = re.compile(rf"^{SGLANG_LOG_PREFIX}(?:\[gpu=\d+\] )?(?:{'|'.join(STARTUP_MESSAGES)})")
# The line that tells a vLLM log apart, for the --engine check.
VLLM_MARKERS = ("SpecDecoding metrics:", "Speculative metrics:", "vLLM API server version", "Initializing a V1 LLM engine")

# Config keys copied to server_configs columns (the whole config goes to ``args``).
CONFIG_COLUMNS = {
    "model_path": pa.string(),
    "tp_size": pa.int32(),
    "dp_size": pa.int32(),
    "speculative_algorithm": pa.string(),
    "speculative_draft_model_path": pa.string(),
    "speculative_num_steps": pa.int32(),
    "speculative_eagle_topk": pa.int32(),
    "speculative_num_draft_tokens": pa.int32(),
}

EXPECTED_SHAPES = (
    "'[YYYY-MM-DD HH:MM:SS TP0] Decode batch. #running-req: 1, ..., gen throughput (token/s): 51.9, ...', "
    "'... Prefill batch, #new-seq: 1, ...', or 'server_args=ServerArgs(...)' / 'server_args={...}' "
    "(after an optional '[date time ranks]', docker compose or Ray prefix)"
)
STATS_TABLES = ("decode_stats", "prefill_stats")
STARTUP_ONLY_WARNING = (
    "{path}: SGLang start-up lines only ({startup} start-up messages in {lines} lines): no Decode batch or "
    "Prefill batch stats lines and no server_args, so no rows are loaded — keep the part of the log written "
    "while the server had traffic (it prints a Decode batch line every decode_log_interval decode steps), "
    "with the start-up before it, which holds the server_args line"
)
PROFILER_ONLY_WARNING = (
    "{path}: SGLang profiler messages only (profile {profiles}): no Decode batch stats and no server_args, "
    "so the log gives no figures; trace files named after these profile ids are linked to it — keep the "
    "server's whole log (with its start-up and the Decode batch lines) to see their throughput"
)


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    return any(
        STATS_LINE.match(line) or CONFIG_LINE.match(line) or STARTUP_LINE.match(line) or PROFILE_LINE.match(line)
        for line in text.splitlines()
    )


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    return parse_with_progress(path, options, getattr(options, "on_progress", None))


# --- one block ------------------------------------------------------------------------


@dataclass
class ConfigLine:
    line_no: int
    date: str
    time: str
    config: dict[str, Any] | None
    error: str = ""
    args: str = ""  # the config as the JSON text server_configs.args keeps


@dataclass
class ProfileLine:
    line_no: int
    date: str
    time: str
    tags: str
    profile_id: str
    stage: str | None
    output_dir: str


@dataclass
class BlockResult:
    """What one block contributed; pure data so blocks can be scanned on any thread."""

    first_line_no: int
    size: int
    stats: dict[str, StatsRows]
    configs: list[ConfigLine]
    skipped: Counter[str]
    warnings: list[tuple[int, str]]  # (line_no, message)
    last_date: str | None
    undated_fill: dict[str, list[str | None]] = field(default_factory=dict)  # "date HH:MM" before undated rows
    engine_hint: str | None = None
    startup_lines: int = 0  # SGLang start-up messages (STARTUP_LINE), counted only in a block without stats or config
    profiles: list[ProfileLine] = field(default_factory=list)


def scan_block(data: np.ndarray, first_line_no: int, book: TemplateBook | None = None) -> BlockResult:
    """Everything one block says. With a ``book``, lines matching a known line template are read by
    position first (``sglang_templates``); the general reader takes the rest and teaches the book."""
    block = log_lines.make_block(data, first_line_no)
    templated = read_templated(block, book) if book is not None else None
    if templated is not None and templated.settled.all():  # every line read by a template, or without " batch"
        general: dict[str, StatsRows] = {}
        taken = np.zeros(block.size, dtype=bool)
    else:
        general, taken = read_lines(block, None if templated is None else templated.settled)
    if book is not None:
        for rows in general.values():
            book.learn_from(block, rows.line_index)
    stats = _merged_by_table([] if templated is None else templated.rows, general)
    http_access = 0  # HTTP access lines the compiled pass found: counted, not searched again
    if templated is not None:
        taken |= templated.taken
        http_access = int(np.count_nonzero(templated.http_access & ~taken))
    unread = ~taken if templated is None else ~(taken | templated.http_access)
    rest = np.flatnonzero(unread)
    rest_lines = block.lines.filter(pa.array(unread))
    configs, config_rows = _read_configs(block, rest, rest_lines)
    profiles, profile_rows = _read_profiles(block, rest, rest_lines)
    skipped: Counter[str] = Counter()
    warnings: list[tuple[int, str]] = []
    for rows in stats.values():
        for line_index, message in sorted(rows.malformed.items()):
            skipped[MALFORMED_STATS] += 1
            warnings.append((first_line_no + line_index, message))
    for config in configs:
        if config.config is None:
            skipped["malformed config line"] += 1
            warnings.append((config.line_no, config.error))
    noise = np.ones(len(rest), dtype=bool)
    noise[config_rows] = False
    noise[profile_rows] = False
    skipped.update(log_lines.count_noise(rest_lines.filter(pa.array(noise)), known_http_access=http_access))
    result = BlockResult(first_line_no, block.size, stats, configs, skipped, warnings, log_lines.last_date(block))
    result.profiles = profiles
    if any(len(rows.undated) for rows in stats.values()):
        dates = log_lines.dates_before(block, None)
        result.undated_fill = {
            table: [dates[rows.line_index[row]] for row in rows.undated] for table, rows in stats.items()
        }
    if not stats and not configs:  # rare in a log that has stats (its start-up blocks): the search costs nothing elsewhere
        unread_lines = block.lines.filter(pa.array(~taken))
        result.engine_hint = _engine_hint(unread_lines)
        result.startup_lines = _startup_lines(unread_lines)
    return result


def _merged_by_table(templated: list[StatsRows], general: dict[str, StatsRows]) -> dict[str, StatsRows]:
    pieces: dict[str, list[StatsRows]] = {}
    for rows in [*templated, *general.values()]:
        pieces.setdefault(rows.table, []).append(rows)
    return {table: merge_rows(rows) for table, rows in pieces.items()}


def _read_configs(block: Block, rest: np.ndarray, rest_lines: pa.StringArray) -> tuple[list[ConfigLine], list[int]]:
    hits = np.flatnonzero(pc.match_substring(rest_lines, CONFIG_SEARCH).to_numpy(zero_copy_only=False))
    configs: list[ConfigLine] = []
    rows: list[int] = []
    for hit in hits.tolist():
        line_no = block.first_line_no + int(rest[hit])
        text = block.line_text(int(rest[hit]))
        match = _config_prefix(text)
        if match is None:
            continue  # "server_args=" inside some other message: noise
        date, time, _ = prefix_fields(match)
        rows.append(hit)
        try:
            config, args = read_config(text[match.end():])
        except ReprError as error:
            configs.append(ConfigLine(line_no, date, time, None, f"server_args could not be read ({error}); its segment has no config"))
            continue
        configs.append(ConfigLine(line_no, date, time, config, args=args))
    return configs, rows


def _config_prefix(line: str) -> re.Match[str] | None:
    """``CONFIG_LINE`` matched on the line's head, up to its first "server_args=": the prefix's progress-bar
    alternative looks for a carriage return to the end of the line, and a dump is ~6-18 KB."""
    head = line[: line.find(CONFIG_SEARCH) + len(CONFIG_SEARCH)]
    return CONFIG_LINE.match(head) or CONFIG_LINE.match(line)


def _read_profiles(block: Block, rest: np.ndarray, rest_lines: pa.StringArray) -> tuple[list[ProfileLine], list[int]]:
    hits = np.flatnonzero(pc.match_substring(rest_lines, PROFILE_SEARCH).to_numpy(zero_copy_only=False))
    profiles: list[ProfileLine] = []
    rows: list[int] = []
    for hit in hits.tolist():
        match = PROFILE_LINE.match(block.line_text(int(rest[hit])))
        if match is None:
            continue
        date, time, tags = prefix_fields(match)
        stage = match["stage"].upper() if match["stage"] else None
        profiles.append(ProfileLine(block.first_line_no + int(rest[hit]), date, time, tags, match["profile_id"], stage, match["output_dir"]))
        rows.append(hit)
    return profiles, rows


def _startup_lines(lines: pa.StringArray) -> int:
    """How many of ``lines`` are SGLang start-up messages; a substring search first, as most lines are not."""
    candidates = lines.filter(pc.match_substring_regex(lines, "|".join(STARTUP_MESSAGES)))
    if len(candidates) == 0:
        return 0
    return int(pc.sum(pc.match_substring_regex(candidates, STARTUP_LINE.pattern)).as_py() or 0)


def _engine_hint(lines: pa.StringArray) -> str | None:
    for marker in VLLM_MARKERS:
        if pc.any(pc.match_substring(lines, marker)).as_py():
            return "vllm"
    return None


# --- the whole file -------------------------------------------------------------------

FLUSH_ROWS = 100_000  # stats rows handed to the store at a time: bounds memory, keeps inserts few


def parse_with_progress(path: Path, options: ParseOptions, on_progress: ProgressCallback | None) -> ParsedSource:
    """Parse ``path`` into memory; ``on_progress(bytes_done, bytes_total)`` is called after each block when given."""
    return stream(path, options, on_progress).drain()


def stream(path: Path, options: ParseOptions, on_progress: ProgressCallback | None = None) -> ParsedSource:
    """Parse ``path`` as the store reads ``batches``: blocks are scanned on worker threads and
    finished here in file order (segments, dates, accept columns), a few hundred thousand rows at a time."""
    parsed = ParsedSource(kind=KIND, engine=ENGINE)
    if on_progress is None:
        on_progress = getattr(options, "on_progress", None)
    parsed.batches = _batches(path, options, on_progress, parsed)
    return parsed


def _batches(
    path: Path, options: ParseOptions, on_progress: ProgressCallback | None, parsed: ParsedSource
) -> Iterator[tuple[str, pa.Table]]:
    state = _FileState(path)
    pending: dict[str, list[pa.Table]] = {table: [] for table in STATS_TABLES}
    scan = partial(scan_block, book=TemplateBook())
    for result in log_lines.iter_mapped_blocks(path, scan, on_progress):
        if result.stats or result.configs:
            log_lines.check_engine(path, options, ENGINE)
        for table, rows in state.add(result).items():
            pending[table].append(rows)
        if sum(rows.num_rows for tables in pending.values() for rows in tables) >= FLUSH_ROWS:
            yield from _flush(pending, parsed)
    state.check_found_something(options)
    yield from _flush(pending, parsed)
    parsed.tables = {"server_configs": state.config_table(), "log_profiles": table_from_rows("log_profiles", state.profile_rows), **{table: SCHEMAS[table].empty_table() for table in STATS_TABLES}}
    parsed.skipped = +state.skipped
    parsed.warnings = state.finish_warnings()
    parsed.lines_read = state.lines_read


def _flush(pending: dict[str, list[pa.Table]], parsed: ParsedSource) -> Iterator[tuple[str, pa.Table]]:
    for table, pieces in pending.items():
        if pieces:
            rows = pa.concat_tables(pieces)
            pieces.clear()
            parsed.rows_streamed += rows.num_rows
            yield table, rows


@dataclass
class _SegmentFormulas:
    """Which accept-rate formulas every line of a segment seen so far agrees with (DOMAIN.md §3)."""

    first_date: Any = None
    agreeing: set[str] | None = None  # None: no line with both values yet

    def update(self, names: set[str]) -> None:
        self.agreeing = names if self.agreeing is None else self.agreeing & names

    def candidates(self) -> tuple[accept.AcceptRateFormula, ...]:
        """The formulas the next lines can still agree with: all until a line had both values."""
        if self.agreeing is None:
            return accept.SGLANG_ACCEPT_RATE_FORMULAS
        return tuple(formula for formula in accept.SGLANG_ACCEPT_RATE_FORMULAS if formula.name in self.agreeing)

    def result(self) -> list[str]:
        possible = {formula.name for formula in accept.formulas_possible_at(self.first_date)}
        return [formula.name for formula in accept.SGLANG_ACCEPT_RATE_FORMULAS if formula.name in (self.agreeing or set()) & possible]


@dataclass
class _FileState:
    """What the blocks read so far say about the file: its configs (segments), the last date seen,
    counts and warnings. ``add`` turns each block's stats rows into finished table rows."""

    path: Path
    config_lines: list[ConfigLine] = field(default_factory=list)
    config_rows: list[dict[str, Any]] = field(default_factory=list)
    segment_base: int | None = None  # fixed by the first config: 1 when stats lines came before it
    stats_seen: bool = False
    carried_date: str | None = None
    dating: _DateFill = field(default_factory=lambda: _DateFill())
    formulas: dict[int, _SegmentFormulas] = field(default_factory=dict)
    lines_without_config: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    lines_read: int = 0
    engine_hint: str | None = None
    startup_lines: int = 0
    profile_rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, result: BlockResult) -> dict[str, pa.Table]:
        self.skipped.update(result.skipped)
        self.warnings.extend(f"{self.path}:{line_no}: {message}" for line_no, message in result.warnings)
        self.lines_read += result.size
        self.engine_hint = self.engine_hint or result.engine_hint
        self.startup_lines += result.startup_lines
        if result.configs:
            self._add_configs(result)
        self.profile_rows.extend(self._profile_row(profile) for profile in result.profiles)
        tables = {}
        for table in STATS_TABLES:
            rows = result.stats.get(table)
            if rows is not None and len(rows.line_index):
                tables[table] = self._finish_rows(table, rows, result)
        self.stats_seen = self.stats_seen or bool(tables)
        self.carried_date = result.last_date or self.carried_date
        return tables

    def _add_configs(self, result: BlockResult) -> None:
        if self.segment_base is None:
            first = result.configs[0].line_no
            earlier_in_block = any(
                len(rows.line_index) and result.first_line_no + int(rows.line_index[0]) < first for rows in result.stats.values()
            )
            self.segment_base = 1 if self.stats_seen or earlier_in_block else 0
        for config in result.configs:
            index = len(self.config_lines)
            self.config_lines.append(config)
            if config.config is None:  # unreadable dump: the restart still starts a segment, without a config row
                continue
            self.config_rows.append(self._config_row(config, self.segment_base + index))

    def _config_row(self, config: ConfigLine, segment: int) -> dict[str, Any]:
        date = config.date or (self.carried_date or "")[:10]
        row: dict[str, Any] = {
            "segment": segment,
            "line_no": config.line_no,
            "ts": _timestamp(date, config.time),
            "variant": variant_label(config.config or {}),
            "args": config.args,
        }
        for column, arrow_type in CONFIG_COLUMNS.items():
            row[column] = _config_value((config.config or {}).get(column), arrow_type)
        return row

    def _profile_row(self, profile: ProfileLine) -> dict[str, Any]:
        return {
            "segment": int(self._segments_of(np.array([profile.line_no]))[0]),
            "line_no": profile.line_no,
            "ts": _timestamp(profile.date or (self.carried_date or "")[:10], profile.time),
            "tp_rank": rank_tags(profile.tags).get("tp_rank"),
            "profile_id": profile.profile_id,
            "stage": profile.stage,
            "output_dir": profile.output_dir,
        }

    def _segments_of(self, line_nos: np.ndarray) -> np.ndarray:
        """The server lifetime of each line: the configs (restarts) read so far that precede it."""
        boundaries = np.array([config.line_no for config in self.config_lines], dtype=np.int64)
        return np.maximum(np.searchsorted(boundaries, line_nos, side="right") - 1 + (self.segment_base or 0), 0)

    def _finish_rows(self, table: str, rows: StatsRows, result: BlockResult) -> pa.Table:
        schema = SCHEMAS[table]
        columns = dict(rows.columns)
        if len(rows.undated):
            anchors = [found or self.carried_date for found in result.undated_fill.get(table, [])]
            columns["ts"] = self.dating.fill(columns["ts"], rows, anchors)
        line_nos = columns["line_no"].to_numpy()
        columns["segment"] = pa.array(self._segments_of(line_nos), type=pa.int32())
        finished = pa.table(
            {name: columns[name] if name in columns else pa.nulls(len(line_nos), schema.field(name).type) for name in schema.names},
            schema=schema,
        )
        return self._with_accept_columns(finished) if table == "decode_stats" else finished

    def _with_accept_columns(self, table: pa.Table) -> pa.Table:
        """τ, accepted drafts per step and accept_rate_drafts (DOMAIN.md §3), per segment."""
        accept_len = _floats(table["accept_len_raw"])
        accept_rate = _floats(table["accept_rate_raw"])
        segments = table["segment"].to_numpy()
        tokens = accept.tokens_per_step_from_sglang_accept_len(accept_len)
        rate_drafts = np.full(table.num_rows, np.nan)
        configs = {row["segment"]: row for row in self.config_rows}
        stamps: np.ndarray | None = None
        for rows in _rows_by_segment(segments):  # index arrays, ascending: a block may span many restarts
            segment = int(segments[rows[0]])
            spec_rows = rows[~np.isnan(accept_len[rows])]
            formulas = self.formulas.setdefault(segment, _SegmentFormulas())
            if formulas.first_date is None:
                stamps = table["ts"].to_numpy(zero_copy_only=False) if stamps is None else stamps
                formulas.first_date = _first_date(stamps, rows)
            if not len(spec_rows):
                continue
            config = configs.get(segment, {})
            derived = accept.accept_rate_drafts(tokens[spec_rows], config.get("speculative_num_draft_tokens"))
            if derived is None:
                self.lines_without_config += len(spec_rows)
                continue
            rate_drafts[spec_rows] = derived
            with_both = ~np.isnan(accept_rate[rows]) & ~np.isnan(accept_len[rows])
            candidates = formulas.candidates()
            if candidates and with_both.any():
                matches = accept.matching_formulas(
                    accept_len[rows], accept_rate[rows], config.get("speculative_num_steps"),
                    config.get("speculative_num_draft_tokens"), candidates,
                )
                formulas.update({formula.name for formula in matches})
        table = _replace(table, "tokens_per_step", _nullable(tokens))
        table = _replace(table, "accepted_drafts_per_step", _nullable(accept.accepted_drafts_per_step(tokens)))
        return _replace(table, "accept_rate_drafts", _nullable(rate_drafts))

    def check_found_something(self, options: ParseOptions) -> None:
        if self.config_lines or self.stats_seen:
            return
        if self.profile_rows:  # the profiler's messages only: no figures, but the link to its traces
            log_lines.check_engine(self.path, options, ENGINE)
            profiles = sorted({row["profile_id"] for row in self.profile_rows})
            self.warnings.append(PROFILER_ONLY_WARNING.format(path=self.path, profiles=", ".join(profiles)))
            return
        if self.skipped[MALFORMED_STATS]:  # stats lines are there, none could be read: say why
            line, _, problem = self.warnings[0].removeprefix(f"{self.path}:").partition(": ")
            raise MalformedInput(
                self.path,
                f"{self.skipped[MALFORMED_STATS]} SGLang stats lines, none readable; the first: {problem}",
                line=int(line) if line.isdigit() else None,
                hint="a stats line is 'Decode batch, key: value, key: value, ...'; see docs/log-formats.md",
            )
        if self.startup_lines and self.engine_hint is None:  # SGLang's log all the same: load it, empty, and say so
            log_lines.check_engine(self.path, options, ENGINE)
            self.warnings.append(STARTUP_ONLY_WARNING.format(path=self.path, startup=self.startup_lines, lines=self.lines_read))
            return
        log_lines.check_engine(self.path, options, self.engine_hint)
        hint = "this looks like a vLLM log: it is read as kind vllm_log" if self.engine_hint == "vllm" else ""
        raise UnrecognizedFormat(
            self.path,
            f"no SGLang stats or server_args line in {self.lines_read} lines",
            hint=hint
            or f"expected lines like {EXPECTED_SHAPES}; a log of start-up lines only is read when they include "
            "SGLang's own start-up messages ('Load weight end.', 'KV Cache is allocated.', ...) after a log prefix",
        )

    def config_table(self) -> pa.Table:
        for row in self.config_rows:
            formulas = self.formulas.get(row["segment"])
            names = formulas.result() if formulas else []
            row["accept_rate_formulas"] = json.dumps(names) if names else None
        return table_from_rows("server_configs", self.config_rows)

    def finish_warnings(self) -> list[str]:
        if self.lines_without_config:
            self.warnings.append(
                f"{self.path}: accept_rate_drafts left empty on {self.lines_without_config} decode lines: no server_args "
                "with speculative_num_draft_tokens precedes them — keep the server start-up in the log"
            )
        return self.warnings


def _first_date(stamps: np.ndarray, rows: np.ndarray) -> Any:
    """The date of the first timestamped row among ``rows`` (``stamps``: the table's ts as datetime64)."""
    dated = rows[~np.isnat(stamps[rows])]
    return stamps[dated[0]].astype("datetime64[D]").item() if len(dated) else None


def _config_value(value: Any, arrow_type: pa.DataType) -> Any:
    if pa.types.is_integer(arrow_type):  # a number beyond the column's range stays in ``args`` only
        limit = 2 ** (arrow_type.bit_width - 1)
        return value if isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit else None
    return None if value is None else str(value)


@dataclass
class _DateFill:
    """Dates for ``[HH:MM:SS TP0]`` rows, in file order: the date of the closest earlier dated
    line, moved a day on whenever the time runs back by more than an hour (midnight passed)."""

    previous: datetime | None = None

    def fill(self, ts: pa.Array, rows: StatsRows, anchors: list[str | None]) -> pa.Array:
        values = ts.to_pylist()
        for position, time, anchor in zip(rows.undated.tolist(), rows.undated_times, anchors, strict=True):
            values[position] = self.stamp(anchor, time)
        return pa.array(values, type=pa.timestamp("us"))

    def stamp(self, anchor: str | None, time: str) -> datetime | None:
        if anchor is None:
            return None
        stamp = _timestamp(anchor[:10], time)
        if stamp is None:
            return None
        floor = max(value for value in (_timestamp(anchor[:10], anchor[11:]), self.previous) if value is not None)
        if stamp < floor - timedelta(hours=1):
            stamp += timedelta(days=math.ceil((floor - timedelta(hours=1) - stamp) / timedelta(days=1)))
        self.previous = stamp
        return stamp


def _timestamp(date: str | None, time: str) -> datetime | None:
    if not date or not time:
        return None
    try:
        return datetime.fromisoformat(f"{date} {time.replace(',', '.')}")
    except ValueError:
        return None


def _rows_by_segment(segments: np.ndarray) -> list[np.ndarray]:
    """The rows of each segment (ascending segment; row indices ascending), usually one group."""
    if not len(segments):
        return []
    if segments[0] == segments[-1] and (segments == segments[0]).all():
        return [np.arange(len(segments))]
    order = np.argsort(segments, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(segments[order])) + 1)


def _floats(column: pa.ChunkedArray) -> np.ndarray:
    return column.to_numpy().astype(np.float64) if column.null_count == 0 else pc.fill_null(column, np.nan).to_numpy()


def _nullable(values: np.ndarray) -> pa.Array:
    return pa.array(values, mask=np.isnan(values), type=pa.float64())


def _replace(table: pa.Table, name: str, column: Any) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, column)


FORMAT = Format(
    kind=KIND,
    description="SGLang server log (Decode/Prefill batch stats lines, server_args dump)",
    sniff=sniff,
    signs=(
        Sign('\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\s+(TP|DP|EP|PP)\\d+[^\\]]*)?\\]', "SGLang's '[date time TPn]' line prefix"),
        Sign('\\] Decode batch[.,]', "'Decode batch' stats lines"),
        Sign('\\] Prefill batch[.,]', "'Prefill batch' stats lines"),
        Sign('server_args=ServerArgs\\(|server_args=\\{', 'a server_args dump'),
        Sign('accept len(gth)?:', "an 'accept len:' field"),
    ),
    parse=parse,
    stream=stream,
    example="[2026-01-12 09:16:44 TP0] Decode batch, #running-req: 1, #token: 135, … accept len: 1.60, … gen throughput (token/s): 51.90, …",
    precedence=130,
)

FORMATS = (FORMAT,)
