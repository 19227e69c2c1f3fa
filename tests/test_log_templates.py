"""Line templates (ingest/parsers/sglang/sglang_templates.py) read lines by position once the general
reader has seen their shape. Both paths must give exactly the same rows: checked on every
fixture, every SGLang log of the corpus and a generated log with all the shapes the benchmark
uses, with blocks cut small so that most lines go through a template."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import corpus_files

from ingest.errors import IngestError
from ingest.formats import ParseOptions
from ingest.parsers.logs import log_lines
from ingest.parsers.sglang import sglang_log, sglang_stats, sglang_templates
from ingest.parsers.sglang.sglang_templates import TemplateBook, learn

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: (row["line_no"], row["segment"]))


def parse_both(source: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int) -> tuple[object, object, list[TemplateBook]]:
    """(general reader only, with templates, the template books used); a parse error is returned as its text."""
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", block_bytes)
    shipped_limit = sglang_templates.MAX_TEMPLATES
    monkeypatch.setattr(sglang_templates, "MAX_TEMPLATES", 0)
    general = outcome(source)
    monkeypatch.setattr(sglang_templates, "MAX_TEMPLATES", shipped_limit)
    books: list[TemplateBook] = []
    real_book = sglang_log.TemplateBook

    def recording_book() -> TemplateBook:
        books.append(real_book())
        return books[-1]

    monkeypatch.setattr(sglang_log, "TemplateBook", recording_book)
    return general, outcome(source), books


def outcome(source: Path) -> object:
    try:
        return sglang_log.parse(source, ParseOptions())
    except IngestError as error:
        return str(error)


def assert_same(general: object, templated: object) -> None:
    if isinstance(general, str):
        assert templated == general
        return
    for name in ("decode_stats", "prefill_stats", "server_configs"):
        assert rows(templated.tables[name]) == rows(general.tables[name]), name  # type: ignore[attr-defined]
    assert templated.skipped == general.skipped  # type: ignore[attr-defined]
    assert sorted(templated.warnings) == sorted(general.warnings)  # type: ignore[attr-defined]


SOURCES = sorted(FIXTURES.glob("sglang-*.log")) + corpus_files("logs", "sglang-*.log") + corpus_files("logs", "fastrl-*.log")


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: path.name)
def test_templates_read_every_line_as_the_general_reader_does(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    general, templated, _ = parse_both(source, monkeypatch, block_bytes=2048)
    assert_same(general, templated)


def test_a_generated_log_of_every_benchmark_shape_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.gen_log import generate

    source = tmp_path / "generated.log"
    generate(source, total_bytes=1_500_000)
    general, templated, books = parse_both(source, monkeypatch, block_bytes=64 * 1024)
    assert_same(general, templated)
    book = books[0]
    assert len(book.templates) >= 4  # one per era at least: the shapes were learned
    assert sum(book.recent_hits.values()) > 0


PYTHON_LOGGING_LINES = [  # one per logging format string; {t} time, {p} process id, {n} a count
    "{t},{ms} [INFO] sglang.srt.managers.scheduler: Decode batch, #running-req: {n}, #token: 402, token usage: 0.00, "
    "accept len: 1.58, accept rate: 0.40, cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, ",
    "{t},{ms} - sglang.srt.managers.scheduler_metrics_mixin - INFO - Decode batch [{n}], #running-req: 4, #token: 1610, "
    "token usage: 0.01, cuda graph: True, gen throughput (token/s): 412.77, #queue-req: 0, ",
    "INFO {t}.{ms} scheduler_metrics_mixin.py:287] Prefill batch, #new-seq: 1, #new-token: {n}, #cached-token: 0, "
    "token usage: 0.00, #running-req: 0, #queue-req: 0, ",
    "[{t} DP{r} TP{r} EP{r}] scheduler_metrics_mixin.py:287 - Decode batch, #running-req: {n}, #token: 1203, "
    "token usage: 0.01, accept len: 2.40, cap len: 3.00, gen throughput (token/s): 376.05, #queue-req: 1, ",
    "{t},{ms} {p} INFO sglang.srt.managers.scheduler: Decode batch, #running-req: {n}, #token: 9, #queue-req: 0",
]


@pytest.mark.parametrize("line", PYTHON_LOGGING_LINES, ids=range(len(PYTHON_LOGGING_LINES)))
def test_python_logging_shapes_are_read_by_position(line: str) -> None:
    import re

    text = line.format(t="2026-01-02 10:11:12", ms="345", p="151972", n=17, r=2)
    template = learn(text)
    assert template is not None and re.match(template.pattern, text)
    assert re.match(template.pattern, line.format(t="2026-01-03 00:00:01", ms="001", p="7", n=3, r=0))


def test_a_log_of_python_logging_formats_reads_the_same_through_templates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = []
    for index in range(1200):
        line = PYTHON_LOGGING_LINES[index % len(PYTHON_LOGGING_LINES)]
        lines.append(line.format(t=f"2026-01-02 10:{index // 60 % 60:02d}:{index % 60:02d}", ms=f"{index % 1000:03d}",
                                 p=1000 + index % 3, n=index, r=index % 4))
        if index % 7 == 0:
            lines.append("2026-01-02 10:11:13,002 [INFO] sglang.srt.managers.scheduler: PROFILE: Decode batch 1/10 processed")
    source = tmp_path / "python-logging.log"
    source.write_text("\n".join(lines) + "\n")
    general, templated, books = parse_both(source, monkeypatch, block_bytes=16 * 1024)
    assert_same(general, templated)
    assert general.tables["decode_stats"].num_rows == 960  # type: ignore[attr-defined]
    assert len(books[0].templates) >= len(PYTHON_LOGGING_LINES) and sum(books[0].recent_hits.values()) > 0


@pytest.mark.parametrize(
    "line",
    [
        # text values and repeated keys stay with the general reader
        "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 1, token usage: 2.76%",  # a column's value is no percent
        "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 1, mode: fast, gen throughput (token/s): 5.1",
        "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 1, #running-req: 2",
        "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: nan",
        "[10:00:00 TP0] Decode batch. #running-req: 1",  # no date: its date comes from other lines
        "[2024-07-01 10:00:00] [gpu=0] Decode batch. #running-req: 1",
        "[2026-01-01 10:00:00 TP0] Decode batch [first graph replay], #running-req: 1",
    ],
)
def test_shapes_that_are_not_read_by_position(line: str) -> None:
    assert learn(line) is None


def test_a_learned_template_matches_its_line_and_lines_like_it() -> None:
    import re

    line = "sglang-1  | [2026-05-07 15:49:32.359 DP3 TP3 EP3] Decode batch [9593840], #running-req: 25, cap len: 4.00, #queue-req: 0, "
    template = learn(line)
    assert template is not None and template.keys == ("#running-req", "cap len", "#queue-req")
    assert re.match(template.pattern, line)
    assert re.match(template.pattern, line.replace("DP3 TP3 EP3", "DP0 TP0 EP0").replace("9593840", "12").rstrip(", "))
    assert not re.match(template.pattern, line.replace("cap len: 4.00", "cap len: 4.00x"))


def _respelled(text: str, seed: int) -> str:
    """The same log with line ends and separators as other builds and capture tools write them."""
    import random

    rng = random.Random(seed)
    spellings = (
        lambda line: line.replace("\n", "\r\n"),
        lambda line: line.rstrip("\n") + rng.choice([", ", ",", " ", "\t", ", , "]) + "\n",
        lambda line: line.replace(": ", ":  ", 1),
        lambda line: line.replace(", ", ",", 1),
        lambda line: line.replace("0.", "-0.", 1),
    )
    return "".join(
        rng.choice(spellings)(line) if rng.random() < 0.4 else line for line in text.splitlines(keepends=True)
    )


@pytest.mark.parametrize("source", sorted(FIXTURES.glob("sglang-*.log")), ids=lambda path: path.stem)
def test_respelled_lines_read_the_same_through_templates(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    respelled = tmp_path / source.name
    respelled.write_text(_respelled(source.read_text() * 3, seed=len(source.name)))
    general, templated, _ = parse_both(respelled, monkeypatch, block_bytes=700)
    assert_same(general, templated)


def _block_of(lines: list[str]) -> log_lines.Block:
    import numpy as np

    return log_lines.make_block(np.frombuffer(bytearray("".join(lines).encode()), dtype=np.uint8), 1)


def test_a_new_shape_is_learned_from_a_few_lines_before_its_block_is_read() -> None:
    line = "[2026-01-01 10:00:{:02d} TP0] Decode batch. #running-req: {}, #token: 10, gen throughput (token/s): 5.1\n"
    block = _block_of(["server started\n"] + [line.format(index % 60, index) for index in range(200)])
    book = TemplateBook()
    templated = sglang_templates.read_templated(block, book)
    rows, taken, settled = templated.rows, templated.taken, templated.settled
    assert len(book.templates) == 1
    assert taken.sum() == 200 and settled.all()  # every stats line by the template, none left to the general reader
    assert rows[0].columns["running_req"].to_pylist() == list(range(200))


def test_a_percent_value_is_read_by_position_as_the_grammar_reads_it() -> None:
    # SGLang 0.4's prefill line (corpus: logs/sglang-issue-2777-eagle2-prefill-old.log)
    line = "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: {}, cache hit rate: {}.50%, token usage: 0.00\n"
    block = _block_of([line.format(index, index % 7) for index in range(200)])
    book = TemplateBook()
    templated = sglang_templates.read_templated(block, book)
    assert len(book.templates) == 1 and templated.taken.sum() == 200
    general, _ = sglang_stats.read_lines(block)
    assert templated.rows[0].columns["extra"].to_pylist() == general["prefill_stats"].columns["extra"].to_pylist()
    assert json.loads(templated.rows[0].columns["extra"][3].as_py()) == {"cache hit rate (%)": 3.5}


@pytest.mark.parametrize("graph", ["npu graph", "cpu graph", "musa graph"])
def test_a_graph_flag_other_than_cuda_s_is_read_by_position_as_the_grammar_reads_it(graph: str) -> None:
    # SGLang on Ascend NPUs (fixture logs/sglang-dp-attention-2026.log): the flag goes to cuda_graph, its name to extra
    line = "[2026-05-07 06:00:{:02d} DP0 TP0 EP0] Decode batch [{}], mamba num: 30, GRAPH: {}, gen throughput (token/s): 400.00, x: 1\n"
    block = _block_of([line.replace("GRAPH", graph).format(index % 60, index, index % 2 == 0) for index in range(200)])
    book = TemplateBook()
    templated = sglang_templates.read_templated(block, book)
    assert len(book.templates) == 1 and templated.taken.sum() == 200
    general, _ = sglang_stats.read_lines(block)
    for name in ("cuda_graph", "extra"):
        assert templated.rows[0].columns[name].to_pylist() == general["decode_stats"].columns[name].to_pylist(), name
    assert json.loads(templated.rows[0].columns["extra"][0].as_py()) == {
        "mamba num": 30, "graph": graph, "x": 1, "ep_rank": 0, "forward_ct": 0}


def test_shapes_that_cannot_be_learned_stop_the_tries_to_learn_first() -> None:
    line = "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: {}, mode: fast\n"  # a text value
    block = _block_of([line.format(index) for index in range(100)])
    book = TemplateBook()
    for _ in range(sglang_templates.LEARN_FIRST_FRUITLESS + 2):
        templated = sglang_templates.read_templated(block, book)
        taken, settled = templated.taken, templated.settled
        assert not taken.any() and not settled[:100].any()  # all left to the general reader
    assert book.fruitless_tries == sglang_templates.LEARN_FIRST_FRUITLESS and not book.templates


def test_a_shape_learned_meanwhile_by_another_block_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks are read two at a time: the first two of a new shape both try to learn it, and the one
    that finds it already learned must still read its lines with it, not leave them to the general reader."""
    line = "[2026-01-01 10:00:{:02d} TP0] Decode batch. #running-req: {}, #token: 10, gen throughput (token/s): 5.1\n"
    block = _block_of([line.format(index % 60, index) for index in range(200)])
    other_block = _block_of([line.format(index % 60, index + 1000) for index in range(100)])
    book = TemplateBook()
    first_read = sglang_templates._read_with_templates
    reads: list[log_lines.Block] = []

    def read_then_the_other_block_learns(block: log_lines.Block, book: TemplateBook):  # type: ignore[no-untyped-def]
        reads.append(block)
        result = first_read(block, book)
        if len(reads) == 1:  # the other block learns the shape while this one's first read is done
            sglang_templates.read_templated(other_block, book)
        return result

    monkeypatch.setattr(sglang_templates, "_read_with_templates", read_then_the_other_block_learns)
    templated = sglang_templates.read_templated(block, book)
    rows, taken, settled = templated.rows, templated.taken, templated.settled
    assert len(book.templates) == 1 and book.fruitless_tries == 0
    assert taken.all() and settled.all()
    assert rows[0].columns["running_req"].to_pylist() == list(range(200))
