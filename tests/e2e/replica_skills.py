"""Skills for the replica tests, loaded by real hub processes on one PostgreSQL database.

`until_canceled` leaves a mark in a folder (`MARKS_ENV`) when its run is stopped. `ticker`
waits at two gates the test opens (`Gates`, at `GATES_ENV`), before its first tick and
before its last, so a test follows it while it runs however busy the machine is: a task
that ended before its subscriber came could not be subscribed to.
"""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx

from hub import SkillContext, skill

MARKS_ENV = "A2A_HUB_TEST_MARKS"
"""A folder where `until_canceled` leaves `<task id>.stopped` when its run is stopped."""

GATES_ENV = "A2A_HUB_TEST_GATES"
"""The URL of the test's `Gates`."""

_GATE_WAIT = 120.0
"""At most this long at a gate (a test that fails may never open it)."""


@skill(id="ticker", description="reports ten ticks, then completes")
async def ticker(ctx: SkillContext) -> str:
    await through_gate(ctx.task_id, "start")
    for n in range(1, 11):
        if n == 10:
            await through_gate(ctx.task_id, "finish")
        await ctx.progress(f"tick {n}")
        await anyio.sleep(0.05)
    return "ticked"


@skill(id="until_canceled", description="works until canceled, and leaves a mark then")
async def until_canceled(ctx: SkillContext) -> str:
    await ctx.progress("working")
    try:
        await anyio.sleep_forever()
    finally:
        _leave_mark(f"{ctx.task_id}.stopped")
    return "never"


async def through_gate(task_id: str, gate: str) -> None:
    """Wait until the test opens `gate` of `task_id` (`Gates.open`)."""
    async with httpx.AsyncClient(timeout=_GATE_WAIT + 10) as client:
        answer = await client.get(f"{os.environ[GATES_ENV]}/{task_id}/{gate}")
    answer.raise_for_status()


def _leave_mark(name: str) -> None:
    # A few bytes, written at once: no await in a canceled skill's `finally`.
    Path(os.environ[MARKS_ENV], name).write_text("stopped")


class Gates:
    """The test's side of `ticker`'s gates: an HTTP server on loopback, run on a thread,
    that answers `GET /<task id>/<gate>` once the test has opened that gate (`open`)."""

    def __init__(self) -> None:
        self._opened: set[str] = set()
        self._closing = False
        self._changed = threading.Condition()
        gates = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                key = self.path.strip("/")
                with gates._changed:
                    opened = gates._changed.wait_for(
                        lambda: key in gates._opened or gates._closing, timeout=_GATE_WAIT
                    )
                self.send_response(200 if opened and not gates._closing else 504)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def open(self, task_id: str, gate: str) -> None:
        """Let the `ticker` of `task_id` through `gate` ("start" or "finish")."""
        with self._changed:
            self._opened.add(f"{task_id}/{gate}")
            self._changed.notify_all()

    def __enter__(self) -> Gates:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._server.shutdown()
        self._server.server_close()
