"""Server-Sent Events for the console's live pages.

A task page follows the task through the same subscription the A2A endpoints serve
(`SubscribeToTask`, framed by the same `sse_frames`); a chat turn streams the events of the
message it sent (`SendStreamingMessage`), framed the same way; the partners page and the
overview hear when what they show has changed. Every stream ends with an `end` event, and
counts against the caller's open streams like any other.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable

import anyio
from litestar.response import Response

from hub.console.access import AnyRequest, Visitor, hub_of
from hub.errors import ProtocolError
from hub.server.gate import StreamSlot
from hub.server.sse import KEEPALIVE, EventStream, sse_frames
from hub.tasks import TaskStream, Update

__all__ = ["END", "change_stream", "ended_stream", "task_stream", "turn_stream"]

END = b"event: end\ndata: {}\n\n"
CHANGED = b"data: {}\n\n"
_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def _refused(error: ProtocolError) -> Response[bytes]:
    return Response(
        content=error.message.encode(), status_code=error.http_status, media_type="text/plain"
    )


def _counted(slot: StreamSlot, frames: AsyncGenerator[bytes, None]) -> EventStream:
    """`frames` as an event stream whose slot is given back however it stops."""
    return EventStream(frames, headers=_HEADERS, on_exit=slot.release)


def ended_stream() -> Response[bytes]:
    """A stream with nothing to say, for a page that shows all there is: `end` at once."""
    return Response(content=END, media_type="text/event-stream", headers=_HEADERS)


async def task_stream(
    request: AnyRequest, visitor: Visitor, subscribe: Callable[[], Awaitable[TaskStream]]
) -> Response[bytes]:
    """The task's updates as they are committed, then `end`. A task with nothing more to
    say (ended, or waiting for an answer) gets `end` at once: the page shows it already."""
    hub = hub_of(request)
    try:
        slot = hub.gate.open_stream(visitor.caller)
    except ProtocolError as error:
        return _refused(error)
    try:
        stream: TaskStream | None = await subscribe()
    except ProtocolError as error:
        if error.http_status == 404:
            slot.release()
            return _refused(error)
        stream = None
    return _counted(slot, _events(stream, keepalive=hub.settings.server.keepalive))


async def turn_stream(
    request: AnyRequest, visitor: Visitor, start: Callable[[], Awaitable[TaskStream]]
) -> Response[bytes]:
    """The events of the message `start()` sends, as the A2A endpoints stream them (one
    `data:` frame of StreamResponse JSON each), then `end`. What the operation refuses is
    answered with its status and message, before any event."""
    hub = hub_of(request)
    try:
        slot = hub.gate.open_stream(visitor.caller)
    except ProtocolError as error:
        return _refused(error)
    try:
        stream = await start()
    except ProtocolError as error:
        slot.release()
        return _refused(error)
    except BaseException:
        slot.release()
        raise
    return _counted(slot, _events(stream, keepalive=hub.settings.server.keepalive))


async def _events(stream: TaskStream | None, *, keepalive: float) -> AsyncGenerator[bytes, None]:
    if stream is not None:
        async for chunk in sse_frames(stream, Update.json, keepalive=keepalive):
            yield chunk
    yield END


async def change_stream(
    request: AnyRequest,
    visitor: Visitor,
    fingerprint: Callable[[], Awaitable[object]],
    *,
    interval: float,
) -> Response[bytes]:
    """An event whenever `fingerprint()` gives something new (looked at every `interval`
    seconds), a keep-alive comment now and then, until the page goes away."""
    hub = hub_of(request)
    try:
        slot = hub.gate.open_stream(visitor.caller)
    except ProtocolError as error:
        return _refused(error)
    keepalive = hub.settings.server.keepalive

    async def frames() -> AsyncGenerator[bytes, None]:
        last = await fingerprint()
        quiet = 0.0
        while True:
            await anyio.sleep(interval)
            now = await fingerprint()
            if now != last:
                last, quiet = now, 0.0
                yield CHANGED
                continue
            quiet += interval
            if quiet >= keepalive:
                quiet = 0.0
                yield KEEPALIVE

    return _counted(slot, frames())
