"""Opening input files: plain or gzip (by magic bytes, not by name), with clear errors.

Every reader gets its bytes through ``open_binary``, so two things hold for all parsers:
a gzip stream that is corrupt or cut short raises ``MalformedInput`` wherever it is read
(not only in the first 64 KiB that detection looks at), and a UTF-8 byte-order mark
(written by Windows editors and PowerShell) is not part of the content.
"""
from __future__ import annotations

import gzip
import io
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from ingest.errors import IngestError, MalformedInput, UnrecognizedFormat

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
HEAD_BYTES = 64 * 1024
GZIP_ERRORS = (EOFError, OSError, zlib.error)  # what gzip/zlib raise for a damaged or cut stream
GZIP_HINT = "re-copy the file; `gzip -t FILE` checks it"
# Content that is not text, recognized by its first bytes: say what it is instead of "binary".
NOT_TEXT_MAGIC: tuple[tuple[re.Pattern[bytes], str, str], ...] = (
    (re.compile(rb"\x1f\x8b"), "gzip-compressed twice (a .gz inside the .gz)", "gunzip it once, then pass the result"),
    (re.compile(rb"BZh[1-9]1AY&SY"), "bzip2-compressed; only gzip is read", "decompress it first: bunzip2 FILE"),
    (re.compile(rb"\xfd7zXZ\x00"), "xz-compressed; only gzip is read", "decompress it first: unxz FILE"),
    (re.compile(rb"\x28\xb5\x2f\xfd"), "zstd-compressed; only gzip is read", "decompress it first: unzstd FILE"),
    (re.compile(rb"PK\x03\x04"), "a zip archive, not a single file", "unzip it and pass the files inside"),
    (re.compile(rb"\xff\xfe|\xfe\xff|(?:[\x09\x0a\x0d\x20-\x7e]\x00){8}"),
     "UTF-16 text (as PowerShell's > writes it), not UTF-8",
     "convert it: iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8 (in PowerShell, pipe to Out-File -Encoding utf8)"),
)


def corrupt_gzip(path: Path, error: BaseException) -> MalformedInput:
    return MalformedInput(path, f"corrupt or truncated gzip ({error})", hint=GZIP_HINT)


class CheckedGzipFile(gzip.GzipFile):
    """A GzipFile whose decompression errors, wherever a reader meets them, are ``MalformedInput``."""

    def __init__(self, path: Path, fileobj: BinaryIO) -> None:
        super().__init__(fileobj=fileobj, mode="rb")
        self.source_path = path

    def _checked(self, method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except GZIP_ERRORS as error:
            raise corrupt_gzip(self.source_path, error) from error

    def read(self, size: int | None = -1) -> bytes:
        return self._checked(super().read, size)

    def read1(self, size: int = -1) -> bytes:
        return self._checked(super().read1, size)

    def readinto(self, buffer: Any) -> int:
        return self._checked(super().readinto, buffer)

    def readline(self, size: int | None = -1) -> bytes:
        return self._checked(super().readline, size)

    def peek(self, n: int) -> bytes:
        return self._checked(super().peek, n)


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
    """The file's content as a byte stream: transparently gunzipped, without a UTF-8 byte-order mark."""
    raw = open_raw(path)
    stream: BinaryIO = raw
    if raw.read(2) == GZIP_MAGIC:
        raw.seek(0)
        stream = CheckedGzipFile(path, raw)  # type: ignore[assignment]
    else:
        raw.seek(0)
    try:
        if stream.read(len(UTF8_BOM)) != UTF8_BOM:
            stream.seek(0)
    except BaseException:
        stream.close()
        raw.close()
        raise
    return stream


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of the (decompressed) content, for format detection."""
    with open_binary(path) as stream:
        return stream.read(size)


def read_all(path: Path) -> bytes:
    """The whole (decompressed) content; for formats that are small by nature (benchmark JSON)."""
    with open_binary(path) as stream:
        return stream.read()


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:8192]


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text; undecodable bytes become U+FFFD rather than failing the whole file."""
    return data.decode("utf-8", errors="replace")


def text_lines(path: Path) -> io.TextIOWrapper:
    """A line iterator over the decompressed content (UTF-8, undecodable bytes replaced)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace", newline="")


def reject_binary(path: Path, head: bytes) -> None:
    for magic, what, hint in NOT_TEXT_MAGIC:
        if magic.match(head):
            raise UnrecognizedFormat(path, f"{what}, not a log, benchmark or trace", hint=hint)
    if looks_binary(head):
        raise UnrecognizedFormat(
            path,
            "binary content (NUL bytes), not a log, benchmark or trace",
            hint="pass the text log, JSON/JSONL benchmark output or a .json(.gz) profiler trace",
        )
