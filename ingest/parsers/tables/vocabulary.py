"""What a results table's column headers mean: the words people use, as data.

A header is read case-insensitively with its unit taken apart: ``Throughput (tok/s)`` is the name
``throughput`` with the unit ``tok/s``; ``#Mean Accepted Tokens`` is ``mean accepted tokens``;
``acc_len`` and ``acc-len`` are ``acc len``. The name must match one of a field's patterns whole;
a header no pattern matches maps to nothing (its cells go to ``extra``), never to a field chosen by
the column's position.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.parsers.tables.cells import plain_text

# Qualifiers people put in front of a measure; they do not change which measure it is.
QUALIFIER = r"(?:(?:mean|avg|average|median|p50|overall|aggregate|e2e|end to end)\s+)?"
# Field -> patterns its header names match whole (after ``header_name``). Order matters only
# between fields: the first field whose pattern matches wins.
FIELD_PATTERNS: dict[str, tuple[str, ...]] = {
    "tpot": (
        rf"{QUALIFIER}(?:tpot|time per output token|time per token|ms per token|ms/tok(?:en)?|per token latency)",
    ),
    "throughput": (
        rf"{QUALIFIER}(?:output |decod(?:e|ing) |generation |gen |token |output token )?"
        # "tk\\s": llama.cpp PR #22673's sweep table heads its column "average tk\\s"
        r"(?:throughput|speed|tps|tok/s|t/s|tk[/\\]s|toks?/s(?:ec)?|tokens?/s(?:ec)?|tokens per second)",
    ),
    "accept_length": (
        rf"{QUALIFIER}(?:acc(?:ept(?:ance|ed)?)? ?len(?:gth)?|al|τ|tau|a len|accepted tokens|acceptance tokens"
        r"|accepted tokens per (?:step|verify|cycle|iteration)|tokens per (?:step|verify|cycle)|emitted per verify)",
    ),
    "acceptance_rate": (
        rf"{QUALIFIER}(?:draft )?(?:acc(?:ept(?:ance)?)? ?rate|acceptance|acceptance %|accept %)",
    ),
    "speedup": (rf"{QUALIFIER}(?:decod(?:e|ing) |wall ?clock |throughput )?speed ?up(?: ratio)?",),
    "batch_size": (r"(?:max )?(?:batch|batch size|bs|bsz|max num seqs)",),
    "concurrency": (r"(?:max )?(?:concurrency|num concurrency|number of concurrency|concurrent requests)",),
    # llama.cpp's --spec-draft-n-max (and --draft-max) is the draft depth: the tokens drafted per cycle
    "steps": (r"(?:speculative )?(?:num )?steps?|(?:draft )?depth|(?:num )?spec(?:ulative)? tokens"
              r"|(?:spec(?:ulative)? )?(?:draft )?(?:n max|nmax)",),
    "topk": (r"(?:eagle |speculative eagle )?top ?k",),
    "num_draft_tokens": (r"(?:speculative )?(?:num )?draft(?: tokens?)?|ndt",),
    "task": (r"task|category|dataset|benchmark|workload|domain",),
    "model": (r"(?:target |base )?model|llm",),
    "method": (r"method|algorithm|approach|variant|drafter|draft model|speculator|decoding method",),
    "hardware": (r"hardware|gpu|device|accelerator",),
    "tokens": (r"(?:output |generated |completion |new )?tokens|# ?tokens",),
    "time": (r"(?:total |wall |elapsed )?(?:time|duration|wall time)",),
    "latency": (rf"{QUALIFIER}(?:request )?latency",),
    "run": (r"run|run #|#|trial|iteration",),
}
COMPILED = {field: tuple(re.compile(p) for p in patterns) for field, patterns in FIELD_PATTERNS.items()}
# Fields that make a table a results table: without one of them it is a list of settings, not results.
FIGURES = frozenset({"throughput", "tpot", "accept_length", "acceptance_rate", "speedup"})
CONFIG = frozenset({"batch_size", "concurrency", "steps", "topk", "num_draft_tokens"})
# First cells of a "metric | value" table's header.
METRIC_HEADERS = frozenset({"", "metric", "metrics", "key", "measure", "name", "item", "quantity"})
VALUE_HEADERS = frozenset({"", "value", "values", "result", "results", "number", "figure"})

UNIT_PART = re.compile(r"\s*[(\[](?P<unit>[^()\[\]]*)[)\]]\s*")
# Units written after the name without brackets: "TPOT ms", "throughput tok/s" are rare; "%" is common.
TRAILING_UNIT = re.compile(r"\s+(?P<unit>%|ms|s|tok/s|tokens/s|x|×)$")
SEPARATORS = re.compile(r"[_\-.:]+|\s+")
# A header that says its cells are "mean/sd": the number after the "/" is the spread, not a second figure.
MEAN_SD = re.compile(r"\b(?:mean|avg|average)\s*(?:/|±|\+/-)\s*(?:sd|std|stdev|stddev)\b|±", re.IGNORECASE)


@dataclass(frozen=True)
class Header:
    """One header cell: as printed (``text``), its name and unit, the field it maps to (or None)."""

    text: str
    name: str
    unit: str | None
    field: str | None
    mean_sd: bool  # "mean/sd" or "±" in the header: "41.2/0.8" is a mean and its sd
    pair: tuple[Header, Header] | None = None  # "TPS / AL": a cell "82.1 / 2.3" gives both fields

    def fields(self) -> set[str]:
        return {self.field} if self.field else {h.field for h in self.pair if h.field} if self.pair else set()


def header_name(text: str) -> tuple[str, str | None]:
    """``Throughput (tok/s)`` -> ("throughput", "tok/s"); ``#Mean Accepted Tokens`` -> ("mean accepted tokens", None)."""
    unit = None
    if (found := UNIT_PART.search(text)) is not None:  # "(tok/s, mean ± sd)": the unit is the first part
        unit = MEAN_SD.sub("", found["unit"]).split(",")[0].strip() or None
        text = UNIT_PART.sub(" ", text)
    name = MEAN_SD.sub(" ", text).strip().lstrip("#").strip().lower()
    if unit is None and (trailing := TRAILING_UNIT.search(name)) is not None:
        unit, name = trailing["unit"], name[: trailing.start()]
    name = " ".join(part for part in SEPARATORS.split(name) if part) if name not in {"#", "tok/s", "t/s"} else name
    return name.replace(" / ", "/"), unit


def field_of(name: str) -> str | None:
    return next((field for field, patterns in COMPILED.items() if any(p.fullmatch(name) for p in patterns)), None)


def read_header(raw: str) -> Header:
    text, _, _ = plain_text(raw)
    name, unit = header_name(text)
    field = field_of(name)
    if field is None and unit is not None and unit.lower() in {"tok/s", "tokens/s", "t/s", "toks/s", "tok/sec"}:
        field = None if re.search(r"\b(?:request|req|prefill|prompt|input|total)\b", name) else field_of("throughput")
    mean_sd = MEAN_SD.search(text) is not None
    pair = None
    if field is None and not mean_sd and text.count(" / ") == 1:
        first, second = (read_header(part) for part in text.split(" / "))
        pair = (first, second) if first.field and second.field and first.field != second.field else None
    return Header(text=text, name=name, unit=unit, field=field, mean_sd=mean_sd, pair=pair)


def extra_key(header: Header) -> str:
    """The key a column's cells are kept under in ``extra``: ``Forward Ratio`` -> ``forward_ratio``."""
    return re.sub(r"[^\w/%#]+", "_", header.name).strip("_") or "column"
