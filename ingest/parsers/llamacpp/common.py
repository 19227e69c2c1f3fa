"""What the llama.cpp readers share: the engine name, the log line prefixes, numbers, ``--engine``.

llama.cpp's logger (common/log.cpp) writes a message either bare, or behind ``M.SS.mmm.uuu L``: the time
since the process started (minutes, seconds, milliseconds, microseconds) and a level letter; a supervisor
may add ``[PID]`` in front. That time is not a clock time, so no row gets a ``ts`` from it: it is kept in
``extra`` as ``log_time``. A multi-line message carries the prefix on its first line only.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ingest.errors import IngestError
from ingest.formats import ParseOptions

ENGINE = "llama.cpp"

PREFIX = re.compile(
    r"^(?:\[(?P<pid>\d+)\]\s+)?"
    r"(?:(?P<elapsed>\d+\.\d{2}\.\d{3}\.\d{3})\s+(?P<level>[DIWEN])\s+)?"
    r"(?P<message>.*?)\s*$"
)


def split_prefix(line: str) -> tuple[str, dict[str, Any]]:
    """A log line's message, and what its prefix said (``pid``, ``log_time``), for ``extra``."""
    found = PREFIX.match(line)
    if found is None:  # the pattern matches any text; kept for the type checker
        return line.strip(), {}
    said: dict[str, Any] = {}
    if found["pid"]:
        said["pid"] = int(found["pid"])
    if found["elapsed"]:
        said["log_time"] = found["elapsed"]
    return found["message"].strip(), said


def number(text: str | None) -> float | None:
    """A finite number, else None (llama.cpp prints ``inf``/``nan`` for rates over zero time)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def whole(text: str | None) -> int | None:
    value = number(text)
    return int(value) if value is not None and value.is_integer() and abs(value) < 2**63 else None


def ratio(part: int | None, total: int | None) -> float | None:
    return part / total if part is not None and total else None


def extra_json(extra: dict[str, Any]) -> str | None:
    return json.dumps(extra, ensure_ascii=False) if extra else None


def check_engine(path: Path, options: ParseOptions) -> None:
    """``--engine`` must agree with the content, which is llama.cpp's."""
    given = (options.engine or "").strip().lower()
    if given and given not in (ENGINE, "llamacpp", "llama-cpp"):
        raise IngestError(
            path, f"--engine {options.engine} was given, but the content is llama.cpp output",
            hint=f"drop --engine, or pass --engine {ENGINE}",
        )


def text_head(head: bytes) -> str:
    return head.decode("utf-8", errors="replace")


# --- the `statistics <type>: …` line of common_speculative_print_stats ------------------------------------------

# `statistics draft-eagle3: #calls(b,g,a) = 1 87 87, #gen drafts = 87, …, #acc rate/pos = (0.805, 0.632),
# dur(b,g,a) = 0.005, 325.555, 0.114 ms` (2026), `statistics ngram_mod: #calls = 3, …, dur = 1.5 ms` (early
# 2026). The type is padded to 16 columns in some builds.
STATISTICS = re.compile(r"^statistics\s+(?P<type>[A-Za-z0-9_.+\-]+):\s+(?P<payload>#.*)$")
# A part starts where a key (``#gen drafts``, ``dur(b,g,a)``, ``p_acc_recent``) and its ``=`` follow a comma.
PART_START = re.compile(r",\s+(?=[#A-Za-z_](?:\([^)]*\)|[^=,(])*=)")
VALUE_NUMBERS = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf")
# printed key → the name it is kept under in ``extra``
STATISTICS_KEYS = {
    "#calls(b,g,a)": "calls_begin_draft_accept",
    "#calls": "calls",
    "#gen drafts": "gen_drafts",
    "#acc drafts": "acc_drafts",
    "#gen tokens": "gen_tokens",
    "#acc tokens": "acc_tokens",
    "#mean acc len": "mean_acc_len",
    "#acc rate/pos": "acc_rate_per_position",
    "dur(b,g,a)": "dur_begin_draft_accept_ms",
    "dur": "dur_ms",
}


def read_statistics(payload: str) -> dict[str, Any]:
    """The ``key = value`` parts of a statistics line, by the names of ``STATISTICS_KEYS`` (others as printed).

    Raises ValueError naming the part that is not ``key = value``.
    """
    values: dict[str, Any] = {}
    for part in PART_START.split(payload.strip()):
        key, sep, text = part.partition("=")
        if not sep:
            raise ValueError(f"{part.strip()!r} is not 'key = value'")
        key = key.strip()
        name = STATISTICS_KEYS.get(key, key.lstrip("#").strip().replace(" ", "_"))
        values[name] = statistics_value(text.strip(), key)
    return values


def statistics_value(text: str, key: str) -> Any:
    """``87`` → 87, ``2.92`` → 2.92, ``1 87 87`` / ``(0.8, 0.6)`` / ``0.005, 325.555, 0.114 ms`` → a list."""
    body = text.removesuffix("ms").strip().strip("()")
    numbers = VALUE_NUMBERS.findall(body)
    leftover = VALUE_NUMBERS.sub("", body).replace(",", "").strip()
    if not numbers or leftover:
        raise ValueError(f"{key!r}: {text!r} is not a number or a list of numbers")
    parsed = [plain(float(n)) for n in numbers]
    return parsed[0] if len(parsed) == 1 and not text.startswith("(") else parsed


def plain(value: float) -> float | int | None:
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value
