"""Fan-out of task updates to subscribers, and the stream object a subscriber reads."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import TracebackType

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hub.protocol import StreamResponse

__all__ = ["Broadcast", "TaskStream", "Update"]


class Update:
    """One event as published to every subscriber of a task.

    The 1.0 stream item is built on first use: a blocking SendMessage with no subscriber
    never pays for events nobody reads.

    Attributes:
        closes_stream: True when this is the last event a stream carries (a terminal or
            interrupted state, or a direct Message).
    """

    __slots__ = ("_build", "_event", "_json", "closes_stream", "seq")

    def __init__(
        self,
        event: StreamResponse | Callable[[], StreamResponse],
        *,
        closes_stream: bool = False,
    ) -> None:
        self._event = event if isinstance(event, StreamResponse) else None
        self._build = None if isinstance(event, StreamResponse) else event
        self._json: bytes | None = None
        self.closes_stream = closes_stream
        self.seq = 0
        """The task's change number (0 for a snapshot)."""

    @property
    def event(self) -> StreamResponse:
        """The 1.0 stream item."""
        if self._event is None:
            assert self._build is not None
            self._event = self._build()
            self._build = None
        return self._event

    def json(self) -> bytes:
        """The event's wire JSON, serialised once however many subscribers send it."""
        if self._json is None:
            self._json = self.event.to_json()
        return self._json


class TaskStream:
    """The updates of one task as one subscriber sees them, ending after the closing update.

    Use as an async context manager, or call `aclose()`, so the subscription is released when
    the reader stops (a client that disconnects does not affect the task or other readers).
    """

    def __init__(
        self,
        receive: MemoryObjectReceiveStream[Update],
        on_close: Callable[[TaskStream], None] | None = None,
        after: int = 0,
    ) -> None:
        self._receive = receive
        self._on_close = on_close
        self._done = False
        self.after = after
        """Updates numbered up to this are already in the stream's first snapshot."""

    def __aiter__(self) -> TaskStream:
        return self

    @property
    def ended(self) -> bool:
        """Whether the stream's last update has been read (or the stream was closed)."""
        return self._done

    async def __anext__(self) -> Update:
        if self._done:
            raise StopAsyncIteration
        try:
            update = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._done = True
            raise StopAsyncIteration from None
        if update.closes_stream:
            self._done = True
        return update

    async def next_within(self, seconds: float) -> Update | None:
        """The next update, or None if none came within `seconds` (for keep-alives).

        Raises:
            StopAsyncIteration: the stream has ended.
        """
        ready = self.next_ready()
        if ready is not None:
            return ready
        with anyio.move_on_after(seconds):
            return await self.__anext__()
        return None

    def next_ready(self) -> Update | None:
        """The next update if one is already waiting, else None (never blocks)."""
        if self._done:
            return None
        try:
            update = self._receive.receive_nowait()
        except anyio.WouldBlock:
            return None
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._done = True
            return None
        if update.closes_stream:
            self._done = True
        return update

    async def aclose(self) -> None:
        self._done = True
        self._receive.close()
        if self._on_close is not None:
            self._on_close(self)
            self._on_close = None

    async def __aenter__(self) -> TaskStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class Broadcast:
    """Delivers each update to every open subscription of one task, in publication order.

    Publishing never waits: each subscriber has an unbounded buffer, so a slow reader cannot
    hold up the skill or the other readers.
    """

    def __init__(self) -> None:
        self._senders: dict[TaskStream, MemoryObjectSendStream[Update]] = {}
        self._streams: list[TaskStream] = []

    def subscribe(self, first: Update, *, after: int = 0) -> TaskStream:
        """A new subscription that starts with `first` (the task snapshot) and then gets
        every published update numbered above `after`."""
        send, receive = anyio.create_memory_object_stream[Update](math.inf)
        send.send_nowait(first)
        stream = TaskStream(receive, self._drop, after=after)
        if first.closes_stream:
            send.close()
            return stream
        self._streams.append(stream)
        self._senders[stream] = send
        return stream

    @staticmethod
    def single(update: Update) -> TaskStream:
        """A stream that carries one update and ends (a direct Message reply)."""
        send, receive = anyio.create_memory_object_stream[Update](1)
        send.send_nowait(update)
        send.close()
        return TaskStream(receive)

    def publish(self, update: Update) -> None:
        for stream in list(self._streams):
            if update.seq and update.seq <= stream.after:
                continue
            sender = self._senders[stream]
            try:
                sender.send_nowait(update)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._drop(stream)
                continue
            if update.closes_stream:
                sender.close()
                self._drop(stream)

    def _drop(self, stream: TaskStream) -> None:
        if stream in self._streams:
            self._streams.remove(stream)
        sender = self._senders.pop(stream, None)
        if sender is not None:
            sender.close()

    def close_all(self) -> None:
        for stream in list(self._streams):
            self._drop(stream)

    @property
    def subscriber_count(self) -> int:
        return len(self._streams)
