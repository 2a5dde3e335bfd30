"""The work the delegation ledger owns beyond its callers: partner calls given up on run in
its task group (`in_background`), and a parent's end leaves the children such a call still
follows to it (`following_child`), so each is canceled once."""

from __future__ import annotations

import anyio
import pytest

from hub.protocol import TaskState
from hub.store import MemoryTaskStore
from hub.tasks.ledger import DelegationLedger, following_child, in_background, note_child

pytestmark = pytest.mark.anyio


class Partner:
    """A `ChildControl` whose partner cancels every task it is asked to."""

    def __init__(self) -> None:
        self.canceled: list[tuple[str, str]] = []

    async def child_state(self, agent: str, task_id: str) -> TaskState:
        return TaskState.WORKING

    async def cancel_child(self, agent: str, task_id: str) -> TaskState:
        self.canceled.append((agent, task_id))
        return TaskState.CANCELED


async def test_a_parents_end_leaves_a_child_to_the_call_that_follows_it() -> None:
    partner = Partner()
    ledger = DelegationLedger(MemoryTaskStore(), partner)
    with ledger.parent("parent"):
        ledger.note("parent", "research", "followed", TaskState.WORKING)
        ledger.note("parent", "research", "left", TaskState.WORKING)
        done = following_child("research", "followed")

    await ledger.settle("parent")
    done()

    assert partner.canceled == [("research", "left")]
    assert ledger.live_children("parent") == []


async def test_a_child_no_call_follows_any_more_is_the_parents_again() -> None:
    partner = Partner()
    ledger = DelegationLedger(MemoryTaskStore(), partner)
    with ledger.parent("parent"):
        ledger.note("parent", "research", "child", TaskState.INPUT_REQUIRED)
        following_child("research", "child")()

    await ledger.settle("parent")

    assert partner.canceled == [("research", "child")]


async def test_background_work_outlives_its_caller_and_keeps_its_parent() -> None:
    store = MemoryTaskStore()
    await store.open()
    ledger = DelegationLedger(store)
    release, noted = anyio.Event(), anyio.Event()

    async def work() -> None:
        await release.wait()
        note_child("research", "late", TaskState.CANCELED)
        noted.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            await group.start(ledger.run)
            assert not in_background(work)  # outside a parent task nothing is started
            with ledger.parent("parent"):
                assert in_background(work)  # returns at once: the work waits for `release`
            release.set()
            await noted.wait()
            group.cancel_scope.cancel()
        await ledger.flush()

    assert [(line.child_id, line.state) for line in await store.list_children("parent")] == [
        ("late", TaskState.CANCELED)
    ]
