"""Ingest from the browser: uploaded files go through the same pipeline as ``specdash ingest``.

Uploads are written under a fresh directory beside the store
(``<store>.uploads/<batch>/<original name>``) and ingested there in one call, so a
benchmark and its server log uploaded together are linked like files of one CLI
call. Files that loaded are kept, because the Run page reads raw log lines back
from ``sources.path``; files that failed or were already in the store are removed.
Only the file's base name is used: no upload can name a path on the server.
"""
from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from ingest.pipeline import FileReport, ingest_paths

ALLOWED_TYPES = ("json", "jsonl", "log", "txt", "out", "gz")


@dataclass
class UploadReport:
    name: str
    status: str
    summary: str
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def upload_root(db_path: Path) -> Path:
    return db_path.parent / f"{db_path.name}.uploads"


def safe_name(name: str) -> str:
    """The base name of an uploaded file, reduced to harmless characters."""
    base = re.split(r"[/\\]", name)[-1]
    cleaned = re.sub(r"[^A-Za-z0-9._ -]+", "_", base).strip(" .")
    return cleaned or "upload"


def write_batch(files: list[tuple[str, BinaryIO]], db_path: Path) -> list[tuple[str, Path]]:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
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
    db_path: Path,
    *,
    phase: str | None = None,
    variant: str | None = None,
    on_progress: Callable[[int, int, UploadReport], None] | None = None,
) -> list[UploadReport]:
    """Write the uploads, ingest them in one call, report per file under its original name."""
    if not files:
        return []
    written = write_batch(files, db_path)
    names = {str(path): name for name, path in written}
    reports: list[UploadReport] = []

    def shown(report: FileReport) -> UploadReport:
        name = names.get(str(report.path), report.path.name)
        text = report.summary().replace(str(report.path), name)
        warnings = [w.replace(str(report.path), name) for w in report.warnings]
        return UploadReport(name, report.status, text, warnings)

    def collect(report: FileReport) -> None:
        reports.append(shown(report))
        if on_progress is not None:
            on_progress(len(reports), len(written), reports[-1])

    results = ingest_paths([path for _, path in written], db_path, phase=phase or None, variant=variant or None,
                           on_report=collect)
    for result in results:
        if result.status != "loaded" and result.path.is_file():
            result.path.unlink()
    batch = written[0][1].parent if written else None
    if batch is not None and batch.is_dir() and not any(batch.iterdir()):
        batch.rmdir()
    return reports
