"""`RemoteAgentTool`: a partner agent as a tool, named `a2a_<agent>`.

A call sends one message and waits until the partner's task settles: completed, failed,
canceled, rejected, or stopped on a question (input-required, auth-required). A partner that
streams is followed over its stream (resumed if cut); one that does not is sent the message and
then polled with GetTask, with back-off, while its task is still running. The whole call ends
within the partner's `timeout.deadline` and the caller's own deadline, whichever comes first.
A call given up on (canceled, or past its deadline) cancels the partner's task, once the
partner has named it. Inside a running skill the caller leaves at once and the delegation
ledger's task group sees to that (`in_background`), waiting for the name at most
five minutes; elsewhere the caller waits for it, at most 5 s (`hub.tools.detached`). A stream
given up on before an event named the partner's task does the same.

Every partner task a call sees is reported to the delegation ledger (`note_child`), which
records it under the hub task whose skill made the call; each call is a branch of that task's
live tree (`calling`), which the partner's states and streamed chunks change as they arrive.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from hub.client import A2AClient
from hub.errors import (
    AgentTimeoutError,
    ClientError,
    InvalidAgentResponseError,
    ProtocolError,
)
from hub.protocol import AgentCard, Message, StreamResponse, Task, TaskState
from hub.protocol.trace import past_the_deadline
from hub.tasks.ledger import calling, note_child
from hub.tools.arguments import input_schema, parse_arguments
from hub.tools.base import DefinedTool, ToolDefinition
from hub.tools.describe import describe_agent, tool_name
from hub.tools.detached import CANCEL_WAIT, DetachedCall, Pending, RelayedEvents, to_the_end
from hub.tools.result import TaskFold, ToolResult

__all__ = ["TOOL_PREFIX", "RemoteAgentTool"]

TOOL_PREFIX = "a2a_"
_POLL_FIRST = 0.05
_POLL_MAX = 2.0

ClientSource = Callable[[], Awaitable[A2AClient]]


class RemoteAgentTool(DefinedTool):
    """Partner `agent` as a tool, described by its card as it was when the tool was built.

    Args:
        agent: the partner's name in agents.yaml.
        card: its card, when it could be read (the description and the skill enum come from
            it); None gives a generic description.
        client: returns the partner's client (reading its card first if need be).
        unreachable: why its card could not be read, when it could not (without a card).
    """

    def __init__(
        self,
        agent: str,
        card: AgentCard | None,
        client: ClientSource,
        *,
        unreachable: str | None = None,
    ) -> None:
        self.agent = agent
        self.card = card
        self.unreachable = unreachable
        self.skills = tuple(skill.id for skill in card.skills) if card else ()
        self.definition = ToolDefinition(
            name=tool_name(TOOL_PREFIX, agent),
            description=describe_agent(agent, card, unreachable=unreachable),
            input_schema=input_schema(self.skills),
        )
        self._client = client

    def __repr__(self) -> str:
        return f"RemoteAgentTool({self.name!r}, agent={self.agent!r})"

    async def call(self, **arguments: Any) -> ToolResult:
        """Send the message and wait for the partner's task to settle.

        Raises:
            InvalidParamsError: the arguments do not match the schema.
            ClientError: the partner is unreachable, too slow, refused the call, or broke
                the protocol (`RemoteRpcError` carries its error code and data).
        """
        args = parse_arguments(self.name, arguments, self.skills)
        client = await self._client()
        message = await _in_its_context(client, args.to_message())
        metadata = args.metadata()
        limit = client.deadline()
        follow = _follow_stream if client.card.capabilities.streaming else _send_and_poll
        with calling(self.agent, args.task_id) as branch:
            try:
                # A cancel scope costs; a call with no deadline goes without one.
                with anyio.fail_after(limit) if limit is not None else contextlib.nullcontext():
                    reply = await to_the_end(
                        DetachedCall(
                            self.agent,
                            self.cancel,
                            lambda pending: follow(client, message, metadata, pending),
                        )
                    )
            except TimeoutError:
                raise AgentTimeoutError(
                    f"agent '{self.agent}' did not settle the task within the deadline "
                    f"({limit:.3g} s)"
                ) from None
            result = ToolResult.from_reply(self.name, self.agent, reply)
            if branch is not None:
                branch.settle(
                    result.state,
                    answer=result.text if result.ok else None,
                    error=None if result.ok or result.needs_input else result.message,
                    seconds=None,
                )
        return result

    async def cancel(self, task_id: str) -> TaskState | None:
        """Cancel the partner's task `task_id`, also from a caller that is being canceled
        itself (shielded, at most `CANCEL_WAIT` seconds). A task that has already ended, or a
        partner that is gone, leaves nothing to stop and is not an error.

        Returns:
            The task's state after the cancel, or None when the partner did not say.
        """
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(CANCEL_WAIT),
            past_the_deadline(),
            contextlib.suppress(ClientError, ProtocolError),
        ):
            client = await self._client()
            task = await client.cancel(task_id)
            note_child(self.agent, task.id, task.status.state)
            return task.status.state
        return None

    @asynccontextmanager
    async def stream(self, **arguments: Any) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        """The partner's events for one message, as they come: `async with tool.stream(
        message="...") as events: ...`. A partner that does not stream yields its one answer.

        A caller who gives up (is canceled) after an event named the partner's task cancels
        that task itself if it wants it stopped; one who gives up before leaves it to the
        stream, which still waits for the name (as a call does) and cancels the task then.
        """
        args = parse_arguments(self.name, arguments, self.skills)
        client = await self._client()
        message = await _in_its_context(client, args.to_message())
        metadata = args.metadata()
        send, receive = anyio.create_memory_object_stream[StreamResponse]()

        async def deliver(event: StreamResponse) -> None:
            # A caller who gave up reads no more: the follow goes on without it.
            with contextlib.suppress(anyio.BrokenResourceError):
                await send.send(event)

        async def follow(pending: Pending) -> None:
            with send:
                if not client.card.capabilities.streaming:
                    reply = await _send_and_poll(client, message, metadata, pending)
                    await deliver(_as_event(reply))
                    return
                async with client.stream(message, metadata=metadata) as events:
                    async for event in events:
                        pending.heard(event)
                        await deliver(event)

        detached = DetachedCall(self.agent, self.cancel, follow)
        relayed = RelayedEvents(receive, detached)
        with calling(self.agent, args.task_id):
            async with detached.running():
                with receive:
                    try:
                        yield relayed
                    except anyio.get_cancelled_exc_class():
                        if not relayed.named:
                            await detached.give_up()
                        raise
                    finally:
                        if not detached.given_up:
                            detached.stop()

    @asynccontextmanager
    async def follow(self, task_id: str) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        """The events of the partner's task `task_id`, started earlier (by a run of the same
        hub task before its hub restarted): the task as it is now, then, while it runs, its
        changes (subscribed to when the partner streams, polled otherwise). Each state seen is
        reported to the delegation ledger."""
        client = await self._client()
        task = await client.get_task(task_id)
        note_child(self.agent, task.id, task.status.state)

        async def events() -> AsyncIterator[StreamResponse]:
            yield StreamResponse(task=task)
            if task.status.state.is_terminal or task.status.state.is_interrupted:
                return
            if client.card.capabilities.streaming:
                async with client.subscribe(task_id) as updates:
                    async for event in updates:
                        if event.task is not None:
                            note_child(self.agent, event.task.id, event.task.status.state)
                        elif event.status_update is not None:
                            note_child(self.agent, task_id, event.status_update.status.state)
                        yield event
                return
            delay = _POLL_FIRST
            while True:
                await anyio.sleep(delay)
                delay = min(delay * 2, _POLL_MAX)
                current = await client.get_task(task_id)
                note_child(self.agent, current.id, current.status.state)
                yield StreamResponse(task=current)
                if current.status.state.is_terminal or current.status.state.is_interrupted:
                    return

        stream = events()
        try:
            yield stream
        finally:
            await stream.aclose()  # type: ignore[attr-defined]


def _as_event(reply: Task | Message) -> StreamResponse:
    if isinstance(reply, Message):
        return StreamResponse(message=reply)
    return StreamResponse(task=reply)


async def _in_its_context(client: A2AClient, message: Message) -> Message:
    """`message`, a follow-up given without its context id given the task's own: some
    partners (the a2a-sdk 1.3 server) otherwise answer in a fresh context, and refuse the
    task's next turn."""
    if not message.task_id or message.context_id:
        return message
    task = await client.get_task(message.task_id)
    return message.model_copy(update={"context_id": task.context_id})


async def _follow_stream(
    client: A2AClient, message: Message, metadata: dict[str, Any] | None, pending: Pending
) -> Task | Message:
    fold = TaskFold(follow_up=bool(message.task_id))
    async with client.stream(message, metadata=metadata) as events:
        async for event in events:
            fold.add(event)
            pending.streamed(event)
            if fold.task is not None:
                pending.seen(fold.task)
            if fold.settled:
                break
    reply = fold.reply()
    if reply is None:
        raise InvalidAgentResponseError(
            f"agent '{client.agent_name}' ended its stream without a task or a message"
        )
    if isinstance(reply, Task) and not fold.settled:
        # The stream ended (resumed as far as it could) before the task settled.
        return await _poll(client, reply, pending)
    return reply


async def _send_and_poll(
    client: A2AClient, message: Message, metadata: dict[str, Any] | None, pending: Pending
) -> Task | Message:
    reply = await client.send(message, metadata=metadata)
    if isinstance(reply, Message):
        return reply
    return await _poll(client, reply, pending)


async def _poll(client: A2AClient, task: Task, pending: Pending) -> Task:
    delay = _POLL_FIRST
    while True:
        settled = task.status.state.is_terminal or task.status.state.is_interrupted
        pending.seen(task)
        if settled:
            return task
        await anyio.sleep(delay)
        delay = min(delay * 2, _POLL_MAX)
        task = await client.get_task(task.id)
