"""Security: loopback by default, XSRF on, bounded uploads, no path reads from the UI, bound SQL, escaped labels.

The browser tests share one ``specdash serve`` (upload limit 1 MB) over a store holding the
demo data plus a benchmark whose variant, phase and file name are HTML/JS payloads, and a
decision whose title and note are payloads. A ``sitecustomize`` audit hook in the served
processes records every Python ``open`` of a path containing ``CANARY-``: the store lives in a
``CANARY-ALLOWED`` folder (so the app's own uploads prove the hook sees its opens), and a
``CANARY-SECRET`` file that nothing in the store names must never be opened.
"""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlparse

import duckdb
import pytest

from dashboard import cli
from ingest.storage import store
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.conftest import ROOT
from tests.reliability_helpers import (
    NAV_LINK,
    click_page,
    environment_with,
    listening_addresses,
    nav_links,
    run_ingest,
    serving,
    settle,
    specdash_command,
    sql_assembly_findings,
    sql_assembly_findings_in,
    sql_sink_count,
    write_bench_json,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

# --- the command line: bind address and XSRF ---------------------------------------------------


def serve_command(monkeypatch: pytest.MonkeyPatch, *args: str) -> list[str]:
    """The streamlit command `specdash serve ARGS` would run (nothing is started)."""
    launched: list[list[str]] = []
    monkeypatch.setattr(cli.os, "execve", lambda program, command, env: launched.append(command))
    monkeypatch.setattr(cli, "check_port_free", lambda host, port: None)  # whatever else runs on 8501
    assert cli.main(["serve", *args]) == 0
    [command] = launched
    return command


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_serve_binds_loopback_by_default_without_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    command = serve_command(monkeypatch)
    assert option(command, "--server.address") == "127.0.0.1"
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::"])
def test_another_host_is_passed_on_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    command = serve_command(monkeypatch, "--host", host)  # never started: no traffic off this machine
    assert option(command, "--server.address") == host
    assert f"warning: serving on {host}: anyone who can reach this address" in capsys.readouterr().err


def test_serve_never_turns_xsrf_or_cors_protection_off(monkeypatch: pytest.MonkeyPatch) -> None:
    command = serve_command(monkeypatch, "--host", "0.0.0.0")
    switched = {command[i]: command[i + 1] for i in range(len(command) - 1) if command[i].startswith("--server.")}
    assert "--server.enableXsrfProtection" not in switched and "--server.enableCORS" not in switched, switched
    assert option(command, "--server.maxUploadSize") == "200"


# --- SQL is never assembled from user text -----------------------------------------------------

CHECKED = [ROOT / "ingest", ROOT / "dashboard"]


def test_no_sql_in_ingest_or_dashboard_is_assembled_from_user_text() -> None:
    assert sql_sink_count(CHECKED) >= 40  # the checker saw today's SQL calls, not an empty tree
    assert [str(finding) for finding in sql_assembly_findings(CHECKED)] == []


@pytest.mark.parametrize(
    "snippet",
    [
        'con.execute(f"SELECT * FROM t WHERE x = \'{value}\'")',
        'def f(con, value):\n    con.execute("SELECT * FROM t WHERE x = \'%s\'" % value)',
        'def f(con, value):\n    con.execute("SELECT * FROM t WHERE x = {}".format(value))',
        'def f(con, value):\n    sql = "SELECT * FROM t WHERE x = " + value\n    con.execute(sql)',
        'def f(db, table):\n    return frame(db, f"SELECT count(*) FROM {table}")',
        'def f(con, column):\n    cols = ["a"]\n    cols.append(column)\n    con.sql(f"SELECT {\', \'.join(cols)} FROM t")',
        'import streamlit as st\ndef f(con):\n    name = st.query_params.get("t")\n    con.execute(f"DELETE FROM {name}")',
        'def f(con, name):\n    if name not in ALLOWED:\n        raise ValueError(name)\n    con.execute(f"SELECT * FROM {name}")',
    ],
)
def test_the_sql_checker_catches_assembly_from_user_text(snippet: str) -> None:
    assert len(sql_assembly_findings_in(snippet)) == 1


@pytest.mark.parametrize(
    "snippet",
    [
        'def f(con, v):\n    con.execute("SELECT * FROM t WHERE x = ?", [v])',
        'def f(con, name):\n    if name not in SCHEMAS:\n        raise ValueError(name)\n    con.execute(f"SELECT * FROM {name}")',
        'def f(con):\n    for t in data_tables(con):\n        con.execute(f"DELETE FROM {t} WHERE source_id = ?", ["x"])',
        'def f(con):\n    cols = ["a"]\n    for c in table_columns(con, "t"):\n        cols.append(f\'"{c}"\')\n'
        '    con.execute(f"SELECT {\', \'.join(cols)} FROM t")',
        'FILTER = "x = $x"\nWHERE = f"WHERE {FILTER}"\ndef f(db):\n    return frame(db, f"SELECT * FROM t {WHERE}", {"x": 1})',
    ],
)
def test_the_sql_checker_allows_constants_bound_values_and_allowlisted_identifiers(snippet: str) -> None:
    assert sql_assembly_findings_in(snippet) == []


def test_the_sql_checker_fails_on_todays_store_once_its_table_guard_is_removed() -> None:
    source = (ROOT / "ingest" / "storage" / "store.py").read_text(encoding="utf-8")
    guard = re.search(r"\n    if name not in SCHEMAS:\n        raise [^\n]+\n", source)
    assert guard is not None, "insert_table no longer checks its table name against SCHEMAS"
    unguarded = source.replace(guard.group(0), "\n")
    assert [finding.line for finding in sql_assembly_findings_in(unguarded, "store.py")] != []


# --- uploads: names cannot point outside the upload folder ----------------------------------------

@pytest.mark.parametrize("name", ["../../evil.json", "/etc/passwd", "..\\..\\evil.log", "a/../../b.jsonl", "..", ""])
def test_an_upload_is_written_inside_the_upload_folder_whatever_its_name(tmp_path: Path, name: str) -> None:
    from dashboard import uploads

    db = tmp_path / "store.duckdb"
    [(_, written)] = uploads.write_batch([(name, io.BytesIO(b"{}"))], db)
    assert written.resolve().is_relative_to(uploads.upload_root(db).resolve())
    assert written.parent.parent == uploads.upload_root(db)


def test_streamlit_checks_the_upload_type_on_the_server_too() -> None:
    from streamlit.elements.lib.file_uploader_utils import enforce_filename_restriction
    from streamlit.errors import StreamlitAPIException

    from dashboard import uploads

    allowed = [f".{kind}" for kind in uploads.ALLOWED_TYPES]
    enforce_filename_restriction("bench.json", allowed)
    for name in ("payload.sh", "page.html", "bench.json\0.sh"):
        with pytest.raises(StreamlitAPIException):
            enforce_filename_restriction(name, allowed)


# --- the served app ------------------------------------------------------------------------------

SECRET_TEXT = "CANARY-SECRET-CONTENT-7f3a"
VARIANT = "</script><img src=x onerror=alert(11)><svg onload=alert(12)>[v](javascript:alert(13))"
PHASE = "<script>alert(21);fetch('/pwned-21')</script><details open ontoggle=alert(22)>"
FILE_NAME = "bench-<img src=x onerror=alert(31)>.json"
TITLE = "<script>alert(41)</script><img src=x onerror=\"alert(42);fetch('/pwned-42')\">"
NOTE = textwrap.dedent(
    """\
    <img src=x onerror="alert(51);fetch('/pwned-51')">

    <iframe srcdoc="<script>parent.alert(52)</script>"></iframe>

    [click me](javascript:alert(53))

    <a href="javascript:alert(54)">link</a>
    """
)
PAYLOAD_IDS = {11, 12, 13, 21, 22, 31, 41, 42, 51, 52, 53, 54}

AUDIT_HOOK = """
import os, sys
_marker, _log = os.environ.get("SPECDASH_AUDIT_MARKER"), os.environ.get("SPECDASH_AUDIT_LOG")
if _marker and _log:
    _fd = os.open(_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def _record_opens(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if _marker in path:
                os.write(_fd, (path + "\\n").encode("utf-8", "replace"))

    sys.addaudithook(_record_opens)
"""


@dataclass
class App:
    base: str
    db: Path
    secret: Path
    opened_log: Path
    uploads: Path
    sessions: dict[str, str]  # variant → session id
    decision_id: str
    dialogs: list[str] = field(default_factory=list)
    pwned_requests: list[str] = field(default_factory=list)

    def opened(self) -> list[str]:
        return self.opened_log.read_text().splitlines() if self.opened_log.exists() else []

    def stored_paths(self) -> set[str]:
        with duckdb.connect(str(self.db), read_only=True) as con:
            return {row[0] for row in con.execute("SELECT path FROM sources").fetchall()}


def build_payload_store(folder: Path) -> tuple[Path, dict[str, str], str]:
    """The demo store, ingested from a copy of ``data/demo`` under ``folder``, plus the payload bench and decision.

    Returns the store, session ids by variant, and the payload decision's id.
    """
    from dashboard.demo import DEMO_DIR, build_demo_store

    db = folder / "store.duckdb"
    shutil.copytree(DEMO_DIR, folder / "demo")
    assert not [report.summary() for report in build_demo_store(db, folder / "demo") if report.failed]
    store.set_meta(db, "start_phase", PHASE)  # the pages open on the payload's phase, not the demo's phase-0
    bench = write_bench_json(folder / FILE_NAME, variant=VARIANT, phase=PHASE, seed=77)
    ingested = run_ingest(db, [bench])
    assert ingested.returncode == 0, ingested.stderr
    decided = subprocess.run(
        specdash_command("decide", "--db", db, "--phase", PHASE, "--title", TITLE, "--verdict", "rejected", "--note", NOTE),
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert decided.returncode == 0, decided.stderr
    decision_id = re.search(r"recorded decision (\w+)", decided.stderr).group(1)  # type: ignore[union-attr]
    with duckdb.connect(str(db), read_only=True) as con:
        sessions = dict(con.execute("SELECT variant, session_id FROM sessions").fetchall())
    return db, sessions, decision_id


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    folder = tmp_path_factory.mktemp("CANARY-ALLOWED")
    db, sessions, decision_id = build_payload_store(folder)
    secret = tmp_path_factory.mktemp("elsewhere") / "CANARY-SECRET.txt"
    secret.write_text(f"{SECRET_TEXT}\nroot:x:0:0:root:/root:/bin/bash\n")
    hooks = tmp_path_factory.mktemp("hooks")
    (hooks / "sitecustomize.py").write_text(AUDIT_HOOK)
    opened_log = hooks / "opened.txt"
    env = environment_with(
        SPECDASH_DB=str(db), PYTHONPATH=str(hooks), SPECDASH_AUDIT_MARKER="CANARY-", SPECDASH_AUDIT_LOG=str(opened_log)
    )
    with serving(db, "--max-upload-mb", "1", env=env) as base:
        yield App(base, db, secret, opened_log, Path(f"{db}.uploads"), sessions, decision_id)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")  # one tab for the module: a fresh one per test costs Chromium ~3 core-seconds
def page(browser: Browser, app: App) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    tab = context.new_page()
    tab.set_default_timeout(60_000)

    def on_dialog(dialog: Any) -> None:
        app.dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    context.on("request", lambda request: app.pwned_requests.append(request.url) if "pwned-" in request.url else None)
    yield tab
    context.close()


def executed(app: App) -> set[str]:
    return {*app.dialogs, *(re.sub(r".*pwned-", "", url) for url in app.pwned_requests)}


@pytest.mark.browser
def test_serve_listens_on_loopback_only(app: App) -> None:
    port = int(app.base.rsplit(":", 1)[1])
    assert listening_addresses(port) == {"127.0.0.1"}
    log = next(app.db.parent.glob(f"serve-{port}.log")).read_text()
    assert f"on http://127.0.0.1:{port}" in log and "warning" not in log


@pytest.mark.browser
def test_uploads_without_the_xsrf_token_are_rejected(app: App, page: Page) -> None:
    response = page.request.put(f"{app.base}/_stcore/upload_file/{uuid.uuid4()}/{uuid.uuid4()}",
                                multipart={"file": {"name": "a.json", "mimeType": "application/json", "buffer": b"{}"}})
    assert response.status == 403 and "XSRF" in response.text()


@pytest.mark.browser
def test_uploads_are_limited_in_type_and_size_in_the_browser_and_on_the_server(
    app: App, page: Page, tmp_path: Path
) -> None:
    small = write_bench_json(tmp_path / "small.json", variant="uploaded", phase="phase-up", seed=5)
    script = tmp_path / "payload.sh"
    script.write_text("echo pwned\n")
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * (1024 * 1024 + 4096))
    puts: list[Any] = []
    page.on("request", lambda request: puts.append(request) if "/_stcore/upload_file/" in request.url else None)
    page.goto(f"{app.base}/ingest")
    settle(page)
    chooser = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    assert chooser.get_attribute("accept").split(",")[1:] == [".json", ".jsonl", ".log", ".txt", ".out", ".gz"]

    with page.expect_response(lambda r: "/_stcore/upload_file/" in r.url and r.request.method == "PUT") as accepted:
        chooser.set_input_files(str(small))
    assert accepted.value.ok
    chooser.set_input_files(str(script))
    chooser.set_input_files(str(big))
    uploader = page.locator('[data-testid="stFileUploader"]')
    page.get_by_text("File must be 1.0MB or smaller").wait_for()
    assert "files are not allowed" in uploader.inner_text()
    assert len([r for r in puts if r.method == "PUT"]) == 1  # neither the script nor the big file was sent

    # The server enforces the limit itself: replay the browser's own upload request (session, XSRF token)
    # with a body over the limit, and once more within it.
    session = accepted.value.url.split("/_stcore/upload_file/")[1].split("/")[0]
    token = accepted.value.request.headers["x-xsrftoken"]

    from playwright.sync_api import Error as PlaywrightError

    def put(body: bytes) -> int | str:
        try:
            return page.request.put(
                f"{app.base}/_stcore/upload_file/{session}/{uuid.uuid4()}", headers={"X-Xsrftoken": token},
                multipart={"file": {"name": "replayed.log", "mimeType": "text/plain", "buffer": body}},
            ).status
        except PlaywrightError as error:
            # The server may answer 413 and close while the body is still being sent: the client then sees
            # the reset before the answer. Either way the body was refused.
            if "ECONNRESET" in str(error) or "EPIPE" in str(error):
                return "reset"
            raise

    assert put(b"x" * (1024 * 1024 + 4096)) in (413, "reset")
    assert put(b"[2026-01-01 00:00:00] hello\n") in (200, 204)

    # The accepted file goes through the same ingest as the CLI, written inside the upload folder.
    page.get_by_role("button", name=re.compile(r"Ingest \d+ file")).click()
    settle(page)
    page.get_by_text("bench_json, 8 rows loaded").first.wait_for()
    written = [Path(path) for path in app.opened() if "small.json" in path]
    assert written and all(path.resolve().is_relative_to(app.uploads.resolve()) for path in written)


# Path-looking values for every URL parameter the pages read (dashboard/state.py).
def hostile_params(app: App) -> dict[str, str]:
    relative = "../" * 12 + str(app.secret).lstrip("/")
    return {
        "session": str(app.secret), "run": relative, "phase": f"file://{app.secret}", "variant": "../../../../etc/passwd",
        "baseline": str(app.secret), "metric": relative, "decision": str(app.secret), "q": str(app.secret),
        "diff_only": "/etc/passwd", "as_of": relative, "acceptance_variant": str(app.secret),
    }


@pytest.mark.browser
def test_no_url_parameter_makes_the_app_read_a_path(app: App, page: Page) -> None:
    page.goto(f"{app.base}/")
    settle(page)
    pages = [urlparse(link.get_attribute("href")).path.strip("/") for link in page.locator(NAV_LINK).all()]
    assert {"", "run", "ingest"} <= set(pages), pages  # "": the default page (Compare)
    query = urlencode(hostile_params(app))
    for path in pages:
        page.goto(f"{app.base}/{path}?{query}")
        settle(page)
        text = page.locator("body").inner_text()
        assert SECRET_TEXT not in text and "root:x:0:0" not in text, path
        assert page.locator('[data-testid="stException"]').count() == 0, f"{path}: {page.locator('[data-testid=stException]').first.inner_text()}"
    # The hook does see the app's reads: the Run page reads its log's raw lines back from sources.path.
    page.goto(f"{app.base}/run?session={app.sessions['k2-drafter']}")
    settle(page)
    opened = app.opened()
    assert any(path.endswith("k2-drafter/server.log") for path in opened), opened
    secret_opens = [path for path in opened if "CANARY-SECRET" in path]
    stored = app.stored_paths()
    # The store itself is read too: `specdash serve` checks its header before it starts the app.
    elsewhere = [path for path in opened
                 if path not in stored and path != str(app.db) and not Path(path).is_relative_to(app.uploads)]
    print(f"\npath-looking URL parameters: {len(pages)} pages × {len(hostile_params(app))} parameters; "
          f"files the app opened: {len(set(opened))}, all in sources.path or the upload folder: {not elsewhere}; "
          f"opens of the secret file: {len(secret_opens)}")
    assert secret_opens == []
    assert elsewhere == []


@pytest.mark.browser
def test_payloads_in_labels_file_names_and_decisions_never_run(app: App, page: Page) -> None:
    views = 0
    javascript_links = 0

    def look() -> None:
        nonlocal views, javascript_links
        views += 1
        javascript_links += page.locator('a[href^="javascript:" i]').count()

    page.goto(f"{app.base}/")
    settle(page)
    for title in nav_links(page):
        click_page(page, title)
        look()
    for url in (f"/run?session={app.sessions[VARIANT]}", f"/decisions?decision={app.decision_id}"):
        page.goto(app.base + url)
        settle(page)
        look()
        body = page.locator("body").inner_text()
        assert ("alert(11)" in body or "alert(41)" in body), f"{url}: the payload is not displayed, so nothing was tested"
    page.goto(f"{app.base}/")
    settle(page)
    page.get_by_text("<img src=x onerror=alert(11)>").first.wait_for(timeout=30_000)  # a loaded CI machine renders late
    look()
    assert "<img src=x onerror=alert(11)>" in page.locator("body").inner_text()  # shown as text, not markup

    # The HTML report the Compare page offers carries the labels too; open it in the same browser.
    with page.expect_download() as download:
        page.get_by_role("button", name="HTML report").click()
    report = Path(download.value.path())
    assert "&lt;img src=x onerror=alert(11)&gt;" in report.read_text(encoding="utf-8")  # the label is in it, escaped
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    views += 1
    ran = executed(app)
    page.set_content(f"<div>{VARIANT}</div>")  # the same payload as raw markup does run: the detector works
    page.wait_for_timeout(500)
    assert "11" in executed(app)
    print(f"\npayloads executed: {len(ran)} of {len(PAYLOAD_IDS)} over {views} page views (incl. the HTML report); "
          f"javascript: links: {javascript_links}")
    assert ran == set()
    assert javascript_links == 0
