"""Errors that ingest raises on purpose.

Every error names the file (and line or key when known), says what was expected
and what to do next. The CLI prints ``str(error)`` and exits non-zero; the app
shows the message and the hint. A traceback is only ever shown for a bug.
"""
from __future__ import annotations

from pathlib import Path


class IngestError(Exception):
    """A file could not be ingested; nothing of it was written to the store."""

    title = "Ingest failed"

    def __init__(
        self,
        path: str | Path | None,
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
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.key is not None:
            where += f" [{self.key}]"
        return where

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}"
        return f"{text} — {self.hint}" if self.hint else text


class UnrecognizedFormat(IngestError):
    """No known format matched the file's content."""

    title = "Unrecognized file"


class MalformedInput(IngestError):
    """The format was recognized but the content is broken (truncated JSON, bad value, ...)."""

    title = "Malformed input"


class StoreBusy(IngestError):
    """The store stayed locked by another process for longer than we wait."""

    title = "Store busy"
