"""Architecture rules that a test can hold: ingest stays free of UI libraries."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_import_ingest_loads_no_streamlit_or_plotly() -> None:
    code = (
        "import sys, ingest, ingest.cli, ingest.store, ingest.formats, ingest.demo\n"
        "ingest.formats.registered_formats()\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('streamlit', 'plotly')]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_data_layer_imports_no_streamlit() -> None:
    code = "import sys, dashboard.data, dashboard.analysis, dashboard.stats\nsys.exit('streamlit' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0


def test_numba_is_loaded_only_to_read_a_log() -> None:
    """numba and LLVM add ~110 MB to a process: the dashboard imports the ``ingest`` package (its
    store and decisions), which brings the parsers, and must not pay for numba (it never reads a log:
    uploads are ingested by a child process)."""
    code = (
        "import sys, ingest.pipeline, ingest.formats, dashboard.data\n"
        "ingest.formats.registered_formats()\n"
        "sys.exit('numba' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0
