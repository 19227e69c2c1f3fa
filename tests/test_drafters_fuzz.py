"""Fuzzing the safetensors header reader and the drafter loader: any bytes either read as a checkpoint
or fail as ``MalformedInput`` naming the file (never another exception, never a hang)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.errors import MalformedInput
from ingest.parsers.drafters import drafter_checks, safetensors
from tests import drafter_fixtures

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
VALID = (drafter_fixtures.OUT / "offsets-ok" / "model.safetensors").read_bytes()
DTYPES = st.sampled_from([*safetensors.DTYPE_BYTES, "I128", "", "bool"])
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 1 << 40) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                           max_leaves=12)
ENTRIES = st.fixed_dictionaries({}, optional={
    "dtype": DTYPES | JSON_VALUES,
    "shape": st.lists(st.integers(-2, 300), max_size=3) | JSON_VALUES,
    "data_offsets": st.lists(st.integers(-2, 3000), min_size=0, max_size=3) | JSON_VALUES,
})
HEADERS = st.dictionaries(st.sampled_from(["d2t", "t2d", "lm_head.weight", "model.d2t", "__metadata__", "x"]),
                          ENTRIES | JSON_VALUES, max_size=4)


def reads_or_fails_cleanly(path: Path) -> None:
    try:
        checkpoint = drafter_checks.load(path)
    except MalformedInput as error:
        assert error.path is not None and (path.name in error.path or path.parent.name in error.path)
        assert "\n" not in error.message
        return
    drafter_checks.verdicts(checkpoint)  # whatever was read, the checks run on it


@FUZZ
@given(header=HEADERS, body=st.binary(max_size=3000), claimed=st.none() | st.integers(0, 1 << 64 - 1))
def test_any_header_reads_or_fails_as_malformed_input(tmp_path: Path, header: dict[str, object], body: bytes, claimed: int | None) -> None:
    raw = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw) if claimed is None else claimed) + raw + body)
    reads_or_fails_cleanly(path)


@FUZZ
@given(cut=st.integers(0, len(VALID)), flips=st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), max_size=6))
def test_a_damaged_real_file_reads_or_fails_as_malformed_input(tmp_path: Path, cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(VALID)
    for at, value in flips:
        data[at] = value
    path = tmp_path / "model.safetensors"
    path.write_bytes(bytes(data[:cut]))
    reads_or_fails_cleanly(path)


@FUZZ
@given(text=st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_any_config_text_reads_or_fails_as_malformed_input(tmp_path: Path, text: str) -> None:
    path = tmp_path / "drafter.config.json"
    path.write_text(text, encoding="utf-8")
    reads_or_fails_cleanly(path)
