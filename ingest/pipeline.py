"""Ingest files into the store: detect → parse → load, one transaction per file.

A file that fails leaves the store exactly as it was and does not stop the others;
the caller gets one ``FileReport`` per file to print or show.

Files found by walking a directory that no format claims and that are plainly not experiment
data (``NotExperimentData``: READMEs, Markdown and ``*.source`` notes, images and other
binaries) are reported as "skipped", not failed: a results folder holds such files, and failing
on them would hide the failures that matter. A file named explicitly is always read as data (the
user asked for it), and ``strict=True`` makes every skipped file a failure again.
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

from ingest.derive.invariants import DomainCheck
from ingest.errors import IngestError, SpecdashError
from ingest.formats import ParseOptions
from ingest.progress import rate_note
from ingest.reader import NotExperimentData
from ingest.registry import detect, folder_format
from ingest.storage import store
from ingest.storage.location import StoreRef

ProgressFactory = Callable[[Path], Callable[[int, int], None]]


@dataclass
class FileReport:
    path: Path
    status: str  # "loaded", "already ingested", "skipped" (not experiment data) or "failed"
    kind: str | None = None
    source_id: str | None = None
    rows_loaded: int = 0
    lines_skipped: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    error: SpecdashError | None = None
    size_bytes: int = 0
    seconds: float = 0.0
    not_data: str | None = None  # for a skipped file, what it is: "Markdown", "PNG", ... (NotExperimentData.what)

    @property
    def failed(self) -> bool:
        return self.error is not None

    def summary(self) -> str:
        if self.error is not None:
            text = f"FAILED  {self.error}"
            return text
        if self.status == "already ingested":
            return f"{self.path}: {self.kind}, already ingested (same sha256) — nothing to do"
        if self.status == "skipped":
            return f"{self.path}: skipped, not experiment data ({self.not_data}; no format claims it)"
        reasons = ", ".join(f"{count} {reason}" for reason, count in self.skipped.most_common())
        skipped = f"; skipped {self.lines_skipped} lines ({reasons})" if self.lines_skipped else ""
        speed = rate_note(self.size_bytes, self.seconds)
        return f"{self.path}: {self.kind}, {self.rows_loaded} rows loaded{skipped}{speed}"

    def record(self) -> dict[str, Any]:
        """The report as JSON values: what ``specdash ingest --json`` prints, one line per file."""
        return {
            "path": str(self.path), "status": self.status, "kind": self.kind, "source_id": self.source_id,
            "rows_loaded": self.rows_loaded, "lines_skipped": self.lines_skipped, "skipped": dict(self.skipped),
            "summary": self.summary(), "warnings": self.warnings, "not_data": self.not_data,
        }


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, and the files under given directories (recursively, hidden ones left out);
    a folder a format reads as one source (``registry.folder_format``: a drafter checkpoint) is
    one entry, its files not listed."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(_walk(path))
        else:
            files.append(path)
    return files


def _walk(root: Path) -> list[Path]:
    if folder_format(root) is not None:
        return [root]
    found: list[Path] = []
    for child in sorted(root.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_dir():
            found += _walk(child)
        elif child.is_file():
            found.append(child)
    return found


def ingest_file(
    path: Path,
    db_path: StoreRef,
    *,
    phase: str | None = None,
    variant: str | None = None,
    group: str | None = None,
    options: ParseOptions = ParseOptions(),
    replace: bool = False,
    progress: ProgressFactory | None = None,
    skip_not_data: bool = False,
    link_to: str | None = None,
    stored: set[str] | None = None,
) -> FileReport:
    """Detect, parse and load one file; ``skip_not_data``: report a ``NotExperimentData`` file as
    "skipped" instead of failed (for files found by walking a directory). ``stored``: the hashes of the files
    the store holds (``store.stored_hashes``), to skip a stored file without opening the store; this file's is
    added once loaded."""
    report = FileReport(path=path, status="failed")
    started = time.monotonic()
    try:
        folder = folder_format(path) if path.is_dir() else None
        if folder is None and not path.is_file():
            raise IngestError(path, "no such file", hint="check the path")
        file_format = folder or detect(path)  # before hashing starts: a file no format reads is not read whole
        report.kind = file_format.kind
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sha256") as hashing:
            # hashed while the file is parsed (a format too big to hash whole names its own identity)
            sha256 = hashing.submit(file_format.fingerprint or store.file_sha256, path)
            if progress is not None:
                options = dataclasses.replace(options, on_progress=progress(path))
            report.size_bytes = path.stat().st_size if folder is None else 0
            if file_format.stream is None and not replace and _is_stored(db_path, sha256.result(), stored):
                raise _AlreadyIngested(sha256.result())
            parsed = (file_format.stream or file_format.parse)(path, options)
            domains = DomainCheck(path)
            if parsed.batches is not None:
                batches = parsed.batches if replace else _unless_stored(parsed.batches, sha256, db_path, stored)
                parsed.batches = domains.checked(batches)
            result = store.load_source(
                db_path, path, parsed, sha256=sha256.result, phase=phase, variant=variant, group=group, replace=replace,
                link_to=link_to,
            )
            for name, table in parsed.tables.items():  # final once the batches are spent
                domains.check(name, table)
            if stored is not None:
                stored.add(sha256.result())
    except _AlreadyIngested as known:
        report.status = "already ingested"
        report.source_id = store.source_id_for(known.sha256)
        return report
    except NotExperimentData as error:
        if skip_not_data:
            report.status, report.not_data = "skipped", error.what
        else:
            report.error = error
        return report
    except SpecdashError as error:  # this file failed (or the store stayed busy): the others still load
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
    report.warnings = [*parsed.warnings, *domains.warnings()]
    return report


class _AlreadyIngested(Exception):
    def __init__(self, sha256: str) -> None:
        super().__init__(sha256)
        self.sha256 = sha256


def _stored_hashes(db_path: StoreRef) -> set[str] | None:
    """The stored files' hashes, or None when the store cannot be read now: each file then reports why."""
    try:
        return store.stored_hashes(db_path)
    except SpecdashError:
        return None


def _is_stored(db_path: StoreRef, sha256: str, stored: set[str] | None) -> bool:
    return store.is_ingested(db_path, sha256) if stored is None else sha256 in stored


def _unless_stored(
    batches: Iterator[tuple[str, pa.Table]], sha256: Future[str], db_path: StoreRef, stored: set[str] | None
) -> Iterator[tuple[str, pa.Table]]:
    """The batches, stopped as soon as the file's hash (computed meanwhile) shows it is already stored."""
    checked = False
    for batch in batches:
        if not checked and sha256.done():
            checked = True
            if _is_stored(db_path, sha256.result(), stored):
                raise _AlreadyIngested(sha256.result())
        yield batch
    if not checked and _is_stored(db_path, sha256.result(), stored):
        raise _AlreadyIngested(sha256.result())


def ingest_paths(
    paths: Iterable[str | Path],
    db_path: StoreRef,
    *,
    phase: str | None = None,
    variant: str | None = None,
    options: ParseOptions = ParseOptions(),
    replace: bool = False,
    on_report: Callable[[FileReport], None] | None = None,
    progress: ProgressFactory | None = None,
    strict: bool = False,
    link_to: str | None = None,
) -> list[FileReport]:
    """Ingest every file; files of one call share an ``ingest_group`` so they can be joined later.

    Files found under a directory that are not experiment data are "skipped" reports (failures
    with ``strict``); a file given as such is always ingested as data. Consecutive files share one writer
    (``store.consecutive_writes``): an ``on_report`` that reads the store in this thread releases it first
    (``store.release_held_writer``; ``store.read_connection`` does).
    """
    given = [Path(p) for p in paths]
    group = uuid.uuid4().hex[:12]
    reports: list[FileReport] = []

    def finish(report: FileReport) -> None:
        reports.append(report)
        if on_report is not None:
            on_report(report)

    named = {path for path in given if not path.is_dir()}
    files = expand_paths(given)
    where = ", ".join(map(str, given)) or "(no path)"
    if not files:
        finish(FileReport(path=Path(where), status="failed",
                          error=IngestError(where, "no files found", hint="pass files, or directories that contain them")))
    with store.consecutive_writes():
        stored = _stored_hashes(db_path) if files and not replace else None
        for path in files:
            finish(ingest_file(
                path, db_path, phase=phase, variant=variant, group=group, options=options, replace=replace,
                progress=progress, skip_not_data=not strict and path not in named, link_to=link_to, stored=stored,
            ))
    if files and all(report.status == "skipped" for report in reports):
        finish(FileReport(path=Path(where), status="failed", error=IngestError(
            where, f"no experiment data found, only {_counted(skipped_kinds(reports))}",
            hint="pass the folder that holds the logs, benchmark output or traces; `specdash formats` lists what is read",
        )))
    return reports


def skipped_kinds(reports: Iterable[FileReport]) -> Counter[str]:
    """How many files were skipped as not experiment data, by what they are ("Markdown": 2, ...)."""
    return Counter(report.not_data or "other" for report in reports if report.status == "skipped")


def skipped_summary(reports: Iterable[FileReport]) -> str | None:
    """The one line that reports every skipped file, or None when none was skipped."""
    kinds = skipped_kinds(reports)
    total = sum(kinds.values())
    if not total:
        return None
    files, them = ("1 file that is", "it a failure") if total == 1 else (f"{total} files that are", "them failures")
    return f"skipped {files} not experiment data: {_counted(kinds)} (--strict makes {them})"


def _counted(kinds: Counter[str]) -> str:
    return ", ".join(f"{count} {what}" for what, count in kinds.most_common())
