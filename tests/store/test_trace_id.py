"""A task's trace id: kept with its record from the first write, on every backend, and
absent ("") for a task an older schema stored."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from hub.protocol import TaskState
from hub.store import PostgresTaskStore, SqliteTaskStore, TaskChange, TaskStore
from hub.store.columns import task_row
from hub.store.sqlite import schema as sqlite_schema
from tests.postgres import PostgresCluster, fresh_database
from tests.store.schemas import sqlite_at, step_adding

from .records import at, make_record

pytestmark = pytest.mark.anyio

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
BEFORE_TRACE_ID = step_adding(sqlite_schema._MIGRATIONS, "ADD COLUMN trace_id")
"""The schema version of a file written before tasks kept their trace id."""


async def test_the_trace_id_of_a_record_is_read_back(store: TaskStore) -> None:
    record = dataclasses.replace(make_record("t1"), trace_id=TRACE)
    await store.put(record)
    assert await store.get("t1") == record
    await store.put_many([dataclasses.replace(make_record("t2"), trace_id=TRACE)])
    stored = await store.get("t2")
    assert stored is not None
    assert stored.trace_id == TRACE


async def test_a_later_write_keeps_the_trace_id_of_the_first(store: TaskStore) -> None:
    await store.put(dataclasses.replace(make_record("t1"), trace_id=TRACE))
    moved = make_record("t1", state=TaskState.COMPLETED, when=at(5))
    await store.put(moved)
    await store.put_many([dataclasses.replace(moved, trace_id="0" * 32)])
    stored = await store.get("t1")
    assert stored is not None
    assert stored.task.status.state is TaskState.COMPLETED
    assert stored.trace_id == TRACE


async def test_a_record_without_a_trace_id_reads_back_with_none(store: TaskStore) -> None:
    await store.put(make_record("t1"))
    stored = await store.get("t1")
    assert stored is not None
    assert stored.trace_id == ""


async def test_replicas_keep_the_trace_id_through_versioned_writes(
    postgres_cluster: PostgresCluster,
) -> None:
    async with fresh_database(postgres_cluster) as dsn:
        store = PostgresTaskStore(dsn, pool_size=2)
        await store.open()
        try:
            created = dataclasses.replace(make_record("t1"), version=1, trace_id=TRACE)
            assert await store.commit([TaskChange(record=created, expected=0, events=[b"{}"])]) == (
                set()
            )
            done = make_record("t1", state=TaskState.COMPLETED, when=at(3))
            change = TaskChange(record=dataclasses.replace(done, version=2), expected=1, events=[])
            assert await store.commit([change]) == set()
            stored = await store.get("t1")
            assert stored is not None
            assert (stored.version, stored.trace_id) == (2, TRACE)
        finally:
            await store.close()


async def test_a_file_from_before_the_trace_id_is_migrated_and_its_tasks_have_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.db"
    record = make_record("t1", owner="alice")
    # The file as the release before the trace id left it: the steps before it, a task row
    # of that schema's columns.
    with sqlite3.connect(path) as old:
        sqlite_at(old, BEFORE_TRACE_ID)
        old.execute(
            "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            task_row(record)[:7],
        )
    old.close()

    again = SqliteTaskStore(path)
    await again.open()
    try:
        assert await again.get("t1") == record
        await again.put(dataclasses.replace(make_record("t2"), trace_id=TRACE))
        stored = await again.get("t2")
        assert stored is not None
        assert stored.trace_id == TRACE
    finally:
        await again.close()
