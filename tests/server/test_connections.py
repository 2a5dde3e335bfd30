"""Connections on a real loopback server: one that does not deliver its request headers
within `server.header_timeout` is closed (also a kept-alive one that starts a further
request and stalls), an idle kept-alive one is closed after `server.idle_timeout`, and past
`server.max_connections` a new connection is answered 503 and closed, while the others are
served. Connections still sending their headers take no slot of the cap: they have a pool of
their own, and share of it per client address, where the oldest makes room for a new one."""

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

from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.server.pending import address_group
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.server.raw_connections import (
    HEALTH,
    HalfOpen,
    closed_by_server,
    kept_alive,
    one_response,
)

pytestmark = pytest.mark.anyio

HALF_SENT = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica"
"""A request cut off in its headers."""
WAIT = 10.0
"""Bound on the probes: well past the short deadlines the tests set, far below the defaults."""
CONNECT_WAIT = 30.0
"""Bound on a probe's connect. Under an attacker's churn the listen queue is often full and
the kernel drops a probe's SYN; the probe gets in on a retransmission (1, 3, 7, 15 s after the
first), which on a loaded machine can be the fourth."""


def hub_app() -> Litestar:
    settings = Settings(store=StoreSettings(kind="memory"))
    return create_app(settings, store=MemoryTaskStore(), skills={"echo": echo})


@asynccontextmanager
async def hub(**server: object) -> AsyncIterator[str]:
    """A hub on a loopback socket with these `server` settings; yields its URL."""
    settings = ServerSettings.model_validate(server)
    async with serve_on_loopback(hub_app(), settings=settings) as url:
        yield url


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


async def connect(url: str) -> SocketStream:
    return await anyio.connect_tcp("127.0.0.1", port_of(url))


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
    # The kept-alive connections hold their slots for the idle timeout after their answer:
    # long enough for the refused connection to be made and answered on a loaded machine.
    async with hub(idle_timeout=5, max_connections=4) as url, AsyncExitStack() as stack:
        kept = await kept_alive(port_of(url), 4, stack)  # each holds a slot until it closes
        refused_stream = await connect(url)
        stack.push_async_callback(refused_stream.aclose)
        await refused_stream.send(HEALTH)
        refused = await closed_by_server(refused_stream)
        # The kept-alive connections cannot hold the slots for longer than the idle timeout.
        answers = [await closed_by_server(stream) for stream in kept]
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


async def probes(url: str, count: int) -> list[int]:
    """The statuses of `count` GET /healthz, one after the other, each on a new connection."""
    statuses = []
    no_reuse = httpx.Limits(max_keepalive_connections=0)
    timeout = httpx.Timeout(WAIT, connect=CONNECT_WAIT)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=no_reuse) as http:
        for _ in range(count):
            statuses.append((await http.get("/healthz")).status_code)
    return statuses


async def test_connections_that_never_finish_their_headers_take_no_slot_of_the_cap() -> None:
    async with (
        hub(header_timeout=300, max_connections=4) as url,
        anyio.create_task_group() as group,
    ):
        attack = HalfOpen(port=int(url.rsplit(":", 1)[1]), count=30)
        await group.start(attack.run)
        served = await probes(url, 10)
        group.cancel_scope.cancel()
    assert served == [200] * 10
    assert attack.answered == 0


@pytest.mark.slow
async def test_half_open_connections_replaced_as_they_close_never_lock_clients_out() -> None:
    settings = {"header_timeout": 300, "max_connections": 4, "max_pending_per_address": 5}
    async with hub(**settings) as url, anyio.create_task_group() as group:
        attack = HalfOpen(port=int(url.rsplit(":", 1)[1]), count=60)
        await group.start(attack.run)
        served: list[int] = []
        start = attack.replaced
        with anyio.fail_after(120):
            # Probes, at least 20, until the server has closed (and the attacker reopened)
            # three times as many connections as it keeps since the first.
            while len(served) < 20 or attack.replaced - start < 180:
                served += await probes(url, 1)
        group.cancel_scope.cancel()
    assert set(served) == {200}
    assert attack.answered == 0


async def pending(url: str, source: str, count: int, stack: AsyncExitStack) -> list[SocketStream]:
    """`count` connections from `source` that have sent part of their headers, in order."""
    streams = []
    for _ in range(count):
        stream = await anyio.connect_tcp("127.0.0.1", int(url.rsplit(":", 1)[1]), local_host=source)
        stack.push_async_callback(stream.aclose)
        await stream.send(HEALTH[:10])
        streams.append(stream)
    return streams


async def finish(streams: list[SocketStream]) -> list[bytes]:
    """The status lines of the answers once each connection sends the rest of its request."""
    answers = []
    for stream in streams:
        await stream.send(HEALTH[10:])
        answers.append((await one_response(stream)).split(b"\r\n", 1)[0])
    return answers


async def test_past_its_share_an_address_makes_room_by_losing_its_oldest_waiting_connection() -> (
    None
):
    settings = {"header_timeout": 300, "max_connections": 10, "max_pending_per_address": 3}
    async with hub(**settings) as url, AsyncExitStack() as stack:
        others = await pending(url, "127.0.0.1", 3, stack)
        flood = await pending(url, "127.0.0.2", 4, stack)
        dropped = await closed_by_server(flood[0])
        served = await finish(flood[1:] + others)
    assert dropped == b""
    assert served == [b"HTTP/1.1 200 OK"] * 6


async def test_past_max_pending_connections_the_oldest_waiting_connection_makes_room() -> None:
    settings = {"header_timeout": 300, "max_connections": 10, "max_pending_connections": 4}
    async with hub(**settings) as url, AsyncExitStack() as stack:
        first = await pending(url, "127.0.0.2", 2, stack)
        second = await pending(url, "127.0.0.3", 2, stack)
        # An address with connections waiting already gives up its own oldest...
        more = await pending(url, "127.0.0.3", 1, stack)
        dropped_own = await closed_by_server(second[0])
        # ...one with none the oldest of all.
        newcomer = await pending(url, "127.0.0.4", 1, stack)
        dropped_oldest = await closed_by_server(first[0])
        served = await finish([first[1], second[1], *more, *newcomer])
    assert (dropped_own, dropped_oldest) == (b"", b"")
    assert served == [b"HTTP/1.1 200 OK"] * 4


async def test_admitted_connections_keep_being_served_while_others_are_refused() -> None:
    async with hub(max_connections=2, idle_timeout=300) as url, AsyncExitStack() as stack:
        kept = await kept_alive(port_of(url), 2, stack)
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
    for wrong in (
        {"header_timeout": 0},
        {"idle_timeout": "-1s"},
        {"max_connections": 0},
        {"max_pending_connections": 0},
        {"max_pending_per_address": 0},
    ):
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
    assert (defaults.max_pending_connections, defaults.max_pending_per_address) == (1000, 100)


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


def test_waiting_connections_are_counted_by_address_an_ipv6_one_by_its_network() -> None:
    assert address_group("192.0.2.7") == "192.0.2.7"
    assert address_group("::ffff:192.0.2.7") == "192.0.2.7"  # IPv4 on a dual-stack socket
    assert address_group("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert address_group("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_group("2001:db8:1:3::1") == "2001:db8:1:3::/64"
    assert address_group("") == ""
