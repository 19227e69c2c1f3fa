"""Properties of the SGLang stats-line reader, checked on generated logs.

1. Decode/Prefill lines with any prefix shape, stem form, field subset and order,
   trailing separator and unknown keys parse back to the values written.
2. The general reader (``sglang_stats.read_lines``, with its Arrow-built columns) and
   ``parse_pairs``' typed values agree on arbitrary payloads, malformed ones included:
   both reject, or both give the same values.
"""
from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.formats import ParseOptions
from ingest.parsers.sglang import sglang_log
from ingest.parsers.sglang.sglang_grammar import (
    DECODE_FIELDS,
    PREFILL_FIELDS,
    MalformedValue,
    parse_pairs,
)

# SPECDASH_HYPOTHESIS_EXAMPLES=2000 for a deeper run than the default quick one
EXAMPLES = int(os.environ.get("SPECDASH_HYPOTHESIS_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

KNOWN_KEYS = {"Decode": DECODE_FIELDS, "Prefill": PREFILL_FIELDS}
TABLE = {"Decode": "decode_stats", "Prefill": "prefill_stats"}


@st.composite
def values_for(draw: st.DrawFn, kind: str) -> tuple[str, Any]:
    """(text as logged, value expected back) for one column type."""
    if kind == "bool":
        flag = draw(st.booleans())
        return str(flag), flag
    if kind == "int":
        number = draw(st.integers(min_value=0, max_value=10**9))
        return str(number), number
    hundredths = draw(st.integers(min_value=0, max_value=10**8))
    text = f"{hundredths // 100}.{hundredths % 100:02d}"
    return text, float(text)


UNKNOWN_KEY = st.text(alphabet="abcdefghij #-()/", min_size=1, max_size=12).map(str.strip).filter(
    lambda key: key and key not in DECODE_FIELDS and key not in PREFILL_FIELDS and not key.endswith(")")
)


@st.composite
def unknown_values(draw: st.DrawFn) -> tuple[str, Any, str]:
    """(text, value expected in extra, suffix added to the key)."""
    choice = draw(st.sampled_from(["int", "decimal", "percent", "bool", "word"]))
    if choice == "int":
        number = draw(st.integers(min_value=0, max_value=10**6))
        return str(number), number, ""
    if choice in ("decimal", "percent"):
        hundredths = draw(st.integers(min_value=0, max_value=10**6))
        text = f"{hundredths // 100}.{hundredths % 100:02d}"
        return (text + "%", float(text), " (%)") if choice == "percent" else (text, float(text), "")
    if choice == "bool":
        flag = draw(st.booleans())
        return str(flag), flag, ""
    word = draw(st.text(alphabet="abcxyz_-/", min_size=1, max_size=8))
    return word, word, ""


# Fields of Python logging format strings, each with the separator it ends with.
PYTHON_FIELDS = [
    "[INFO] ", "WARNING ", "INFO - ", "INFO     | ", "sglang.srt.managers.scheduler: ", "sglang.srt.managers.scheduler - ",
    "[sglang.srt.managers.scheduler] ", "scheduler.py:1234] ", "[scheduler.py:1234] ", "scheduler.py:1234 - ", "151972 ",
]


@st.composite
def prefixes(draw: st.DrawFn) -> tuple[str, datetime | None, dict[str, int]]:
    """(prefix text, timestamp it carries, rank tags it carries)."""
    stamp = draw(st.datetimes(min_value=datetime(2024, 10, 1), max_value=datetime(2027, 1, 1))).replace(microsecond=0)
    millis = draw(st.none() | st.integers(min_value=0, max_value=999))
    if millis is not None:
        stamp = stamp.replace(microsecond=millis * 1000)
    text_time = stamp.strftime("%Y-%m-%d %H:%M:%S") + ("" if millis is None else f".{millis:03d}")
    tags = draw(st.permutations(["DP", "TP", "EP", "PP", "CP"]).flatmap(
        lambda names: st.lists(st.sampled_from(names), unique=True, max_size=4)))
    ranks = {name: draw(st.integers(min_value=0, max_value=63)) for name in tags}
    tag_text = " ".join(f"{name}{number}" for name, number in ranks.items())
    shape = draw(st.sampled_from(["bracket", "docker", "ray", "custom", "bare", "python", "python-fields", "bracket-site"]))
    bracket = f"[{text_time}{' ' + tag_text if tag_text else ''}] "
    if shape == "bare":
        return "", None, {}
    if shape == "python":
        return f"{stamp.strftime('%Y-%m-%d %H:%M:%S')},{millis or 0:03d} - sglang.srt - INFO - ", stamp.replace(
            microsecond=(millis or 0) * 1000), {}
    if shape == "python-fields":  # other logging format strings: the fields after the time in any order
        fields = draw(st.lists(st.sampled_from(PYTHON_FIELDS), unique=True, max_size=4))
        lead = draw(st.sampled_from(["", "INFO "]))
        return f"{lead}{text_time.replace('.', draw(st.sampled_from(['.', ','])))} {''.join(fields)}", stamp, {}
    if shape == "bracket-site":  # SGLang's bracket with a file:line field after it
        return f"{bracket}scheduler_metrics_mixin.py:287 - ", stamp, ranks
    if shape == "custom":
        custom_tags = "".join(f"{name}{number} " for name, number in ranks.items())
        return f"{stamp.strftime('%Y-%m-%d %H:%M:%S')} INFO 4242 [{custom_tags}scheduler.py:222] ", stamp.replace(microsecond=0), ranks
    wrapper = {"bracket": "", "docker": "llm-1  | ", "ray": "(SGLangEngine pid=77, ip=10.0.0.2) "}[shape]
    return wrapper + bracket, stamp, ranks


@st.composite
def stats_lines(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    stem = draw(st.sampled_from(["Decode", "Prefill"]))
    fields = KNOWN_KEYS[stem]
    keys = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, min_size=1, max_size=len(fields)))
    graphs = [key for key in keys if key.endswith(" graph")]
    keys = [key for key in keys if not key.endswith(" graph") or key == graphs[0]]  # one graph flag per line
    parts: list[str] = []
    expected: dict[str, Any] = {"table": TABLE[stem], "columns": {}, "extra": {}}
    for key in keys:
        column, kind = fields[key]
        text, value = draw(values_for(kind))
        parts.append(f"{key}: {text}")
        expected["columns"][column] = value
        if key in ("cpu graph", "npu graph", "musa graph"):
            expected["extra"]["graph"] = key
    for key in draw(st.lists(UNKNOWN_KEY, unique=True, max_size=3)):
        text, value, suffix = draw(unknown_values())
        parts.insert(draw(st.integers(min_value=0, max_value=len(parts))), f"{key}: {text}")
        expected["extra"][key + suffix] = value
    separator = draw(st.sampled_from([".", ",", " [17],"]))
    if separator == " [17],":
        expected["extra"]["forward_ct"] = 17
    prefix, stamp, ranks = draw(prefixes())
    expected["ts"] = stamp
    expected["dp_rank"], expected["tp_rank"] = ranks.pop("DP", None), ranks.pop("TP", None)
    expected["extra"].update({f"{name.lower()}_rank": number for name, number in ranks.items()})
    trailing = draw(st.sampled_from(["", ",", ", "]))
    return f"{prefix}{stem} batch{separator} {', '.join(parts)}{trailing}", expected


@SETTINGS
@given(lines=st.lists(stats_lines(), min_size=1, max_size=25))
def test_generated_stats_lines_parse_back_to_their_values(lines: list[tuple[str, dict[str, Any]]], tmp_path: Path) -> None:
    source = tmp_path / "generated.log"
    source.write_text("\n".join(text for text, _ in lines) + "\n")
    result = sglang_log.parse(source, ParseOptions())
    assert not result.warnings or all("accept_rate_drafts left empty" in w for w in result.warnings)
    rows = {name: iter(result.tables[name].to_pylist()) for name in ("decode_stats", "prefill_stats")}
    for line_no, (text, expected) in enumerate(lines, start=1):
        row = next(rows[expected["table"]])
        assert row["line_no"] == line_no, text
        for column, value in expected["columns"].items():
            assert row[column] == value, (text, column)
        assert row["ts"] == expected["ts"], text
        assert (row["dp_rank"], row["tp_rank"]) == (expected["dp_rank"], expected["tp_rank"]), text
        assert (json.loads(row["extra"]) if row["extra"] else {}) == expected["extra"], text
        if expected["columns"].get("accept_len_raw") is not None:
            assert row["tokens_per_step"] == expected["columns"]["accept_len_raw"]


JUNK = st.text(alphabet="ab #:,.%-1209 TrueFals", max_size=12)
PART_KEY = st.sampled_from(sorted(DECODE_FIELDS)) | JUNK
PART_VALUE = st.sampled_from(["1", "2.50", " 3", "4 ", "1.0", "x", "True", "False", "7%", "", "1e3", ".5", "-2"]) | JUNK
PART = st.tuples(PART_KEY, st.sampled_from([": ", ":", " : ", ": ", ""]), PART_VALUE).map("".join)
PAYLOAD_TEXT = st.lists(PART, max_size=6).flatmap(
    lambda parts: st.lists(st.sampled_from([", ", ",", ",  ", ", , "]), min_size=len(parts), max_size=len(parts)).map(
        lambda seps: "".join(part + sep for part, sep in zip(parts, seps, strict=True))
    )
) | st.text(alphabet="ab #:,.%-1209 TrueFals", max_size=60)


@SETTINGS
@given(payloads=st.lists(PAYLOAD_TEXT, min_size=1, max_size=20))
def test_the_general_reader_agrees_with_parse_pairs(payloads: list[str], tmp_path: Path) -> None:
    source = tmp_path / "fuzz.log"
    source.write_text("".join(f"[2025-01-01 00:00:00] Decode batch, {payload}\n" for payload in payloads))
    result = sglang_log.parse(source, ParseOptions()) if _any_readable(payloads) else None
    decode = {row["line_no"]: row for row in result.tables["decode_stats"].to_pylist()} if result else {}
    for line_no, payload in enumerate(payloads, start=1):
        try:
            columns, extra = parse_pairs(payload, DECODE_FIELDS)
        except MalformedValue:
            assert line_no not in decode, payload
            assert result is None or any(w.startswith(f"{source}:{line_no}: ") for w in result.warnings), payload
            continue
        row = decode[line_no]
        for column, value in columns.items():
            assert row[column] == value, (payload, column)
        assert (json.loads(row["extra"]) if row["extra"] else {}) == extra, payload


def _any_readable(payloads: list[str]) -> bool:
    for payload in payloads:
        try:
            parse_pairs(payload, DECODE_FIELDS)
            return True
        except MalformedValue:
            continue
    return False  # the file would hold no stats line at all: UnrecognizedFormat, tested elsewhere
