"""The benchmark's own virtual environment, ``bench/.venv-hta``: Holistic Trace Analysis and py-spy.

Neither is a project dependency: HTA is the reference the trace breakdown is
measured against, py-spy the sampling profiler for ``bench/profiling.py``. The
environment is created on first use from the same Python as the project's.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.harness import BENCH, log

VENV = BENCH / ".venv-hta"
PACKAGES = ("HolisticTraceAnalysis==0.5.0", "py-spy==0.4.3")


class EnvUnavailable(RuntimeError):
    """The bench environment could not be created; the message says what pip said."""


def python() -> Path:
    return VENV / "bin" / "python"


def py_spy() -> Path:
    return VENV / "bin" / "py-spy"


def ensure() -> Path:
    """Create the environment if needed; its python. Raises EnvUnavailable with pip's last words."""
    marker = VENV / ".installed"
    if marker.exists() and marker.read_text() == "\n".join(PACKAGES):
        return python()
    base = getattr(sys, "_base_executable", sys.executable)
    log(f"creating {VENV} with {', '.join(PACKAGES)} (once; a few minutes)")
    steps = [
        [base, "-m", "venv", str(VENV)],
        [str(python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            raise EnvUnavailable(f"`{' '.join(step)}` failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-1500:]}")
    marker.write_text("\n".join(PACKAGES))
    return python()
