"""The compiled passes over log blocks (ingest/parsers/sglang/log_kernels.py).

A line template's program must never accept a line its pattern refuses (read as RE2 reads it:
``\\d`` is ASCII), must read every value exactly as Python does, and must accept the ordinary
lines (or the fast path silently stops being used). Line bounds must be those of the plain numpy
reading they replaced.
"""
from __future__ import annotations

import re
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ingest.parsers.logs import log_lines
from ingest.parsers.sglang import sglang_templates
from ingest.parsers.sglang.sglang_templates import (
    Template,
    TemplateBook,
    _distinct_tags,
    _scan,
    learn,
)

BRACKET_LINE = (
    "sglang-1  | [2026-05-07 15:49:32.359 DP3 TP3 EP3] Decode batch [9593840], #running-req: 25, #token: 70395, "
    "token usage: 0.32, accept len: 1.21, cuda graph: True, cap len: 4.00, #queue-req: 0, "
)
CUSTOM_LINE = (
    "2025-12-04 20:30:05 INFO 151972 [TP0 scheduler_metrics_mixin.py:287] Decode batch. #running-req: 35, "
    "#token: 60865, token usage: 0.28, gen throughput (token/s): 2530.28, #queue-req: 0"
)

PYTHON_LINE = (  # Python logging's "%(asctime)s %(process)d [%(levelname)s] %(name)s: %(message)s"
    "2026-01-02 10:11:12,345 151972 [INFO] sglang.srt.managers.scheduler: Decode batch, #running-req: 1, #token: 402, "
    "token usage: 0.00, accept len: 1.58, cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, "
)


def scanned(template: Template, lines: list[str]) -> tuple[dict[int, int], object]:
    """Run ``template`` over ``lines`` as one block: (line index → scan row, the scan)."""
    book = TemplateBook(templates=[template])
    block = log_lines.make_block(bytearray("\n".join(lines).encode() + b"\n"), 1)
    scan = _scan(block, book, [template])
    return {int(scan.line[row]): row for row in range(scan.count)}, scan


def scanned_variant(line: str, part: str, replacement: str) -> tuple[Template, dict[int, int], object]:
    """``line``'s template run over ``line`` with ``part`` replaced: (the template, rows, the scan)."""
    template = learn(line)
    assert template is not None
    rows, scan = scanned(template, [line.replace(part, replacement)])
    return template, rows, scan


def test_ordinary_lines_are_read_by_their_template() -> None:
    for line in (BRACKET_LINE, CUSTOM_LINE, PYTHON_LINE):
        template = learn(line)
        assert template is not None
        variants = [
            line,
            line.replace("#running-req: 25", "#running-req: 7").replace("#running-req: 35", "#running-req: 7"),
            line.rstrip(", "),
            line.replace("token usage: 0.32", "token usage: -0.5").replace("token usage: 0.28", "token usage: -0.5"),
        ]
        rows, _ = scanned(template, variants)
        assert sorted(rows) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("part", "replacement", "read"),
    [
        ("151972", "7", True),  # another process: the id is the one field that varies
        ("10:11:12,345", "23:59:59.999", True),
        ("[INFO]", "[WARNING]", False),  # another level or logger is another format's line: its own template
        ("sglang.srt.managers.scheduler", "sglang.srt.managers.scheduler_metrics_mixin", False),
        ("10:11:12,345", "10:11:12,3456", False),  # a finer fraction than the template's
        ("151972 ", "", False),
    ],
)
def test_a_python_logging_template_varies_only_in_time_and_process_id(part: str, replacement: str, read: bool) -> None:
    template, rows, scan = scanned_variant(PYTHON_LINE, part, replacement)
    line = PYTHON_LINE.replace(part, replacement)
    assert bool(rows) is read is bool(re.match(template.pattern, line, re.ASCII))
    assert not template.has_tags
    if read:
        stamp = line[:23].replace(",", ".")
        assert np.datetime64(int(scan.marks[0][0]), "us").astype(datetime) == datetime.fromisoformat(stamp)


@pytest.mark.parametrize(
    ("stamp", "read"),
    [
        ("2024-02-29 23:59:59.999", True),
        ("2025-02-29 10:00:00.000", False),  # no such day: the general reader leaves ts empty
        ("2025-04-31 10:00:00.000", False),
        ("2025-01-01 24:00:00.000", False),
        ("0000-01-01 10:00:00.000", False),
        ("2025-13-01 10:00:00.000", False),
    ],
)
def test_impossible_moments_are_left_to_the_general_reader(stamp: str, read: bool) -> None:
    _, rows, scan = scanned_variant(BRACKET_LINE, "2026-05-07 15:49:32.359", stamp)
    assert bool(rows) is read
    if read:
        micros = int(scan.marks[0][0])
        assert np.datetime64(micros, "us").astype(datetime) == datetime.fromisoformat(stamp)


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("0.1", True),
        ("123456789012345", True),  # 15 digits: exact
        ("1234567890.12345", True),  # 15 significant digits
        ("12345678901.234567", False),  # 17 digits: beyond 2**53, not one exact division
        ("1234567890123456", False),  # 16 digits before the point: the pattern refuses it too
        ("-0.0", True),
        ("1.", False),
        (".5", False),
        ("1e5", False),
    ],
)
def test_floats_are_read_exactly_or_not_at_all(value: str, read: bool) -> None:
    template, rows, scan = scanned_variant(CUSTOM_LINE, "token usage: 0.28", f"token usage: {value}")
    assert bool(rows) is read
    if read:
        slot = template.keys.index("token usage")
        assert scan.floats[slot][0] == float(value)
        assert np.signbit(scan.floats[slot][0]) == np.signbit(float(value))


ODD_TEXT = st.sampled_from(["", "true", "nan", "1e3", "+1", " 1", "1 ", "1.", ".5", "0x1", "１"])
VALUE_TEXT = {
    "int": st.from_regex(r"[0-9]{1,20}", fullmatch=True),
    "float": st.from_regex(r"-?[0-9]{1,17}(\.[0-9]{1,17})?", fullmatch=True),
    "bool": st.sampled_from(["True", "False", "TRUE", "1"]),
    "extra": st.from_regex(r"-?[0-9]{1,16}(\.[0-9]{0,16})?", fullmatch=True),
}
STAMP_TEXT = st.one_of(
    st.datetimes().map(lambda moment: moment.isoformat(sep=" ", timespec="milliseconds")),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{2,4}", fullmatch=True),
)
TAGS_TEXT = st.from_regex(r"( [A-Z][A-Z_]{0,2}[0-9]{1,11}){0,3}( x)?", fullmatch=True)


def is_moment(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def key_kind(template: Template, key: str) -> str:
    return template.stem.fields[key][1] if key in template.stem.fields else "extra"


@settings(max_examples=400, deadline=None)
@given(data=st.data(), stamp=STAMP_TEXT, tags=TAGS_TEXT, label=st.from_regex(r"[0-9]{1,20}", fullmatch=True))
def test_a_program_accepts_only_what_its_pattern_accepts_and_reads_values_as_python(
    data: st.DataObject, stamp: str, tags: str, label: str
) -> None:
    template = learn(BRACKET_LINE)
    assert template is not None
    kinds = [key_kind(template, key) for key in template.keys]
    values = [data.draw(st.one_of(VALUE_TEXT[kind], ODD_TEXT)) for kind in kinds]
    payload = ", ".join(f"{key}: {value}" for key, value in zip(template.keys, values, strict=True))
    line = f"sglang-1  | [{stamp}{tags}] Decode batch [{label}], {payload}, "
    rows, scan = scanned(template, [line])
    event("read by the program" if rows else "left to the general reader")
    if not rows:  # refused: the pattern refuses it too, or reading it exactly needs the general reader
        exact = all(len(value.strip("-").replace(".", "")) <= 15 for kind, value in zip(kinds, values) if kind == "float")
        assert not (re.match(template.pattern, line, re.ASCII) and exact and is_moment(stamp)), line
        return
    assert re.match(template.pattern, line, re.ASCII), line
    assert np.datetime64(int(scan.marks[0][0]), "us").astype(datetime) == datetime.fromisoformat(stamp)
    text = line.encode()
    for slot, (kind, value) in enumerate(zip(kinds, values, strict=True)):
        if kind == "float":
            assert scan.floats[slot][0] == float(value), (slot, line)
        elif kind == "int":
            assert scan.ints[slot][0] == int(value), (slot, line)
        elif kind == "bool":
            assert bool(scan.ints[slot][0]) == (value == "True"), (slot, line)
        else:
            assert text[scan.bounds[2 * slot][0] : scan.bounds[2 * slot + 1][0]].decode() == value, (slot, line)


def numpy_line_bounds(data: bytes) -> tuple[list[int], list[int]]:
    """The reading log_lines.make_block did before the compiled pass."""
    array = np.frombuffer(data, dtype=np.uint8)
    offsets = np.concatenate(([0], np.flatnonzero(array == 10) + 1))
    if offsets[-1] != len(data):
        offsets = np.append(offsets, len(data))
    starts, ends = offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)
    ends -= (ends > starts) & (array[np.maximum(ends - 1, 0)] == 10)
    ends -= (ends > starts) & (array[np.maximum(ends - 1, 0)] == 13)
    return starts.tolist(), ends.tolist()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200).map(lambda raw: bytes(b"a\n\r "[byte % 4] for byte in raw)))
def test_line_bounds_are_those_of_the_numpy_reading(data: bytes) -> None:
    block = log_lines.make_block(bytearray(data), 1)
    assert (block.starts.tolist(), block.ends.tolist()) == numpy_line_bounds(data)
    assert "".join(block.lines.to_pylist()) == data.decode()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.binary(min_size=1, max_size=300), st.lists(st.sampled_from([10, 10, 13, 11, 9, 0x8A, 0x0B, 0, 1, 255, 97]), min_size=1).map(bytes)),
    st.integers(0, 7),
)
def test_line_bounds_of_any_bytes_at_any_alignment(raw: bytes, shift: int) -> None:
    """The kernel reads eight bytes at a time: every byte value (bytes near "\\n" above all), every
    length and start alignment must give the bytewise reading."""
    data = np.frombuffer(bytes(shift) + raw, dtype=np.uint8)[shift:]
    count = raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1)
    offsets, starts, ends = np.empty(count + 1, np.int32), np.empty(count, np.int64), np.empty(count, np.int64)
    log_lines.kernels().line_bounds(data, offsets, starts, ends)
    assert (starts.tolist(), ends.tolist()) == numpy_line_bounds(raw)


def tag_ranges(tags: list[str]) -> tuple[log_lines.Block, np.ndarray, np.ndarray]:
    """A block of one line per tag text, and where each line's text starts and ends."""
    block = log_lines.make_block(bytearray("".join(f"{tag}\n" for tag in tags).encode()), 1)
    return block, block.starts.copy(), block.ends.copy()


@given(st.lists(st.sampled_from(["", " TP0", " TP1", " DP1 TP1 EP1", " DP1 TP1 EP10", " DP10 TP1 EP1"]), min_size=1, max_size=60))
@settings(max_examples=60, deadline=None)
def test_distinct_tags_number_the_texts_as_dictionary_encoding_does(tags: list[str]) -> None:
    block, starts, ends = tag_ranges(tags)
    texts, codes = _distinct_tags(block, starts, ends)
    assert [texts[code] for code in codes.tolist()] == tags
    assert texts == list(dict.fromkeys(tags))  # each text once, in order of first appearance


def test_distinct_tags_beyond_the_table_go_to_arrow(monkeypatch: pytest.MonkeyPatch) -> None:
    tags = [f" TP{rank}" for rank in range(6)] * 2
    block, starts, ends = tag_ranges(tags)
    monkeypatch.setattr(sglang_templates, "DISTINCT_TAGS", 4)
    table = np.full(16, -1, dtype=np.int64)
    codes = np.empty(len(tags), dtype=np.int64)
    assert sglang_templates.log_kernels().distinct_ranges(block.array, starts, ends, table, np.empty(4, dtype=np.int64), codes) == -1
    texts, codes = sglang_templates._distinct_tags(block, starts, ends)
    assert [texts[code] for code in codes.tolist()] == tags


HTTP_FRAGMENTS = ['"', "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "GETS", " ", "  ", "\t", "\x0b", "\f", "\r",
                  "/", "/v1/chat", "HTTP/", "HTTP/1.1", "HTTP", "1", "x", "é", "server_args=", "INFO", ": "]


ACCESS_LIKE = st.tuples(  # a request line and its near misses, part by part (mostly the real part)
    st.sampled_from(["", "INFO:     10.0.0.1:5 - ", '"x" '] * 3 + ["server_args= "]),
    st.sampled_from(['"'] * 12 + ["", "'"]),
    st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"] * 6 + ["GETS", "get", "PATCHX", "PO"]),
    st.sampled_from([" "] * 20 + ["  ", "\t", ""]),
    st.sampled_from(["/v1/chat/completions"] * 20 + ["", "/a\x0bb", "/é", "/a b", "/a\fb", "/a\rb"]),
    st.sampled_from([" "] * 20 + ["  ", "\t", ""]),
    st.sampled_from(["HTTP/"] * 20 + ["HTTP", "http/", "HTTP/ "]),
    st.sampled_from(["1.1", "2"] * 6 + ["x", ""]),
    st.sampled_from(['" 200 OK', "", '" GET / HTTP/1.0'] * 3 + [" server_args=x"]),
).map("".join)


@given(st.one_of(ACCESS_LIKE, st.lists(st.sampled_from(HTTP_FRAGMENTS), max_size=14).map("".join)))
@settings(max_examples=500, deadline=None)
def test_http_access_lines_are_found_as_re2_finds_them(line: str) -> None:
    """The compiled pass marks a line that no template matched as an HTTP access line exactly when the
    noise pattern (RE2) finds one in it and it holds no "server_args=" (a config line is looked for first)."""
    block = log_lines.make_block(bytearray(f"{line}\nplain text\n".encode()), 1)
    scan = _scan(block, TemplateBook(), [])
    pattern = dict(log_lines.NOISE_KINDS)[log_lines.HTTP_ACCESS]
    found = pc.match_substring_regex(pa.array([line]), pattern)[0].as_py() and "server_args=" not in line
    event(f"http access: {found}")
    assert bool(scan.http_access[0]) == found
    assert not scan.http_access[1]
