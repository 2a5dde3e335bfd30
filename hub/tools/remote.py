"""`RemoteAgentTool`: a partner agent as a tool, named `a2a_<agent>`.

A call sends one message and waits until the partner's task settles: completed, failed,
canceled, rejected, or stopped on a question (input-required, auth-required). A partner that
streams is followed over its stream (resumed if cut); one that does not is sent the message and
then polled with GetTask, with back-off, while its task is still running. The whole call ends
within the partner's `timeout.deadline` and the caller's own deadline, whichever comes first.
A call given up on (canceled, or past its deadline) cancels the partner's task, once the
partner has named it. Inside a running skill the caller leaves at once and the delegation
ledger's task group sees to that (`in_background`), waiting for the name at most
`_NAME_WAIT`; elsewhere the caller waits for it, at most `_CANCEL_WAIT`.

Every partner task a call sees is reported to the delegation ledger (`note_child`), which
records it under the hub task whose skill made the call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from hub.client import A2AClient
from hub.errors import (
    AgentTimeoutError,
    ClientError,
    ConnectionLostError,
    InvalidAgentResponseError,
    ProtocolError,
)
from hub.protocol import AgentCard, Message, StreamResponse, Task, TaskState
from hub.tasks.ledger import following_child, in_background, note_child
from hub.tools.arguments import input_schema, parse_arguments
from hub.tools.base import DefinedTool, ToolDefinition
from hub.tools.describe import describe_agent, tool_name
from hub.tools.result import TaskFold, ToolResult

__all__ = ["TOOL_PREFIX", "RemoteAgentTool"]

TOOL_PREFIX = "a2a_"
_POLL_FIRST = 0.05
_POLL_MAX = 2.0
_CANCEL_WAIT = 5.0
_NAME_WAIT = 300.0

ClientSource = Callable[[], Awaitable[A2AClient]]
_Outcome = TypeVar("_Outcome")


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
        try:
            # A cancel scope costs; a call with no deadline goes without one.
            with anyio.fail_after(limit) if limit is not None else contextlib.nullcontext():
                reply = await _to_the_end(
                    _Detached(self, lambda pending: follow(client, message, metadata, pending))
                )
        except TimeoutError:
            raise AgentTimeoutError(
                f"agent '{self.agent}' did not settle the task within the deadline ({limit:.3g} s)"
            ) from None
        return ToolResult.from_reply(self.name, self.agent, reply)

    async def cancel(self, task_id: str) -> TaskState | None:
        """Cancel the partner's task `task_id`, also from a caller that is being canceled
        itself (shielded, at most 5 s). A task that has already ended, or a partner that is
        gone, leaves nothing to stop and is not an error.

        Returns:
            The task's state after the cancel, or None when the partner did not say.
        """
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(_CANCEL_WAIT),
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

        async def follow(pending: _Pending) -> None:
            with send:
                if not client.card.capabilities.streaming:
                    reply = await _send_and_poll(client, message, metadata, pending)
                    await deliver(_as_event(reply))
                    return
                async with client.stream(message, metadata=metadata) as events:
                    async for event in events:
                        pending.heard(event)
                        await deliver(event)

        detached = _Detached(self, follow)
        relayed = _Relayed(receive, detached)
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


class _Pending:
    """The partner task a call is waiting for, so a call given up on cancels it there.

    While the call runs, the delegation ledger leaves the tasks it follows to it
    (`following_child`): `release` when the call is over.
    """

    __slots__ = ("_followed", "agent", "named", "on_named", "task_id")

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.task_id: str | None = None
        self.named = False
        """True once the partner has named its task."""
        self.on_named: Callable[[], None] | None = None
        """Called when the partner names its task (the call given up on stops then)."""
        self._followed: dict[str, Callable[[], None]] = {}

    def seen(self, task: Task) -> None:
        """The partner's task as last seen; an ended one needs no cancel (one that asks a
        question does, when the call is given up)."""
        if not task.status.state.is_terminal and task.id not in self._followed:
            self._followed[task.id] = following_child(self.agent, task.id)
        self._named(task.id, task.status.state)

    def heard(self, event: StreamResponse) -> None:
        """An event of the partner's stream, as a stream relays it: its caller, not the
        call, follows the task once the event reaches it."""
        if event.task is not None:
            self._named(event.task.id, event.task.status.state)
        elif event.status_update is not None:
            self._named(event.status_update.task_id, event.status_update.status.state)

    def _named(self, task_id: str, state: TaskState) -> None:
        self.task_id = None if state.is_terminal else task_id
        self.named = True
        if self.on_named is not None:
            self.on_named()
        note_child(self.agent, task_id, state)

    async def abandon(self, tool: RemoteAgentTool) -> None:
        task_id, self.task_id = self.task_id, None
        if task_id is not None:
            await tool.cancel(task_id)

    def release(self) -> None:
        """The call is over: the tasks it followed are the ledger's again."""
        for done in self._followed.values():
            done()
        self._followed.clear()


class _Detached(Generic[_Outcome]):
    """A partner call's follow (`follow(pending)`), in a task of its own, so that a caller
    who gives up need not wait for the partner: that task then waits for the partner to name
    its task (a stream names it in its first event, a blocking SendMessage only when it
    returns), stops following and cancels the partner's task, so it is not orphaned.

    Inside a running skill the task belongs to the delegation ledger and the caller leaves
    at once; elsewhere the caller waits for it (at most `_CANCEL_WAIT` for the name).
    """

    def __init__(
        self, tool: RemoteAgentTool, follow: Callable[[_Pending], Awaitable[_Outcome]]
    ) -> None:
        self.pending = _Pending(tool.agent)
        self.outcome: list[_Outcome | BaseException] = []
        """The follow's result or exception; empty when it was stopped or cut."""
        self.finished = anyio.Event()
        self.given_up = False
        self._tool = tool
        self._follow = follow
        # The follow runs in a cancel scope of its own, not a task group with a watcher task:
        # a caller who gives up stops it through `pending` (once the partner names its task)
        # or through the scope's deadline (when the partner takes longer than `patience` to
        # name it).
        self._following = anyio.CancelScope()
        self._patience = _CANCEL_WAIT

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The follow runs while the block does, and after it when the caller gave up."""
        if in_background(self._run):
            self._patience = _NAME_WAIT
            yield
            return
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(self._shielded)
            try:
                yield
            except Exception as exc:  # the block's own, raised as it is, not in a group
                self.stop()
                failure = exc
        if failure is not None:
            raise failure

    def stop(self) -> None:
        """Stop following, leaving the partner's task as it is."""
        self._following.cancel()

    async def give_up(self) -> None:
        """Stop following and cancel the partner's task, once the partner has named it."""
        if self.finished.is_set():  # the follow ended just as its caller gave up
            await self.pending.abandon(self._tool)
            return
        self.given_up = True
        if self.pending.named:
            self._following.cancel()
        else:
            self.pending.on_named = self._following.cancel
            self._following.deadline = anyio.current_time() + self._patience

    async def _run(self) -> None:
        try:
            with self._following:
                try:
                    self.outcome.append(await self._follow(self.pending))
                except Exception as exc:  # handed to the caller
                    self.outcome.append(exc)
            self.finished.set()
            if self.given_up:
                await self.pending.abandon(self._tool)
        finally:
            self.finished.set()
            self.pending.release()

    async def _shielded(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._run()

    def result(self) -> _Outcome:
        """The follow's result, or its exception raised."""
        if not self.outcome:  # the ledger's group was stopped under the call: the hub stops
            raise ConnectionLostError(
                f"the call to agent '{self._tool.agent}' was cut: the hub is stopping"
            )
        result = self.outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result


async def _to_the_end(detached: _Detached[_Outcome]) -> _Outcome:
    """The detached follow's result, waited for; a caller who gives up leaves it to stop."""
    async with detached.running():
        try:
            await detached.finished.wait()
        except anyio.get_cancelled_exc_class():
            await detached.give_up()
            raise
    return detached.result()


class _Relayed:
    """A detached stream's events as its caller reads them; the follow's failure is raised
    after the last one."""

    __slots__ = ("_detached", "_receive", "named")

    def __init__(
        self, receive: MemoryObjectReceiveStream[StreamResponse], detached: _Detached[None]
    ) -> None:
        self._receive = receive
        self._detached = detached
        self.named = False
        """True once an event naming the partner's task has reached the caller."""

    def __aiter__(self) -> _Relayed:
        return self

    async def __anext__(self) -> StreamResponse:
        try:
            event = await self._receive.receive()
        except anyio.EndOfStream:
            await self._detached.finished.wait()
            self._detached.result()
            raise StopAsyncIteration from None
        if event.task is not None or event.status_update is not None:
            self.named = True
        return event


async def _follow_stream(
    client: A2AClient, message: Message, metadata: dict[str, Any] | None, pending: _Pending
) -> Task | Message:
    fold = TaskFold(follow_up=bool(message.task_id))
    async with client.stream(message, metadata=metadata) as events:
        async for event in events:
            fold.add(event)
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
    client: A2AClient, message: Message, metadata: dict[str, Any] | None, pending: _Pending
) -> Task | Message:
    reply = await client.send(message, metadata=metadata)
    if isinstance(reply, Message):
        return reply
    return await _poll(client, reply, pending)


async def _poll(client: A2AClient, task: Task, pending: _Pending) -> Task:
    delay = _POLL_FIRST
    while True:
        settled = task.status.state.is_terminal or task.status.state.is_interrupted
        pending.seen(task)
        if settled:
            return task
        await anyio.sleep(delay)
        delay = min(delay * 2, _POLL_MAX)
        task = await client.get_task(task.id)
