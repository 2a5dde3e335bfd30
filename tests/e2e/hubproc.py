"""Running a real `a2a-hub serve` process for end-to-end tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_LISTENING = re.compile(rb"a2a-hub listening on (http://[\d.]+:\d+)")


@contextmanager
def hub_process(
    config: Path, *, timeout: float = 120.0, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Start `python -m hub serve --config CONFIG --port 0`; yields the process and its URL.

    The URL is read from the hub's own start-up line, so no port is guessed. `env` is added
    to the inherited environment.
    """
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "hub", "serve", "--config", str(config), "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        url = _wait_for_url(process, timeout)
        yield process, url
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _wait_for_url(process: subprocess.Popen[bytes], timeout: float) -> str:
    import selectors
    import time

    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    seen = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            line = process.stderr.readline()
            if not line:
                break
            seen += line
            match = _LISTENING.search(line)
            if match:
                return match.group(1).decode()
    raise RuntimeError(f"the hub did not start within {timeout}s; it said:\n{seen.decode()}")
