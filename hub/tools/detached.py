"""A partner call followed in a task of its own, so that its caller may give up at once.

A caller who gives up (is canceled, or past its deadline) need not wait for the partner,
yet the partner's task must not be left running: the follow's task waits for the partner to
name its task (a stream names it in its first event, a blocking SendMessage only when it
returns), stops following and cancels it there. Inside a running skill that task belongs to
the delegation ledger (`in_background`) and waits for the name at most `NAME_WAIT`; elsewhere
the caller waits for it, at most `CANCEL_WAIT` for the name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from hub.errors import ConnectionLostError
from hub.protocol import Message, StreamResponse, Task, TaskState, parts_text
from hub.tasks.ledger import following_child, in_background, note_child, note_streamed

__all__ = ["CANCEL_WAIT", "NAME_WAIT", "DetachedCall", "Pending", "RelayedEvents", "to_the_end"]

CANCEL_WAIT = 5.0
"""Seconds a caller outside a running skill waits for the partner to name its task."""
NAME_WAIT = 300.0
"""Seconds the delegation ledger's task waits for the partner to name its task."""

_Outcome = TypeVar("_Outcome")

Cancel = Callable[[str], Awaitable[object]]
"""Cancels the partner's task of the given id, shielded and bounded (`RemoteAgentTool.cancel`)."""


class Pending:
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
        self._named(task.id, task.status.state, task.status.message)

    def heard(self, event: StreamResponse) -> None:
        """An event of the partner's stream, as a stream relays it: its caller, not the
        call, follows the task once the event reaches it."""
        if event.task is not None:
            status = event.task.status
            self._named(event.task.id, status.state, status.message)
        elif event.status_update is not None:
            status = event.status_update.status
            self._named(event.status_update.task_id, status.state, status.message)
        elif event.artifact_update is not None:
            self.streamed(event)

    def streamed(self, event: StreamResponse) -> None:
        """An artifact chunk of the partner's stream (its call's progress)."""
        if event.artifact_update is not None:
            note_streamed(self.agent, parts_text(event.artifact_update.artifact.parts))

    def _named(self, task_id: str, state: TaskState, message: Message | None) -> None:
        self.task_id = None if state.is_terminal else task_id
        self.named = True
        if self.on_named is not None:
            self.on_named()
        note_child(self.agent, task_id, state, message)

    async def abandon(self, cancel: Cancel) -> None:
        task_id, self.task_id = self.task_id, None
        if task_id is not None:
            await cancel(task_id)

    def release(self) -> None:
        """The call is over: the tasks it followed are the ledger's again."""
        for done in self._followed.values():
            done()
        self._followed.clear()


class DetachedCall(Generic[_Outcome]):
    """A partner call's follow (`follow(pending)`), in a task of its own, so that a caller
    who gives up need not wait for the partner: that task then waits for the partner to name
    its task (a stream names it in its first event, a blocking SendMessage only when it
    returns), stops following and cancels the partner's task, so it is not orphaned.

    Inside a running skill the task belongs to the delegation ledger and the caller leaves
    at once; elsewhere the caller waits for it (at most `CANCEL_WAIT` for the name).
    """

    def __init__(
        self, agent: str, cancel: Cancel, follow: Callable[[Pending], Awaitable[_Outcome]]
    ) -> None:
        self.pending = Pending(agent)
        self.outcome: list[_Outcome | BaseException] = []
        """The follow's result or exception; empty when it was stopped or cut."""
        self.finished = anyio.Event()
        self.given_up = False
        self._agent = agent
        self._cancel = cancel
        self._follow = follow
        # The follow runs in a cancel scope of its own, not a task group with a watcher task:
        # a caller who gives up stops it through `pending` (once the partner names its task)
        # or through the scope's deadline (when the partner takes longer than `patience` to
        # name it).
        self._following = anyio.CancelScope()
        self._patience = CANCEL_WAIT

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The follow runs while the block does, and after it when the caller gave up."""
        if in_background(self._run):
            self._patience = NAME_WAIT
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
            await self.pending.abandon(self._cancel)
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
                await self.pending.abandon(self._cancel)
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
                f"the call to agent '{self._agent}' was cut: the hub is stopping"
            )
        result = self.outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result


async def to_the_end(detached: DetachedCall[_Outcome]) -> _Outcome:
    """The detached follow's result, waited for; a caller who gives up leaves it to stop."""
    async with detached.running():
        try:
            await detached.finished.wait()
        except anyio.get_cancelled_exc_class():
            await detached.give_up()
            raise
    return detached.result()


class RelayedEvents:
    """A detached stream's events as its caller reads them; the follow's failure is raised
    after the last one."""

    __slots__ = ("_detached", "_receive", "named")

    def __init__(
        self, receive: MemoryObjectReceiveStream[StreamResponse], detached: DetachedCall[None]
    ) -> None:
        self._receive = receive
        self._detached = detached
        self.named = False
        """True once an event naming the partner's task has reached the caller."""

    def __aiter__(self) -> RelayedEvents:
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
