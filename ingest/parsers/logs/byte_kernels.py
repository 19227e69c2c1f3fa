"""Compiled byte scans the block reader needs (``log_lines``): count a byte, find its last place,
find where each line starts and ends.

Kept apart from the SGLang passes (``ingest.parsers.sglang.log_kernels``) so that the shared line
reader depends on nothing a family's reader defines. Imported on first use (``log_lines.kernels``):
numba and LLVM add ~110 MB to a process, which only reading a log may cost.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# No reference counting and the GIL released, as in log_kernels: two blocks are scanned at once.
COMPILED = {"cache": True, "nogil": True, "_nrt": False}
INLINED = {**COMPILED, "inline": "always"}
NEWLINE, RETURN = ord("\n"), ord("\r")
NEWLINES, LOW_BITS, HIGH_BITS = np.uint64(0x0A0A0A0A0A0A0A0A), np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)


@njit(**INLINED)
def _at(data, index):
    """``data[index]`` for an index known not to be negative: numba wraps a negative signed index
    around, a test and branch on every read."""
    return data[np.uint64(index)]


@njit(**COMPILED)
def count_byte(data: np.ndarray, byte: int) -> int:
    count = 0
    for at in range(len(data)):
        if _at(data, at) == byte:
            count += 1
    return count


@njit(**COMPILED)
def last_index(data: np.ndarray, byte: int) -> int:
    """Where ``byte`` last occurs in ``data``; -1 if nowhere."""
    for at in range(len(data) - 1, -1, -1):
        if _at(data, at) == byte:
            return at
    return -1


@njit(**INLINED)
def _newlines(data, start, end, offsets, line):
    """Record where each line after a newline in ``data[start:end]`` starts; the last line's number."""
    for at in range(start, end):
        if _at(data, at) == NEWLINE:
            line += 1
            offsets[line] = at + 1
    return line


@njit(**COMPILED)
def line_bounds(data: np.ndarray, offsets: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
    """Fill each line's offset in ``data`` (``offsets``, one more than lines: where each line with its
    break starts, then the end), ``starts`` and ``ends`` (its content, without "\\n" or "\\r\\n")."""
    line = 0
    offsets[0] = 0
    # Eight bytes at a time: a word holds a newline when one of its bytes XOR "\n" is zero (the
    # classic has-zero-byte test); only those words are looked at byte by byte (2x faster).
    words = data[: len(data) // 8 * 8].view(np.uint64)
    for word in range(len(words)):
        bytes_xor_newline = words[word] ^ NEWLINES
        if (bytes_xor_newline - LOW_BITS) & ~bytes_xor_newline & HIGH_BITS:
            line = _newlines(data, 8 * word, 8 * word + 8, offsets, line)
    line = _newlines(data, 8 * len(words), len(data), offsets, line)
    if offsets[line] != len(data):
        offsets[line + 1] = len(data)
    for line in range(len(starts)):
        start, end = offsets[line], offsets[line + 1]
        if end > start and _at(data, end - 1) == NEWLINE:
            end -= 1
        if end > start and _at(data, end - 1) == RETURN:
            end -= 1
        starts[line] = start
        ends[line] = end
