"""`specdash serve` checks its store file and its port before it announces anything.

Nothing here starts Streamlit: ``os.execve`` (the hand-over to Streamlit) is replaced, so a test
that gets that far sees the command instead of a server.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from dashboard import cli
from tests.conftest import ROOT


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The Streamlit commands `serve` would have become (none started)."""
    commands: list[list[str]] = []
    monkeypatch.setattr(cli.os, "execve", lambda program, command, env: commands.append(command))
    return commands


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port this test process listens on, as another server would."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_store(path: Path) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS a")
    return path


def serve_program(*args: str) -> subprocess.CompletedProcess[str]:
    """The real `specdash serve` program (it exits before Streamlit in every case run with it here)."""
    return subprocess.run([sys.executable, "-m", "dashboard", "serve", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


# --- the port ------------------------------------------------------------------------------------


def test_a_taken_port_fails_with_one_line_naming_the_port_and_its_holder(
    held_port: int, tmp_path: Path, launched: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["serve", "--port", str(held_port), "--db", str(tmp_path / "none.duckdb")]) == 1
    out, err = capsys.readouterr()
    assert launched == [] and out == ""
    [line] = err.splitlines()
    program = Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode()
    assert f"port {held_port} on 127.0.0.1 is already in use by PID {os.getpid()} ({program} " in line  # this process
    assert "--port" in line and f"stop PID {os.getpid()}" in line


def test_the_program_exits_1_on_a_taken_port_without_a_traceback(held_port: int, tmp_path: Path) -> None:
    result = serve_program("--port", str(held_port), "--db", str(tmp_path / "none.duckdb"))
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("error: port ") and str(held_port) in line and f"PID {os.getpid()}" in line


def test_a_holder_this_user_cannot_see_is_said_to_be_unnamed(monkeypatch: pytest.MonkeyPatch) -> None:
    other_user = os.getuid() + 1
    monkeypatch.setattr(cli, "listening_sockets", lambda port: [cli.ListeningSocket(inode=4242, uid=other_user)])
    monkeypatch.setattr(cli, "pid_with_socket", lambda inode: None)  # its /proc/PID/fd cannot be read
    holder = cli.port_holder(8501)
    assert holder.description.startswith(f"another user's process (uid {other_user} ")
    assert "PID" not in holder.description and holder.stop_what == "that process"


def test_listening_sockets_are_read_from_proc_net_tcp() -> None:
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:2135 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1\n"
        "   1: 0100007F:2135 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 222 1\n"  # a connection
        "   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1\n"  # another port
    )
    assert cli.parse_listening_sockets(table, 0x2135) == [cli.ListeningSocket(inode=111, uid=1000)]


def test_the_holder_of_a_port_is_found_in_proc(held_port: int) -> None:
    holder = cli.port_holder(held_port)
    assert holder.stop_what == f"PID {os.getpid()}"


def test_a_free_port_passes_and_is_released_for_streamlit(tmp_path: Path, launched: list[list[str]]) -> None:
    port = free_port()
    cli.check_port_free("127.0.0.1", port)
    cli.check_port_free("127.0.0.1", port)  # released: a second check (or Streamlit) can bind it
    with socket.socket() as streamlit_stand_in:
        streamlit_stand_in.bind(("127.0.0.1", port))


def test_a_port_outside_the_tcp_range_is_refused(capsys: pytest.CaptureFixture[str], launched: list[list[str]]) -> None:
    assert cli.main(["serve", "--port", "99999"]) == 1
    assert launched == [] and capsys.readouterr().err.splitlines() == [
        "error: --port 99999: not a TCP port — pass --port N with N between 1024 and 65535"
    ]


# --- the store file ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [("notes.txt", b"hello, not a store\n"), ("runs.csv", b"variant,tok_per_s\nbaseline,82.1\n"), ("empty.duckdb", b"")],
)
def test_a_file_that_is_not_a_duckdb_store_is_refused_before_serving(
    tmp_path: Path, launched: list[list[str]], capsys: pytest.CaptureFixture[str], name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert cli.main(["serve", "--db", str(path), "--port", str(free_port())]) == 1
    out, err = capsys.readouterr()
    assert launched == [] and "serving" not in out + err
    [line] = err.splitlines()
    assert line.startswith(f"error: {path}: not a DuckDB store — ") and "--db" in line


def test_the_program_exits_1_on_a_text_file_without_a_traceback(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a store\n")
    result = serve_program("--db", str(text), "--port", str(free_port()))
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert str(text) in line and "not a DuckDB store" in line


def test_a_directory_is_refused(tmp_path: Path, launched: list[list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--db", str(tmp_path), "--port", str(free_port())]) == 1
    assert launched == [] and f"{tmp_path}: is a directory, not a DuckDB store" in capsys.readouterr().err


def test_duckdb_files_carry_the_magic_the_check_reads(tmp_path: Path) -> None:
    """The check relies on DuckDB's file header: the installed duckdb must still write it."""
    header = make_store(tmp_path / "real.duckdb").read_bytes()[:12]
    assert header[cli.DUCKDB_MAGIC_OFFSET:] == cli.DUCKDB_MAGIC == b"DUCK"


def test_a_valid_store_on_a_free_port_is_served_at_the_readme_address(
    tmp_path: Path, launched: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db = make_store(tmp_path / "real.duckdb")
    port = free_port()
    cli.check_store_file(db)
    assert cli.main(["serve", "--db", str(db), "--port", str(port)]) == 0
    [command] = launched
    assert command[command.index("--server.port") + 1] == str(port)
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith(f"specdash: serving {db} on http://127.0.0.1:{port} ")
    readme, makefile = (ROOT / "README.md").read_text(), (ROOT / "Makefile").read_text()
    assert "http://127.0.0.1:8501" in readme and "localhost" not in readme + makefile


def test_a_missing_store_is_still_served(
    isolated_store: Path, launched: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """As before: the app says "no store yet" and its Ingest page creates the store."""
    assert not isolated_store.exists()
    assert cli.main(["serve", "--port", str(free_port())]) == 0
    assert len(launched) == 1 and f"serving {isolated_store}" in capsys.readouterr().out


def test_an_ipv6_address_is_bracketed_in_the_url() -> None:
    assert cli.http_url("::1", 8501) == "http://[::1]:8501"
    assert cli.http_url("127.0.0.1", 8501) == "http://127.0.0.1:8501"
