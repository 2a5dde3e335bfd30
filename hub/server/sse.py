"""Server-Sent Events framing for task streams, with keep-alive comments on idle streams."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from hub.tasks import TaskStream, Update

__all__ = ["KEEPALIVE", "sse_frames"]

KEEPALIVE = b": keep-alive\n\n"


async def sse_frames(
    stream: TaskStream,
    render: Callable[[Update], bytes],
    *,
    keepalive: float,
    on_close: Callable[[], None] | None = None,
) -> AsyncIterator[bytes]:
    """`data:` frames for every update of `stream`, a comment when idle for `keepalive`
    seconds; the subscription is released (and `on_close` called) when the client goes away
    or the stream ends."""
    try:
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
    finally:
        if on_close is not None:
            on_close()
