"""The summary lines SGLang's speculative-decoding benchmark scripts print, and their ``result.jsonl`` lines.

SGLang's ``benchmark/`` scripts send a dataset through a running server with
``run_batch`` and print a few lines at the end, which people paste into PRs to
compare an EAGLE server with a baseline or a branch with main:

- ``benchmark/mtbench/bench_sglang_eagle.py`` (EAGLE/EAGLE3, since 2025-03), one line::

      #questions: 80, Throughput: 378.57 token/s, Acceptance length: 5.39

- ``benchmark/gsm8k/bench_sglang.py``, the accuracy check run against EAGLE servers
  (sglang PR #9588)::

      Accuracy: 0.955
      Invalid: 0.000
      Latency: 12.379 s
      Output throughput: 1922.860 token/s

- scripts adapted from them: SpecForge's ``benchmarks/run_<dataset>.py`` and forks print
  ``Number of questions``, ``Latency: … s``, ``Output throughput: … token/s``,
  ``Accept length: …`` lines; from 2025-11 as means over ``--num-runs`` (``Average Latency: … s``,
  ``Average Output throughput: … token/s``, ``Average Accept length: …``), and from 2025-11-18
  (SpecForge@c13bf439, ``benchmarks/utils.py`` ``print_results``) under a ``<NAME> Evaluation Results``
  heading with ``Average Accuracy: 0.3400 (34.00%)`` (or ``None``), e.g. MMStar in SpecForge issue #310.

Each script also appends one object per run to its ``--result-file`` (``result.jsonl``),
``{"task": "mtbench", "backend": "srt", "num_gpus": 1, "latency": …, "throughput": …,
"accept_length": …, "num_requests": 80, "other": {…}}`` (gsm8k: ``accuracy`` instead of
throughput and accept length); such lines are read too, in a paste or as the whole file.

Every summary (or result line) is one ``bench_serving`` row, ``tool`` "sglang_eagle_bench":
``Latency``/``latency`` -> ``duration_s`` (the whole batch's wall time),
``Output throughput``/``Throughput``/``throughput`` -> ``output_throughput``,
``Accept length``/``Acceptance length``/``accept_length`` -> ``accept_length``, ``task`` ->
``dataset_name``, ``backend`` -> ``backend``; the ``Average …`` forms alike. The accept length is the scripts' completion
tokens ÷ ``spec_verify_ct`` over the run's requests: tokens per verify step, bonus-inclusive,
for this run only (not bench_serving's lifetime server average). Without a verify count (no
speculation) the scripts print 1.00, kept as printed. Everything else (``accuracy``,
``invalid``, ``num_questions``, ``num_gpus``, ``num_requests``, ``other``, labelled numbers no
table names) goes to ``extra``.

How a paste is read:

- A summary is a run of summary lines; it ends at any other line or where a label repeats.
  The one-line mtbench summary is complete by itself.
- ``dataset_name``: the result line's ``task``; else the ``<NAME> Evaluation Results`` heading printed just
  before the summary, lower-cased (SpecForge upper-cases its benchmark class name; the task is "mmstar");
  else the dataset the last benchmark command in
  the paste names (``benchmark/<dataset>/bench_sglang*.py``, SpecForge's ``run_<dataset>.py``),
  which applies to every summary after it until another command; else null. The shape alone
  does not say which dataset: forks print the mtbench line for other datasets.
- The last heading before a summary (``# This branch``, ``EAGLE-3 (num_steps=8):``) is kept in
  ``extra.heading``, and the command's script in ``extra.script``.
- A result line printed after its own summary (``tail result.jsonl``) is the same run: it is
  merged into the latest summary without a result line whose figures it shares agree to the
  printed precision (its values fill what the summary lacks; the printed ones win); a result
  line matching no summary is a row of its own.

Accuracy stays in ``extra.accuracy`` (a 0–1 fraction in every writer; SpecForge's "(34.00%)" restates it):
it checks that speculation left the answers alone, it does not rank drafters (docs/bench-formats.md).
A paste quoted in a Markdown reply (``> `` markers) is read as the lines it quotes.

Deliberately ignored: everything else (progress bars, per-question prints, server launch
commands, logs), counted in ``skipped``.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput
from ingest.formats import Format, ParseOptions, Sign
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_console import label_key, printed_value
from ingest.parsers.bench.bench_fields import as_float, extra_json, map_record
from ingest.reader import text_lines
from ingest.tables import BENCH_SERVING, table_from_rows

KIND = "sglang_eagle_bench_text"
TOOL = "sglang_eagle_bench"

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf)"
# One named-group pattern per line type.
ONE_LINE = re.compile(
    rf"^\s*#questions:\s*(?P<num_questions>{NUMBER})\s*,\s*Throughput:\s*(?P<throughput>{NUMBER})\s*token/s\s*,"
    rf"\s*Acceptance length:\s*(?P<accept_length>{NUMBER})\s*$"
)
# SpecForge prints a fraction with its percentage after it ("0.3400 (34.00%)"), and "None" for an accuracy it could
# not compute; the percentage restates the fraction, so the fraction is what is read.
LABELLED = re.compile(
    rf"^\s*(?P<label>[A-Za-z][A-Za-z0-9 #()/%_-]{{0,40}}?)\s*:\s*(?P<value>{NUMBER}|None)\s*(?:token/s|tok/s|s)?"
    rf"(?:\s*\(\s*(?:{NUMBER})\s*%\s*\))?\s*$"
)
# SpecForge's print_results() heading: its benchmark class name, upper-cased ("MMSTAR Evaluation Results").
EVALUATION = re.compile(r"^\s*(?P<name>[A-Za-z][\w.-]{0,40})\s+Evaluation Results\s*$")
# A paste quoted in a Markdown reply ("> Average Latency: …") is read as the lines it quotes.
QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
# A script named on a command line, matched per whitespace token: a pattern with a repeated folder prefix
# searched over a whole line is quadratic on a 10 MB line without '/' (tests/test_bad_input.py).
SCRIPT_NAME = re.compile(r"(?:bench_sglang\w*|run_\w+)\.py")
SGLANG_SCRIPT = re.compile(r"(?:^|/)benchmark/(?P<dataset>[\w.-]+)/bench_sglang\w*\.py$")
SPECFORGE_SCRIPT = re.compile(r"(?:^|/)run_(?P<dataset>\w+?)(?:_chatapi|_chat)?\.py$")
# "Output throughput: … token/s" is printed by these scripts only (bench_serving prints
# "Output token throughput (tok/s):", send_one "speed=… token/s").
OUTPUT_THROUGHPUT = re.compile(rf"^\s*(?:Average )?Output throughput:\s*(?:{NUMBER})\s*token/s\s*$")
HEADING = re.compile(r"^\s*(?:#{1,6}\s+(?P<markdown>\S.{0,80}?)|(?P<colon>[A-Za-z][^:#{]{0,60}?):)\s*$")

# The table of casts: printed label (normalized by ``label_key``) -> the result line's key for it.
PRINTED_KEYS: dict[str, str] = {
    "accuracy": "accuracy",
    "invalid": "invalid",
    "latency": "latency",
    "output_throughput": "throughput",
    "throughput": "throughput",
    "accept_length": "accept_length",
    "acceptance_length": "accept_length",
    "number_of_questions": "num_questions",
    # SpecForge's run_<dataset>.py (2025-11 on) and print_results(): means over --num-runs runs.
    "average_accuracy": "accuracy",
    "average_latency": "latency",
    "average_output_throughput": "throughput",
    "average_accept_length": "accept_length",
}
NULLABLE_KEYS = frozenset({"accuracy"})  # "Average Accuracy: None": printed when the benchmark has no scorer
# bench_serving column <- result-line key (printed summaries use the same keys, see PRINTED_KEYS).
EAGLE_ALIASES: dict[str, tuple[str, ...]] = {
    "dataset_name": ("task",),
    "backend": ("backend",),
    "duration_s": ("latency",),
    "output_throughput": ("throughput",),
    "accept_length": ("accept_length",),
}
SPEED_KEYS = ("latency", "throughput", "accept_length")  # a summary without any of them is no benchmark result
SHARED_KEYS = ("latency", "throughput", "accept_length", "accuracy")  # compared to pair a result line with its summary
RESULT_LINE_KEYS = frozenset({"task", "num_gpus", "latency"})  # every benchmark/*/bench_sglang*.py writes these
RESULT_ROUNDING = 0.0005  # the scripts write round(x, 3)
SNIFF_JSON_LINES = 20

NOISE = "not a summary line"
NOT_RESULT = "JSON that is not a result line"
UNREADABLE = "unreadable JSON line"
NO_FIGURES = "summary without latency, throughput or accept length"


@dataclass(frozen=True)
class Printed:
    line_no: int
    label: str  # as printed
    value: str  # as printed


@dataclass(frozen=True)
class Command:
    script: str
    dataset: str | None


@dataclass
class Summary:
    line_no: int
    heading: str | None
    command: Command | None
    printed: dict[str, Printed] = field(default_factory=dict)  # result-line key (or label key) -> printed row
    result: dict[str, Any] | None = None  # the result.jsonl object of this run
    result_line: int | None = None
    evaluation: str | None = None  # the "<NAME> Evaluation Results" heading printed just before it
    averaged: bool = False  # its figures were printed as "Average …": means over the script's --num-runs runs


def sniff(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    lines = [QUOTE.sub("", line) for line in text.splitlines()]
    if any(ONE_LINE.match(line) for line in lines):
        return True
    # The throughput line with a latency or accept-length line next to it is a summary; the
    # accept-length line alone is not (SGLang's console block prints "Accept length:" too).
    if any(OUTPUT_THROUGHPUT.match(line) for line in lines):
        labels = {label_key(found["label"]) for found in map(LABELLED.match, lines) if found}
        if labels & {"latency", "accept_length", "acceptance_length", "average_latency", "average_accept_length"}:
            return True
    json_lines = [line for line in lines if line.lstrip().startswith("{")][:SNIFF_JSON_LINES]
    return any(is_result_line(line) for line in json_lines)


def is_result_line(text: str) -> bool:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # a number of 4,300+ digits; nesting deeper than Python recurses
        return False
    return isinstance(value, dict) and RESULT_LINE_KEYS <= value.keys()


def parse(path: Path, options: ParseOptions) -> ParsedSource:
    parsed = ParsedSource(kind=KIND, engine="sglang")
    with text_lines(path) as lines:
        summaries = read_summaries(path, lines, parsed)
    if not summaries:
        raise MalformedInput(
            path,
            "no SGLang benchmark summary or result line found",
            hint="expected the lines a benchmark/ script prints at the end ('Latency: 12.379 s', "
            "'Output throughput: 1922.860 token/s', or '#questions: 80, Throughput: … token/s, Acceptance length: …') "
            "or its result.jsonl lines",
        )
    rows = [summary_row(path, parsed, index, summary) for index, summary in enumerate(summaries)]
    parsed.tables["bench_serving"] = table_from_rows("bench_serving", rows)
    return parsed


def read_summaries(path: Path, lines: Iterable[str], parsed: ParsedSource) -> list[Summary]:
    summaries: list[Summary] = []
    current: Summary | None = None  # the summary still taking lines
    heading: str | None = None
    command: Command | None = None
    evaluation: str | None = None  # an evaluation heading waiting for the summary it announces
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        text = QUOTE.sub("", raw.rstrip("\r\n"))
        if not text.strip():
            continue
        before = len(summaries)
        one_line = ONE_LINE.match(text)
        labelled = None if one_line else LABELLED.match(text)
        if one_line:
            summary = Summary(line_no, heading, command)
            for key in ("num_questions", "throughput", "accept_length"):
                summary.printed[key] = Printed(line_no, key, one_line[key])
            summaries.append(summary)
            current = None  # complete by itself
        elif labelled:
            current = add_labelled(summaries, current, heading, command, line_no, labelled, parsed)
        elif text.lstrip().startswith("{"):
            current = None
            add_result_line(path, summaries, heading, command, line_no, text.strip(), parsed)
        else:
            current = None
            script = script_in(text)
            evaluated = None if script else EVALUATION.match(text)
            titled = None if script or evaluated else HEADING.match(text)
            if script:
                command, evaluation = Command(script, dataset_of(script)), None
            elif evaluated:
                evaluation = evaluated["name"]
            elif titled:
                heading = (titled["markdown"] or titled["colon"]).strip()
            else:
                parsed.skipped[NOISE] += 1
            continue
        if len(summaries) > before and evaluation is not None:
            summaries[-1].evaluation, evaluation = evaluation, None
    parsed.lines_read = line_no
    kept: list[Summary] = []
    for summary in summaries:
        if summary.result is not None or any(key in summary.printed for key in SPEED_KEYS):
            kept.append(summary)
        else:  # an "Accuracy:" line alone is an evaluation, not a speed result
            parsed.skipped[NO_FIGURES] += 1
            parsed.warnings.append(f"{path}:{summary.line_no}: a summary without latency, throughput or accept length; skipped")
    return kept


def add_labelled(
    summaries: list[Summary],
    current: Summary | None,
    heading: str | None,
    command: Command | None,
    line_no: int,
    labelled: re.Match[str],
    parsed: ParsedSource,
) -> Summary | None:
    """Put a ``Label: number`` line in the open summary or start one; returns the open summary."""
    label = labelled["label"].strip()
    known = PRINTED_KEYS.get(label_key(label))
    key = known or label_key(label)
    if labelled["value"] == "None" and key not in NULLABLE_KEYS:  # no figure where one belongs: nothing to keep
        parsed.skipped[NOISE] += 1
        return current
    if known is None and current is None:  # a number no summary line names, outside a summary
        parsed.skipped[NOISE] += 1
        return None
    if current is None or key in current.printed:
        if known is None:  # a repeated unnamed label cannot start a summary
            parsed.skipped[NOISE] += 1
            return None
        current = Summary(line_no, heading, command)
        summaries.append(current)
    current.printed[key] = Printed(line_no, label, labelled["value"])
    current.averaged = current.averaged or label_key(label).startswith("average_")
    return current


def add_result_line(
    path: Path,
    summaries: list[Summary],
    heading: str | None,
    command: Command | None,
    line_no: int,
    text: str,
    parsed: ParsedSource,
) -> None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        parsed.skipped[UNREADABLE] += 1
        parsed.warnings.append(f"{path}:{line_no}: a JSON line that does not parse ({type(error).__name__}: {str(error)[:80]}); skipped")
        return
    if not isinstance(value, dict) or not RESULT_LINE_KEYS <= value.keys():
        parsed.skipped[NOT_RESULT] += 1
        return
    own = next((summary for summary in reversed(summaries) if summary.result is None and same_run(summary, value)), None)
    if own is None:
        own = Summary(line_no, heading, command)
        summaries.append(own)
    own.result, own.result_line = value, line_no


def same_run(summary: Summary, result: dict[str, Any]) -> bool:
    """Whether ``result`` was written by the run that printed ``summary``: the figures both hold agree."""
    if summary.command and summary.command.dataset and isinstance(result.get("task"), str):
        if summary.command.dataset != result["task"]:
            return False
    shared = [key for key in SHARED_KEYS if key in summary.printed and key in result]
    return bool(shared) and all(agrees(summary.printed[key].value, result[key]) for key in shared)


def agrees(printed: str, written: Any) -> bool:
    """``printed`` (as the script formatted it) and ``written`` (rounded to 3 decimals) are one number."""
    shown, problem = as_float(printed)
    value, other_problem = as_float(written)
    if problem or other_problem or shown is None or value is None:
        return False
    decimals = len(printed.strip().partition(".")[2]) if "." in printed and "e" not in printed.lower() else 0
    return abs(shown - value) <= 0.5 * 10.0**-decimals + RESULT_ROUNDING + 1e-9


def script_in(text: str) -> str | None:
    """The benchmark script a command line runs (``python3 benchmark/gsm8k/bench_sglang.py …``), if any."""
    if ".py" not in text:
        return None
    for token in text.split():
        script = token.strip("'\"`;,()")
        if SCRIPT_NAME.fullmatch(script.rsplit("/", 1)[-1]):
            return script
    return None


def dataset_of(script: str) -> str | None:
    for pattern in (SGLANG_SCRIPT, SPECFORGE_SCRIPT):
        found = pattern.search(script)
        if found:
            return found["dataset"]
    return None


def summary_row(path: Path, parsed: ParsedSource, record_index: int, summary: Summary) -> dict[str, Any]:
    record: dict[str, Any] = dict(summary.result or {})
    record.update({key: printed.value for key, printed in summary.printed.items()})  # what was printed wins
    mapped = map_record(record, EAGLE_ALIASES, BENCH_SERVING)
    for key, problem in mapped.problems:
        where = summary.printed[key].line_no if key in summary.printed else summary.result_line
        parsed.warnings.append(f'{path}:{where}: "{key}": {problem}')
    row = dict(mapped.row)
    if row.get("dataset_name") is None:
        row["dataset_name"] = evaluated_dataset(summary) or (summary.command.dataset if summary.command else None)
    extra: dict[str, Any] = {
        key: printed_value(value) if key in summary.printed else value for key, value in mapped.extra.items()
    }
    if summary.heading is not None:
        extra["heading"] = summary.heading
    if summary.evaluation is not None:
        extra["evaluation_heading"] = f"{summary.evaluation} Evaluation Results"
    if summary.averaged:
        extra["averaged_over_runs"] = True  # SpecForge's "Average …" lines: means over --num-runs (not printed)
    if summary.command is not None:
        extra["script"] = summary.command.script
    if summary.printed and summary.result_line is not None:
        extra["result_line"] = summary.result_line  # the result.jsonl line merged into this summary
    return {**row, "record_index": record_index, "line_no": summary.line_no, "tool": TOOL, "extra": extra_json(extra)}


def evaluated_dataset(summary: Summary) -> str | None:
    """The dataset an evaluation heading names, as SpecForge's registry spells it: the heading upper-cases the
    benchmark's class name (``MMStarBenchmark`` -> "MMSTAR"), the registry and results JSON use "mmstar"."""
    return summary.evaluation.lower() if summary.evaluation else None


FORMAT = Format(
    kind=KIND,
    description=(
        "SGLang benchmark-script summary (bench_sglang_eagle.py '#questions: …, Throughput: … token/s, "
        "Acceptance length: …'; gsm8k bench_sglang.py 'Latency: … s' / 'Output throughput: … token/s'; SpecForge "
        "'<NAME> Evaluation Results' / 'Average Accept length: …') or its result.jsonl"
    ),
    sniff=sniff,
    signs=(
        Sign('#questions:|"num_gpus"\\s*:', "a '#questions:' line or a 'num_gpus' key"),
        Sign('throughput: [\\d.]+ token/s|"throughput"\\s*:', "a throughput ('Throughput: … token/s')"),
        Sign('^[\\s>]*(Average )?(Acceptance length|Accept length|Latency): ?[\\d.]+|"(latency|accept_length)"\\s*:',
             "a latency or acceptance length"),
    ),
    parse=parse,
    example="#questions: 80, Throughput: 378.57 token/s, Acceptance length: 5.39",
    precedence=110,
)

FORMATS = (FORMAT,)
