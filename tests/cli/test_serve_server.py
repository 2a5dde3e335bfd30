"""What `a2a-hub serve`'s server does at start-up: it names asyncio for sniffio in what
every request inherits, and sets what start-up built aside from the garbage collector, so
full collections under load walk only what the requests left behind (docs/benchmarks.md has
the CPU each saves)."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import socket
from typing import Any

import anyio
import httpx
import pytest
import sniffio
import uvicorn

from hub.cli.serve import HubServer


@pytest.mark.anyio
async def test_what_the_lifespan_built_is_frozen_once_the_server_has_started() -> None:
    built: list[object] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                built.append(["made", "at start-up"])
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = HubServer(uvicorn.Config(app, lifespan="on", log_config=None))
    frozen_before = gc.get_freeze_count()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                while not server.started:  # noqa: ASYNC110 (uvicorn sets a flag, no event)
                    await anyio.sleep(0.01)
            assert built, "the lifespan ran"
            assert gc.get_freeze_count() > frozen_before
            # The collector's generations no longer hold it: it is in the permanent one.
            assert not any(obj is built[0] for obj in gc.get_objects())
            assert gc.is_tracked(built[0])
            server.should_exit = True
    finally:
        gc.unfreeze()
        sock.close()


@pytest.mark.parametrize(
    ("server_class", "named"), [(uvicorn.Server, None), (HubServer, "asyncio")]
)
def test_requests_run_with_asyncio_named_for_sniffio(
    server_class: type[uvicorn.Server], named: str | None
) -> None:
    """Plain uvicorn leaves sniffio to sniff on every question; the hub's server names the
    library once. Run on a bare asyncio loop in an empty context: a test runner's own loop
    may name it already."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = repr(sniffio.current_async_library_cvar.get()).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})

    async def main() -> str:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = server_class(uvicorn.Config(app, lifespan="on", log_config=None))
        task = asyncio.create_task(server.serve([sock]))
        try:
            async with asyncio.timeout(10):
                while not server.started:  # noqa: ASYNC110 (uvicorn sets a flag, no event)
                    await asyncio.sleep(0.01)
                port = sock.getsockname()[1]
                async with httpx.AsyncClient() as client:
                    answer = await client.get(f"http://127.0.0.1:{port}/")
            return answer.text
        finally:
            server.should_exit = True
            await task
            gc.unfreeze()
            sock.close()

    assert contextvars.Context().run(asyncio.run, main()) == repr(named)
