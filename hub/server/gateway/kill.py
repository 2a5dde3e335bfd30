"""`GatewayKill`: the kill switch's reach into the partner tasks a caller started through the
gateway.

With auth on, the gateway records which credential started each partner task it saw start
(`TaskOwners`). A kill of a caller sends CancelTask to each of that caller's partner tasks
(the most recent `KILL_LIMIT` claims), through the partners' clients: at most
`KILL_CONCURRENCY` at once, for at most `KILL_WAIT` seconds in all. The hub keeps no copy of
a partner's tasks, so it does not know which of them are still open: a task that has ended
(TaskNotCancelable) or that the partner no longer knows (TaskNotFound) is counted as neither
canceled nor failed; a partner that cannot be reached, refuses, or does not answer in time
is a failure, counted and logged, never an error of the kill.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

import anyio

from hub.errors import ClientError, RemoteRpcError, TaskNotFoundError
from hub.partners import Partners
from hub.partners.children import PartnerChildren
from hub.protocol import TaskState
from hub.store import GatewayOwnerStore

__all__ = ["KILL_CONCURRENCY", "KILL_LIMIT", "KILL_WAIT", "GatewayKill", "GatewayKillCount"]

log = logging.getLogger(__name__)

KILL_LIMIT = 1000
"""The most partner tasks of one caller a kill reaches: its most recently started ones."""

KILL_CONCURRENCY = 16
"""CancelTask requests in flight at once."""

KILL_WAIT = 30.0
"""Seconds a kill waits for the partners in all; a cancel not answered by then failed."""


class _Outcome(enum.Enum):
    CANCELED = "canceled"
    ENDED = "ended before"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class GatewayKillCount:
    """What a kill did to a caller's gateway partner tasks.

    Attributes:
        canceled: the partner tasks the partners answered as canceled.
        failed: those that could not be canceled (partner unreachable, refusing, late).
    """

    canceled: int = 0
    failed: int = 0


class GatewayKill:
    """Cancels a caller's gateway partner tasks at the partners (see the module docstring).

    Args:
        partners: the hub's partners, whose clients send the cancels.
        store: where the gateway recorded who started which partner task.
        within: seconds the kill waits for the partners in all.
    """

    def __init__(
        self, *, partners: Partners, store: GatewayOwnerStore, within: float = KILL_WAIT
    ) -> None:
        self._children = PartnerChildren(partners)
        self._store = store
        self._within = within

    async def kill(self, caller: str) -> GatewayKillCount:
        """Cancel every partner task `caller` started through the gateway."""
        owned = await self._store.partner_tasks_of(caller, limit=KILL_LIMIT)
        if not owned:
            return GatewayKillCount()
        outcomes: dict[tuple[str, str], _Outcome] = {}
        slots = anyio.Semaphore(KILL_CONCURRENCY)

        async def cancel(agent: str, task_id: str) -> None:
            async with slots:
                outcomes[agent, task_id] = await self._cancel(agent, task_id)

        with anyio.move_on_after(self._within):
            async with anyio.create_task_group() as group:
                for agent, task_id in owned:
                    group.start_soon(cancel, agent, task_id)
        late = [key for key in owned if key not in outcomes]
        if late:
            log.warning(
                "kill of caller '%s': %d partner task(s) started through the gateway were not "
                "canceled within %g s",
                caller,
                len(late),
                self._within,
            )
        found = list(outcomes.values())
        return GatewayKillCount(
            canceled=found.count(_Outcome.CANCELED),
            failed=found.count(_Outcome.FAILED) + len(late),
        )

    async def _cancel(self, agent: str, task_id: str) -> _Outcome:
        """CancelTask to one partner task, as the delegation ledger cancels its children
        (`PartnerChildren.cancel_child`: sent even past the operator's deadline; a task that
        had ended is looked up); what came of it."""
        try:
            state = await self._children.cancel_child(agent, task_id)
        except RemoteRpcError as exc:
            if exc.code == TaskNotFoundError.code:  # the partner no longer knows it
                return _Outcome.ENDED
            return _failed(agent, task_id, exc.for_log())
        except ClientError as exc:
            return _failed(agent, task_id, exc.for_log())
        if state is TaskState.CANCELED:
            return _Outcome.CANCELED
        if state.is_terminal:
            return _Outcome.ENDED
        return _failed(agent, task_id, f"it answered the cancel with {state.value}")


def _failed(agent: str, task_id: str, why: str) -> _Outcome:
    log.warning("kill: partner task %s at '%s' was not canceled: %s", task_id, agent, why)
    return _Outcome.FAILED
