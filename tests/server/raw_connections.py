"""Raw HTTP/1.1 on loopback sockets: one response read to its declared length, what a server
sends until it closes, and a client that keeps connections half-open (each sends part of a
request line, or nothing at all, and waits; when the server closes it, a new one takes its
place at once, until the test cancels it)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass

import anyio
import anyio.lowlevel
from anyio.abc import SocketStream, TaskStatus

WAIT = 10.0
"""Bound on each read: well past the short deadlines the tests set, far below the defaults."""
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
"""A whole request, answered without closing the connection."""
PARTIAL = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica"
"""A request cut off in its headers (every other connection sends nothing)."""


@dataclass
class HalfOpen:
    """`count` half-open connections to 127.0.0.1:`port` from the loopback address `source`.

    Attributes:
        replaced: connections the server closed, each replaced by a new one.
        answered: connections on which the server sent anything before closing (it should
            close them without an answer).
    """

    port: int
    count: int
    source: str = "127.0.0.2"
    replaced: int = 0
    answered: int = 0

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open every connection (one after the other, so the server accepts them in that
        order), report started, then keep them open until cancelled."""
        async with anyio.create_task_group() as group:
            for index in range(self.count):
                await group.start(self._hold, index)
            task_status.started()

    async def _hold(self, index: int, *, task_status: TaskStatus[None]) -> None:
        started = False
        while True:
            stream = await self._connect()
            async with stream:
                if index % 2:
                    await stream.send(PARTIAL)
                if not started:
                    started = True
                    task_status.started()
                if await _until_closed(stream):
                    self.answered += 1
            self.replaced += 1

    async def _connect(self) -> SocketStream:
        while True:
            try:
                return await anyio.connect_tcp("127.0.0.1", self.port, local_host=self.source)
            except OSError:
                # The server's listen queue overflowed under the churn: try again, as an
                # attacker would.
                await anyio.lowlevel.checkpoint()


async def _until_closed(stream: SocketStream) -> bytes:
    """What the server sends until it closes the connection."""
    received = b""
    while True:
        try:
            received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return received


async def closed_by_server(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    with anyio.fail_after(WAIT):
        return await _until_closed(stream)


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


async def kept_alive(port: int, count: int, stack: AsyncExitStack) -> list[SocketStream]:
    """`count` connections to 127.0.0.1:`port`, each with one request answered, so each holds
    a slot of the server's connection cap; `stack` closes them."""
    kept = []
    for _ in range(count):
        stream = await anyio.connect_tcp("127.0.0.1", port)
        stack.push_async_callback(stream.aclose)
        await stream.send(HEALTH)
        assert (await one_response(stream)).startswith(b"HTTP/1.1 200 ")
        kept.append(stream)
    return kept
