"""Ingest files into the store: detect → parse → load, one transaction per file.

A file that fails leaves the store exactly as it was and does not stop the others;
the caller gets one ``FileReport`` per file to print or show.
"""
from __future__ import annotations

import dataclasses
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ingest import store
from ingest.errors import IngestError
from ingest.formats import ParseOptions, detect
from ingest.progress import rate_note

ProgressFactory = Callable[[Path], Callable[[int, int], None]]


@dataclass
class FileReport:
    path: Path
    status: str  # "loaded", "already ingested" or "failed"
    kind: str | None = None
    source_id: str | None = None
    rows_loaded: int = 0
    lines_skipped: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    error: IngestError | None = None
    size_bytes: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error is not None

    def summary(self) -> str:
        if self.error is not None:
            text = f"FAILED  {self.error}"
            return text
        if self.status == "already ingested":
            return f"{self.path}: {self.kind}, already ingested (same sha256) — nothing to do"
        reasons = ", ".join(f"{count} {reason}" for reason, count in self.skipped.most_common())
        skipped = f"; skipped {self.lines_skipped} lines ({reasons})" if self.lines_skipped else ""
        speed = rate_note(self.size_bytes, self.seconds)
        return f"{self.path}: {self.kind}, {self.rows_loaded} rows loaded{skipped}{speed}"

    def record(self) -> dict[str, Any]:
        """The report as JSON values: what ``specdash ingest --json`` prints, one line per file."""
        return {
            "path": str(self.path), "status": self.status, "kind": self.kind, "source_id": self.source_id,
            "rows_loaded": self.rows_loaded, "lines_skipped": self.lines_skipped, "skipped": dict(self.skipped),
            "summary": self.summary(), "warnings": self.warnings,
        }


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, and the files under given directories (recursively, hidden ones left out)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                sorted(
                    p for p in path.rglob("*")
                    if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
                )
            )
        else:
            files.append(path)
    return files


def ingest_file(
    path: Path,
    db_path: Path,
    *,
    phase: str | None = None,
    variant: str | None = None,
    group: str | None = None,
    options: ParseOptions = ParseOptions(),
    replace: bool = False,
    progress: ProgressFactory | None = None,
) -> FileReport:
    report = FileReport(path=path, status="failed")
    started = time.monotonic()
    try:
        if not path.is_file():
            raise IngestError(path, "no such file", hint="check the path")
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sha256") as hashing:
            sha256 = hashing.submit(store.file_sha256, path)  # hashed while the file is parsed
            file_format = detect(path)
            report.kind = file_format.kind
            if progress is not None:
                options = dataclasses.replace(options, on_progress=progress(path))
            report.size_bytes = path.stat().st_size
            if file_format.stream is None and not replace and store.is_ingested(db_path, sha256.result()):
                raise _AlreadyIngested(sha256.result())
            parsed = (file_format.stream or file_format.parse)(path, options)
            if parsed.batches is not None and not replace:
                parsed.batches = _unless_stored(parsed.batches, sha256, db_path)
            result = store.load_source(
                db_path, path, parsed, sha256=sha256.result, phase=phase, variant=variant, group=group, replace=replace
            )
    except _AlreadyIngested as known:
        report.status = "already ingested"
        report.source_id = store.source_id_for(known.sha256)
        return report
    except IngestError as error:
        report.error = error
        return report
    except Exception as error:  # a parser bug: report it for this file, keep going with the others
        report.error = IngestError(
            path,
            f"internal error while reading this file ({type(error).__name__}: {error})",
            hint="this is a specdash bug; the store was not changed — please report it with the file",
        )
        return report
    report.seconds = time.monotonic() - started
    report.source_id = result.source_id
    report.status = "already ingested" if result.already_present else "loaded"
    report.rows_loaded = result.rows_loaded
    report.lines_skipped = result.lines_skipped
    report.skipped = parsed.skipped
    report.warnings = parsed.warnings
    return report


class _AlreadyIngested(Exception):
    def __init__(self, sha256: str) -> None:
        super().__init__(sha256)
        self.sha256 = sha256


def _unless_stored(
    batches: Iterator[tuple[str, pa.Table]], sha256: Future[str], db_path: Path
) -> Iterator[tuple[str, pa.Table]]:
    """The batches, stopped as soon as the file's hash (computed meanwhile) shows it is already stored."""
    checked = False
    for batch in batches:
        if not checked and sha256.done():
            checked = True
            if store.is_ingested(db_path, sha256.result()):
                raise _AlreadyIngested(sha256.result())
        yield batch
    if not checked and store.is_ingested(db_path, sha256.result()):
        raise _AlreadyIngested(sha256.result())


def ingest_paths(
    paths: Iterable[str | Path],
    db_path: Path,
    *,
    phase: str | None = None,
    variant: str | None = None,
    options: ParseOptions = ParseOptions(),
    replace: bool = False,
    on_report: Callable[[FileReport], None] | None = None,
    progress: ProgressFactory | None = None,
) -> list[FileReport]:
    """Ingest every file; files of one call share an ``ingest_group`` so they can be joined later."""
    given = [Path(p) for p in paths]
    group = uuid.uuid4().hex[:12]
    reports: list[FileReport] = []
    files = expand_paths(given)
    if not files:
        where = ", ".join(map(str, given)) or "(no path)"
        error = IngestError(where, "no files found", hint="pass files, or directories that contain them")
        reports.append(FileReport(path=Path(where), status="failed", error=error))
    for path in files:
        report = ingest_file(
            path, db_path, phase=phase, variant=variant, group=group, options=options, replace=replace,
            progress=progress,
        )
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports
