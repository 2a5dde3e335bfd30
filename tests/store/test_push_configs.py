"""Push configs in every TaskStore: kept per task, in order, and deleted with their task."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.protocol import AuthenticationInfo, TaskPushNotificationConfig, TaskState
from hub.store import PushConfigRecord, SqliteTaskStore, TaskStore

from .records import at, make_record

pytestmark = pytest.mark.anyio


def push(task_id: str, config_id: str, **fields: object) -> PushConfigRecord:
    config = TaskPushNotificationConfig.model_validate(
        {"taskId": task_id, "id": config_id, "url": f"https://hooks.example/{config_id}", **fields}
    )
    return PushConfigRecord(config=config, owner="alice", protocol="1.0")


async def test_a_config_is_returned_whole_and_listed_in_the_order_it_was_added(
    store: TaskStore,
) -> None:
    secret = AuthenticationInfo(scheme="Bearer", credentials="s3cret")
    first = push("t1", "a", token="tok", authentication=secret.to_wire())
    second = PushConfigRecord(config=push("t1", "b").config, owner="", protocol="0.3")
    await store.put_push_config(first)
    await store.put_push_config(second)
    await store.put_push_config(push("t2", "a"))
    assert await store.get_push_config("t1", "a") == first
    assert await store.get_push_config("t1", "missing") is None
    assert await store.list_push_configs("t1") == [first, second]
    assert await store.list_push_configs("nothing") == []


async def test_replacing_a_config_keeps_its_place(store: TaskStore) -> None:
    for config_id in ("a", "b", "c"):
        await store.put_push_config(push("t1", config_id))
    newer = push("t1", "a", token="new")
    await store.put_push_config(newer)
    listed = await store.list_push_configs("t1")
    assert [record.config_id for record in listed] == ["a", "b", "c"]
    assert listed[0] == newer


async def test_delete_reports_whether_the_config_existed(store: TaskStore) -> None:
    await store.put_push_config(push("t1", "a"))
    assert await store.delete_push_config("t1", "a") is True
    assert await store.delete_push_config("t1", "a") is False
    assert await store.list_push_configs("t1") == []


async def test_configs_of_live_tasks_are_found_by_their_tasks_state(store: TaskStore) -> None:
    await store.put(make_record("working", state=TaskState.WORKING))
    await store.put(make_record("parked", state=TaskState.INPUT_REQUIRED))
    await store.put(make_record("done", state=TaskState.COMPLETED))
    for task_id in ("working", "parked", "done", "no-task"):
        await store.put_push_config(push(task_id, "c"))
    found = await store.find_push_configs([TaskState.WORKING, TaskState.INPUT_REQUIRED])
    assert sorted(record.task_id for record in found) == ["parked", "working"]
    assert await store.find_push_configs([]) == []


async def test_configs_go_with_their_task_when_it_expires(store: TaskStore) -> None:
    await store.put(make_record("old", when=at(0), state=TaskState.COMPLETED))
    await store.put(make_record("new", when=at(100), state=TaskState.COMPLETED))
    await store.put(make_record("running", when=at(0), state=TaskState.WORKING))
    for task_id in ("old", "new", "running"):
        await store.put_push_config(push(task_id, "c"))
    assert await store.delete_terminal_before(at(50)) == 1
    assert await store.list_push_configs("old") == []
    assert len(await store.list_push_configs("new")) == 1
    assert len(await store.list_push_configs("running")) == 1


async def test_sqlite_configs_survive_reopening_the_file(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    await store.open()
    record = push("t1", "a", token="tok")
    await store.put_push_config(record)
    await store.close()
    again = SqliteTaskStore(tmp_path / "tasks.db")
    await again.open()
    assert await again.list_push_configs("t1") == [record]
    await again.close()
