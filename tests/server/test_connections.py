"""Connections on a real loopback server: one that does not deliver its request headers
within `server.header_timeout` is closed (also a kept-alive one that starts a further
request and stalls), an idle kept-alive one is closed after `server.idle_timeout`, and past
`server.max_connections` a new connection is answered 503 and closed, while the others are
served."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx
import pytest
from anyio.abc import SocketStream
from litestar import Litestar

from hub.config import ServerSettings, Settings, StoreSettings
from hub.server import create_app
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

pytestmark = pytest.mark.anyio

HALF_SENT = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica"
"""A request cut off in its headers."""
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
WAIT = 10.0
"""Bound on every wait: well past the short deadlines the tests set, far below the defaults."""


def hub_app() -> Litestar:
    settings = Settings(store=StoreSettings(kind="memory"))
    return create_app(settings, store=MemoryTaskStore(), skills={"echo": echo})


@asynccontextmanager
async def hub(**server: object) -> AsyncIterator[str]:
    """A hub on a loopback socket with these `server` settings; yields its URL."""
    settings = ServerSettings.model_validate(server)
    async with serve_on_loopback(hub_app(), settings=settings) as url:
        yield url


async def connect(url: str) -> SocketStream:
    port = int(url.rsplit(":", 1)[1])
    return await anyio.connect_tcp("127.0.0.1", port)


async def closed_by_server(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with anyio.fail_after(WAIT):
        while True:
            try:
                received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
                return received


async def one_response(stream: SocketStream) -> bytes:
    """One response without a body in chunks: up to its declared length."""
    received = b""
    with anyio.fail_after(WAIT):
        while b"\r\n\r\n" not in received:
            received += await stream.receive()
        head, _, body = received.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += await stream.receive()
    return head


async def test_half_sent_connections_are_closed_after_the_header_timeout() -> None:
    async with hub(header_timeout=1, max_connections=50) as url, AsyncExitStack() as stack:
        stalled = []
        for _ in range(20):
            stream = await connect(url)
            stack.push_async_callback(stream.aclose)
            await stream.send(HALF_SENT)
            stalled.append(stream)
        async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
            served = await http.get("/healthz")
        # A closed connection reads as its end: nothing was ever answered on it.
        answers = [await closed_by_server(stream) for stream in stalled]
    assert served.status_code == 200
    assert answers == [b""] * 20


async def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout() -> None:
    async with hub(header_timeout=1) as url:
        stream = await connect(url)
        async with stream:
            assert await closed_by_server(stream) == b""


async def test_a_kept_alive_connection_that_stalls_in_a_further_request_is_closed() -> None:
    async with hub(header_timeout=1, idle_timeout=300) as url:
        stream = await connect(url)
        async with stream:
            await stream.send(HEALTH)
            first = await one_response(stream)
            await stream.send(HEALTH[:20])
            after = await closed_by_server(stream)
    assert first.startswith(b"HTTP/1.1 200 ")
    assert after == b""


async def test_an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() -> None:
    async with hub(header_timeout=300, idle_timeout=1) as url:
        stream = await connect(url)
        async with stream:
            await stream.send(HEALTH)
            first = await one_response(stream)
            after = await closed_by_server(stream)
    assert first.startswith(b"HTTP/1.1 200 ")
    assert after == b""


async def test_over_the_connection_cap_a_client_gets_a_clear_503_until_slots_free_up() -> None:
    async with hub(header_timeout=1, max_connections=4) as url, AsyncExitStack() as stack:
        stalled = []
        for _ in range(4):
            stream = await connect(url)
            stack.push_async_callback(stream.aclose)
            await stream.send(HALF_SENT)
            stalled.append(stream)
        # The server accepts connections in the order they came: these four hold every slot.
        refused_stream = await connect(url)
        stack.push_async_callback(refused_stream.aclose)
        await refused_stream.send(HEALTH)
        refused = await closed_by_server(refused_stream)
        # The half-sent connections cannot hold the slots for longer than the header timeout.
        answers = [await closed_by_server(stream) for stream in stalled]
        async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
            served = await http.get("/healthz")
    head, _, body = refused.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    assert lines[0] == b"http/1.1 503 service unavailable"
    assert b"retry-after: 1" in lines
    assert b"connection: close" in lines
    assert body == b"too many connections (server.max_connections); retry shortly\n"
    assert answers == [b""] * 4
    assert served.status_code == 200


async def test_admitted_connections_keep_being_served_while_others_are_refused() -> None:
    async with hub(max_connections=2, idle_timeout=300) as url, AsyncExitStack() as stack:
        kept = []
        for _ in range(2):
            stream = await connect(url)
            stack.push_async_callback(stream.aclose)
            await stream.send(HEALTH)
            assert (await one_response(stream)).startswith(b"HTTP/1.1 200 ")
            kept.append(stream)
        async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
            refused = await http.get("/healthz")
        for stream in kept:
            await stream.send(HEALTH)
            assert (await one_response(stream)).startswith(b"HTTP/1.1 200 ")
        # A connection the server has closed has given its slot back.
        await kept[0].send(HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        await closed_by_server(kept[0])
        async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
            served = await http.get("/healthz")
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert served.status_code == 200


def test_connection_settings_are_checked() -> None:
    for wrong in ({"header_timeout": 0}, {"idle_timeout": "-1s"}, {"max_connections": 0}):
        with pytest.raises(ValueError, match=next(iter(wrong))):
            ServerSettings.model_validate(wrong)
    parsed = ServerSettings.model_validate(
        {"header_timeout": "2.5s", "idle_timeout": "1m", "max_connections": 10}
    )
    assert (parsed.header_timeout, parsed.idle_timeout, parsed.max_connections) == (2.5, 60, 10)
    defaults = ServerSettings()
    assert (defaults.header_timeout, defaults.idle_timeout, defaults.max_connections) == (
        10.0,
        5.0,
        1000,
    )


async def test_a_websocket_upgrade_is_answered_as_plain_http() -> None:
    upgrade = (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
        b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    async with hub(max_connections=1, idle_timeout=300) as url:
        stream = await connect(url)
        async with stream:
            await stream.send(upgrade)
            answer = await one_response(stream)
            await stream.send(HEALTH)
            again = await one_response(stream)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert again.startswith(b"HTTP/1.1 200 ")


def fitted_limits(soft: int, hard: int, max_connections: int) -> tuple[list[int], str]:
    """(soft, hard) open-files limits after `fit_open_files_limit(max_connections)` in a
    fresh process started with `soft` and `hard` (so this one's limits stay as they are),
    and what it logged."""
    program = (
        "import logging, resource, sys\n"
        "logging.basicConfig(stream=sys.stderr, format='%(levelname)s %(message)s')\n"
        "from hub.server.connections import fit_open_files_limit\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard}))\n"
        f"fit_open_files_limit({max_connections})\n"
        "print(*resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    return [int(value) for value in done.stdout.split()], done.stderr


def test_the_open_files_limit_is_raised_to_make_room_for_the_connection_cap() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1000:
        pytest.skip(f"the hard open-files limit here ({hard}) is too low to show it")
    limits, logged = fitted_limits(64, 1000, 100)
    assert limits == [2 * 100 + 256, 1000]
    assert logged == ""


def test_a_cap_the_open_files_limit_cannot_hold_is_warned_about() -> None:
    limits, logged = fitted_limits(64, 300, 100)
    assert limits == [300, 300]
    assert logged.startswith("WARNING the open-files limit (300) leaves too little room")
    assert "(server.max_connections)" in logged
