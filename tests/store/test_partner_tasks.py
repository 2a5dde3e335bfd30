"""Gateway owners of partner tasks in every TaskStore: the first claim wins, and records go
when they are older than the expiry cutoff."""

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
