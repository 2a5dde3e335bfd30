"""A store written before the console's task list filters (the schema just before the step
that adds them) is migrated with its tasks and ledger: every task is searchable and found by
its partners afterwards, its creation time unknown, and the new indexes serve the filters."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hub.protocol import Message, Part, Role, TaskState
from hub.store import ChildRecord, PostgresTaskStore, SqliteTaskStore, TaskQuery, TaskRecord
from hub.store.columns import PUT_CHILD, child_row, task_row
from hub.store.postgres import schema as postgres_schema
from hub.store.postgres.database import numbered
from hub.store.schema import migrate_schema, read_schema
from hub.store.sqlite import schema as sqlite_schema
from tests.postgres import PostgresCluster, fresh_database

from .records import at, make_record
from .schemas import migrated_sqlite, postgres_at, sqlite_at, step_adding

# A task row as the schema before the search step has it: the columns up to the trace id.
_OLD_PUT = (
    "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body, trace_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _old_row(record: TaskRecord) -> tuple[object, ...]:
    return task_row(record)[:8]


pytestmark = pytest.mark.anyio

TASKS = 150


def _old_records() -> tuple[list[TaskRecord], list[ChildRecord]]:
    """Tasks that each say their number in words, every third reaching a partner."""
    records = []
    for n in range(TASKS):
        record = make_record(f"t{n:03}", when=at(n), owner=("alice", "bob")[n % 2])
        said = Message(
            message_id=f"q{n}", role=Role.USER, parts=[Part(text=f"Rechnung Nummer {n:03} ✓")]
        )
        task = record.task.model_copy(update={"history": [said]})
        records.append(TaskRecord(task=task, skill=record.skill, owner=record.owner))
    lines = [
        ChildRecord(
            parent_id=f"t{n:03}", agent="billing", child_id=f"c{n}", state=TaskState.COMPLETED
        )
        for n in range(0, TASKS, 3)
    ]
    return records, lines


async def _check_migrated(store: SqliteTaskStore | PostgresTaskStore) -> None:
    assert (await store.list(TaskQuery(text="nummer"))).total_size == TASKS
    found = await store.list(TaskQuery(text="Nummer 042 ✓"))
    assert [record.task.id for record in found.records] == ["t042"]
    billing = await store.list(TaskQuery(partner="billing", owner="alice", page_size=200))
    assert [record.task.id for record in billing.records] == [
        f"t{n:03}" for n in reversed(range(0, TASKS, 3)) if n % 2 == 0
    ]
    details = await store.describe_tasks(["t000", "t003"])
    assert details["t003"].partners == ("billing",)
    assert details["t000"].created is None  # stored before the store kept it
    # Tasks written after the migration are searchable, with their creation time.
    new = make_record("new", when=at(1000))
    await store.put(new)
    found = await store.list(TaskQuery(text="hello"))  # make_record's artifact: not a message
    assert found.records == []
    record = make_record("newer", when=at(1001))
    said = Message(message_id="n", role=Role.USER, parts=[Part(text="eine neue Rechnung")])
    await store.put(
        TaskRecord(task=record.task.model_copy(update={"history": [said]}), skill="echo")
    )
    assert [r.task.id for r in (await store.list(TaskQuery(text="neue"))).records] == ["newer"]
    assert (await store.describe_tasks(["new"]))["new"].created == at(1000)


async def test_a_sqlite_file_of_the_schema_before_gains_search_and_partner_filters(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hub.db"
    records, lines = _old_records()
    previous = step_adding(sqlite_schema._MIGRATIONS, "CREATE VIRTUAL TABLE task_text")
    with sqlite3.connect(path) as old:
        sqlite_at(old, previous)
        old.executemany(_OLD_PUT, [_old_row(record) for record in records])
        old.executemany(PUT_CHILD, [child_row(line) for line in lines])
    old.close()
    await migrated_sqlite(path, previous, _check_migrated)
    with sqlite3.connect(path) as db:
        plans = {
            name: " ".join(str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", args))
            for name, sql, args in [
                (
                    "skill",
                    "SELECT task_id FROM tasks WHERE skill = ? "
                    "ORDER BY status_us DESC, task_id DESC LIMIT 51",
                    ("echo",),
                ),
                ("partner", "SELECT parent_id FROM children WHERE agent = ?", ("billing",)),
            ]
        }
    db.close()
    assert "tasks_by_skill_time" in plans["skill"], plans
    assert "children_by_agent" in plans["partner"], plans


async def test_a_postgres_database_of_the_schema_before_gains_search_and_partner_filters(
    postgres_cluster: PostgresCluster,
) -> None:
    import asyncpg

    records, lines = _old_records()
    previous = step_adding(postgres_schema._MIGRATIONS, "gin_trgm_ops")
    async with fresh_database(postgres_cluster) as dsn:
        db = await asyncpg.connect(dsn)
        try:
            await postgres_at(db, previous)
            await db.executemany(numbered(_OLD_PUT), [_old_row(record) for record in records])
            await db.executemany(numbered(PUT_CHILD), [child_row(line) for line in lines])
        finally:
            await db.close()
        assert (await read_schema("postgres", dsn=dsn)).version == previous
        assert (await migrate_schema("postgres", dsn=dsn)).version == previous
        store = PostgresTaskStore(dsn, pool_size=2)
        await store.open()
        try:
            await _check_migrated(store)
        finally:
            await store.close()
