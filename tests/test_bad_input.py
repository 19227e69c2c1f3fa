"""The bad-input corpus (``tests/data/bad/``): every case ends in a clear error or a partial load, never a crash.

Each case's outcome is declared as data: ``tests/data/bad/expected.json`` for the hand-made
cases (``hand/``) and the 10 MB single-line cases built here at test time (``runtime/``),
``tests/data/bad/gen/expected.json`` for the cases ``make_bad_corpus.py`` generates. The two
documented outcomes (docs/reliability.md §2):

* ``error``: an ``IngestError`` subclass of the declared class, naming the file (and the line
  or key when declared) with a hint, never "internal error"; the store is exactly as before;
* ``partial``: the file loads as the declared kind with at least the declared rows, the declared
  skip reasons counted, warnings as ``file:line: ...``; ``sources.rows_loaded`` equals the rows
  the data tables hold for it.

Every case also goes through **every** registered parser directly, the wrong ones included:
the only exception allowed is an ``IngestError`` naming the file, and any table a parser returns
must match ``ingest.tables.SCHEMAS``.
"""
from __future__ import annotations

import filecmp
import importlib.util
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import pytest

from ingest.errors import IngestError
from ingest.formats import ParseOptions
from ingest.model import ParsedSource
from ingest.pipeline import FileReport, ingest_file, ingest_paths
from ingest.registry import registered_formats
from ingest.storage import store
from tests.conftest import FIXTURES, ROOT
from tests.reliability_helpers import table_problems

BAD = ROOT / "tests" / "data" / "bad"
GENERATED = BAD / "gen"
MANIFESTS = {"hand/": BAD / "expected.json", "gen/": GENERATED / "expected.json"}
RUNTIME = "runtime/"
MIN_CASES = 200
MAX_COMMITTED_MB = 5.0
TEN_MB = 10 * 1024 * 1024
GOOD_SOURCE = FIXTURES / "logs" / "sglang-eagle3-basic.log"  # in the store before every case


# --- the 10 MB single-line cases, built into tmp (never committed) ------------------------------------

def ten_mb_of(unit: bytes) -> bytes:
    return unit * (TEN_MB // len(unit))


SERVING_RECORD = (
    b'{"backend": "sglang", "dataset_name": "random", "duration": 124.9, "completed": 5, '
    b'"total_input_tokens": 160, "total_output_tokens": 10240, "output_throughput": 81.98'
)
RUNTIME_BUILDERS: dict[str, Callable[[], bytes]] = {
    "runtime/ten-mb-line-no-newline.log": lambda: ten_mb_of(b"x"),
    "runtime/ten-mb-decode-line.log": lambda: (
        b"[2026-02-10 10:01:01 TP0] Decode batch, #running-req: 1, #token: 100, accept len: 1.58, "
        + ten_mb_of(b"k: 1, ") + b"#queue-req: 0\n"
        + b"[2026-02-10 10:01:02 TP0] Decode batch, #running-req: 1, #token: 140, accept len: 1.60, #queue-req: 0\n"
    ),
    "runtime/ten-mb-jsonl-record.jsonl": lambda: (
        SERVING_RECORD + b', "generated_text": "' + ten_mb_of(b"token ") + b'"}\n' + SERVING_RECORD + b"}\n"
    ),
    "runtime/ten-mb-cycle-csv-cell.csv": lambda: (
        b"cycle,phase,ms,variant\n0,draft,0.3,k2\n0,verify,29.9," + ten_mb_of(b"k2") + b"\n0,total,30.5,k2\n"
    ),
    "runtime/ten-mb-bench-json-one-line.json": lambda: (
        b'{"format": "specdash.bench/1", "note": "' + ten_mb_of(b"n") + b'", '
        b'"runs": [{"output_tokens": 2048, "duration_s": 40.5}]}'
    ),
    "runtime/ten-mb-kineto-one-line-TP-0.trace.json": lambda: (
        b'{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [{"ph": "X", "cat": "kernel", "name": "'
        + ten_mb_of(b"k") + b'", "pid": 0, "tid": 7, "ts": 1, "dur": 2}, '
        b'{"ph": "X", "cat": "kernel", "name": "nccl", "pid": 0, "tid": 7, "ts": 5, "dur": 2}]}'
    ),
}


# --- the manifest ---------------------------------------------------------------------------------------

def load_manifest() -> dict[str, dict[str, Any]]:
    """Case name ("hand/x.log", "gen/y.json", "runtime/z.log") → its declared outcome."""
    cases: dict[str, dict[str, Any]] = {}
    for prefix, manifest in MANIFESTS.items():
        for name, expect in json.loads(manifest.read_text(encoding="utf-8")).items():
            cases[name if name.startswith(RUNTIME) else prefix + name] = expect
    return cases


CASES = load_manifest()


@pytest.fixture(scope="module")
def runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runtime")
    for name, build in RUNTIME_BUILDERS.items():
        (folder / name.removeprefix(RUNTIME)).write_bytes(build())
    return folder


def case_path(name: str, runtime_dir: Path) -> Path:
    if name.startswith(RUNTIME):
        return runtime_dir / name.removeprefix(RUNTIME)
    return BAD / name


def test_the_manifest_names_every_case_and_nothing_else() -> None:
    on_disk = {f"hand/{p.name}" for p in (BAD / "hand").iterdir()}
    on_disk |= {f"gen/{p.name}" for p in GENERATED.iterdir() if p.name != "expected.json"}
    declared = {name for name in CASES if not name.startswith(RUNTIME)}
    assert sorted(on_disk - declared) == [], "files without a declared outcome"
    assert sorted(declared - on_disk) == [], "declared cases without a file"
    assert {name for name in CASES if name.startswith(RUNTIME)} == set(RUNTIME_BUILDERS)
    assert len(CASES) >= MIN_CASES
    for name, expect in CASES.items():
        assert expect.get("what"), f"{name}: say what the case is"
        assert expect["outcome"] in ("error", "partial"), name
        assert ("error" in expect and "message" in expect) if expect["outcome"] == "error" else "kind" in expect, name


def test_the_committed_corpus_stays_small() -> None:
    size = sum(p.stat().st_size for p in BAD.rglob("*") if p.is_file())
    assert size < MAX_COMMITTED_MB * 1e6, f"{size / 1e6:.1f} MB committed under {BAD}"


def test_the_generated_cases_are_what_the_generator_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("make_bad_corpus", BAD / "make_bad_corpus.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, generator)  # dataclasses look their module up there
    spec.loader.exec_module(generator)
    generator.write(tmp_path / "gen")
    fresh = sorted(p.name for p in (tmp_path / "gen").iterdir())
    assert fresh == sorted(p.name for p in GENERATED.iterdir())
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "gen", GENERATED, fresh, shallow=False)
    assert mismatch == [] and errors == [], "re-run python tests/data/bad/make_bad_corpus.py"


# --- the store, before and after -----------------------------------------------------------------------------

class Template(NamedTuple):
    db: Path
    state: dict[str, Any]


@pytest.fixture(scope="module")
def template_store(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """A store that already holds one good source, so "unchanged" has something to keep; each case gets a copy."""
    db = tmp_path_factory.mktemp("template") / "store.duckdb"
    report = ingest_file(GOOD_SOURCE, db)
    assert report.status == "loaded", report.summary()
    return Template(db, store_state(db))


def store_state(db: Path) -> dict[str, Any]:
    """Row counts of every table, and the change id the dashboard keys its caches on."""
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [row[0] for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY 1"
        ).fetchall()]
        state: dict[str, Any] = {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables}
        state["last_change"] = con.execute("SELECT value FROM store_meta WHERE key = 'last_change'").fetchone()
    return state


def source_rows(db: Path, source_id: str) -> tuple[dict[str, Any], dict[str, int]]:
    """The source's ``sources`` row and how many rows each data table holds for it."""
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute("SELECT * FROM sources WHERE source_id = ?", [source_id])
        names = [column[0] for column in cursor.description]
        row = dict(zip(names, cursor.fetchone()))
        counts = {
            name: con.execute(f"SELECT count(*) FROM {name} WHERE source_id = ?", [source_id]).fetchone()[0]
            for name in store.data_tables(con)
        }
    return row, counts


# --- checking one outcome ----------------------------------------------------------------------------------

def error_problems(error: IngestError, path: Path, expect: dict[str, Any]) -> list[str]:
    said = f"{error.message} {error.hint}"
    problems = []
    if "internal error" in error.message:
        problems.append(f"a crash, not a clear error: {error}")
    if type(error).__name__ != expect["error"]:
        problems.append(f"expected {expect['error']}, got {type(error).__name__}: {error}")
    if expect["message"] not in said:
        problems.append(f"expected {expect['message']!r} in the message: {error}")
    if error.path != str(path):
        problems.append(f"the error names {error.path!r}, not the file")
    if not error.hint:
        problems.append(f"no hint says what to do: {error}")
    for place in ("line", "key"):
        if place in expect and getattr(error, place) != expect[place]:
            problems.append(f"expected {place} {expect[place]!r}, the error names {getattr(error, place)!r}: {error}")
    return problems


def load_problems(report: FileReport, db: Path, path: Path, expect: dict[str, Any]) -> list[str]:
    if report.error is not None:
        return [f"expected a partial load, got: {report.error}"]
    problems = []
    if report.kind != expect["kind"]:
        problems.append(f"read as {report.kind}, expected {expect['kind']}")
    if "rows" in expect and report.rows_loaded != expect["rows"]:
        problems.append(f"{report.rows_loaded} rows loaded, expected {expect['rows']}")
    if report.rows_loaded < expect.get("min_rows", 0):
        problems.append(f"{report.rows_loaded} rows loaded, expected at least {expect['min_rows']}")
    for reason, count in expect.get("skipped", {}).items():
        if report.skipped[reason] < count:
            problems.append(f"expected {count}+ skipped as {reason!r}, got {dict(report.skipped)}")
    if "warnings" in expect and len(report.warnings) != expect["warnings"]:
        problems.append(f"expected {expect['warnings']} warnings, got {report.warnings[:5]}")
    if "warning" in expect:
        wanted = expect["warning"]
        at_line = wanted.startswith(":")  # ":12: message": the warning must be "<file>:12: message..."
        if not any(w.startswith(f"{path}{wanted}") if at_line else wanted in w for w in report.warnings):
            problems.append(f"no warning {'starting ' + str(path) if at_line else 'with'} {wanted!r}: {report.warnings[:5]}")
    problems += [f"a warning that does not name the file: {w!r}" for w in report.warnings if not w.startswith(str(path))]
    if report.lines_skipped != sum(report.skipped.values()):
        problems.append(f"lines_skipped {report.lines_skipped} is not the sum of {dict(report.skipped)}")
    assert report.source_id is not None
    source, counts = source_rows(db, report.source_id)
    if source["rows_loaded"] != sum(counts.values()) or source["rows_loaded"] != report.rows_loaded:
        problems.append(f"sources.rows_loaded {source['rows_loaded']}, report {report.rows_loaded}, tables hold {counts}")
    if source["kind"] != report.kind:
        problems.append(f"sources.kind {source['kind']} but read as {report.kind}")
    for table, count in expect.get("tables", {}).items():
        if counts.get(table) != count:
            problems.append(f"{table}: {counts.get(table)} rows, expected {count}")
    return problems


def output_problems(parsed: ParsedSource) -> list[str]:
    """``table_problems``, and every warning is text."""
    problems = table_problems(parsed)
    if not all(isinstance(w, str) for w in parsed.warnings):
        problems.append("a warning that is not text")
    return problems


# --- the tests ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_case_ends_as_declared_through_the_pipeline(
    name: str, template_store: Template, runtime_dir: Path, tmp_path: Path
) -> None:
    expect = CASES[name]
    path = case_path(name, runtime_dir)
    db = tmp_path / "store.duckdb"
    shutil.copyfile(template_store.db, db)
    before = template_store.state
    report = ingest_file(path, db)
    if expect["outcome"] == "error":
        assert report.error is not None, f"{expect['what']}: expected {expect['error']}, it loaded: {report.summary()}"
        assert error_problems(report.error, path, expect) == [], expect["what"]
        assert store_state(db) == before, "a failed file changed the store"
    else:
        assert load_problems(report, db, path, expect) == [], expect["what"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_through_every_parser_raises_only_ingest_errors(name: str, runtime_dir: Path) -> None:
    path = case_path(name, runtime_dir)
    problems = []
    for file_format in registered_formats():
        try:
            parsed = file_format.parse(path, ParseOptions())
        except IngestError as error:
            if error.path != str(path) or not error.message or not error.hint:
                problems.append(f"{file_format.kind}: an error without file, message or hint: {error!r}")
        except Exception as error:  # noqa: BLE001 - what this test hunts
            problems.append(f"{file_format.kind}: {type(error).__name__}: {str(error)[:200]}")
        else:
            problems += [f"{file_format.kind}: {problem}" for problem in output_problems(parsed)]
    assert problems == [], CASES[name]["what"]


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    """The hand-made cases in one call: each error case fails alone, every other file loads, the store adds up."""
    db = tmp_path / "store.duckdb"
    reports = ingest_paths([BAD / "hand", GOOD_SOURCE], db)
    by_name = {report.path.name: report for report in reports}
    expected_failures = {name.removeprefix("hand/") for name, expect in CASES.items()
                         if name.startswith("hand/") and expect["outcome"] == "error"}
    assert {name for name, report in by_name.items() if report.failed} == expected_failures
    assert by_name[GOOD_SOURCE.name].status == "loaded"
    with duckdb.connect(str(db), read_only=True) as con:
        loaded = dict(con.execute("SELECT source_id, rows_loaded FROM sources").fetchall())
        held = {name: dict(con.execute(f"SELECT source_id, count(*) FROM {name} GROUP BY 1").fetchall())
                for name in store.data_tables(con)}
    assert len(loaded) == len(reports) - len(expected_failures)
    for source_id, rows in loaded.items():
        assert sum(table.get(source_id, 0) for table in held.values()) == rows, source_id


def test_every_expected_error_shares_one_base_with_where_and_what_to_do() -> None:
    from dashboard.analysis.evidence import NoEvidence
    from ingest import errors
    from ingest.storage.decisions import InvalidDecision

    layers = {errors.IngestError: [errors.UnrecognizedFormat, errors.MalformedInput],
              errors.StoreError: [errors.StoreBusy, errors.NoStore],
              errors.DecisionError: [InvalidDecision, NoEvidence]}
    for layer, kinds in layers.items():
        assert issubclass(layer, errors.SpecdashError)
        assert all(issubclass(kind, layer) for kind in kinds)
    assert str(NoEvidence("no evidence sessions were given")) == "no evidence sessions were given"
    assert str(errors.NoStore("/tmp/x.duckdb", "no store yet", hint="run `specdash demo`")) == (
        "/tmp/x.duckdb: no store yet — run `specdash demo`")
