"""Gateway owners of partner tasks in every TaskStore: the first claim wins, records go when
they are older than the expiry cutoff, and a caller's partner tasks are listed most recent
first, as many as asked for."""

from __future__ import annotations

import pytest

from hub.store import TaskStore

from .records import at

pytestmark = pytest.mark.anyio


async def test_the_first_claim_of_a_partner_task_is_the_one_kept(store: TaskStore) -> None:
    assert await store.claim_partner_task("research", "t1", "alice", at=at(0)) == "alice"
    assert await store.claim_partner_task("research", "t1", "bob", at=at(1)) == "alice"
    assert await store.partner_task_owner("research", "t1") == "alice"


async def test_the_same_task_id_at_two_partners_has_two_owners(store: TaskStore) -> None:
    await store.claim_partner_task("research", "t1", "alice", at=at(0))
    await store.claim_partner_task("translate", "t1", "bob", at=at(0))

    assert await store.partner_task_owner("research", "t1") == "alice"
    assert await store.partner_task_owner("translate", "t1") == "bob"
    assert await store.partner_task_owner("research", "unknown") is None


async def test_owner_records_older_than_the_cutoff_expire(store: TaskStore) -> None:
    await store.claim_partner_task("research", "old", "alice", at=at(0))
    await store.claim_partner_task("research", "new", "alice", at=at(100))

    await store.delete_terminal_before(at(50))

    assert await store.partner_task_owner("research", "old") is None
    assert await store.partner_task_owner("research", "new") == "alice"


async def test_a_callers_partner_tasks_are_listed_most_recent_first(store: TaskStore) -> None:
    await store.claim_partner_task("research", "r1", "alice", at=at(0))
    await store.claim_partner_task("translate", "x1", "bob", at=at(1))
    await store.claim_partner_task("translate", "x2", "alice", at=at(2))
    await store.claim_partner_task("research", "r2", "alice", at=at(2))
    await store.claim_partner_task("research", "r3", "alice", at=at(3))
    await store.claim_partner_task("research", "r3", "bob", at=at(4))  # alice's, claimed first

    assert await store.partner_tasks_of("alice", limit=10) == [
        ("research", "r3"),
        ("research", "r2"),  # claimed at the same time: by partner, then by task id
        ("translate", "x2"),
        ("research", "r1"),
    ]
    assert await store.partner_tasks_of("bob", limit=10) == [("translate", "x1")]
    assert await store.partner_tasks_of("carol", limit=10) == []


async def test_a_callers_partner_tasks_are_bounded_and_expire_with_their_claims(
    store: TaskStore,
) -> None:
    for n in range(5):
        await store.claim_partner_task("research", f"t{n}", "alice", at=at(10 * n))

    assert await store.partner_tasks_of("alice", limit=2) == [
        ("research", "t4"),
        ("research", "t3"),
    ]
    await store.delete_terminal_before(at(25))
    assert await store.partner_tasks_of("alice", limit=10) == [
        ("research", "t4"),
        ("research", "t3"),
    ]
