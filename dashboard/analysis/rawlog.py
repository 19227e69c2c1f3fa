"""Raw server-log lines of a window, read back from the ingested file (the store keeps parsed rows, not every line).

The path comes from the store (``sources.path``), never from the UI. The file is
streamed (gzip too) up to the window's last line, at most ``MAX_LINES`` lines are
kept, and a file that is gone or whose size changed since ingest is reported
instead of read, since its line numbers would no longer match.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ingest.errors import SpecdashError
from ingest.reader import text_lines

MAX_LINES = 3000
CONTEXT_LINES = 2  # lines shown before and after a window (the prefill line precedes a run's first decode line)


@dataclass(frozen=True)
class RawWindow:
    first: int
    last: int
    lines: list[tuple[int, str]] = field(default_factory=list)
    problem: str | None = None  # why no lines could be read
    truncated: bool = False


def read_window(path: str, expected_size: int | None, first: int, last: int, cap: int = MAX_LINES) -> RawWindow:
    """Lines ``first``..``last`` (1-based, inclusive) of the file, or why they cannot be shown."""
    file = Path(path)
    first, last = max(1, first - CONTEXT_LINES), last + CONTEXT_LINES
    if not file.is_file():
        return RawWindow(first, last, problem=f"`{path}` is gone since it was ingested, so its raw lines cannot be shown "
                         "(the parsed rows are still in the store). Put the file back at that path to see them.")
    size = file.stat().st_size
    if expected_size is not None and size != expected_size:
        return RawWindow(first, last, problem=f"`{path}` changed since it was ingested ({expected_size:,} → {size:,} bytes), "
                         "so its line numbers no longer match the store. Re-ingest it with `specdash ingest --replace`.")
    lines: list[tuple[int, str]] = []
    try:
        with text_lines(file) as stream:
            for number, line in enumerate(stream, start=1):
                if number > last or len(lines) >= cap:
                    break
                if number >= first:
                    lines.append((number, line.rstrip("\r\n")))
    except (SpecdashError, OSError, EOFError) as error:
        return RawWindow(first, last, problem=f"`{path}` could not be read ({error}).")
    return RawWindow(first, last, lines, truncated=last - first + 1 > cap and len(lines) >= cap)


def matching(lines: list[tuple[int, str]], query: str) -> list[tuple[int, str]]:
    """Lines containing ``query`` (case-insensitive); all lines when the query is empty."""
    needle = query.strip().lower()
    return [item for item in lines if needle in item[1].lower()] if needle else lines


def as_text(lines: list[tuple[int, str]]) -> str:
    width = len(str(lines[-1][0])) if lines else 1
    return "\n".join(f"{number:>{width}}  {text}" for number, text in lines)
