"""Ingest from the browser: uploaded files go through ``specdash ingest`` itself.

Uploads are written under a fresh directory beside the store
(``<store>.uploads/<batch>/<original name>``) and ingested there in one call, so a
benchmark and its server log uploaded together are linked like files of one CLI
call. Files that loaded are kept, because the Run page reads raw log lines back
from ``sources.path``; files that failed or were already in the store are removed.
Only the file's base name is used: no upload can name a path on the server.

The ingest runs in a child process (``python -m ingest ingest --json``), not in the
dashboard's: reading a log loads numba and LLVM (~160 MB that a process keeps), and a
big file's parse would hold memory and the GIL while other users browse.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from ingest.storage.location import LakeStore, StoreRef

ALLOWED_TYPES = ("json", "jsonl", "log", "txt", "out", "gz")
# The child runs from the project's folder, so ``python -m ingest`` finds the package even when it
# is not installed (``streamlit run dashboard/app.py`` from a checkout, which app.py allows for).
PROJECT_ROOT = Path(__file__).resolve().parents[1]
NOT_REPORTED = "the ingest stopped before reporting on this file; the store is unchanged for it (the server's log says why)"


@dataclass
class UploadReport:
    name: str
    status: str
    summary: str
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def upload_root(db_path: StoreRef) -> Path:
    return db_path.parent / f"{db_path.name}.uploads"


def safe_name(name: str) -> str:
    """The base name of an uploaded file, reduced to harmless characters."""
    base = re.split(r"[/\\]", name)[-1]
    cleaned = re.sub(r"[^A-Za-z0-9._ -]+", "_", base).strip(" .")
    return cleaned or "upload"


def write_batch(files: list[tuple[str, BinaryIO]], db_path: StoreRef) -> list[tuple[str, Path]]:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    batch = upload_root(db_path) / f"{stamp}-{uuid.uuid4().hex[:6]}"
    batch.mkdir(parents=True)
    written: list[tuple[str, Path]] = []
    for index, (name, stream) in enumerate(files):
        target = batch / safe_name(name)
        if target.exists():
            target = batch / f"{index}-{target.name}"
        with open(target, "wb") as out:
            shutil.copyfileobj(stream, out, 1 << 20)
        written.append((name, target))
    return written


def ingest_uploads(
    files: list[tuple[str, BinaryIO]],
    db_path: StoreRef,
    *,
    phase: str | None = None,
    variant: str | None = None,
    on_progress: Callable[[int, int, UploadReport], None] | None = None,
) -> list[UploadReport]:
    """Write the uploads, ingest them in one call, report per file under its original name."""
    if not files:
        return []
    written = [(name, path.resolve()) for name, path in write_batch(files, db_path)]
    names = {str(path): name for name, path in written}
    statuses: dict[str, str] = {}
    reports: list[UploadReport] = []

    def collect(report: UploadReport) -> None:
        reports.append(report)
        if on_progress is not None:
            on_progress(len(reports), len(written), report)

    for record in ingest_records([path for _, path in written], db_path, phase=phase, variant=variant):
        path, name = record["path"], names.get(record["path"], Path(record["path"]).name)
        statuses[path] = record["status"]
        warnings = [warning.replace(path, name) for warning in record["warnings"]]
        collect(UploadReport(name, record["status"], record["summary"].replace(path, name), warnings))
    for name, path in written:
        status = statuses.get(str(path))
        if status is None:
            collect(UploadReport(name, "failed", f"FAILED  {name}: {NOT_REPORTED}"))
        if status != "loaded" and path.is_file():
            path.unlink()
    batch = written[0][1].parent
    if batch.is_dir() and not any(batch.iterdir()):
        batch.rmdir()
    return reports


def ingest_records(
    paths: list[Path], db_path: StoreRef, *, phase: str | None = None, variant: str | None = None
) -> Iterator[dict[str, Any]]:
    """``specdash ingest --json`` on ``paths`` in a child process: each file's report as it finishes.
    Files the child did not report on (it was killed, or crashed) are left for the caller to name."""
    command = [sys.executable, "-m", "ingest", "ingest", *map(str, paths), f"--db={db_path.resolve()}", "--json"]
    command += [f"--data-path={db_path.data_path}"] if isinstance(db_path, LakeStore) else []
    command += [f"--phase={phase}"] if phase else []
    command += [f"--variant={variant}"] if variant else []
    with tempfile.TemporaryFile(mode="w+") as errors:  # read after the child ends: a pipe could fill and stall it
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=PROJECT_ROOT) as child:
            assert child.stdout is not None
            for line in child.stdout:
                yield json.loads(line)
        if child.returncode not in (0, 1):  # 1: some file failed, and said so in its report
            errors.seek(0)
            print(f"specdash: ingest of uploads ended with exit code {child.returncode}\n{errors.read()[-4000:]}",
                  file=sys.stderr)
