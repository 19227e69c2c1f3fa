"""A team store: DuckLake with its catalog in SQLite or in a real PostgreSQL (tests/postgres.py), written by
several processes and read while they write.

The same files ingested into a DuckDB file and into a lake give the same rows; writers that race on
overlapping files, or on a new lake, store each file once; a page reads one snapshot; the pages show the
lake's figures.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from dashboard import queries
from dashboard.analysis import data, history, ledger
from ingest import cli as ingest_cli
from ingest.errors import StoreError
from ingest.pipeline import ingest_paths
from ingest.storage import export, imports, location, store
from ingest.storage.location import LakeStore, parse_store
from tests.postgres import lake, postgres  # noqa: F401 (fixtures)
from tests.reliability_helpers import (
    ROOT,
    source_row_problems,
    specdash_command,
    write_bench_json,
    write_server_log,
)
from tests.stores import ingested_store
from tests.test_app import open_sections, run_page, texts

DEMO = ROOT / "data" / "demo" / "phase-2"
PHASE_2 = sorted(path for path in DEMO.rglob("*") if path.is_file())
# What differs between two stores of the same bytes: when each file was loaded, and in which ingest call.
LOAD_DEPENDENT = {"sources": ["ingested_at", "ingest_group"]}


@pytest.fixture(scope="module")
def file_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ingested_store("demo-phase-2", PHASE_2, tmp_path_factory)


def table_rows(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[object, ...]]:
    excluded = LOAD_DEPENDENT.get(name)
    columns = f"* EXCLUDE ({', '.join(excluded)})" if excluded else "*"
    return con.execute(f"SELECT {columns} FROM {name} ORDER BY ALL").fetchall()


def every_table(db: store.StoreRef) -> dict[str, list[tuple[object, ...]]]:
    with store.writer(db) as con:
        return {name: table_rows(con, name) for name in ["sources", *store.data_tables(con), "decisions"]}


def test_store_urls_name_their_catalog_and_data_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(location.DATA_PATH_ENV, raising=False)
    sqlite = parse_store(f"ducklake:sqlite:{tmp_path}/a/../team.sqlite")
    assert sqlite == LakeStore("sqlite", str(tmp_path / "team.sqlite"), f"{tmp_path / 'team.sqlite'}.files")
    assert str(sqlite) == f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    postgres = parse_store("ducklake:postgres:dbname=team host=db", "s3://bucket/lake/")
    assert postgres == LakeStore("postgres", "dbname=team host=db", "s3://bucket/lake/")
    assert parse_store("runs/specdash.duckdb") == Path("runs/specdash.duckdb")
    with pytest.raises(StoreError, match="needs a data path.*--data-path"):
        parse_store("ducklake:postgres:dbname=team")
    with pytest.raises(StoreError, match="ducklake:sqlite:FILE or ducklake:postgres:CONNINFO"):
        parse_store("ducklake:team.ducklake")


def test_the_store_command_line_takes_a_lake_and_the_environment_names_one(
    lake: LakeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECDASH_STORE", lake.url)
    monkeypatch.setenv("SPECDASH_DB", "elsewhere.duckdb")
    monkeypatch.setenv(location.DATA_PATH_ENV, lake.data_path)
    assert store.resolve_db_path(None) == lake  # $SPECDASH_STORE before $SPECDASH_DB
    assert store.resolve_db_path("given.duckdb") == Path("given.duckdb")  # --db / --store before both
    done = subprocess.run(specdash_command("ingest", PHASE_2[0], "--store", lake.url, "--data-path", lake.data_path),
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert store.status(lake)["rows"]["sources"] == 1
    shown = subprocess.run(specdash_command("status", "--sessions", "--store", lake.url, "--data-path", lake.data_path),
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr  # it once opened the URL as a file's path
    assert f"UTC  {store.committer()}  ingest {PHASE_2[0]} (" in shown.stdout  # the newest snapshot, by whom and what
    assert f"store: {lake.url}" in shown.stdout
    assert "orphaned data files" not in shown.stdout


def test_clean_deletes_only_a_lakes_old_unlisted_data_files(lake: LakeStore, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    ingest_paths(PHASE_2[:1], lake)
    listed = sorted(Path(lake.data_path).rglob("*.parquet"))
    stray = Path(lake.data_path) / "main" / "bench_runs" / "ducklake-01a25312-0564-75cd-bdc6-5288e163e90d.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"PAR1")
    os.utime(stray, (time.time() - 7200, time.time() - 7200))
    for path in listed:  # as old, but a snapshot lists them
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    assert ingest_cli.main(["status", "--store", lake.url, "--data-path", lake.data_path]) == 0
    assert "orphaned data files: 1, " in capsys.readouterr().out
    assert ingest_cli.main(["clean", "--store", lake.url, "--data-path", lake.data_path]) == 0
    assert f"deleted {stray}\ndeleted 1 data file(s)" in capsys.readouterr().out
    assert not stray.exists() and sorted(Path(lake.data_path).rglob("*.parquet")) == listed
    assert store.status(lake)["rows"]["sources"] == 1
    assert ingest_cli.main(["clean", "--db", str(tmp_path / "file.duckdb")]) == 0
    assert "is a DuckDB file, which holds all of its data: nothing to clean" in capsys.readouterr().out

    notes = Path(lake.data_path) / "exported" / "runs.parquet"  # a data path shared: DuckLake counts any Parquet file
    notes.parent.mkdir()
    notes.write_text("mine")
    os.utime(notes, (time.time() - 7200, time.time() - 7200))
    stray.write_bytes(b"PAR1")
    os.utime(stray, (time.time() - 7200, time.time() - 7200))
    assert ingest_cli.main(["status", "--store", lake.url, "--data-path", lake.data_path]) == 0
    assert "other files in the data path: 1, " in capsys.readouterr().out
    assert ingest_cli.main(["clean", "--store", lake.url, "--data-path", lake.data_path]) == 1
    assert "holds 1 file(s) DuckLake did not write, such as" in capsys.readouterr().err
    assert notes.read_text() == "mine" and stray.exists()  # nothing deleted


def test_a_lake_holds_the_same_rows_as_a_store_file(lake: LakeStore, file_store: Path) -> None:
    reports = ingest_paths(PHASE_2, lake)
    assert [report.error for report in reports] == [None] * len(PHASE_2)
    assert every_table(lake) == every_table(file_store)
    sessions = "SELECT session_id, origin, phase, variant FROM evidence_sessions ORDER BY ALL"
    with store.writer(lake) as lake_con, store.writer(file_store) as file_con:  # the views read the lake's tables
        assert lake_con.execute(sessions).fetchall() == file_con.execute(sessions).fetchall()
        assert lake_con.execute("SELECT key FROM store_meta GROUP BY key HAVING count(*) > 1").fetchall() == []
    again = ingest_paths(PHASE_2, lake)
    assert {report.status for report in again} == {"already ingested"}
    assert every_table(lake) == every_table(file_store)


def test_a_file_that_fails_leaves_the_lake_as_it_was(lake: LakeStore, tmp_path: Path) -> None:
    ingest_paths(PHASE_2[:2], lake)
    before = every_table(lake)
    broken = tmp_path / "bench.json"
    broken.write_text('{"benchmark": "sglang", "runs": [{"tokens_per_s": ')
    [report] = ingest_paths([broken], lake)
    assert report.error is not None
    assert every_table(lake) == before


def failures(json_lines: str) -> list[str]:
    """The reports of files that failed, in a writer's ``--json`` output."""
    return [line for line in json_lines.splitlines() if '"status": "failed"' in line]


def ingest_in_a_process(lake: LakeStore, files: list[Path]) -> subprocess.Popen[str]:
    return subprocess.Popen(specdash_command("ingest", *files, "--store", lake.url, "--data-path", lake.data_path, "--json"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


# On PostgreSQL the readers are Chromium tabs loading pages (test_team_store_browser.py); here threads reading the store.
@pytest.mark.parametrize("lake", ["sqlite"], indirect=True)
def test_four_writers_and_four_readers_at_once_lose_and_duplicate_nothing(lake: LakeStore, tmp_path: Path) -> None:
    benches = [write_bench_json(tmp_path / f"bench-{seed}.json", variant=f"v{seed}", phase="phase-9", seed=seed)
               for seed in range(4)]
    files = [path for path in PHASE_2 if ".trace." not in path.name] + benches  # traces: the same-rows test's
    one_writer = tmp_path / "one-writer.duckdb"
    ingest_paths(files, one_writer)
    # Each writer takes half the files, overlapping its neighbours': every file is raced for by two writers.
    shares = [[files[(start + step) % len(files)] for step in range(len(files) // 2 + 1)]
              for start in range(0, len(files), len(files) // 4)][:4]
    ingest_paths(files[:1], lake)  # the catalog exists before the readers start
    stop = threading.Event()
    read_errors: list[BaseException] = []
    reads = [0]

    def read_pages() -> None:
        while not stop.is_set():
            try:
                state = data.store_state(lake)
                sessions = data.frame(lake, "SELECT count(*) AS n FROM evidence_sessions")
                assert state["exists"] and int(sessions["n"].iloc[0]) >= 1
                reads[0] += 1
            except BaseException as error:  # noqa: BLE001 - every failure is the finding
                read_errors.append(error)
                return

    readers = [threading.Thread(target=read_pages) for _ in range(4)]
    for reader in readers:
        reader.start()
    writers = [ingest_in_a_process(lake, share) for share in shares]
    outcomes = [writer.communicate(timeout=600) for writer in writers]
    stop.set()
    for reader in readers:
        reader.join(timeout=60)
    assert [writer.returncode for writer in writers] == [0] * 4, [failures(out) for out, _ in outcomes]
    assert read_errors == [] and reads[0] > 0
    with store.writer(lake) as con:
        stored = con.execute("SELECT sha256, count(*) FROM sources GROUP BY sha256").fetchall()
    assert len(stored) == len(files) and {count for _, count in stored} == {1}
    assert every_table(lake) == every_table(one_writer)


def test_the_pages_show_a_lake_as_they_show_a_store_file(
    lake: LakeStore, file_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_paths(PHASE_2, lake)
    monkeypatch.setenv(location.DATA_PATH_ENV, lake.data_path)
    captions = {}
    for db in (file_store, lake):
        app = run_page("views/compare.py", db, monkeypatch)  # type: ignore[arg-type]
        captions[str(db)] = [c.value for c in app.caption if "mean of runs" in c.value]
    assert captions[str(file_store)] and captions[str(file_store)] == captions[str(lake)]


@pytest.mark.parametrize("lake", ["sqlite"], indirect=True)
def test_the_pages_write_into_the_lake_they_read(lake: LakeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision recorded on the Decisions page and a relabel on the Ingest page land in the lake. They once went to a
    new DuckDB file named after the lake's URL, in the server's working folder, and the page said they were done."""
    ingest_paths([DEMO / "baseline" / "bench.json", DEMO / "k2-drafter-ft" / "bench.json"], lake, phase="phase-2")
    monkeypatch.setenv(location.DATA_PATH_ENV, lake.data_path)
    monkeypatch.chdir(tmp_path)  # where a stray local store would appear
    decisions = open_sections(run_page("views/decisions.py", lake, monkeypatch))  # type: ignore[arg-type]
    decisions.text_input(key="w_decision_title").set_value("Ship the fine-tuned drafter")
    decisions.radio(key="w_decision_verdict").set_value("accepted")
    decisions.button[0].click().run()
    assert not decisions.exception and "Recorded “Ship the fine-tuned drafter”" in texts(decisions)
    assert data.decisions(lake)["title"].tolist() == ["Ship the fine-tuned drafter"]

    ingest_page = run_page("views/ingest.py", lake, monkeypatch)  # type: ignore[arg-type]
    ingest_page.selectbox(key="w_label_variant").select("baseline").run()
    ingest_page.text_input(key="w_label_new_variant").input("no-speculation").run()
    ingest_page.button(key="w_label_apply").click().run()
    assert not ingest_page.exception and "relabelled" in ingest_page.code[-1].value
    assert set(data.variants(lake, [])) == {"no-speculation", "k2-drafter-ft"}
    assert not [path for path in tmp_path.iterdir() if path.name.startswith("ducklake:")]  # no store named after the URL


def test_a_missing_extension_says_what_to_install(lake: LakeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(location, "extension_file", lambda wheel, extension: None)
    monkeypatch.setattr(location, "_lakes", {})
    with pytest.raises(StoreError, match=r"ducklake extension .*pip install -e '\.\[team\]'"):
        location.connect_lake(lake)


def test_readers_wait_for_nothing_while_a_lake_is_written(lake: LakeStore) -> None:
    ingest_paths(PHASE_2[:1], lake)
    started = time.monotonic()
    with store.writer(lake) as con:
        con.execute("BEGIN TRANSACTION")
        con.execute("DELETE FROM store_meta WHERE key = 'last_change'")
        assert data.store_state(lake)["exists"]  # a reader beside an open write transaction
        con.execute("ROLLBACK")
    assert time.monotonic() - started < 5


@pytest.fixture(autouse=True)
def detached_lakes() -> Iterator[None]:
    """Each test's lake is closed after it: the process keeps one attached database per lake otherwise."""
    yield
    location.detach_lakes()
    store._migrated_lakes.clear()


def test_a_page_reads_one_snapshot_and_its_next_run_sees_the_newest(
    lake: LakeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(location.DATA_PATH_ENV, lake.data_path)  # as `specdash serve` passes it to the app
    ingest_paths(PHASE_2[:1], lake)
    count = "SELECT count(*) AS n FROM sources"
    before = queries.on_disk(lake.url)
    with store.shared_reads():  # what a page's run does: every read shares one connection
        assert int(data.frame(lake, count)["n"].iloc[0]) == 1
        ingest_paths(PHASE_2[1:2], lake)  # another writer commits meanwhile
        assert int(data.frame(lake, count)["n"].iloc[0]) == 1  # the page goes on with the version it began with
    assert int(data.frame(lake, count)["n"].iloc[0]) == 2
    assert queries.on_disk(lake.url) != before  # the caches' key moved: the next run reads afresh


def test_a_store_file_imports_into_a_lake_and_the_lake_exports_as_parquet(
    lake: LakeStore, file_store: Path, tmp_path: Path
) -> None:
    imports.import_store(lake, file_store)
    assert every_table(lake) == every_table(file_store)
    manifest = export.export_parquet(lake, tmp_path / "parquet")
    assert manifest == {**export.export_parquet(file_store, tmp_path / "from-file"), "store": lake.url}


def test_four_processes_opening_a_new_lake_at_once_all_ingest(lake: LakeStore) -> None:
    """They race to create the lake's tables: the losers start over (DuckLake 1.5.5 failed them with "Failed to
    load DuckLake - Table entry ... does not have any columns")."""
    files = PHASE_2[:2]
    writers = [ingest_in_a_process(lake, files) for _ in range(4)]
    outcomes = [writer.communicate(timeout=600) for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * 4, [failures(out) for out, _ in outcomes]
    with store.writer(lake) as con:
        assert con.execute("SELECT count(*), count(DISTINCT sha256) FROM sources").fetchone() == (2, 2)
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone() == (len(store.migration_files()),)


# On a SQLite catalog in Chromium (test_team_store_browser.py).
@pytest.mark.parametrize("lake", ["postgres"], indirect=True)
def test_the_run_page_reads_a_past_snapshot_and_a_decision_opens_on_its_own(
    lake: LakeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write is a snapshot named by its author and what it changed; Run reads the store as of one, and a
    decision's evidence links open on the snapshot that recorded it."""
    monkeypatch.setenv(location.DATA_PATH_ENV, lake.data_path)
    first, second = DEMO / "baseline" / "bench.json", DEMO / "k2-drafter-ft" / "bench.json"
    ingest_paths([first], lake, phase="phase-2")
    ingest_paths([second], lake, phase="phase-2")
    decision_id, _ = ledger.record(lake, title="ft against baseline", verdict="accepted", phase="phase-2", baseline="baseline")
    snapshots = data.lake_history(lake)
    messages = snapshots.set_index("snapshot_id")["commit_message"]
    after_first = int(messages.index[messages == f"ingest {first} (bench_json)"][0])
    assert set(snapshots["author"].dropna()) == {store.committer()}
    recorded = history.decision_snapshot(snapshots, decision_id)
    assert recorded == int(snapshots["snapshot_id"].iloc[0]) and messages[recorded].startswith(f"decision {decision_id}:")

    past = run_page("views/run.py", lake, monkeypatch, {"as_of": str(after_first)})  # type: ignore[arg-type]
    now = run_page("views/run.py", lake, monkeypatch, {"as_of": str(recorded)})  # type: ignore[arg-type]
    assert [len(app.selectbox(key="w_session").options) for app in (now, past)] == [2, 1]
    assert any(f"as it was at snapshot #{after_first}" in info.value for info in past.info)
    assert not any("as it was at snapshot" in info.value for info in now.info) and not now.warning
    assert any(f"snapshot #{recorded} is the store's newest" in c.value for c in now.caption)  # the decision's link
    ledger_page = run_page("views/decisions.py", lake, monkeypatch, {"decision": decision_id})  # type: ignore[arg-type]
    assert any(f"at snapshot #{recorded}, which recorded this decision" in c.value for c in ledger_page.caption)


def test_a_store_file_offers_no_past_snapshot(file_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert data.lake_history(file_store).empty
    app = run_page("views/run.py", file_store, monkeypatch, {"as_of": "3"})
    assert [box.label for box in app.selectbox][:1] == ["Session"] and not any("snapshot" in i.value for i in app.info)


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """An S3 server in this process (moto's), reached over HTTP on a local port: ``http://127.0.0.1:PORT``."""
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_a_lake_keeps_its_parquet_files_in_s3(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--data-path s3://…``: the extensions' httpfs, credentials and endpoint from the AWS variables."""
    for name, value in {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "specdash", "AWS_SECRET_ACCESS_KEY": "test",
                        "AWS_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    urllib.request.urlopen(urllib.request.Request(f"{s3_endpoint}/team-lake", method="PUT"), timeout=30).close()
    files = [DEMO / "k2-drafter-ft" / "bench.json", DEMO / "k2-drafter-ft" / "server.log"]
    lake = parse_store(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}", "s3://team-lake/specdash/")
    assert not [report for report in ingest_paths(files, lake) if report.error]
    ingest_paths(files, tmp_path / "file.duckdb")
    assert every_table(lake) == every_table(tmp_path / "file.duckdb")
    with urllib.request.urlopen(f"{s3_endpoint}/team-lake?list-type=2", timeout=30) as listing:
        keys = re.findall(r"<Key>([^<]+)</Key>", listing.read().decode())
    assert keys and all(key.startswith("specdash/") and key.endswith(".parquet") for key in keys)
    assert not list(tmp_path.rglob("*.parquet"))  # nothing of the lake's data on this machine
    stray = "specdash/main/bench_runs/ducklake-left-by-a-killed-writer.parquet"
    urllib.request.urlopen(urllib.request.Request(f"{s3_endpoint}/team-lake/{stray}", data=b"PAR1", method="PUT"),
                           timeout=30).close()
    assert store.status(lake)["orphaned_files"] == [f"s3://team-lake/{stray}"]  # the prefix is listed, not the disk


def test_the_s3_secret_takes_what_the_aws_variables_say() -> None:
    assert location.s3_secret({}) == "CREATE OR REPLACE SECRET specdash_s3 (TYPE s3)"  # DuckDB's defaults
    secret = location.s3_secret({"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "it's", "AWS_DEFAULT_REGION": "eu-west-1",
                                 "AWS_ENDPOINT_URL": "https://minio.lab:9000/"})
    assert secret == ("CREATE OR REPLACE SECRET specdash_s3 (TYPE s3, KEY_ID 'AK', SECRET 'it''s', REGION 'eu-west-1', "
                      "ENDPOINT 'minio.lab:9000', URL_STYLE 'path', USE_SSL true)")


def test_a_writer_killed_while_its_rows_are_in_flight_leaves_no_part_of_its_file(lake: LakeStore, tmp_path: Path) -> None:
    """SIGKILL as soon as the big log's first Parquet file reaches the data folder (written before the commit): the
    lake holds every file whole or not at all, `specdash status` counts the files the writer left and `specdash clean`
    deletes them once they are old enough not to be a write still running, and the next ingest completes the work."""
    big = tmp_path / "server.log"
    write_server_log(big, megabytes=6, seed=33)
    files = [big, *PHASE_2[:2]]
    data_folder = Path(lake.data_path)
    writer = ingest_in_a_process(lake, files)
    deadline = time.monotonic() + 300
    while writer.poll() is None and not list(data_folder.rglob("*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert writer.poll() is None, "the ingest ended before its first Parquet file was seen: nothing was killed mid-write"
    writer.kill()
    writer.communicate(timeout=60)
    with store.writer(lake) as con:
        assert source_row_problems(con) == []
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (0,)  # the log came first: nothing committed
    left = store.status(lake)["orphaned_files"]
    assert left and all(Path(path).is_relative_to(data_folder) for path in left)
    assert store.delete_orphaned_files(lake) == []  # minutes old: it could be a write still running
    hours_ago = time.time() - 2 * 3600
    for path in left:
        os.utime(path, (hours_ago, hours_ago))
    assert sorted(store.delete_orphaned_files(lake)) == sorted(left)
    assert not any(Path(path).exists() for path in left)

    finished = ingest_in_a_process(lake, files)
    out, _ = finished.communicate(timeout=600)
    assert finished.returncode == 0, failures(out)
    with store.writer(lake) as con:
        assert source_row_problems(con) == []
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (len(files),)
    assert store.status(lake)["orphaned_files"] == []  # every file the finished ingest wrote is in a snapshot


def test_a_lake_writer_leaves_the_readers_of_its_process_their_memory(lake: LakeStore) -> None:
    """Readers and writers of a lake share one database per process, whose settings are global: the file writer's
    96 MB limit there failed a page's query ("failed to pin block") once the same server had recorded a decision."""
    with store.read_connection(lake, wait_s=10) as con:
        before = con.execute("SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order')").fetchone()
    store.set_meta(lake, "written", "by this process")
    with store.read_connection(lake, wait_s=10) as con:
        after = con.execute("SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order')").fetchone()
    assert after == before and after[1] is True
