"""Errors specdash raises on purpose: one base, ``SpecdashError``, and a subclass per layer.

Every error names the file (and line or key when known), says what was expected
and what to do next. The CLI prints ``str(error)`` and exits non-zero; the app
shows the message and the hint. A traceback is only ever shown for a bug.

- ``IngestError`` (``UnrecognizedFormat``, ``MalformedInput``): a file could not be ingested;
- ``StoreError`` (``StoreBusy``, ``NoStore``): the store could not be opened;
- ``DecisionError`` (``ingest.storage.decisions.InvalidDecision``, ``dashboard.analysis.evidence.NoEvidence``): a
  decision could not be recorded.
"""
from __future__ import annotations

from pathlib import Path


class SpecdashError(Exception):
    """An expected failure, with where (path, line, key) and what to do (hint)."""

    title = "Error"

    def __init__(
        self,
        path: str | Path | object | None,  # a file, or a store (ingest.storage.location.StoreRef)
        message: str,
        *,
        line: int | None = None,
        key: str | None = None,
        hint: str = "",
    ) -> None:
        self.path = str(path) if path is not None else None
        self.message = message
        self.line = line
        self.key = key
        self.hint = hint
        super().__init__(str(self))

    @property
    def location(self) -> str:
        where = self.path or ""
        if self.line is not None:
            where += f":{self.line}"
        if self.key is not None:
            where += f" [{self.key}]"
        return where

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        return f"{text} — {self.hint}" if self.hint else text


class IngestError(SpecdashError):
    """A file could not be ingested; nothing of it was written to the store."""

    title = "Ingest failed"


class StoreError(SpecdashError):
    """The store could not be opened or used."""

    title = "Store unavailable"


class NoStore(StoreError):
    """The store file does not exist yet."""

    title = "No store yet"


class DecisionError(SpecdashError):
    """A decision could not be recorded; the ledger is unchanged."""

    title = "Decision not recorded"


class UnrecognizedFormat(IngestError):
    """No known format matched the file's content."""

    title = "Unrecognized file"


class MalformedInput(IngestError):
    """The format was recognized but the content is broken (truncated JSON, bad value, ...)."""

    title = "Malformed input"


class StoreBusy(StoreError):
    """The store stayed locked by another process for longer than we wait."""

    title = "Store busy"
