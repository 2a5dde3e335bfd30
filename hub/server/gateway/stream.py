"""A partner's event stream as a `TaskStream`, so the bindings render it like the hub's own.

A pump task reads the partner's stream (`A2AClient.stream` / `subscribe`, which resume after a
cut) into a small buffer the caller's `TaskStream` reads. The pump is needed because the
bindings wait on the stream with a timeout (for keep-alives), and such a timeout must not cut
a read of the partner's stream half-way.

The pumps belong to `PartnerStreams`, which the app's lifespan owns: a pump ends when the
partner's stream does, when the caller goes away (its `TaskStream` is closed, which cancels
the pump and so closes the partner connection), or when the hub stops.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType

import anyio
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hub.client.stream_end import StreamEnd
from hub.errors import PartnerUnavailableError, ProtocolError
from hub.protocol import StreamResponse
from hub.protocol.trace import CallScope, current_scope, use_scope
from hub.server.gateway.errors import partner_errors
from hub.tasks import TaskStream, Update

__all__ = ["PartnerEvents", "PartnerStreams"]

log = logging.getLogger("hub.server.gateway")

PartnerEvents = Callable[[], AbstractAsyncContextManager[AsyncIterator[StreamResponse]]]
"""Opens the partner's stream: `lambda: client.stream(message)`."""

_BUFFER = 32
"""Events read ahead of a slow caller; beyond it the partner's connection is not read."""


class PartnerStreams:
    """The gateway's open partner streams. Use as an async context manager (the app's
    lifespan): leaving it ends every stream."""

    def __init__(self) -> None:
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> PartnerStreams:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(exc_type, exc, tb)

    async def open(
        self, events: PartnerEvents, *, agent_name: str, known_task: bool = False
    ) -> TaskStream:
        """The partner's stream, once its first event has come. It is relayed up to its
        end: a terminal state, or an interrupted one that is news to the caller; with
        `known_task` (a follow-up to a waiting task, a subscription) a snapshot of the waiting
        state is relayed without ending it (`StreamEnd`).

        Waiting for it means a refusal (task not found, unreachable, ...) is raised here, as
        the error the caller gets, instead of cutting a stream already begun.

        Raises:
            ProtocolError: the partner failed before its first event (`partner_errors`).
        """
        if self._group is None:
            raise PartnerUnavailableError(
                f"agent '{agent_name}' cannot be streamed from: the hub is stopping"
            )
        send, receive = anyio.create_memory_object_stream[Update](_BUFFER)
        cancel = anyio.CancelScope()
        failure: ProtocolError | None = await self._group.start(
            _pump,
            events,
            send,
            cancel,
            agent_name,
            current_scope(),
            StreamEnd(known_task=known_task),
        )
        if failure is not None:
            receive.close()
            raise failure
        stream = TaskStream(receive, on_close=lambda _stream: stop())
        # A response dropped before its body began (its client gone at once) never closes the
        # stream: the pump is then stopped when the stream is garbage.
        stop = weakref.finalize(stream, _stop, cancel, receive)
        stop.atexit = False
        return stream


def _stop(cancel: anyio.CancelScope, receive: MemoryObjectReceiveStream[Update]) -> None:
    receive.close()
    # Without an event loop any more, the pump has ended with it.
    with contextlib.suppress(RuntimeError):
        cancel.cancel()


async def _pump(
    events: PartnerEvents,
    send: MemoryObjectSendStream[Update],
    cancel: anyio.CancelScope,
    agent_name: str,
    scope: CallScope | None,
    end: StreamEnd,
    *,
    task_status: TaskStatus[ProtocolError | None],
) -> None:
    """Read the partner's stream into `send` until it ends; report the first event (None) or
    the failure before it through `task_status`. Never raises: a pump's failure must not end
    the other callers' streams."""
    started = False
    with cancel, send:
        try:
            # The caller's trace, deadline and trail go with every request the pump sends.
            with use_scope(scope), partner_errors(agent_name):
                async with events() as stream:
                    async for event in stream:
                        update = Update(event, closes_stream=end.is_final(event))
                        await send.send(update)
                        if not started:
                            started = True
                            task_status.started(None)
                        if update.closes_stream:
                            return
            if not started:  # the client raises first; kept for a stream that just ends
                started = True
                task_status.started(
                    PartnerUnavailableError(
                        f"agent '{agent_name}' ended its stream before its first event",
                        metadata={"agent": agent_name},
                    )
                )
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the caller went away between two events
        except ProtocolError as error:
            if not started:
                task_status.started(error)
                return
            # The stream is under way: it can only end. The caller reads the task's state
            # with GetTask or SubscribeToTask.
            log.info(
                "gateway: the stream from agent '%s' ended early: %s", agent_name, error.message
            )
        except Exception:
            log.exception("gateway: agent '%s' stream failed", agent_name)
            if not started:
                task_status.started(
                    PartnerUnavailableError(
                        f"agent '{agent_name}' could not be streamed from; the hub's log has "
                        "the details",
                        metadata={"agent": agent_name},
                    )
                )
