"""Architecture rules that a test can hold: imports point one way (the dashboard uses ingest, never
the reverse), and ingest and the command line stay free of UI libraries."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def imported_packages(path: Path) -> set[str]:
    """The top-level packages a module imports, at any depth (lazy imports inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found


def test_nothing_in_ingest_imports_the_dashboard() -> None:
    modules = sorted((ROOT / "ingest").rglob("*.py"))
    assert len(modules) >= 30  # the walk saw the package
    wrong_way = [str(path.relative_to(ROOT)) for path in modules if "dashboard" in imported_packages(path)]
    assert wrong_way == []


def test_the_import_walk_sees_a_lazy_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from dashboard import ledger\n    return ledger\n")
    assert imported_packages(module) == {"dashboard"}


def test_import_ingest_loads_no_streamlit_or_plotly() -> None:
    code = (
        "import sys, ingest, ingest.cli, ingest.storage.store, ingest.registry, dashboard.cli, dashboard.demo\n"
        "ingest.registry.registered_formats()\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('streamlit', 'plotly')]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_data_layer_imports_no_streamlit() -> None:
    code = "import sys, dashboard.analysis.data, dashboard.analysis.compare, dashboard.analysis.stats\nsys.exit('streamlit' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0


def test_numba_is_loaded_only_to_read_a_log() -> None:
    """numba and LLVM add ~110 MB to a process: the dashboard imports the ``ingest`` package (its
    store and decisions), which brings the parsers, and must not pay for numba (it never reads a log:
    uploads are ingested by a child process)."""
    code = (
        "import sys, ingest.pipeline, ingest.registry, dashboard.analysis.data\n"
        "ingest.registry.registered_formats()\n"
        "sys.exit('numba' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0


def imported_modules(path: Path) -> set[str]:
    """The dotted modules a module imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_analysis_layer_imports_only_itself_ingest_and_libraries() -> None:
    """``dashboard/analysis`` (statistics, comparison, evidence, ledger, summaries, SQL readers) is what
    the CLI and the app share: it may import ``ingest`` and itself, never the app's modules or a UI library."""
    modules = sorted((ROOT / "dashboard" / "analysis").glob("*.py"))
    assert len(modules) >= 14
    wrong_way = {
        str(path.relative_to(ROOT)): sorted(
            name for name in imported_modules(path)
            if name.partition(".")[0] in ("streamlit", "plotly")
            or (name.startswith("dashboard") and name != "dashboard.analysis" and not name.startswith("dashboard.analysis."))
        )
        for path in modules
    }
    assert {path: names for path, names in wrong_way.items() if names} == {}


def test_ui_free_modules_outside_the_analysis_layer_are_the_entry_points_and_app_support() -> None:
    """A UI-free module left at ``dashboard/``'s top is an entry point (the CLI, the demo builder) or
    supports the app process (uploads, memory, raw log lines); anything else belongs in the analysis layer.
    ``check_cli.py`` is the ``specdash check`` command, which ``cli.py`` adds to its parser."""
    ui_free = {
        path.name for path in (ROOT / "dashboard").glob("*.py")
        if not {"streamlit", "plotly"} & imported_packages(path)
    }
    assert ui_free == {"__init__.py", "__main__.py", "cli.py", "check_cli.py", "demo.py", "uploads.py", "memory.py"}


def ingest_import_graph() -> dict[str, set[str]]:
    """Each ``ingest`` module and the ``ingest`` modules it imports (lazy imports too; packages left out)."""
    modules = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts): path
        for path in (ROOT / "ingest").rglob("*.py") if path.name != "__init__.py"
    }
    return {name: imported_modules(path) & modules.keys() for name, path in modules.items()}


def circles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles a depth-first walk meets, each as the path that closes it."""
    state: dict[str, str] = {}
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                circles.append([*path[path.index(imported):], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return circles


def test_the_circle_walk_finds_a_circle() -> None:
    graph = {"lines": {"kernels"}, "kernels": {"grammar"}, "grammar": {"lines"}, "other": {"lines"}}
    assert circles_in(graph) == [["grammar", "lines", "kernels", "grammar"]]


def test_no_ingest_modules_import_each_other_in_a_circle() -> None:
    """A circle (``log_lines`` → ``log_kernels`` → ``sglang_grammar`` → ``log_lines`` was one) means
    neither module can be read or moved alone; the shared line reader depends on no family's reader."""
    graph = ingest_import_graph()
    assert "ingest.parsers.logs.byte_kernels" in graph["ingest.parsers.logs.log_lines"]
    assert circles_in(graph) == []


def test_ingest_is_grouped_by_role() -> None:
    """Readers by family under ``parsers/``, figures derived from rows in ``derive/``, the store in
    ``storage/``; only the pipeline, the command line and the contract between them at the top."""
    top = {path.name for path in (ROOT / "ingest").glob("*.py")}
    assert top == {
        "__init__.py", "__main__.py", "cli.py", "pipeline.py", "registry.py", "explain.py", "formats.py", "model.py",
        "tables.py", "reader.py", "errors.py", "progress.py",
    }
    families = {path.name for path in (ROOT / "ingest" / "parsers").iterdir() if (path / "__init__.py").exists()}
    assert families == {"bench", "drafters", "llamacpp", "logs", "metrics", "sglang", "tables", "traces", "training", "vllm"}
    assert [path.name for path in (ROOT / "ingest" / "parsers").glob("*.py")] == ["__init__.py"]


def test_the_benchmark_runner_imports_no_ui() -> None:
    """``specdash bench`` runs on a GPU host without the app: its package never loads streamlit or plotly."""
    runner = sorted((ROOT / "dashboard" / "runner").glob("*.py"))
    assert runner and all(not {"streamlit", "plotly"} & imported_packages(path) for path in runner)
