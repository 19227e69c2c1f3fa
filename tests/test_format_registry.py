"""The format registry: parser modules register by declaring FORMATS, and no two formats claim one file.

Detection asks the formats in order and takes the first that claims a file; that order must not
matter for any file we know. So every sniffer runs on every fixture, demo file and corpus file
(../shared/corpus, when present), and a file claimed by two formats fails the test, naming both.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ingest import registry
from ingest.errors import IngestError
from ingest.reader import read_head
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[1]
PARSERS = ROOT / "ingest" / "parsers"


def known_files() -> list[Path]:
    roots = [ROOT / "tests" / "fixtures", ROOT / "data" / "demo", CORPUS]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*") if p.is_file())


def claims(path: Path) -> list[str]:
    try:
        head = read_head(path)
    except IngestError:  # unreadable (corrupt gzip fixtures): detection refuses it before any sniffer
        return []
    return [f.kind for f in registry.registered_formats() if f.sniff(head)]


def test_no_file_we_know_is_claimed_by_two_formats() -> None:
    files = known_files()
    assert len(files) > 100  # the fixtures and the demo alone hold more; an empty walk proves nothing
    twice = {str(p.relative_to(p.anchor)): kinds for p in files if len(kinds := claims(p)) > 1}
    assert twice == {}


def test_the_checker_would_see_a_file_two_formats_claim(tmp_path: Path) -> None:
    # a bench_serving console block followed by a run table: each format claims its own part
    console = (ROOT / "tests/fixtures/bench/sglang-console-jan2025-two-runs.txt").read_text(encoding="utf-8")
    both = tmp_path / "both.txt"
    both.write_text(console + "\n| Run | Tokens | Time (s) | Throughput (tok/s) |\n|---|---|---|---|\n| 1 | 2048 | 40.1 | 51.1 |\n")
    assert sorted(claims(both)) == ["bench_serving_console", "bench_table_text"]


def declared_in_source() -> set[str]:
    """Parser modules whose source assigns FORMATS at the top level, read without importing them."""
    declared = set()
    for path in PARSERS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FORMATS" for t in node.targets)
               for node in tree.body):
            declared.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return declared


def test_every_module_that_declares_formats_is_registered() -> None:
    registered = {f.parse.__module__ for f in registry.registered_formats()}
    assert declared_in_source() == registered
    assert not registry.NOT_SCANNED & declared_in_source()  # a skipped module must not hold formats


def test_formats_are_asked_in_precedence_order_and_each_says_what_it_reads() -> None:
    formats = registry.registered_formats()
    assert [f.precedence for f in formats] == sorted(f.precedence for f in formats)
    assert len({f.kind for f in formats}) == len(formats)
    assert all(f.description and f.example for f in formats), [f.kind for f in formats if not f.example]


@pytest.mark.parametrize("kind", ["kineto_trace", "sglang_log", "bench_serving_jsonl"])
def test_detect_still_finds_a_format_by_content(kind: str) -> None:
    examples = {
        "kineto_trace": ROOT / "tests/fixtures/traces",
        "sglang_log": ROOT / "tests/fixtures/logs",
        "bench_serving_jsonl": ROOT / "tests/fixtures/bench",
    }
    found = {claims(p)[0] for p in examples[kind].rglob("*") if p.is_file() and len(claims(p)) == 1}
    assert kind in found
