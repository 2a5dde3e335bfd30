"""`TaskOwners`: with auth on, a partner task reached through the gateway belongs to the
credential that started it, as the hub's own tasks do.

The partner sees one caller, the hub (with the credentials agents.yaml gives it), so it cannot
tell the hub's callers apart; the gateway records, in the hub's store, which credential each
partner task it saw started was sent by, and answers another credential's GetTask, CancelTask,
SubscribeToTask or follow-up message with TaskNotFound, and leaves those tasks out of its
ListTasks. A partner task the gateway did not see start (one the hub's skills started, or one
sent to the partner directly) belongs to no credential and is hidden from all. With auth off
every caller is the same anonymous one and nothing is recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from hub.errors import TaskNotFoundError
from hub.protocol import StreamResponse, Task, utc_now
from hub.server.gateway.stream import PartnerEvents
from hub.store import GatewayOwnerStore

__all__ = ["TaskOwners"]


class TaskOwners:
    """The gateway's record of who started which partner task (see the module docstring)."""

    def __init__(self, store: GatewayOwnerStore) -> None:
        self._store = store

    async def claim(self, agent: str, task: Task | None, caller: str) -> None:
        """`caller` started `task` at partner `agent` (nothing to record without a task, or
        with auth off)."""
        if caller and task is not None:
            await self._store.claim_partner_task(agent, task.id, caller, at=utc_now())

    async def check(self, agent: str, task_id: str, caller: str) -> None:
        """Refuse `caller` a partner task it did not start, as if it did not exist.

        Raises:
            TaskNotFoundError: the task is another credential's, or no credential's.
        """
        if caller and await self._store.partner_task_owner(agent, task_id) != caller:
            raise TaskNotFoundError(f"task {task_id} was not found", metadata={"taskId": task_id})

    async def visible(self, agent: str, tasks: list[Task], caller: str) -> list[Task]:
        """The tasks of `tasks` that `caller` started."""
        if not caller:
            return tasks
        return [
            task for task in tasks if await self._store.partner_task_owner(agent, task.id) == caller
        ]

    def claiming(self, events: PartnerEvents, agent: str, caller: str) -> PartnerEvents:
        """`events`, with the task its first event names claimed for `caller`."""
        if not caller:
            return events

        @asynccontextmanager
        async def opened() -> AsyncIterator[AsyncIterator[StreamResponse]]:
            async with events() as stream:
                yield self._claim_first(stream, agent, caller)

        return opened

    async def _claim_first(
        self, stream: AsyncIterator[StreamResponse], agent: str, caller: str
    ) -> AsyncIterator[StreamResponse]:
        claimed = False
        async for event in stream:
            if not claimed and event.task is not None:
                await self.claim(agent, event.task, caller)
                claimed = True
            yield event
