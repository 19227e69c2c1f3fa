"""Fuzzing every parser: random bytes and damaged valid samples end in an ``IngestError`` or in tables of the schema.

For each registered format, a valid sample from ``tests/fixtures/`` is damaged the way files
get damaged: lines deleted, duplicated, swapped or spliced in from another format's sample,
bytes flipped, a number replaced by NaN/Infinity/a negative/a huge one, invalid UTF-8 or a NUL
inserted, the text cut at any byte, the result gzipped (and the gzip cut). The parser of that
format, and detection followed by whichever parser it picks, must then either raise an
``IngestError`` naming the file, or return tables that are exactly ``ingest.tables.SCHEMAS``'
with warnings that name the file. Any other exception is a bug.

Sized for CI: ``SPECDASH_FUZZ_EXAMPLES`` examples per test (default 25; the examples are
derandomized, so a failure reproduces). ``SPECDASH_FUZZ_EXAMPLES=2000`` for a deeper local run.
"""
from __future__ import annotations

import gzip
import os
import re
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.errors import IngestError
from ingest.formats import Format, ParseOptions
from ingest.model import ParsedSource
from ingest.reader import read_all
from ingest.registry import detect, registered_formats
from tests.conftest import FIXTURES
from tests.reliability_helpers import table_problems

EXAMPLES = int(os.environ.get("SPECDASH_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Damaged server_args text such as 'C:\logs' makes ast.parse warn about escapes (silent outside pytest in 3.11).
pytestmark = pytest.mark.filterwarnings("ignore:invalid escape sequence")

# kind -> a valid sample of it (decompressed when the fixture is gzipped)
SEEDS: dict[str, Path] = {
    "kineto_trace": FIXTURES / "traces" / "eagle-steps-TP-1-DECODE.trace.json.gz",
    "cycle_timing": FIXTURES / "traces" / "cycle-timing.csv",
    "bench_serving_jsonl": FIXTURES / "bench" / "sglang-2025-06-accept-length.jsonl",
    "bench_one_batch_jsonl": FIXTURES / "bench" / "sglang-one-batch-server.jsonl",
    "nested_runs_jsonl": FIXTURES / "bench" / "4x3090-archive-eight-runs.jsonl",
    "aiperf_json": FIXTURES / "bench" / "aiperf-run1-profile_export_aiperf.json",
    "aiperf_records_jsonl": FIXTURES / "bench" / "aiperf-run1-profile_export-3-records.jsonl",
    "vllm_bench_json": FIXTURES / "bench" / "vllm-benchmark-serving-pretty.json",
    "bench_json": FIXTURES / "dashboard" / "phase-1-two-variants.bench.json",
    "bench_serving_console": FIXTURES / "bench" / "sglang-console-jan2025-two-runs.txt",
    "vllm_spec_decode_text": FIXTURES / "bench" / "vllm-spec-decode-summary-cut.txt",
    "bench_table_text": FIXTURES / "bench" / "team-phase0-markdown-table.txt",
    "sglang_send_one_text": FIXTURES / "bench" / "sglang-send-one-two-calls.txt",
    "sglang_eagle_bench_text": FIXTURES / "bench" / "sglang-eagle-gsm8k-mtbench-with-result-jsonl.txt",
    "vllm_log": FIXTURES / "logs" / "vllm-v1-eagle3-2025.log",
    "sglang_log": FIXTURES / "logs" / "sglang-eagle3-basic.log",
    "bench_speculative_jsonl": FIXTURES / "sweeps" / "bench-speculative-output.jsonl",
    "specforge_bench_json": FIXTURES / "sweeps" / "specforge-bench-eagle3-sweep.json",
    "sweep_table_text": FIXTURES / "sweeps" / "user-sweep-table.md",
    "results_table_text": FIXTURES / "tables" / "constructed-metrics-and-pairs.md",
    "spec_request_json": FIXTURES / "acceptance" / "vllm-responses-per-request-spec-metrics.jsonl",
    "prometheus_text": FIXTURES / "acceptance" / "vllm-metrics-two-snapshots-dp2.prom",
    "sglang_request_log": FIXTURES / "acceptance" / "sglang-finish-line-spliced-25887-with-33518-spec.log",
    "token_counts": FIXTURES / "drafters" / "token-counts.csv",
    "eagle3_drafter": FIXTURES / "drafters" / "offsets-ok" / "model.safetensors",
    "specforge_training_log": FIXTURES / "training" / "specforge-eagle3-constructed.log",
    "automodel_training_log": FIXTURES / "training" / "automodel-eagle3-carriage-returns.log",
    "llamacpp_server_log": FIXTURES / "llamacpp" / "server-2026-06-eagle3-per-position.log",
    "llamacpp_speculative_text": FIXTURES / "llamacpp" / "speculative-issue5877-llama32.txt",
    "llamacpp_timings_json": FIXTURES / "llamacpp" / "stream-final-chunk-b9251.txt",
    "llamacpp_speed_bench_text": FIXTURES / "llamacpp" / "speed-bench-compare-constructed.txt",
}
FORMATS: dict[str, Format] = {file_format.kind: file_format for file_format in registered_formats()}
SAMPLES: dict[str, bytes] = {kind: read_all(path) for kind, path in SEEDS.items()}
ODD_LITERALS = [b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf", b"-1", b"0", b"-0", b"1e400", b"1e-400",
                b"99999999999999999999999", b"9" * 5000, b"", b"null", b"true", b'"x"', b"[]", b"{}", b"1.5.5", b"0x1F"]
ODD_BYTES = [b"\x00", b"\xff", b"\xc3", b"\xe2\x80", b"\xef\xbb\xbf", b"\r", b"\n", b"\t", b"\\", b'"', b"{", b"}", b"[", b"]"]
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


# --- damage ------------------------------------------------------------------------------------------------------

Damage = Callable[[bytes], bytes]


@st.composite
def line_damage(draw: st.DrawFn) -> Damage:
    """Delete, duplicate, swap a line, or splice in a line of another format's sample."""
    how = draw(st.sampled_from(["delete", "duplicate", "swap", "splice"]))
    at, other = draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6))
    foreign = draw(st.sampled_from(sorted(SAMPLES)))

    def damage(data: bytes) -> bytes:
        lines = data.split(b"\n")
        i, j = at % len(lines), other % len(lines)
        if how == "delete":
            del lines[i]
        elif how == "duplicate":
            lines.insert(i, lines[i])
        elif how == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            donor = SAMPLES[foreign].split(b"\n")
            lines.insert(i, donor[j % len(donor)])
        return b"\n".join(lines)

    return damage


@st.composite
def byte_damage(draw: st.DrawFn) -> Damage:
    """Flip a byte, insert odd bytes (NUL, invalid UTF-8, a BOM, brackets), or cut the text."""
    how = draw(st.sampled_from(["flip", "insert", "cut"]))
    at = draw(st.integers(0, 10**6))
    value = draw(st.integers(0, 255))
    inserted = draw(st.sampled_from(ODD_BYTES))

    def damage(data: bytes) -> bytes:
        if not data:
            return inserted
        i = at % len(data)
        if how == "flip":
            return data[:i] + bytes([value]) + data[i + 1:]
        if how == "insert":
            return data[:i] + inserted + data[i:]
        return data[:i]

    return damage


@st.composite
def value_damage(draw: st.DrawFn) -> Damage:
    """Replace one number of the text with NaN, Infinity, a negative, a huge number, text, null..."""
    which = draw(st.integers(0, 10**6))
    literal = draw(st.sampled_from(ODD_LITERALS))

    def damage(data: bytes) -> bytes:
        numbers = list(NUMBER.finditer(data))
        if not numbers:
            return data
        found = numbers[which % len(numbers)]
        return data[: found.start()] + literal + data[found.end():]

    return damage


DAMAGE = st.one_of(line_damage(), byte_damage(), value_damage())


@st.composite
def damaged(draw: st.DrawFn, kind: str) -> bytes:
    data = SAMPLES[kind]
    for damage in draw(st.lists(DAMAGE, min_size=1, max_size=4)):
        data = damage(data)
    packing = draw(st.sampled_from(["plain", "plain", "plain", "gzip", "gzip-cut"]))
    if packing == "plain":
        return data
    packed = gzip.compress(data, mtime=0)
    return packed if packing == "gzip" else packed[: draw(st.integers(2, max(2, len(packed) - 1)))]


# --- checking one outcome --------------------------------------------------------------------------------------------

def outcome_problems(parse: Callable[[Path, ParseOptions], ParsedSource], path: Path) -> list[str]:
    """Run ``parse``: an IngestError naming the file, or tables of the declared schemas; anything else is a problem."""
    try:
        parsed = parse(path, ParseOptions())
    except IngestError as error:
        return [] if error.path == str(path) and error.message else [f"an error that does not name the file: {error!r}"]
    except Exception as error:  # noqa: BLE001 - what this test hunts
        return [f"{type(error).__name__}: {str(error)[:300]} (at {where_raised(error)})"]
    problems = table_problems(parsed)
    problems += [f"a warning that does not name the file: {w!r}" for w in parsed.warnings if not w.startswith(str(path))]
    return problems


def where_raised(error: BaseException) -> str:
    """The innermost ``ingest`` frame of the traceback: where the fix belongs."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if "/ingest/" in frame.filename]
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "outside ingest"


def detect_then_parse(path: Path, options: ParseOptions) -> ParsedSource:
    return detect(path).parse(path, options)


# --- the tests ------------------------------------------------------------------------------------------------------------

def test_every_format_has_a_valid_seed() -> None:
    """The seeds are valid (so damage starts from a file that loads), and every registered format has one."""
    assert set(SEEDS) == set(FORMATS)
    for kind, path in SEEDS.items():
        assert FORMATS[kind].sniff(SAMPLES[kind][:65536]), f"{path.name} is not recognized as {kind}"
        parsed = FORMATS[kind].parse(path, ParseOptions())
        assert parsed.rows_loaded > 0 and outcome_problems(FORMATS[kind].parse, path) == [], kind


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def assert_every_input_handled(inputs: st.SearchStrategy[bytes], parse: Callable[[Path, ParseOptions], ParsedSource], path: Path) -> None:
    """Each generated content, written to ``path``, parses to valid output or a clear error."""

    @FUZZ
    @given(data=inputs)
    def check(data: bytes) -> None:
        path.write_bytes(data)
        assert outcome_problems(parse, path) == []

    check()


@pytest.mark.parametrize("kind", sorted(SEEDS))
def test_random_bytes(kind: str, scratch: Path) -> None:
    assert_every_input_handled(st.binary(max_size=4096), FORMATS[kind].parse, scratch / f"random-{kind}.bin")


@pytest.mark.parametrize("kind", sorted(SEEDS))
def test_damaged_sample_through_its_own_parser(kind: str, scratch: Path) -> None:
    assert_every_input_handled(damaged(kind), FORMATS[kind].parse, scratch / f"damaged-{kind}.txt")


@pytest.mark.parametrize("kind", sorted(SEEDS))
def test_damaged_sample_through_detection(kind: str, scratch: Path) -> None:
    """What the pipeline does before the store: detect the format from the damaged content, then parse."""
    assert_every_input_handled(damaged(kind), detect_then_parse, scratch / f"detected-{kind}.txt")
