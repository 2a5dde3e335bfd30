"""The hub's partner connections against a partner that closes the ones left idle: a request
never crosses the partner's close of an idle connection (which loses it: aiohttp reports the
partner unreachable, and a stream's opening request is not resent)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from hub.client import build_http_client
from hub.client.http_errors import translate_http_errors

pytestmark = pytest.mark.anyio

IDLE_CLOSE = 2.5
"""Seconds after which the partner closes an idle kept-alive connection; less than the 5 s
of uvicorn and of the hub's own server, so a client that keeps idle connections for less
than those 5 s and more than this one crosses it."""

_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


async def _serve(client: SocketStream) -> None:
    """Answer each request, except one arriving on a connection idle for `IDLE_CLOSE`: that
    connection is closed instead, as its close and the request would cross on the wire
    (where, on a busy machine, the close may reach the client only after it chose the
    connection for its next request)."""
    async with client:
        reader = BufferedByteReceiveStream(client)
        answered: float | None = None
        while True:
            try:
                head = await reader.receive_until(b"\r\n\r\n", 65536)
            except (anyio.IncompleteRead, anyio.EndOfStream):
                return
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.receive_exactly(length)
            if answered is not None and anyio.current_time() - answered >= IDLE_CLOSE:
                return
            await client.send(_ANSWER)
            answered = anyio.current_time()


@pytest.fixture
async def partner() -> AsyncIterator[str]:
    async with (
        await anyio.create_tcp_listener(local_host="127.0.0.1") as listener,
        anyio.create_task_group() as group,
    ):
        group.start_soon(listener.serve, _serve)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        yield f"http://127.0.0.1:{port}/"
        group.cancel_scope.cancel()


async def test_a_connection_the_partner_closes_as_idle_is_not_reused(partner: str) -> None:
    async with build_http_client() as http:
        with anyio.fail_after(30), translate_http_errors("idle-closer"):
            first = await http.post(partner, content=b"{}")
            # The connection must sit idle past the partner's close: this wait is the
            # scenario, not a wait for an event.
            await anyio.sleep(IDLE_CLOSE + 0.5)
            second = await http.post(partner, content=b"{}")

    assert (first.status_code, second.status_code) == (200, 200)
