"""Opening input files: plain or gzip (by magic bytes, not by name), with clear errors."""
from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from typing import BinaryIO

from ingest.errors import IngestError, MalformedInput, UnrecognizedFormat

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 64 * 1024


def is_gzip(path: Path) -> bool:
    with open_raw(path) as raw:
        return raw.read(2) == GZIP_MAGIC


def open_raw(path: Path) -> BinaryIO:
    try:
        return open(path, "rb")
    except FileNotFoundError as error:
        raise IngestError(path, "no such file", hint="check the path") from error
    except IsADirectoryError as error:
        raise IngestError(path, "is a directory", hint="pass files, or let `specdash ingest` walk the directory") from error
    except PermissionError as error:
        raise IngestError(path, "permission denied", hint="make the file readable for this user") from error
    except OSError as error:
        raise IngestError(path, f"cannot be read ({error.strerror})", hint="check the path") from error


def open_binary(path: Path) -> BinaryIO:
    """The file's content as a byte stream, transparently gunzipped."""
    raw = open_raw(path)
    if raw.read(2) == GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    raw.seek(0)
    return raw


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of the (decompressed) content, for format detection."""
    with open_binary(path) as stream:
        try:
            return stream.read(size)
        except (EOFError, OSError, zlib.error) as error:
            raise MalformedInput(
                path, f"corrupt or truncated gzip ({error})", hint="re-copy the file; `gzip -t FILE` checks it"
            ) from error


def read_all(path: Path) -> bytes:
    """The whole (decompressed) content; for formats that are small by nature (benchmark JSON)."""
    with open_binary(path) as stream:
        try:
            return stream.read()
        except (EOFError, OSError, zlib.error) as error:
            raise MalformedInput(
                path, f"corrupt or truncated gzip ({error})", hint="re-copy the file; `gzip -t FILE` checks it"
            ) from error


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:8192]


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text; undecodable bytes become U+FFFD rather than failing the whole file."""
    return data.decode("utf-8", errors="replace")


def text_lines(path: Path) -> io.TextIOWrapper:
    """A line iterator over the decompressed content (UTF-8, undecodable bytes replaced)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace", newline="")


def reject_binary(path: Path, head: bytes) -> None:
    if looks_binary(head):
        raise UnrecognizedFormat(
            path,
            "binary content (NUL bytes), not a log, benchmark or trace",
            hint="pass the text log, JSON/JSONL benchmark output or a .json(.gz) profiler trace",
        )
