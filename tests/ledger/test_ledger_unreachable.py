"""The delegation ledger when a partner cannot be reached: the line stays live in the store
for the next start to try again, says why, and the hub's memory lets the ended parent go."""

from __future__ import annotations

import pytest

from hub.errors import AgentUnreachableError
from hub.protocol import TaskState
from hub.store import ChildRecord, MemoryTaskStore
from hub.tasks.ledger import UNREACHABLE_AFTER_RESTART, DelegationLedger

pytestmark = pytest.mark.anyio


class Gone:
    """A `ChildControl` whose partner is down: every call fails as the client would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    async def child_state(self, agent: str, task_id: str) -> TaskState:
        self.calls.append(("state", agent, task_id))
        raise AgentUnreachableError(f"agent '{agent}' is unreachable (connection refused)")

    async def cancel_child(self, agent: str, task_id: str) -> TaskState:
        self.calls.append(("cancel", agent, task_id))
        raise AgentUnreachableError(f"agent '{agent}' is unreachable (connection refused)")


async def test_an_ended_parent_whose_partner_is_down_is_let_go_and_its_line_stays_live() -> None:
    store = MemoryTaskStore()
    await store.open()
    control = Gone()
    ledger = DelegationLedger(store, control)
    ledger.note("parent", "research", "child-1", TaskState.WORKING)

    await ledger.settle("parent")
    await ledger.flush()

    assert control.calls == [("cancel", "research", "child-1")]
    assert ledger.live_children("parent") == []
    assert await store.find_live_children() == [
        ChildRecord(
            parent_id="parent", agent="research", child_id="child-1", state=TaskState.WORKING
        )
    ]


async def test_a_restart_that_cannot_reach_the_partner_says_so_and_tries_again_later() -> None:
    store = MemoryTaskStore()
    await store.open()
    line = ChildRecord(parent_id="p", agent="research", child_id="c", state=TaskState.WORKING)
    await store.put_children([line])

    first = await DelegationLedger(store, Gone()).reconcile()
    [after] = await store.find_live_children()
    second = await DelegationLedger(store, Gone()).reconcile()

    assert (first, second) == (1, 1)
    assert after.state is TaskState.WORKING
    assert after.note == UNREACHABLE_AFTER_RESTART.format(
        error="agent 'research' is unreachable (connection refused)"
    )
