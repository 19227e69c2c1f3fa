"""The safetensors container, read the cheap way: the header, and single tensors by byte range.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON (per tensor
``{"dtype", "shape", "data_offsets": [begin, end]}`` relative to the end of the header, plus an
optional ``"__metadata__"`` object of strings), then the raw tensor bytes. So a drafter's two
vocabulary-mapping tensors (``d2t``: 32,000 int64 = 256 KB; ``t2d``: 163,840 bool = 160 KB) can be
read without touching the other 1-2 GB of its weights: ``Header.read`` seeks to their range. Every
read goes through ``ByteCounter``, so a caller (and bench/bench_drafter.py) can tell how many bytes
an inspection cost.

Checks made here, each a ``MalformedInput`` naming the file: a file shorter than the length prefix,
a header length past the file's end (or above ``MAX_HEADER_BYTES``, as the reference implementation
refuses), a header that is not a UTF-8 JSON object, a tensor entry without a known dtype, a shape of
non-negative integers and two ordered offsets, offsets whose span disagrees with dtype × shape, and
offsets past the file's end. ``write`` is the inverse, for the demo, the fixtures and the benchmark;
its tensors come as raw bytes (bf16 has no numpy dtype) or as a byte count of filler.

The ``safetensors`` package is deliberately not used: it needs torch or numpy for every read, maps
the whole file, and checks less than this reader reports.
"""
from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ingest.errors import MalformedInput

LENGTH_BYTES = 8
MAX_HEADER_BYTES = 100_000_000  # the reference implementation's limit
# safetensors dtype name → bytes per element; numpy reads only the ones mapping tensors use.
DTYPE_BYTES: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}
NUMPY_DTYPES: dict[str, str] = {"BOOL": "?", "I64": "<i8", "I32": "<i4", "U8": "u1", "F32": "<f4", "F16": "<f2"}
HINT = "re-copy the file from the checkpoint (a download cut short leaves a truncated file)"


def looks_like_safetensors(head: bytes) -> bool:
    """An 8-byte length that a JSON object header of that length could follow, then ``{"``."""
    if len(head) < LENGTH_BYTES + 2 or not head[LENGTH_BYTES:].startswith(b'{"'):
        return False
    (length,) = struct.unpack("<Q", head[:LENGTH_BYTES])
    return 2 <= length <= MAX_HEADER_BYTES


class ByteCounter:
    """Reads from one open file, counting every byte it returns."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.bytes_read = 0

    def read_at(self, offset: int, size: int) -> bytes:
        self.stream.seek(offset)
        data = self.stream.read(size)
        self.bytes_read += len(data)
        return data


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # absolute file offsets of the tensor's bytes
    end: int

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


@dataclass
class Header:
    path: Path
    header_bytes: int  # N, the JSON's length
    file_size: int
    tensors: dict[str, TensorInfo]
    metadata: dict[str, Any]
    raw: bytes = field(repr=False, default=b"")  # the header's JSON bytes, for the source's fingerprint
    counter: ByteCounter | None = field(repr=False, default=None)

    @property
    def data_start(self) -> int:
        return LENGTH_BYTES + self.header_bytes

    def read_bytes(self, name: str) -> bytes:
        info = self.tensors[name]
        if self.counter is not None:
            data = self.counter.read_at(info.begin, info.end - info.begin)
        else:
            with open(self.path, "rb") as stream:
                stream.seek(info.begin)
                data = stream.read(info.end - info.begin)
        if len(data) != info.end - info.begin:  # the file shrank since its header was read
            raise MalformedInput(self.path, f"tensor {name!r} is cut short ({len(data)} of {info.end - info.begin} bytes)", hint=HINT)
        return data

    def read(self, name: str) -> np.ndarray:
        """One tensor as a numpy array (dtypes of ``NUMPY_DTYPES``), reading only its bytes."""
        info = self.tensors[name]
        return np.frombuffer(self.read_bytes(name), dtype=NUMPY_DTYPES[info.dtype]).reshape(info.shape)


def read_header(path: Path, counter: ByteCounter | None = None) -> Header:
    """The file's header, checked; reads 8 + N bytes. With ``counter`` its stream is used (and counted)."""
    try:
        if counter is None:
            with open(path, "rb") as stream:
                return _read_header(path, ByteCounter(stream), keep=None)
        return _read_header(path, counter, keep=counter)
    except OSError as error:
        raise MalformedInput(path, f"cannot be read ({error.strerror})", hint="check the path and its permissions") from error


def _read_header(path: Path, counter: ByteCounter, keep: ByteCounter | None) -> Header:
    size = path.stat().st_size
    prefix = counter.read_at(0, LENGTH_BYTES)
    if len(prefix) < LENGTH_BYTES:
        raise MalformedInput(path, f"truncated safetensors: {len(prefix)} bytes, shorter than the 8-byte header length", hint=HINT)
    (length,) = struct.unpack("<Q", prefix)
    if length > MAX_HEADER_BYTES or LENGTH_BYTES + length > size:
        raise MalformedInput(
            path, f"corrupt or truncated safetensors header: it claims {length:,} bytes, the file holds {size - LENGTH_BYTES:,} after the length",
            hint=HINT,
        )
    raw = counter.read_at(LENGTH_BYTES, length)
    try:
        parsed = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, a 5,000-digit number, nested too deep
        raise MalformedInput(path, f"corrupt safetensors header: not JSON ({type(error).__name__})", hint=HINT) from error
    if not isinstance(parsed, dict):
        raise MalformedInput(path, "corrupt safetensors header: not a JSON object", hint=HINT)
    data_start = LENGTH_BYTES + length
    metadata = parsed.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise MalformedInput(path, "corrupt safetensors header: __metadata__ is not an object", key="__metadata__", hint=HINT)
    tensors = {name: _tensor(path, name, entry, data_start, size) for name, entry in parsed.items()}
    return Header(path, length, size, tensors, metadata, raw=raw, counter=keep)


def _tensor(path: Path, name: str, entry: Any, data_start: int, size: int) -> TensorInfo:
    def bad(what: str) -> MalformedInput:
        return MalformedInput(path, f"corrupt safetensors header: tensor {name!r} {what}", key=name, hint=HINT)

    if not isinstance(entry, dict):
        raise bad("is not an object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise bad(f"has an unknown dtype {dtype!r}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise bad(f"has a shape that is not a list of sizes ({shape!r})")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
        raise bad(f"has data_offsets that are not two ordered byte offsets ({offsets!r})")
    begin, end = offsets
    if end - begin != math.prod(shape) * DTYPE_BYTES[dtype]:
        raise bad(f"spans {end - begin:,} bytes, but {dtype} × {shape} needs {math.prod(shape) * DTYPE_BYTES[dtype]:,}")
    if data_start + end > size:
        raise MalformedInput(
            path, f"safetensors header claims offsets past the file's end: tensor {name!r} ends at byte {data_start + end:,}, the file has {size:,}",
            key=name, hint=HINT,
        )
    return TensorInfo(name, dtype, tuple(shape), data_start + begin, data_start + end)


# --- writing (demo, fixtures, benchmark) -------------------------------------------------------

Tensor = tuple[str, tuple[int, ...], bytes | int]  # dtype, shape, raw bytes or a filler byte count


def tensor(array: np.ndarray, dtype: str) -> Tensor:
    """A numpy array as a tensor to ``write``."""
    return dtype, tuple(int(d) for d in array.shape), np.ascontiguousarray(array, dtype=NUMPY_DTYPES[dtype]).tobytes()


def write(path: Path, tensors: dict[str, Tensor], metadata: dict[str, str] | None = None,
          filler: bytes = b"\0" * (1 << 20)) -> None:
    """Write a safetensors file. A tensor given as an int is that many bytes taken from ``filler``
    (a repeating block: the benchmark writes 2 GB without holding them)."""
    header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    offset = 0
    for name, (dtype, shape, data) in tensors.items():
        size = data if isinstance(data, int) else len(data)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the reference writer pads the header to 8 bytes with spaces
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(raw)) + raw)
        for _, (_, _, data) in tensors.items():
            if isinstance(data, int):
                left = data
                while left:
                    piece = filler[: min(left, len(filler))]
                    out.write(piece)
                    left -= len(piece)
            else:
                out.write(data)
