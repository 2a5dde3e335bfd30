"""`PartnerChildren`: how the delegation ledger reaches the partner tasks the hub started,
through the partners' clients."""

from __future__ import annotations

from hub.errors import RemoteRpcError, TaskNotCancelableError
from hub.partners.directory import Partners
from hub.protocol import TaskState
from hub.protocol.trace import past_the_deadline

__all__ = ["PartnerChildren"]


class PartnerChildren:
    """The `ChildControl` of the task manager's ledger, over `partners`."""

    def __init__(self, partners: Partners) -> None:
        self._partners = partners

    async def child_state(self, agent: str, task_id: str) -> TaskState:
        """The partner task's state now (GetTask).

        Raises:
            ClientError: the partner is unknown, unreachable or does not know the task.
        """
        client = await self._partners.client(agent)
        task = await client.get_task(task_id, history_length=0)
        return task.status.state

    async def cancel_child(self, agent: str, task_id: str) -> TaskState:
        """Cancel the partner task; its state afterwards. A task that ended meanwhile (the
        partner answers TaskNotCancelable) is looked up instead. The cancel goes out even
        when the caller's deadline has passed (the partner's own timeouts bound it).

        Raises:
            ClientError: the partner is unknown or unreachable.
        """
        with past_the_deadline():
            client = await self._partners.client(agent)
            try:
                task = await client.cancel(task_id)
            except RemoteRpcError as exc:
                if exc.code != TaskNotCancelableError.code:
                    raise
                return await self.child_state(agent, task_id)
            return task.status.state
