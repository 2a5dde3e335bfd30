"""Server-Sent Events for task streams: the framing, with keep-alive comments on idle
streams, and the one sender of every event stream the hub answers (JSON-RPC, REST, the
console): raw ASGI messages until the stream ends or the client goes away."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
from litestar.response import Response
from litestar.response.base import ASGIResponse
from litestar.types import Receive, Scope, Send

from hub.tasks import TaskStream, Update

if TYPE_CHECKING:
    from litestar import Litestar, Request
    from litestar.background_tasks import BackgroundTask, BackgroundTasks
    from litestar.datastructures import Cookie
    from litestar.types import TypeEncodersMap

__all__ = ["KEEPALIVE", "SSE_HEADERS", "EventStream", "send_event_stream", "sse_frames"]

KEEPALIVE = b": keep-alive\n\n"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""What every A2A event stream carries: no cache, no proxy buffering."""


async def sse_frames(
    stream: TaskStream, render: Callable[[Update], bytes], *, keepalive: float
) -> AsyncGenerator[bytes, None]:
    """`data:` frames for every update of `stream`, a comment when idle for `keepalive`
    seconds; the subscription is released when the client goes away or the stream ends."""
    async with stream:
        while True:
            try:
                update = await stream.next_within(keepalive)
            except StopAsyncIteration:
                return
            if update is None:
                yield KEEPALIVE
                continue
            # Updates published together (one commit) leave in one write.
            frames = [b"data: " + render(update) + b"\n\n"]
            while (ready := stream.next_ready()) is not None:
                frames.append(b"data: " + render(ready) + b"\n\n")
            yield b"".join(frames)


async def send_event_stream(
    receive: Receive,
    send: Send,
    frames: AsyncGenerator[bytes, None],
    *,
    headers: Mapping[str, str],
    ended: Callable[[], bool] | None = None,
    on_exit: Callable[[], None] | None = None,
) -> None:
    """Answer with `frames` as a `text/event-stream` body, as raw ASGI messages.

    `ended()` says whether the chunk just taken was the stream's last (its closing update):
    that chunk then closes the body itself, one write fewer than an empty closing message.
    `on_exit()` is called however the answer stops (the stream ended, the client left, the
    body never started): the place to give back a caller's stream slot.

    The client's disconnect (`http.disconnect` from `receive`) stops the stream at once, even
    while it waits for an update: a watcher task waits for that message and cancels the
    stream's scope. It is a plain asyncio task (the server runs on uvicorn's asyncio loop),
    started with the response and canceled at its end: about 15 µs, where a task group with
    a spawned task, Litestar's `Stream`, costs about 60.
    """
    try:
        encoded = [(b"content-type", b"text/event-stream; charset=utf-8")]
        encoded.extend(
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
        )
        await send({"type": "http.response.start", "status": 200, "headers": encoded})
        with anyio.CancelScope() as scope:
            watcher = asyncio.get_running_loop().create_task(_stop_on_disconnect(receive, scope))
            try:
                async for chunk in frames:
                    last = ended is not None and ended()
                    await send({"type": "http.response.body", "body": chunk, "more_body": not last})
                    if last:
                        return
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                watcher.cancel()
    finally:
        try:
            await frames.aclose()
        finally:
            if on_exit is not None:
                on_exit()


async def _stop_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


class EventStream(Response[bytes]):
    """A route handler's answer as an event stream, sent by `send_event_stream`.

    Status 200, `text/event-stream`, `headers` plus those the route's layers add; the frames
    go out as the JSON-RPC endpoint sends its own, so a middleware wrapping `send` sees the
    same messages whichever binding answers. The hub's routes set no cookies and no
    background tasks on a stream; those of the layers are not sent.

    Args:
        frames: the body's chunks, closed when the answer stops.
        headers: extra response headers (e.g. `SSE_HEADERS` and extension echoes).
        ended: see `send_event_stream`.
        on_exit: see `send_event_stream`.
    """

    def __init__(
        self,
        frames: AsyncGenerator[bytes, None],
        *,
        headers: Mapping[str, str],
        ended: Callable[[], bool] | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(b"", headers=headers, media_type="text/event-stream", status_code=200)
        self.frames = frames
        self.ended = ended
        self.on_exit = on_exit

    def to_asgi_response(
        self,
        app: Litestar | None,
        request: Request[Any, Any, Any],
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Iterable[Cookie] | None = None,
        encoded_headers: Iterable[tuple[bytes, bytes]] | None = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> ASGIResponse:
        return _EventStreamApp(
            self.frames,
            {**headers, **self.headers} if headers else self.headers,
            self.ended,
            self.on_exit,
        )


class _EventStreamApp(ASGIResponse):
    """The ASGI app Litestar awaits for an `EventStream`. It is an `ASGIResponse` only by
    type (what `to_asgi_response` returns): none of that class's body or header state is
    built, since `send_event_stream` sends everything."""

    __slots__ = ("_ended", "_frames", "_headers", "_on_exit")

    def __init__(
        self,
        frames: AsyncGenerator[bytes, None],
        headers: Mapping[str, str],
        ended: Callable[[], bool] | None,
        on_exit: Callable[[], None] | None,
    ) -> None:
        self._frames = frames
        self._headers = headers
        self._ended = ended
        self._on_exit = on_exit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_event_stream(
            receive,
            send,
            self._frames,
            headers=self._headers,
            ended=self._ended,
            on_exit=self._on_exit,
        )
