"""Helpers for the tool tests: registries written as real agents.yaml files, and partners that
record what they were sent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from hub.registry import Registry, load_registry

Asgi = Callable[..., Any]


def registry_file(path: Path, agents: dict[str, str], **extra: str) -> Registry:
    """Write an agents.yaml naming each partner by URL and load it."""
    lines = ["version: 1", "agents:"]
    for name, url in agents.items():
        lines += [f"  - name: {name}", f"    url: {url}"]
        lines += [f"    {key}: {value}" for key, value in extra.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_registry(path)


class HeaderRecorder:
    """Wraps an ASGI app and keeps the headers of every HTTP request it serves."""

    def __init__(self, app: Asgi) -> None:
        self.app = app
        self.headers: list[dict[str, str]] = []
        self._arrived = anyio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.headers.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
            self._arrived.set()
            self._arrived = anyio.Event()
        await self.app(scope, receive, send)

    async def requests(self, count: int) -> list[dict[str, str]]:
        """The headers of the first `count` requests, once that many have arrived."""
        while len(self.headers) < count:
            await self._arrived.wait()
        return self.headers[:count]
