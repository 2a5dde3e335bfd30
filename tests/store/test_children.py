"""The delegation ledger in every TaskStore: lines per parent, in order, live ones found, and
deleted with their parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.protocol import TaskState
from hub.store import ChildRecord, SqliteTaskStore, TaskStore

from .records import at, make_record

pytestmark = pytest.mark.anyio


def child(parent_id: str, child_id: str, state: TaskState, **fields: str) -> ChildRecord:
    return ChildRecord(
        parent_id=parent_id,
        agent=fields.get("agent", "research"),
        child_id=child_id,
        state=state,
        note=fields.get("note", ""),
    )


async def test_lines_are_listed_per_parent_in_the_order_first_written(store: TaskStore) -> None:
    first = child("p1", "c1", TaskState.WORKING)
    second = child("p1", "c2", TaskState.SUBMITTED, agent="translate")
    await store.put_children([first, second, child("p2", "c3", TaskState.WORKING)])
    assert await store.list_children("p1") == [first, second]
    assert await store.list_children("nobody") == []


async def test_an_updated_line_keeps_its_place_and_takes_the_new_state(store: TaskStore) -> None:
    await store.put_children([child("p1", "c1", TaskState.WORKING)])
    await store.put_children([child("p1", "c2", TaskState.WORKING)])
    ended = child("p1", "c1", TaskState.CANCELED, note="canceled after a hub restart")
    await store.put_children([ended])
    assert await store.list_children("p1") == [ended, child("p1", "c2", TaskState.WORKING)]


async def test_the_same_child_id_on_two_partners_is_two_lines(store: TaskStore) -> None:
    one = child("p1", "same", TaskState.WORKING, agent="a")
    other = child("p1", "same", TaskState.COMPLETED, agent="b")
    await store.put_children([one, other])
    assert await store.list_children("p1") == [one, other]


async def test_live_children_are_those_not_in_a_terminal_state(store: TaskStore) -> None:
    lines = [
        child("p1", "working", TaskState.WORKING),
        child("p1", "asking", TaskState.INPUT_REQUIRED),
        child("p2", "done", TaskState.COMPLETED),
        child("p2", "gone", TaskState.CANCELED),
        child("p3", "new", TaskState.SUBMITTED),
    ]
    await store.put_children(lines)
    live = await store.find_live_children()
    assert sorted(line.child_id for line in live) == ["asking", "new", "working"]


async def test_lines_go_with_their_parent_when_it_expires(store: TaskStore) -> None:
    await store.put(make_record("old", when=at(0), state=TaskState.COMPLETED))
    await store.put(make_record("running", when=at(0), state=TaskState.WORKING))
    await store.put_children(
        [child("old", "c1", TaskState.COMPLETED), child("running", "c2", TaskState.WORKING)]
    )
    assert await store.delete_terminal_before(at(50)) == 1
    assert await store.list_children("old") == []
    assert await store.list_children("running") == [child("running", "c2", TaskState.WORKING)]


async def test_sqlite_lines_survive_reopening_the_file(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    await store.open()
    line = child("p1", "c1", TaskState.WORKING)
    await store.put_children([line])
    await store.close()
    again = SqliteTaskStore(tmp_path / "tasks.db")
    await again.open()
    assert await again.find_live_children() == [line]
    await again.close()
