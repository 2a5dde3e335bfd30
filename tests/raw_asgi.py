"""What the tests' small raw-ASGI servers (outside services played over real HTTP) share:
answering the lifespan and reading a request's whole body."""

from __future__ import annotations

from typing import Any

__all__ = ["read_request"]


async def read_request(scope: dict[str, Any], receive: Any, send: Any) -> bytes | None:
    """The request's whole body; None for the lifespan, which this answers to its end."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return None
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body
