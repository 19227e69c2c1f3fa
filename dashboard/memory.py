"""Keep the Streamlit server's resident memory near what its pages hold, not what they once held.

Streamlit runs every rerun in a new thread. glibc gives threads their own malloc arenas (up to 8 per
core) and keeps freed memory in them, so after a few pages over 50,000 runs the server's resident set
is the sum of every arena's high-water mark. Capping the arenas and handing free pages back after each
rerun keeps it to the current page's needs. Both are glibc calls; elsewhere they do nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

M_ARENA_MAX = -8  # mallopt parameter (malloc.h)
ARENAS = 2


@cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


@cache
def cap_arenas() -> None:
    """Once per process: at most ARENAS malloc arenas for the threads created from now on."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_ARENA_MAX, ARENAS)


def give_back() -> None:
    """Return the heap's free pages to the system (after a rerun has dropped its frames)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
