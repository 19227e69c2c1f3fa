"""Golden expectations for the benchmark-output parsers.

Each fixture ``tests/fixtures/bench/NAME`` with a ``NAME.expected.json`` beside it
is parsed and compared to it: kind, engine, every table's rows, the skipped-line
counts and the warnings (paths shown as the bare file name). Non-finite floats
are written as "Infinity"/"-Infinity"/"NaN" text so the golden files are strict
JSON. ``SPECDASH_REGEN_GOLDEN=1`` rewrites them; review the diff before keeping it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.parsers.bench.bench_fields import strict_json_value

BENCH_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bench"
GOLDEN_SUFFIX = ".expected.json"


def golden_inputs(kind: str) -> list[Path]:
    """Fixtures whose golden file says they are of ``kind``."""
    found = []
    for golden in sorted(BENCH_FIXTURES.glob(f"*{GOLDEN_SUFFIX}")):
        if json.loads(golden.read_text(encoding="utf-8")).get("kind") == kind:
            found.append(golden.with_name(golden.name.removesuffix(GOLDEN_SUFFIX)))
    return found


def snapshot(path: Path, parsed: ParsedSource) -> dict[str, Any]:
    """The parse result as plain JSON data (timestamps as ISO text)."""
    data = strict_json_value(
        {
            "kind": parsed.kind,
            "engine": parsed.engine,
            "lines_read": parsed.lines_read,
            "tables": {name: table.to_pylist() for name, table in sorted(parsed.tables.items())},
            "skipped": dict(sorted(parsed.skipped.items())),
            "warnings": [warning.replace(str(path), path.name) for warning in parsed.warnings],
        }
    )
    return json.loads(json.dumps(data, default=str))


def check_golden(path: Path, parse: Any) -> dict[str, Any]:
    actual = snapshot(path, parse(path, ParseOptions()))
    golden = path.with_name(path.name + GOLDEN_SUFFIX)
    if os.environ.get("SPECDASH_REGEN_GOLDEN"):
        golden.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(golden.read_text(encoding="utf-8"))
    assert actual == expected
    return actual
