"""Shared pieces of the reliability tests (crash safety, concurrency, security).

- generators for input files, so the tests need no corpus and no large fixtures;
- ``store_inconsistencies``: the invariant every crash must preserve;
- ``table_problems``: what a parser's output must be, whatever its input (bad-input and fuzz tests);
- ``subprocess`` helpers that run ``specdash`` as a user would, and hold the store's lock;
- ``sql_assembly_findings``: the static check that no SQL text is assembled from anything but
  constants and identifiers taken from declared allowlists;
- ``serving`` and the Playwright helpers that wait for a Streamlit run and scan a page for errors.
"""
from __future__ import annotations

import ast
import json
import os
import random
import re
import socket
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from ingest.model import ParsedSource
from ingest.storage import store
from ingest.tables import SCHEMAS
from tests.browser import served
from tests.conftest import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Page

DEMO_LOG = ROOT / "data" / "demo" / "phase-0" / "k2-drafter" / "server.log"

def table_problems(parsed: ParsedSource) -> list[str]:
    """A parser's output must be tables of the declared schemas, and skip counts that are not negative."""
    problems = []
    for name, table in parsed.tables.items():
        if name not in SCHEMAS:
            problems.append(f"unknown table {name!r}")
        elif not isinstance(table, pa.Table) or not table.schema.equals(SCHEMAS[name]):
            problems.append(f"{name}: schema differs from ingest.tables.SCHEMAS[{name!r}]")
    if any(count < 0 for count in parsed.skipped.values()):
        problems.append(f"negative skip counts {dict(parsed.skipped)}")
    return problems


# --- generated inputs -------------------------------------------------------------------------

SERVER_ARGS_PREFIX = "server_args=ServerArgs("


def demo_server_args_line() -> str:
    """The demo K2-drafter log's ``server_args`` line (message only, without the timestamp prefix)."""
    for line in DEMO_LOG.read_text(encoding="utf-8").splitlines():
        if SERVER_ARGS_PREFIX in line:
            return line[line.index(SERVER_ARGS_PREFIX):]
    raise AssertionError(f"{DEMO_LOG} has no server_args line")


def write_server_log(path: Path, *, megabytes: float, seed: int, start: datetime = datetime(2026, 3, 1, 10)) -> int:
    """An SGLang server log of about ``megabytes`` MB: config dump, then prefill/decode lines and HTTP noise.

    Returns the number of decode lines written. ``seed`` makes the bytes (hence the sha256) differ.
    """
    rng = random.Random(seed)
    target = megabytes * 1e6
    written = 0
    decode_lines = 0
    ts = start
    with open(path, "w", encoding="utf-8") as out:
        def emit(message: str, *, millis: bool = True) -> None:
            nonlocal written
            stamp = f"{ts:%Y-%m-%d %H:%M:%S}" + (f".{ts.microsecond // 1000:03d}" if millis else "")
            line = f"[{stamp} TP0] {message}\n" if millis else f"[{stamp}] {message}\n"
            out.write(line)
            written += len(line)

        emit(demo_server_args_line(), millis=False)
        while written < target:
            if decode_lines % 400 == 0:
                emit(f"Prefill batch, #new-seq: 1, #new-token: {rng.randint(24, 40)}, #cached-token: 0, "
                     "token usage: 0.00, #running-req: 0, #queue-req: 0, cuda graph: False")
            ts += timedelta(milliseconds=1185 + rng.randint(-20, 20))
            accept = 1.4 + rng.random() * 0.4
            emit(
                f"Decode batch, #running-req: {1 + decode_lines % 4}, #token: {100 + decode_lines % 3000}, "
                f"token usage: 0.01, accept len: {accept:.2f}, accept rate: {accept / 3:.2f}, cuda graph: True, "
                f"gen throughput (token/s): {45 + rng.random() * 10:.2f}, #queue-req: 0"
            )
            decode_lines += 1
            if decode_lines % 400 == 399:
                emit('INFO:     127.0.0.1:51240 - "POST /v1/completions HTTP/1.1" 200 OK', millis=False)
    return decode_lines


def bench_document(*, variant: str, phase: str, seed: int, runs: int = 5, warmup: int = 2) -> dict:
    """A benchmark session in specdash's canonical JSON (``specdash.bench/1``)."""
    rng = random.Random(seed)
    started = datetime(2026, 3, 1, 10, 0) + timedelta(minutes=seed % 600)
    records = []
    clock = started
    for position in range(warmup + runs):
        is_warmup = position < warmup
        tokens = 256 if is_warmup else 2048
        seconds = round(tokens / (45 + rng.random() * 15), 2)
        records.append(
            {
                "index": position + 1 if is_warmup else position - warmup + 1,
                "warmup": is_warmup,
                "prompt_tokens": rng.randint(24, 34),
                "output_tokens": tokens,
                "duration_s": seconds,
                "tok_per_s": round(tokens / seconds, 2),
                "started_at": clock.isoformat(timespec="milliseconds"),
                "ended_at": (clock + timedelta(seconds=seconds)).isoformat(timespec="milliseconds"),
                "finish_reason": "length",
            }
        )
        clock += timedelta(seconds=seconds + 1.5)
    return {
        "format": "specdash.bench/1",
        "endpoint": "http://localhost:8000/v1/completions",
        "model": "/models/Kimi-K2.5",
        "phase": phase,
        "variant": variant,
        "max_tokens": 2048,
        "warmup": warmup,
        "started_at": started.isoformat(timespec="seconds"),
        "runs": records,
    }


def write_bench_json(path: Path, *, variant: str, phase: str, seed: int, runs: int = 5) -> Path:
    path.write_text(json.dumps(bench_document(variant=variant, phase=phase, seed=seed, runs=runs), indent=2))
    return path


# --- running specdash as a user would -----------------------------------------------------------

def specdash_command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "dashboard", *map(str, args)]


def start_ingest(db: Path, files: list[Path], *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        specdash_command("ingest", *files, "--db", db, *extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )


def run_ingest(db: Path, files: list[Path], *extra: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        specdash_command("ingest", *files, "--db", db, *extra), capture_output=True, text=True, cwd=ROOT,
        timeout=timeout,
    )


HOLD_LOCK = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("held", flush=True)
sys.stdin.readline()  # hold until the test writes a line or closes stdin
con.close()
"""


def hold_write_lock(db: Path) -> subprocess.Popen[str]:
    """Another process holding the store's write lock until ``release_lock`` (DuckDB locks per process)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def release_lock(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(timeout=30)


# --- the store's invariant ----------------------------------------------------------------------

def rows_per_source(con: duckdb.DuckDBPyConnection) -> Counter[str]:
    """Rows per ``source_id`` summed over every data table (table names from ``store.data_tables``)."""
    found: Counter[str] = Counter()
    for name in store.data_tables(con):
        for source_id, count in con.execute(f"SELECT source_id, count(*) FROM {name} GROUP BY source_id").fetchall():
            found[source_id] += count
    return found


def store_inconsistencies(db: Path) -> list[str]:
    """What is wrong with the store: a source whose row count differs from ``rows_loaded``, or orphan rows.

    Looks twice: read-only, as the dashboard opens it (a WAL left by a crash is replayed in memory), then
    read-write, as the next ingest opens it (replaying and checkpointing the WAL, migrating). An absent
    store, or one killed before its first migration committed, has nothing to be wrong.
    """
    if not db.exists():
        return []
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        problems = [f"read-only: {problem}" for problem in source_row_problems(con)] if "sources" in tables else []
    with store.writer(db) as con:
        problems += [f"read-write: {problem}" for problem in source_row_problems(con)]
    return problems


def source_row_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    expected = dict(con.execute("SELECT source_id, rows_loaded FROM sources").fetchall())
    found = rows_per_source(con)
    problems = [
        f"source {source_id} says {rows_loaded} rows, the tables hold {found.get(source_id, 0)}"
        for source_id, rows_loaded in sorted(expected.items()) if found.get(source_id, 0) != rows_loaded
    ]
    problems += [f"{found[source_id]} rows of source {source_id}, which is not in sources"
                 for source_id in sorted(set(found) - set(expected))]
    return problems


def sources_summary(db: Path) -> dict[str, int]:
    """source_id → rows_loaded (empty for a missing store)."""
    if not db.exists():
        return {}
    with store.writer(db) as con:
        return dict(con.execute("SELECT source_id, rows_loaded FROM sources").fetchall())


def remove_store(db: Path) -> None:
    for leftover in (db, Path(f"{db}.wal")):
        leftover.unlink(missing_ok=True)


# --- static check: SQL is never assembled from user text ------------------------------------------

# Calls whose SQL argument is checked: method/function name → position of the SQL argument.
SQL_SINKS = {"execute": 0, "executemany": 0, "sql": 0, "query": 0, "frame": 1, "fetch_value": 1}
SQL_KEYWORDS = ("sql", "query")
# Where identifiers may come from: calls that list tables/columns of the store's own schema...
IDENTIFIER_SOURCES = {"data_tables", "table_columns", "relations", "base_tables"}
# ...and the declared table schemas.
IDENTIFIER_MAPPINGS = {"SCHEMAS"}
# SQL text shipped inside the package (the migration files, the views).
SHIPPED_SQL_SOURCES = {"migration_files", "views_sql"}
# Values whose text cannot carry SQL syntax: numbers, a string quoted as one SQL literal (ATTACH and LOAD
# take no bound parameter for a path), and the S3 secret statement, whose every value is one (CREATE SECRET takes none).
HARMLESS_CALLS = {"int", "float", "len", "sql_literal", "s3_secret"}
# Rewrites of shipped SQL for another engine (a DuckLake takes no keys or indexes): trusted when their input is.
SQL_REWRITES = {"lake_ddl"}


UNKNOWN: ast.expr = ast.Starred(value=ast.Name(id="<unknown>"))  # a value the checker cannot vouch for


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: SQL assembled from untrusted text: {self.code}"


class SqlAssemblyChecker:
    """Decides whether an expression building SQL text is trusted.

    Trusted: string constants; module constants and local variables whose every assignment is
    trusted; loop/comprehension variables over an allowlisted collection (``data_tables(con)``,
    ``table_columns(con, t)``, ``SCHEMAS``, a literal of trusted items); a parameter guarded by
    ``if name not in SCHEMAS: raise``; f-strings, ``+``, ``%``, ``.format`` and ``sep.join`` of
    trusted parts. Everything else — a parameter, a query value, an attribute — is untrusted.
    """

    def __init__(self, source: str, path: str) -> None:
        self.tree = ast.parse(source)
        self.source = source
        self.path = path
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.resolving: set[tuple[int, str]] = set()

    # -- entry point --
    def findings(self) -> list[Finding]:
        found = []
        for node in ast.walk(self.tree):
            sql = self.sql_argument(node) if isinstance(node, ast.Call) else None
            if sql is not None and not self.trusted(sql):
                found.append(Finding(self.path, sql.lineno, ast.get_source_segment(self.source, sql) or ast.dump(sql)))
        return found

    @staticmethod
    def sql_argument(call: ast.Call) -> ast.expr | None:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in SQL_SINKS:
            return None
        for keyword in call.keywords:
            if keyword.arg in SQL_KEYWORDS:
                return keyword.value
        position = SQL_SINKS[name]
        return call.args[position] if len(call.args) > position else None

    # -- expressions --
    def trusted(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (str, int, float, bool)) or node.value is None
        if isinstance(node, ast.JoinedStr):
            return all(self.trusted(part.value) if isinstance(part, ast.FormattedValue) else True for part in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            return self.trusted(node.left) and self.trusted_item_or_collection(node.right)
        if isinstance(node, ast.IfExp):
            return self.trusted(node.body) and self.trusted(node.orelse)
        if isinstance(node, ast.Name):
            return self.trusted_name(node)
        if isinstance(node, ast.Call):
            return self.trusted_call(node)
        return False

    def trusted_item_or_collection(self, node: ast.expr) -> bool:
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self.trusted(item) for item in node.elts)
        return self.trusted(node)

    def trusted_call(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name) and func.id in HARMLESS_CALLS | SHIPPED_SQL_SOURCES:
            return True
        if isinstance(func, ast.Name) and func.id in SQL_REWRITES:
            return all(self.trusted(argument) for argument in call.args) and not call.keywords
        if isinstance(func, ast.Attribute) and func.attr == "join" and len(call.args) == 1:
            return self.trusted(func.value) and self.trusted_collection(call.args[0])
        if isinstance(func, ast.Attribute) and func.attr == "format":
            arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
            return self.trusted(func.value) and all(self.trusted(argument) for argument in arguments)
        return False

    def trusted_collection(self, node: ast.expr) -> bool:
        """A collection every item of which is a trusted SQL fragment."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return all(
                self.trusted_collection(item.value) if isinstance(item, ast.Starred) else self.trusted(item)
                for item in node.elts
            )
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in IDENTIFIER_SOURCES or name in SHIPPED_SQL_SOURCES:
                return True
            if name in ("sorted", "list", "tuple", "set") and len(node.args) == 1:
                return self.trusted_collection(node.args[0])
            if isinstance(func, ast.Attribute) and name == "keys":
                return self.trusted_collection(func.value)
            return False
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.trusted(node.elt)
        if isinstance(node, ast.Name):
            if node.id in IDENTIFIER_MAPPINGS:
                return True
            return self.trusted_name(node, collection=True)
        return False

    # -- names --
    def trusted_name(self, node: ast.Name, *, collection: bool = False) -> bool:
        key = (id(node), node.id)
        if key in self.resolving:  # a cycle: nothing proved it trusted
            return False
        self.resolving.add(key)
        try:
            return self.resolve_name(node, collection=collection)
        finally:
            self.resolving.discard(key)

    def resolve_name(self, node: ast.Name, *, collection: bool) -> bool:
        check = self.trusted_collection if collection else self.trusted
        loop_iter = self.enclosing_loop_iter(node)
        if loop_iter is not None:
            return self.trusted_collection(loop_iter)
        function = self.enclosing_function(node)
        scope = function if function is not None else self.tree
        values = self.assigned_values(scope, node.id)
        if function is not None and node.id in self.parameter_names(function):
            return not values and (self.sql_parameter_of_sink(function, node.id) or self.guarded_parameter(function, node.id))
        if function is not None and not values:
            values = self.assigned_values(self.tree, node.id)  # a module constant
        if not values:
            return False
        if not all(check(value) for value in values):
            return False
        if collection:  # items added later: select.append(...), select.extend(...)
            return all(
                self.trusted_collection(added) if is_collection else self.trusted(added)
                for added, is_collection in self.items_added(scope, node.id)
            )
        return True

    def enclosing_loop_iter(self, node: ast.Name) -> ast.expr | None:
        """The iterable a for-loop or comprehension binds ``node`` from, if it is such a variable."""
        child: ast.AST = node
        parent = self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                for generator in parent.generators:
                    if node.id in self.bound_names(generator.target):
                        return generator.iter
            if isinstance(parent, ast.For) and child in parent.body and node.id in self.bound_names(parent.target):
                return parent.iter
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return None
            child, parent = parent, self.parents.get(parent)
        return None

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = self.parents.get(parent)
        return parent

    @staticmethod
    def bound_names(target: ast.expr) -> set[str]:
        return {name.id for name in ast.walk(target) if isinstance(name, ast.Name)}

    def assigned_values(self, scope: ast.AST, name: str) -> list[ast.expr]:
        values: list[ast.expr] = []
        for node in self.own_nodes(scope):
            if isinstance(node, ast.Assign) and any(name in self.bound_names(t) for t in node.targets):
                plain = all(isinstance(t, ast.Name) for t in node.targets)
                values.append(node.value if plain else UNKNOWN)  # unpacked: cannot tell which part
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) \
                    and node.target.id == name and node.value is not None:
                values.append(node.value)
            elif isinstance(node, (ast.With, ast.AsyncWith)) and any(
                item.optional_vars is not None and name in self.bound_names(item.optional_vars) for item in node.items
            ):
                values.append(UNKNOWN)
        return values

    def items_added(self, scope: ast.AST, name: str) -> list[tuple[ast.expr, bool]]:
        """(expression, is_collection) for every item put into list ``name`` after it was created."""
        added: list[tuple[ast.expr, bool]] = []
        for node in self.own_nodes(scope):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.args:
                if node.func.attr in ("append", "insert"):
                    added.append((node.args[-1], False))
                elif node.func.attr == "extend":
                    added.append((node.args[0], True))
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
                        added.append((node.value, False))
        return added

    def own_nodes(self, scope: ast.AST) -> list[ast.AST]:
        """Nodes of ``scope`` outside nested functions (a module's own nodes exclude every function body)."""
        nodes = []
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            nodes.append(node)
            stack.extend(ast.iter_child_nodes(node))
        return nodes

    @staticmethod
    def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
        arguments = function.args
        return [arg.arg for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]

    def sql_parameter_of_sink(self, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
        """The SQL parameter of a function that is itself a sink (``frame(db, sql)``): its callers are checked."""
        if function.name not in SQL_SINKS:
            return False
        positional = [arg.arg for arg in function.args.posonlyargs + function.args.args]
        position = SQL_SINKS[function.name]
        return name in SQL_KEYWORDS or (len(positional) > position and positional[position] == name)

    def guarded_parameter(self, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
        """``if name not in <allowlist>: raise ...`` at the top level of the function's body."""
        for statement in function.body:
            if not isinstance(statement, ast.If) or not statement.body or not isinstance(statement.body[-1], ast.Raise):
                continue
            test = statement.test
            if (
                isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == name
                and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn)
                and self.trusted_collection(test.comparators[0])
            ):
                return True
        return False


def sql_assembly_findings_in(source: str, path: str = "<snippet>") -> list[Finding]:
    return SqlAssemblyChecker(source, path).findings()


def sql_assembly_findings(folders: list[Path]) -> list[Finding]:
    findings = []
    for folder in folders:
        for file in sorted(folder.rglob("*.py")):
            relative = str(file.relative_to(ROOT)) if file.is_relative_to(ROOT) else str(file)
            findings.extend(sql_assembly_findings_in(file.read_text(encoding="utf-8"), relative))
    return findings


def sql_sink_count(folders: list[Path]) -> int:
    """How many SQL calls the checker looked at (so a test can tell it saw today's code)."""
    count = 0
    for folder in folders:
        for file in sorted(folder.rglob("*.py")):
            tree = ast.parse(file.read_text(encoding="utf-8"))
            count += sum(
                1 for node in ast.walk(tree)
                if isinstance(node, ast.Call) and SqlAssemblyChecker.sql_argument(node) is not None
            )
    return count


def environment_with(**variables: str) -> dict[str, str]:
    return {**os.environ, **variables}


# --- the served app -------------------------------------------------------------------------------

def serving(db: Path, *extra: str, env: dict[str, str] | None = None, startup_s: float = 60.0):  # type: ignore[no-untyped-def]
    """``specdash serve`` with extra arguments/environment on a free port (``tests.browser.served``)."""
    return served(db, *extra, env=env or environment_with(SPECDASH_DB=str(db)), startup_s=startup_s)


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not Path(table).exists():
            continue
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            local, state = fields[1], fields[3]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                found.add(proc_net_address(address, width))
    return found


def proc_net_address(hex_address: str, width: int) -> str:
    raw = bytes.fromhex(hex_address)
    if width == 8:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))  # four little-endian 32-bit words
    return socket.inet_ntop(socket.AF_INET6, words)


APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
NAV_LINK = '[data-testid="stSidebarNav"] a'
EXCEPTION_BOX = '[data-testid="stException"]'
LOCK_TEXT = re.compile(r"\b(lock|locked|locking)\b|conflicting|traceback|store busy|storebusy", re.IGNORECASE)


def settle(page: Page, timeout_ms: float = 60_000) -> None:
    """Wait until the Streamlit script run triggered by the last action has finished."""
    page.wait_for_timeout(250)
    page.wait_for_selector(APP_IDLE, timeout=timeout_ms)
    page.wait_for_selector(NAV_LINK, timeout=timeout_ms)


def nav_links(page: Page) -> list[str]:
    """The pages the sidebar offers, by title (a link's text is its icon's name, then the title)."""
    links = page.locator(NAV_LINK)
    return [links.nth(i).inner_text().strip().splitlines()[-1].strip() for i in range(links.count())]


def click_page(page: Page, title: str) -> None:
    page.locator(NAV_LINK).nth(nav_links(page).index(title)).click()
    settle(page)


def page_problems(page: Page) -> list[str]:
    """Lock/traceback text and exception boxes on the page as it is now."""
    problems = [f"exception box: {box.inner_text()[:300]}" for box in page.locator(EXCEPTION_BOX).all()]
    text = page.locator("body").inner_text()
    problems += [f"text {match.group(0)!r} in: …{text[max(0, match.start() - 80):match.end() + 80]}…"
                 for match in LOCK_TEXT.finditer(text)]
    return problems
