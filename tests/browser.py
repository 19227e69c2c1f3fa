"""Helpers for browser tests: a real `specdash serve` and Debian's Chromium driven by Playwright."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(db: Path, *extra: str, env: dict[str, str] | None = None, startup_s: float = 60.0) -> Iterator[str]:
    """`specdash serve` (with ``extra`` arguments) on a free port; yields its base URL and stops it afterwards.

    The server's output goes to ``serve-PORT.log`` beside the store.
    """
    port = free_port()
    log_path = db.parent / f"serve-{port}.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "dashboard", "serve", "--db", str(db), "--port", str(port), *extra],
            stdout=log, stderr=subprocess.STDOUT, env=env or {**os.environ, "SPECDASH_DB": str(db)},
            cwd=Path(__file__).resolve().parents[1],
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + startup_s
            while not app_is_up(base):
                if process.poll() is not None:
                    raise RuntimeError(f"specdash serve exited: {log_path.read_text()}")
                if time.monotonic() > deadline:
                    raise RuntimeError("specdash serve did not come up in time")
                time.sleep(0.3)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def app_is_up(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


MAX_SHOT_HEIGHT = 7000


def screenshot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """The whole page: Streamlit scrolls inside its main element, so the viewport is stretched to its height first."""
    ARTIFACTS.mkdir(exist_ok=True)
    viewport = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], [data-testid=\"stMainBlockContainer\"]')]"
        ".map(e => e.scrollHeight), document.body.scrollHeight)"
    )
    page.set_viewport_size({"width": viewport["width"], "height": min(int(height) + 80, MAX_SHOT_HEIGHT)})
    page.wait_for_timeout(700)  # let plotly re-layout at the new size
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(viewport)
