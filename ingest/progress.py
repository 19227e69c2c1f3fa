"""A terminal progress bar with bytes/s for big files (drawn only when stderr is a terminal)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

SHOW_ABOVE_BYTES = 4 * 1024 * 1024
BAR_WIDTH = 30
REDRAW_EVERY_S = 0.2


class ProgressBar:
    """Call with (bytes_done, bytes_total); ``finish()`` clears the line."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.drawn = False

    @property
    def enabled(self) -> bool:
        return self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if total < SHOW_ABOVE_BYTES or not self.enabled or now - self.last_draw < REDRAW_EVERY_S:
            return
        self.last_draw = now
        fraction = min(done / total, 1.0) if total else 0.0
        filled = int(fraction * BAR_WIDTH)
        rate = done / max(now - self.started, 1e-9) / 1e6
        self.stream.write(
            f"\r{self.label[-40:]:<40} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
            f"{fraction:6.1%} {done / 1e6:,.0f}/{total / 1e6:,.0f} MB {rate:,.0f} MB/s"
        )
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()


def rate_note(size_bytes: int, seconds: float) -> str:
    """`, 1,024 MB in 3.2 s (320 MB/s)` for big files, else nothing."""
    if size_bytes < SHOW_ABOVE_BYTES or seconds <= 0:
        return ""
    return f", {size_bytes / 1e6:,.0f} MB in {seconds:.1f} s ({size_bytes / 1e6 / seconds:,.0f} MB/s)"
