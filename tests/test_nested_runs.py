"""Multi-run JSONL with a nested speculative block (``nested_runs_jsonl``): one benchmark run per line.

The fixture is eight verbatim lines of a public archive's ``data/benchmarks.jsonl`` (its ``.source`` names
the commit and the lines). Golden numbers below are read off the file by hand; each comment quotes where.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dashboard.analysis import data
from ingest.errors import MalformedInput
from ingest.formats import ParseOptions
from ingest.parsers.bench import nested_runs
from ingest.pipeline import ingest_paths
from ingest.registry import detect
from tests.bench_golden import check_golden
from tests.conftest import FIXTURES
from tests.test_app import run_page

ARCHIVE = FIXTURES / "bench" / "4x3090-archive-eight-runs.jsonl"


def parse(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    parsed = nested_runs.parse(path, ParseOptions())
    configs = parsed.tables["server_configs"].to_pylist() if "server_configs" in parsed.tables else []
    return parsed.tables["bench_serving"].to_pylist(), configs, parsed.warnings


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def record(**fields: Any) -> str:
    base = {"engine": "vllm", "model": "Qwen3-8B", "concurrency": 1, "output_tok_s": 120.5}
    return json.dumps({**base, **fields})


# --- the real archive ----------------------------------------------------------------------------

def test_the_archive_is_detected_by_its_content() -> None:
    assert detect(ARCHIVE).kind == nested_runs.KIND


def test_the_archive_matches_its_golden_file() -> None:
    actual = check_golden(ARCHIVE, nested_runs.parse)
    assert actual["warnings"] == [] and actual["lines_read"] == 8
    assert actual["engine"] == "custom"  # sglang, vllm and llama.cpp runs in one file


def test_each_line_is_one_run_with_its_engine_concurrency_and_throughput() -> None:
    runs, configs, _ = parse(ARCHIVE)
    assert [r["line_no"] for r in runs] == [1, 2, 3, 4, 5, 6, 7, 8]
    # "engine": "sglang" … "vllm" … "llama.cpp" … "sglang"; "concurrency": 1, 4, 1, 4, 1, 1, 1, 1
    assert [r["backend"] for r in runs] == ["sglang"] * 4 + ["vllm", "vllm", "llama.cpp", "sglang"]
    assert [r["max_concurrency"] for r in runs] == [1, 4, 1, 4, 1, 1, 1, 1]
    # line 1: "output_tok_s": 100.42887520535959, "req_s": 0.3923002937709359, "ttft_p50_ms": 412.4168894995819
    assert runs[0]["output_throughput"] == 100.42887520535959
    assert runs[0]["request_throughput"] == 0.3923002937709359
    assert runs[0]["median_ttft_ms"] == 412.4168894995819
    # line 6: "output_tok_s": 68.19; line 1: "run_id": "ling3-flash/baseline/saturation-1024x256-c1"
    assert runs[5]["output_throughput"] == 68.19
    assert runs[0]["tag"] == "ling3-flash/baseline/saturation-1024x256-c1"
    # line 1: "model_variant": "inclusionAI/Ling-3.0-flash-int4", "tp": 4; line 6: "model_variant": "Mistral-7B-v0.3", "tp": 1
    assert (configs[0]["model_path"], configs[0]["tp_size"]) == ("inclusionAI/Ling-3.0-flash-int4", 4)
    assert (configs[5]["model_path"], configs[5]["tp_size"]) == ("Mistral-7B-v0.3", 1)


def test_a_run_without_speculation_is_a_baseline_and_each_block_names_its_variant() -> None:
    _, configs, _ = parse(ARCHIVE)
    assert [c["segment"] for c in configs] == list(range(8))
    # "spec_decode": null on lines 1-2; then the blocks' "method" (and "draft_path"/"draft_ref") as written
    assert [c["speculative_algorithm"] for c in configs] == [
        None, None, "nextn built-in", "nextn built-in", "dflash", "draft_model_tli", "draft-mtp n=2",
        "eagle steps=3 topk=1 draft=4"]
    assert [c["variant"] for c in configs] == [
        "baseline", "baseline", "nextn built-in", "nextn built-in", "dflash:Laguna-S-2.1-DFlash-INT4",
        "draft_model_tli:Qwen3-0.6B", "draft-mtp n=2", "eagle steps=3 topk=1 draft=4"]
    assert configs[4]["speculative_draft_model_path"] == "${MODEL_ROOT_ALT}/Laguna-S-2.1-DFlash-INT4"


def test_depth_comes_from_k_or_from_the_method_text() -> None:
    _, configs, _ = parse(ARCHIVE)
    depth = [(c["speculative_num_steps"], c["speculative_eagle_topk"], c["speculative_num_draft_tokens"]) for c in configs]
    assert depth[4] == (7, 1, 8)  # line 5: "k": 7, a chain of 7 drafts (+ the verified root)
    assert depth[5] == (4, 1, 5)  # line 6: "k": 4
    assert depth[6] == (2, 1, 3)  # line 7: "method": "draft-mtp n=2", "k": null
    assert depth[7] == (3, 1, 4)  # line 8: "method": "eagle steps=3 topk=1 draft=4" (SGLang's own names)
    assert depth[2] == (None, None, None)  # line 3: "nextn built-in", "k": null: no depth is made up


def test_accept_length_is_bonus_inclusive_whichever_way_the_file_gives_it() -> None:
    runs, _, _ = parse(ARCHIVE)
    # lines 3-4 (SGLang): "knobs": {… "accept_length": 3.09} and 3.0092165898617513, SGLang's bonus-inclusive figure
    assert runs[2]["accept_length"] == 3.09 and runs[3]["accept_length"] == 3.0092165898617513
    # line 5: "acceptance": 0.22210376687988628, "k": 7, "accepted_tokens_per_round": 1.554726368159204 = 0.2221… × 7,
    # accepted drafts per round without the bonus token: the accept length is that + 1
    assert 0.22210376687988628 * 7 == pytest.approx(1.554726368159204, abs=1e-12)
    assert runs[4]["accept_length"] == pytest.approx(2.554726368159204, abs=1e-12)
    # line 6: only "acceptance": 0.9904: a rate is never turned into a length; baselines and line 7-8 have none
    assert [runs[i]["accept_length"] for i in (0, 1, 5, 6, 7)] == [None] * 5


def test_everything_else_stays_in_extra_with_its_nesting() -> None:
    runs, _, _ = parse(ARCHIVE)
    extras = [json.loads(r["extra"]) for r in runs]
    assert extras[5]["spec_decode"] == {"method": "draft_model_tli", "draft_ref": "Qwen3-0.6B", "draft_path": None,
                                        "k": 4, "acceptance": 0.9904}
    assert extras[6]["samples"] == {"repeats": 1, "draft_n": 90, "draft_n_accepted": 81}  # line 7, as written
    assert extras[2]["knobs"]["mem_fraction_static"] == 0.94 and extras[2]["total_tok_s"] == 660.9932132804174
    assert extras[0]["spec_decode"] is None and "output_tok_s" not in extras[0]  # a mapped key is not repeated


# --- other spellings ------------------------------------------------------------------------------

def test_a_speculative_config_block_with_vllms_names(tmp_path: Path) -> None:
    block = {"method": "eagle3", "model": "org/EAGLE3-Qwen3-8B", "num_speculative_tokens": 3, "acceptance_length": 2.41}
    runs, configs, warnings = parse(write(tmp_path, record(speculative_config=block), record(concurrency=4)))
    assert warnings == []
    assert (configs[0]["variant"], configs[0]["speculative_num_steps"], configs[0]["speculative_num_draft_tokens"]) == (
        "eagle3:EAGLE3-Qwen3-8B", 3, 4)
    assert runs[0]["accept_length"] == 2.41
    assert configs[1]["variant"] == "baseline"  # a later record without the block did not speculate


def test_a_method_given_as_text_and_a_block_that_names_none(tmp_path: Path) -> None:
    _, configs, _ = parse(write(tmp_path, record(spec_decode="mtp"), record(spec_decode={"method": "none", "k": 3})))
    assert [c["variant"] for c in configs] == ["mtp", "baseline"]
    assert configs[1]["speculative_num_steps"] is None


# --- bad input --------------------------------------------------------------------------------------

def test_a_malformed_line_is_named_and_the_other_runs_load(tmp_path: Path) -> None:
    path = write(tmp_path, record(spec_decode=None), '{"engine": "vllm", "output_tok_s": 1,, "x": 2}',
                 record(spec_decode={"method": "ngram", "k": 4}))
    parsed = nested_runs.parse(path, ParseOptions())
    assert [r["line_no"] for r in parsed.tables["bench_serving"].to_pylist()] == [1, 3]
    assert parsed.skipped["malformed JSON record"] == 1
    assert parsed.warnings[0].startswith(f"{path}:2: malformed JSON record")


def test_a_file_without_one_complete_run_names_the_first_line(tmp_path: Path) -> None:
    path = write(tmp_path, record(spec_decode={"method": "dflash", "k": 7})[:-20])
    assert detect(path).kind == nested_runs.KIND  # the keys show it is one, but nothing can be read
    with pytest.raises(MalformedInput) as caught:
        nested_runs.parse(path, ParseOptions())
    assert caught.value.line == 1 and "no complete run record" in caught.value.message and caught.value.hint


def test_bad_speculative_values_are_named_by_line_and_key_and_not_stored(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        record(spec_decode=7),
        record(spec_decode={"method": "eagle3", "k": 3, "acceptance": 61.0}),
        record(spec_decode={"method": "eagle3", "k": 3, "accept_length": 0.6}),
        record(spec_decode={"method": "dflash", "k": 7, "acceptance": 0.2, "accepted_tokens_per_round": 2.4}),
        record(spec_decode={"method": "eagle3", "k": "three"}, concurrency="many"),
    )
    runs, configs, warnings = parse(path)
    assert len(runs) == 5 and [c["segment"] for c in configs] == [1, 2, 3, 4]  # line 1: no config, variant unknown
    name = str(path)
    assert warnings[0].startswith(f'{name}:1: key "spec_decode": expected an object, null or a method name, got 7')
    assert warnings[1].startswith(f'{name}:2: key "spec_decode.acceptance": an acceptance rate is a fraction in [0, 1], got 61.0')
    assert warnings[2].startswith(f'{name}:3: key "spec_decode.accept_length": an accept length that includes the bonus token is at least 1')
    assert warnings[3].startswith(f'{name}:4: key "spec_decode.accepted_tokens_per_round": 2.4 is not acceptance × k (0.2 × 7)')
    assert any(w.startswith(f'{name}:5: key "spec_decode.k": expected a number, got \'three\'') for w in warnings)
    assert any(w.startswith(f'{name}:5: key "concurrency": expected a number, got \'many\'') for w in warnings)
    assert [r["accept_length"] for r in runs] == [None] * 5
    assert json.loads(runs[1]["extra"])["spec_decode"]["acceptance"] == 61.0  # the raw value is kept
    assert json.loads(runs[4]["extra"])["concurrency"] == "many"


def test_records_without_an_engine_or_a_throughput_are_not_claimed(tmp_path: Path) -> None:
    no_engine = json.dumps({"model": "m", "spec_decode": {"method": "eagle3"}, "output_tok_s": 3.0})
    no_throughput = json.dumps({"engine": "vllm", "spec_decode": {"method": "eagle3"}})
    assert not nested_runs.sniff(no_engine.encode()) and not nested_runs.sniff(no_throughput.encode())


# --- the store and the Compare page -----------------------------------------------------------------

@pytest.fixture
def archive_store(tmp_path: Path) -> Path:
    db = tmp_path / "archive.duckdb"
    reports = ingest_paths([ARCHIVE], db)
    assert [r.kind for r in reports] == [nested_runs.KIND] and not any(r.failed for r in reports)
    return db


def test_every_run_is_a_session_under_its_variant_and_method(archive_store: Path) -> None:
    sessions = data.sessions(archive_store)
    assert len(sessions) == 8 and set(sessions["origin"]) == {"bench_record"}
    assert set(sessions["variant_from"]) == {"server_info in the record"}
    assert sorted(set(sessions["variant"])) == sorted([
        "baseline", "nextn built-in", "dflash:Laguna-S-2.1-DFlash-INT4", "draft_model_tli:Qwen3-0.6B",
        "draft-mtp n=2", "eagle steps=3 topk=1 draft=4"])
    with duckdb.connect(str(archive_store), read_only=True) as con:
        methods = dict(con.execute(
            "SELECT speculative_algorithm, spec_method(speculative_algorithm) FROM server_configs "
            "WHERE speculative_algorithm IS NOT NULL").fetchall())
        # the Ling runs at concurrency 1 and 4 form a sweep: the baseline's method is none, NEXTN's MTP
        sweep = con.execute("SELECT variant, concurrency, method FROM sweep_series ORDER BY variant, concurrency").fetchall()
    assert methods == {"nextn built-in": "MTP", "dflash": "DFlash", "draft_model_tli": "draft model",
                       "draft-mtp n=2": "MTP", "eagle steps=3 topk=1 draft=4": "EAGLE"}
    assert sweep == [("baseline", 1, "none"), ("baseline", 4, "none"), ("nextn built-in", 1, "MTP"),
                     ("nextn built-in", 4, "MTP")]


def test_compare_shows_the_runs_of_each_variant(archive_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = run_page("views/compare.py", archive_store, monkeypatch, {"phase": data.NO_PHASE})
    options = set(app.multiselect(key="w_variants").options)
    assert {"baseline", "nextn built-in", "dflash:Laguna-S-2.1-DFlash-INT4"} <= options
    assert app.metric, "throughput of the selected variants is shown"
    summary = data.variant_summary(archive_store, [], ["baseline", "nextn built-in"])
    assert set(summary["variant"]) == {"baseline", "nextn built-in"} and (summary["n_runs"] >= 1).all()
