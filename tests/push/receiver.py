"""A webhook receiver for the push tests: a real ASGI app that records every request and
answers each path with the statuses a test scripts."""

from __future__ import annotations

import json
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any

import anyio

from tests.raw_asgi import read_request


@dataclass(frozen=True, slots=True)
class Received:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    """`anyio.current_time()` when it arrived."""
    wall: float
    """The wall clock (`time.time()`) when it arrived, to set beside the hub's timestamps."""

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def task(self) -> dict[str, Any]:
        """The task of a 1.0 `StreamResponse` body."""
        task: dict[str, Any] = self.json()["task"]
        return task

    @property
    def state(self) -> str:
        return str(self.task["status"]["state"])


class WebhookReceiver:
    """Records every request; answers 200 unless `answer()` scripted other statuses."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._scripts: dict[str, deque[int]] = defaultdict(deque)
        self._changed = anyio.Event()
        self.hang = anyio.Event()
        """Requests to `/hang` wait for this before they are answered."""

    def answer(self, path: str, *statuses: int) -> None:
        """Answer the next requests to `path` with `statuses`, in order (then 200)."""
        self._scripts[path].extend(statuses)

    def at(self, path: str) -> list[Received]:
        return [request for request in self.received if request.path == path]

    async def wait_for(self, count: int, path: str) -> list[Received]:
        """The first `count` requests to `path`, waiting (at most 30 s) until they arrived."""
        with anyio.fail_after(30):
            while len(self.at(path)) < count:
                changed = self._changed
                await changed.wait()
        return self.at(path)[:count]

    async def wait_for_state(self, path: str, state: str) -> Received:
        """The first 1.0 delivery to `path` whose task is in `state` (waiting at most 30 s)."""
        with anyio.fail_after(30):
            while True:
                for request in self.at(path):
                    if request.state == state:
                        return request
                changed = self._changed
                await changed.wait()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await read_request(scope, receive, send)
        if body is None:
            return
        path: str = scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.received.append(Received(path, headers, body, anyio.current_time(), time.time()))
        self._changed.set()
        self._changed = anyio.Event()
        if path == "/hang":
            await self.hang.wait()
        script = self._scripts[path]
        status = script.popleft() if script else 200
        extra = [(b"location", b"/elsewhere")] if 300 <= status < 400 else []
        await send({"type": "http.response.start", "status": status, "headers": extra})
        await send({"type": "http.response.body", "body": b""})
