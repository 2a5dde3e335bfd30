"""aiohttp's transport, built in the background while the process starts.

Importing aiohttp takes about a tenth of a second of CPU (it builds SSL contexts at import).
A server that builds its webhook client in its lifespan would serve its first request that
much later; building it on the first request instead makes that request wait for the import.
`DeferredTransport` is the client's transport from the start: `prepare()` imports aiohttp in
a worker thread, so the event loop goes on serving meanwhile, and a request sent before it is
done waits for it.
"""

from __future__ import annotations

import importlib

import anyio
import anyio.to_thread
import httpx

__all__ = ["DeferredTransport"]


class DeferredTransport(httpx.AsyncBaseTransport):
    """An `AiohttpTransport` with `limits`, made by `prepare()`; requests wait for it.

    The owner runs `prepare()` in its task group when it starts (a request sent when
    `prepare()` never runs waits until it does).
    """

    def __init__(self, limits: httpx.Limits) -> None:
        self._limits = limits
        self._inner: httpx.AsyncBaseTransport | None = None
        self._ready = anyio.Event()

    async def prepare(self) -> None:
        """Import aiohttp in a worker thread, then build the transport."""
        await anyio.to_thread.run_sync(importlib.import_module, "httpx_aiohttp")
        from httpx_aiohttp import AiohttpTransport

        self._inner = AiohttpTransport(limits=self._limits)
        self._ready.set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._inner is None:
            await self._ready.wait()
        assert self._inner is not None
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
