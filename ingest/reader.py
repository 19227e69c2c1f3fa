"""Opening input files: plain or gzip (by magic bytes, not by name), with clear errors.

Every reader gets its bytes through ``open_binary``, so two things hold for all parsers:
a gzip stream that is corrupt or cut short raises ``MalformedInput`` wherever it is read
(not only in the first 64 KiB that detection looks at), and a UTF-8 byte-order mark
(written by Windows editors and PowerShell) is not part of the content.

Content that is not text comes in two sorts, told apart here because a directory walk treats
them differently: data we cannot read *yet* (compressed again, zipped, UTF-16: ``NOT_TEXT_MAGIC``,
each with the command that makes it readable; always a failure), and files that are plainly not
data (images, databases, other binaries: ``NOT_DATA_MAGIC``, or NUL bytes among bytes that are not
text), raised as ``NotExperimentData`` so that ``specdash ingest DIR`` can skip them. Text with NUL
runs (a log cut by a crash, or preallocated) stays a failure: it is a data file gone wrong.
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
# Binary files that are plainly not experiment data (what a results folder also holds), by their
# first bytes: (magic, the name counted in "skipped N files that are not experiment data: ...").
NOT_DATA_MAGIC: tuple[tuple[re.Pattern[bytes], str], ...] = (
    (re.compile(rb"\x89PNG\r\n\x1a\n"), "PNG"),
    (re.compile(rb"\xff\xd8\xff"), "JPEG"),
    (re.compile(rb"GIF8[79]a"), "GIF"),
    (re.compile(rb"RIFF.{4}WEBP", re.DOTALL), "WebP"),
    (re.compile(rb"%PDF-"), "PDF"),
    (re.compile(rb"SQLite format 3\x00"), "SQLite"),
    (re.compile(rb".{8}DUCK", re.DOTALL), "DuckDB"),
    (re.compile(rb"PAR1"), "Parquet"),
)
BINARY_SAMPLE = 8192  # bytes looked at for NUL bytes
NOT_TEXT_SHARE = 0.1  # above this share of control or undecodable characters (NULs aside), content is binary
TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")  # control characters that text (and coloured logs) holds
BINARY = "binary (NUL bytes)"  # what other binary content is counted as


class NotExperimentData(UnrecognizedFormat):
    """No format reads the file, and it is plainly not experiment data (a README, a note, an image).

    ``what`` names the sort, as counted in the skip summary ("PNG", "Markdown", ...). Files found
    by walking a directory are skipped for this; a file named on the command line, or any under
    ``--strict``, fails like any other unrecognized file.
    """

    def __init__(self, path: str | Path, message: str, *, what: str, hint: str = "") -> None:
        super().__init__(path, message, hint=hint)
        self.what = what


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
    return b"\x00" in head[:BINARY_SAMPLE]


def binary_kind(head: bytes) -> str | None:
    """What a head that is plainly not text is ("PNG", "DuckDB", ``BINARY``); None for text,
    text with NUL runs included (a damaged data file, to be reported, not skipped)."""
    for magic, what in NOT_DATA_MAGIC:
        if magic.match(head):
            return what
    if not looks_binary(head):
        return None
    rest = head[:BINARY_SAMPLE].replace(b"\x00", b"").decode("utf-8", errors="replace")
    odd = sum(1 for char in rest if char == "\ufffd" or (char < " " and char not in TEXT_CONTROLS))
    return BINARY if rest and odd > NOT_TEXT_SHARE * len(rest) else None


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text; undecodable bytes become U+FFFD rather than failing the whole file."""
    return data.decode("utf-8", errors="replace")


def text_lines(path: Path) -> io.TextIOWrapper:
    """A line iterator over the decompressed content (UTF-8, undecodable bytes replaced)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace", newline="")


def reject_binary(path: Path, head: bytes) -> None:
    """Raise for content that is not text: ``NotExperimentData`` when it is plainly no data file."""
    for magic, what, hint in NOT_TEXT_MAGIC:
        if magic.match(head):
            raise UnrecognizedFormat(path, f"{what}, not a log, benchmark or trace", hint=hint)
    hint = "pass the text log, JSON/JSONL benchmark output or a .json(.gz) profiler trace"
    kind = binary_kind(head)
    if kind == BINARY:
        raise NotExperimentData(path, "binary content (NUL bytes), not a log, benchmark or trace", what=kind, hint=hint)
    if kind is not None:
        raise NotExperimentData(path, f"a {kind} file, not a log, benchmark or trace", what=kind, hint=hint)
    if looks_binary(head):
        raise UnrecognizedFormat(
            path,
            "binary content (NUL bytes) among text",
            hint="a log cut short by a crash, or preallocated, holds NUL runs: "
            "remove them (tr -d '\\000' < FILE > FIXED) and pass the result",
        )
