"""Compare a parsed log with its golden ``*.expected.json`` (shared by the log parser tests).

A golden lists, per table, every row with its non-null values; a column a golden
row does not list must be null. ``extra`` is compared as parsed JSON, ``args`` by
the subset of keys listed, floats to 1e-9, timestamps as ISO text.
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.registry import detect


def load_golden(golden: Path) -> tuple[Path, dict[str, Any]]:
    source = golden.with_name(golden.name.removesuffix(".expected.json") + ".log")
    return source, json.loads(golden.read_text())


def parse_for_golden(source: Path, expected: dict[str, Any]) -> ParsedSource:
    fmt = detect(source)
    assert fmt.kind == expected["kind"]
    return fmt.parse(source, ParseOptions(**expected["options"]))


def assert_matches_golden(source: Path, result: ParsedSource, expected: dict[str, Any]) -> None:
    assert result.engine == expected["engine"]
    assert result.lines_read == expected["lines_read"]
    assert {name: table.num_rows for name, table in result.tables.items()} == expected["rows"]
    assert dict(result.skipped) == expected["skipped"]
    assert [warning.replace(str(source), "{file}") for warning in result.warnings] == expected["warnings"]
    for name, rows in expected["tables"].items():
        actual_rows = result.tables[name].to_pylist()
        assert len(actual_rows) == len(rows)
        for actual, wanted in zip(actual_rows, rows, strict=True):
            _assert_row(name, actual, wanted)


def _assert_row(table: str, actual: dict[str, Any], wanted: dict[str, Any]) -> None:
    where = f"{table} line {actual.get('line_no')}"
    for column, value in actual.items():
        if column == "args":
            args = json.loads(value)
            for key, wanted_value in wanted.get("args (subset)", {}).items():
                assert args.get(key) == wanted_value, f"{where}: args[{key}]"
            continue
        if column not in wanted:
            assert value is None, f"{where}: {column} should be null, is {value!r}"
            continue
        expected_value = wanted[column]
        if column == "extra":
            assert json.loads(value) == expected_value, f"{where}: extra"
        elif isinstance(value, datetime):
            assert value.isoformat(sep=" ") == expected_value, f"{where}: {column}"
        elif isinstance(value, float):
            assert value == pytest.approx(expected_value, abs=1e-9), f"{where}: {column}"
        else:
            assert value == expected_value, f"{where}: {column}"
