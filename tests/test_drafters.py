"""Drafter checkpoints (issue #20): reading safetensors cheaply, verdicts on d2t/t2d, comparisons, the CLI,
bad input, and the link from a served variant to its drafter."""
from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import duckdb
import numpy as np
import pytest

from dashboard import cli
from dashboard.analysis import drafters
from ingest.errors import MalformedInput
from ingest.parsers.drafters import drafter_checks, safetensors
from ingest.pipeline import expand_paths, ingest_paths
from tests import drafter_fixtures
from tests.conftest import ROOT

DEMO = ROOT / "data" / "drafters"
K2, REFERENCE = DEMO / "Kimi-K2-Instruct-eagle3", DEMO / "kimi-k25-reference-mapping"
FIXTURES = drafter_fixtures.OUT


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


# --- the fixtures and the demo are what their scripts make ---------------------------------------

def test_fixtures_are_what_the_script_makes(tmp_path: Path) -> None:
    drafter_fixtures.write_all(tmp_path)
    for name in drafter_fixtures.EXPECTED:
        for made in (tmp_path / name).iterdir():
            assert made.read_bytes() == (FIXTURES / name / made.name).read_bytes(), made
    counts = drafter_fixtures.TOKEN_COUNTS
    assert (tmp_path / counts).read_bytes() == (FIXTURES / counts).read_bytes()


def test_demo_drafters_are_what_the_demo_script_makes(tmp_path: Path) -> None:
    from data.make_demo import sibling

    sibling("make_demo_drafters").write_demo_drafters(tmp_path)
    for folder in (K2, REFERENCE):
        for made in (tmp_path / folder.name).iterdir():
            assert made.read_bytes() == (folder / made.name).read_bytes(), made


# --- verdicts -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(drafter_fixtures.EXPECTED))
def test_every_fixture_gets_its_verdict(name: str) -> None:
    form, status, deciding = drafter_fixtures.EXPECTED[name]
    checkpoint = drafter_checks.load(FIXTURES / name)
    found = drafter_checks.verdicts(checkpoint)
    assert drafter_checks.mapping_form(checkpoint) == form
    assert drafter_checks.overall(found) == status
    not_ok = {v.check for v in found if v.status not in ("ok", "not checked")}
    if deciding is None:
        assert not not_ok, found
        assert drafter_checks.headline(found) == "all checks pass"
    else:
        assert deciding in not_ok
        assert drafter_checks.headline(found).startswith(f"{deciding}: ")
    assert all(v.todo for v in found if v.status in ("wrong", "suspicious")), "every finding says what to do"


def test_verdict_reasons_give_the_numbers() -> None:
    def reasons(name: str) -> dict[str, str]:
        return {v.check: v.reason for v in drafter_checks.verdicts(drafter_checks.load(FIXTURES / name))}

    assert reasons("out-of-range")["in range"] == "3 of 256 draft ids map outside the target vocabulary [0, 2,048)"
    assert reasons("non-injective")["injective"].startswith("1 draft id(s) land on a target id another draft id has")
    assert reasons("t2d-inconsistent")["t2d consistent"] == "t2d marks 256 target ids, d2t maps to 256; 248 in both"
    assert "draft_vocab_size is 300" in reasons("config-mismatch")["config sizes"]
    assert "the first 256 target ids" in reasons("identity")["identity"]
    assert reasons("full-vocab")["mapping"].startswith("no mapping tensors and no smaller draft_vocab_size")


def test_offsets_are_read_as_the_engines_read_them() -> None:
    """target id = draft id + d2t[draft id] (SGLang: hot_token_id = d2t + arange)."""
    checkpoint = drafter_checks.load(FIXTURES / "offsets-ok")
    assert checkpoint.target_ids() is not None
    assert np.array_equal(checkpoint.target_ids(), drafter_fixtures.used_tokens())
    assert np.array_equal(np.flatnonzero(checkpoint.t2d), drafter_fixtures.used_tokens())


def test_a_config_alone_is_recorded_unchecked(tmp_path: Path) -> None:
    config = tmp_path / "k25.config.json"
    config.write_text(json.dumps(drafter_fixtures.CONFIG), encoding="utf-8")
    checkpoint = drafter_checks.load(config)
    assert checkpoint.name == "k25" and checkpoint.draft_vocab_size == 256
    assert drafter_checks.mapping_form(checkpoint) == "not checked (no weights)"
    assert [(v.check, v.status) for v in drafter_checks.verdicts(checkpoint)] == [("weights", "not checked")]
    assert drafter_checks.headline(drafter_checks.verdicts(checkpoint)).startswith("weights: no weights: mapping not checked")


def test_a_safetensors_alone_reads_its_folders_config_and_no_config_is_not_checked(tmp_path: Path) -> None:
    lone = tmp_path / "lone.safetensors"
    shutil.copy(FIXTURES / "offsets-ok" / "model.safetensors", lone)
    checkpoint = drafter_checks.load(lone)
    found = {v.check: v.status for v in drafter_checks.verdicts(checkpoint)}
    assert checkpoint.name == "lone" and checkpoint.config is None
    assert found["config sizes"] == "not checked" and found["in range"] == "ok"  # t2d gives the vocabulary's size
    inside = drafter_checks.load(FIXTURES / "offsets-ok" / "model.safetensors")
    assert inside.path == FIXTURES / "offsets-ok" and inside.config is not None  # a file of a drafter folder is the folder


# --- comparison ---------------------------------------------------------------------------------

def test_the_demo_shows_the_seeds_finding() -> None:
    k2, reference = drafter_checks.load(K2), drafter_checks.load(REFERENCE)
    assert k2.vocab_size == reference.vocab_size == 163_840 and k2.hidden_size == 7168
    a, b = k2.target_ids(), reference.target_ids()
    assert a is not None and b is not None
    found = drafter_checks.compare(a, b, k2.name, reference.name)
    assert (found.positions_compared, found.positions_differ, found.positions_agree) == (32_000, 31_748, 252)
    assert found.first_difference == 252
    assert (found.shared_target_tokens, found.only_a, found.only_b) == (29_689, 2_311, 2_311)
    assert found.jaccard == pytest.approx(29_689 / (64_000 - 29_689))
    for checkpoint in (k2, reference):
        assert drafter_checks.overall(drafter_checks.verdicts(checkpoint)) == "ok"
    where = drafter_checks.divergence(a, b, bins=125)  # bins of 256 draft ids
    assert where[0] == (0, 255, pytest.approx(4 / 256)) and all(share == 1.0 for _, _, share in where[1:])


def test_one_inserted_token_differs_everywhere_after_it_while_the_sets_agree() -> None:
    reference = np.arange(0, 2000, 2)
    shifted = np.concatenate([reference[:10], [21], reference[10:-1]])
    found = drafter_checks.compare(shifted, reference)
    assert (found.positions_differ, found.positions_agree) == (990, 10)
    assert found.shared_target_tokens == 999 and found.jaccard == pytest.approx(999 / 1001)
    same = drafter_checks.compare(reference, reference.copy())
    assert (same.positions_differ, same.jaccard, same.first_difference) == (0, 1.0, None)


def test_different_draft_sizes_compare_over_the_shorter() -> None:
    found = drafter_checks.compare(np.arange(10), np.arange(12))
    assert (found.positions_compared, found.positions_differ, found.only_b, found.draft_vocab_size_b) == (10, 0, 2, 12)


# --- ingest -------------------------------------------------------------------------------------

def test_a_drafter_folder_is_one_source(isolated_store: Path) -> None:
    reports = ingest_paths([FIXTURES / "sharded"], isolated_store)
    assert [(r.status, r.kind) for r in reports] == [("loaded", "eagle3_drafter")]
    assert rows(isolated_store, "SELECT name, mapping_form, status, weights_files, has_d2t FROM drafters") == [
        ("sharded", "offsets", "ok", 2, True)]
    assert rows(isolated_store, "SELECT count(*), min(draft_id), max(draft_id) FROM drafter_vocab") == [(256, 0, 255)]
    again = ingest_paths([FIXTURES / "sharded" / "config.json", FIXTURES / "sharded" / "model-00002-of-00002.safetensors"],
                         isolated_store)
    assert [r.status for r in again] == ["already ingested", "already ingested"]  # its files are the folder


def test_a_directory_of_drafters_ingests_each_folder_whole(isolated_store: Path) -> None:
    assert expand_paths([FIXTURES]) == sorted([FIXTURES / name for name in drafter_fixtures.EXPECTED]
                                              + [FIXTURES / "README.md", FIXTURES / drafter_fixtures.TOKEN_COUNTS])
    reports = ingest_paths([FIXTURES], isolated_store)
    assert not [r.summary() for r in reports if r.failed]
    assert sorted(r.status for r in reports) == ["loaded"] * (len(drafter_fixtures.EXPECTED) + 1) + ["skipped"]
    coverage = drafters.coverage(isolated_store).set_index("drafter")["coverage"]
    assert coverage["offsets-ok"] == pytest.approx(1000 / 1100) and coverage["full-vocab"] == 1.0
    stored = dict((name, (form, status)) for name, form, status in
                  rows(isolated_store, "SELECT name, mapping_form, status FROM drafters"))
    assert stored == {name: (form, status) for name, (form, status, _) in drafter_fixtures.EXPECTED.items()}


def test_a_fine_tuned_copy_with_the_same_mapping_is_another_source(tmp_path: Path, isolated_store: Path) -> None:
    tuned = tmp_path / "tuned"
    shutil.copytree(FIXTURES / "offsets-ok", tuned)
    data = bytearray((tuned / "model.safetensors").read_bytes())
    header = safetensors.read_header(tuned / "model.safetensors")
    begin = header.tensors["fc.weight"].begin
    data[begin:begin + 4] = b"\x01\x02\x03\x04"  # other weights, same header and mapping
    (tuned / "model.safetensors").write_bytes(bytes(data))
    first = drafter_checks.load(FIXTURES / "offsets-ok").fingerprint()
    assert drafter_checks.load(tuned).fingerprint() != first


def test_corpus_configs_are_recorded_unchecked(corpus_dir: Path, isolated_store: Path) -> None:
    configs = sorted((corpus_dir / "new" / "drafter_config").glob("*.config.json"))
    reports = ingest_paths(configs, isolated_store)
    assert [r.kind for r in reports] == ["eagle3_drafter"] * len(configs) and not any(r.failed for r in reports)
    stored = {name: (vocab, draft, form) for name, vocab, draft, form in
              rows(isolated_store, "SELECT name, vocab_size, draft_vocab_size, mapping_form FROM drafters")}
    assert stored["specforge-kimi-k25-eagle3"] == (163_840, 32_000, "not checked (no weights)")
    assert stored["specforge-llama3-8B-eagle3"] == (128_256, 32_000, "not checked (no weights)")


# --- bad input: one line naming the file, the store unchanged -----------------------------------

def copy_of(tmp_path: Path, name: str = "offsets-ok") -> Path:
    folder = tmp_path / "bad"
    shutil.copytree(FIXTURES / name, folder)
    return folder


def truncated(folder: Path) -> Path:
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])  # the header is cut: it claims more than the file holds
    return weights


def not_json(folder: Path) -> Path:
    weights = folder / "model.safetensors"
    raw = weights.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    weights.write_bytes(raw[:8] + b'{"d2t": [' + b" " * (length - 9) + raw[8 + length:])
    return weights


def past_the_end(folder: Path) -> Path:
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])  # the last tensor (t2d) now ends past the file's end
    return weights


def wrong_dtype(folder: Path) -> Path:
    d2t = drafter_fixtures.offsets(drafter_fixtures.used_tokens()).astype(np.int32)
    tensors = drafter_fixtures.stand_ins()
    tensors["d2t"] = ("I32", (len(d2t),), d2t.tobytes())
    safetensors.write(folder / "model.safetensors", tensors)
    return folder / "model.safetensors"


def wrong_shape(folder: Path) -> Path:
    tensors = drafter_fixtures.stand_ins()
    tensors["t2d"] = safetensors.tensor(np.ones((2, 1024), dtype=bool), "BOOL")
    safetensors.write(folder / "model.safetensors", tensors)
    return folder / "model.safetensors"


def config_not_json(folder: Path) -> Path:
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLMEagle3"], "draft_vocab_size": 256,,}', encoding="utf-8")
    return folder / "config.json"


def no_safetensors(folder: Path) -> Path:
    (folder / "model.safetensors").unlink()
    return folder


BAD = {
    "truncated header": (truncated, "corrupt or truncated safetensors header"),
    "header not JSON": (not_json, "corrupt safetensors header: not JSON"),
    "offsets past the end": (past_the_end, "safetensors header claims offsets past the file's end: tensor 't2d'"),
    "d2t of the wrong dtype": (wrong_dtype, "mapping tensor 'd2t' is I32 [256]; d2t must be offsets, int64 [draft_vocab_size]"),
    "t2d of the wrong shape": (wrong_shape, "mapping tensor 't2d' is BOOL [2, 1024]; t2d must be a mask, bool [vocab_size]"),
    "config.json not JSON": (config_not_json, "config.json is not JSON"),
    "a folder without safetensors": (no_safetensors, "the folder holds config.json but no safetensors weights"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_fails_in_one_line_and_leaves_the_store_unchanged(case: str, tmp_path: Path, isolated_store: Path) -> None:
    ingest_paths([FIXTURES / "offsets-ok"], isolated_store)
    before = rows(isolated_store, "SELECT source_id FROM sources ORDER BY 1"), rows(isolated_store, "SELECT count(*) FROM drafter_vocab")
    make, message = BAD[case]
    culprit = make(copy_of(tmp_path))
    with pytest.raises(MalformedInput) as raised:
        drafter_checks.load(tmp_path / "bad")
    assert message in raised.value.message and raised.value.path == str(culprit)
    assert raised.value.hint
    reports = ingest_paths([tmp_path / "bad"], isolated_store)
    assert [r.status for r in reports] == ["failed"]
    line = reports[0].summary()
    assert "\n" not in line and str(culprit) in line and message in line
    after = rows(isolated_store, "SELECT source_id FROM sources ORDER BY 1"), rows(isolated_store, "SELECT count(*) FROM drafter_vocab")
    assert after == before


def test_no_mapping_tensors_and_no_draft_size_is_not_an_error(isolated_store: Path) -> None:
    reports = ingest_paths([FIXTURES / "full-vocab"], isolated_store)
    assert [r.status for r in reports] == ["loaded"]
    assert rows(isolated_store, "SELECT mapping_form, draft_vocab_size, has_d2t FROM drafters") == [
        ("full target vocabulary", None, False)]


# --- the CLI ------------------------------------------------------------------------------------

def test_cli_compares_two_folders(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["drafters", "compare", str(K2), str(REFERENCE)]) == 0
    out = capsys.readouterr().out
    assert "positions: differ at 31,748 of 32,000 draft ids, agree at 252 (first difference at draft id 252)" in out
    assert "sets:      29,689 target tokens shared" in out and "Jaccard 0.8653" in out


def test_cli_json_has_the_issues_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["drafters", "compare", str(K2 / "model.safetensors"), str(REFERENCE), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert {k: record[k] for k in ("draft_vocab_size", "positions_differ", "positions_agree", "shared_target_tokens")} == {
        "draft_vocab_size": 32_000, "positions_differ": 31_748, "positions_agree": 252, "shared_target_tokens": 29_689}
    assert record["jaccard"] == pytest.approx(0.86529, abs=1e-5)


def test_cli_takes_an_ingested_drafters_name(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ingest_paths([REFERENCE], isolated_store)
    assert cli.main(["drafters", "compare", str(K2), REFERENCE.name, "--json", "--db", str(isolated_store)]) == 0
    assert json.loads(capsys.readouterr().out)["positions_differ"] == 31_748


@pytest.mark.parametrize("given, message", [
    ("no/such/drafter", "no such drafter folder or file, and no ingested drafter of that name"),
    (str(FIXTURES / "full-vocab"), "no d2t mapping to compare"),
])
def test_cli_errors_are_one_line(given: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["drafters", "compare", given, str(REFERENCE)]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


# --- the store's readers and the link from Compare ----------------------------------------------

def test_a_variant_served_with_an_ingested_drafter_gets_its_verdict(demo_db: Path) -> None:
    table = drafters.drafters(demo_db)
    assert sorted(table["name"]) == ["Kimi-K2-Instruct-eagle3", "kimi-k25-reference-mapping"]
    k2 = table[table["name"] == "Kimi-K2-Instruct-eagle3"]["source_id"].iloc[0]
    reference = table[table["name"] == "kimi-k25-reference-mapping"]["source_id"].iloc[0]
    assert drafters.reference_for(table, k2) == reference
    found = drafters.comparison(demo_db, k2, reference)
    assert found is not None and found.comparison.positions_differ == 31_748
    configs = drafters.pd.DataFrame({"variant": ["baseline", "k2-drafter", "from-scratch"], "speculative_draft_model_path": [
        None, "/models/AQ-MedAI/Kimi-K2-Instruct-eagle3", "/checkpoints/kimi-k25-eagle3-scratch/step-18000"]})
    assert drafters.variant_drafter_notes(demo_db, configs) == [
        "k2-drafter: drafter Kimi-K2-Instruct-eagle3 — all checks pass; mapping differs from kimi-k25-reference-mapping "
        "at 31,748 of 32,000 draft ids; the vocabularies share 29,689 target tokens (Jaccard 0.865)"]


def test_inspecting_reads_only_the_header_and_mapping(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    shutil.copy(K2 / "config.json", big / "config.json")
    reference = np.arange(0, 64_000, 2)
    tensors: dict[str, safetensors.Tensor] = {"lm_head.weight": ("BF16", (32_000, 1600), 32_000 * 1600 * 2)}
    tensors["d2t"] = safetensors.tensor(reference - np.arange(32_000), "I64")
    tensors["t2d"] = safetensors.tensor(np.isin(np.arange(163_840), reference), "BOOL")
    safetensors.write(big / "model.safetensors", tensors)
    assert (big / "model.safetensors").stat().st_size > 100e6
    checkpoint = drafter_checks.load(big)
    assert checkpoint.bytes_read < 600_000  # 256 KB d2t + 160 KB t2d + header, config and 16 sampled 4 KiB blocks
    assert drafter_checks.overall(drafter_checks.verdicts(checkpoint)) == "ok"


# --- token counts and coverage ------------------------------------------------------------------

def test_token_counts_are_read_in_three_shapes(tmp_path: Path, isolated_store: Path) -> None:
    csv_file = tmp_path / "counts.csv"
    csv_file.write_text("target_id,count\n0,5\n7,2\n0,1\n", encoding="utf-8")
    json_file = tmp_path / "counts.json"
    json_file.write_text(json.dumps({"model": "Kimi-K2.5", "token_counts": {"0": 6, "7": 2}}), encoding="utf-8")
    jsonl_file = tmp_path / "outputs.jsonl"
    jsonl_file.write_text('{"output_ids": [0, 0, 7]}\n{"text": "no ids"}\n{"token_ids": [0, 0, 0, 0, 7]}\n', encoding="utf-8")
    reports = ingest_paths([csv_file, json_file, jsonl_file], isolated_store)
    assert [(r.kind, r.status) for r in reports] == [("token_counts", "loaded")] * 3
    assert reports[2].skipped == {"no output token ids": 1}
    assert rows(isolated_store, "SELECT target_id, sum(count) FROM token_counts GROUP BY 1 ORDER BY 1") == [(0, 18), (7, 6)]


@pytest.mark.parametrize("text, message", [
    ("target_id,count\n3,-1\n", "negative token id or count (3, -1)"),
    ("target_id,count\nx,1\n", "not an integer token id and count"),
    ("target_id,count\n", "no token counts in the file"),
    ('{"token_counts": 5}', "token_counts must be an object {id: count} or a list"),
])
def test_bad_token_counts_fail_in_one_line(tmp_path: Path, isolated_store: Path, text: str, message: str) -> None:
    path = tmp_path / "counts.txt"
    path.write_text(text, encoding="utf-8")
    reports = ingest_paths([path], isolated_store)
    assert reports[0].status == "failed" and message in reports[0].summary() and str(path) in reports[0].summary()


def test_coverage_is_the_share_of_generated_tokens_the_draft_vocabulary_holds(demo_db: Path, tmp_path: Path,
                                                                             isolated_store: Path) -> None:
    found = drafters.coverage(demo_db).set_index("drafter")
    assert found.loc["kimi-k25-reference-mapping", "tokens"] == 200_000
    assert found.loc["kimi-k25-reference-mapping", "coverage"] == pytest.approx(0.98)  # 2% drawn from outside it
    assert found.loc["Kimi-K2-Instruct-eagle3", "coverage"] == pytest.approx(155_170 / 200_000)
    counts = tmp_path / "counts.csv"
    counts.write_text("target_id,count\n" + "".join(f"{i},10\n" for i in (0, 1, 64, 2047, 2048)), encoding="utf-8")
    ingest_paths([FIXTURES / "offsets-ok", FIXTURES / "full-vocab", counts], isolated_store)
    small = drafters.coverage(isolated_store).set_index("drafter")["covered_tokens"].to_dict()
    ids = set(drafter_fixtures.used_tokens().tolist())
    assert small == {"offsets-ok": 10 * sum(i in ids for i in (0, 1, 64, 2047, 2048)), "full-vocab": 40}  # 2048 is past its vocabulary
