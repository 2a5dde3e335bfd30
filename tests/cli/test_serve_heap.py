"""`a2a-hub serve` sets what start-up built aside from the garbage collector, so full
collections under load walk only what the requests left behind (docs/benchmarks.md has
the CPU it saves)."""

from __future__ import annotations

import gc
import socket
from typing import Any

import anyio
import pytest
import uvicorn

from hub.cli.serve import FreezingServer

pytestmark = pytest.mark.anyio


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
    server = FreezingServer(uvicorn.Config(app, lifespan="on", log_config=None))
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
