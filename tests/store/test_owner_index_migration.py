"""A store written before the kill switch reached gateway tasks (the schema just before the
step that indexes the owners of partner tasks) is migrated with its claims: a caller's
partner tasks are listed from them, and the new index serves the look-up."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hub.store import PostgresTaskStore, SqliteTaskStore
from hub.store.columns import CLAIM_PARTNER_TASK, PARTNER_TASKS_OF
from hub.store.cursor import epoch_micros
from hub.store.postgres import schema as postgres_schema
from hub.store.postgres.database import numbered
from hub.store.schema import read_schema
from hub.store.sqlite import schema as sqlite_schema
from tests.postgres import PostgresCluster, fresh_database

from .records import at
from .schemas import migrated_sqlite, postgres_at, sqlite_at, step_adding

pytestmark = pytest.mark.anyio

_INDEX = "CREATE INDEX partner_tasks_by_owner"

# Alice's claims at t0 … t9 (one a second), bob's at b0 … b4.
_CLAIMS = [("research", f"t{n}", "alice", epoch_micros(at(n))) for n in range(10)] + [
    ("translate", f"b{n}", "bob", epoch_micros(at(n))) for n in range(5)
]


async def _check_migrated(store: SqliteTaskStore | PostgresTaskStore) -> None:
    assert await store.partner_tasks_of("alice", limit=3) == [
        ("research", "t9"),
        ("research", "t8"),
        ("research", "t7"),
    ]
    assert len(await store.partner_tasks_of("bob", limit=100)) == 5
    await store.claim_partner_task("research", "new", "alice", at=at(100))
    assert (await store.partner_tasks_of("alice", limit=1)) == [("research", "new")]


async def test_a_sqlite_file_of_the_schema_before_lists_a_callers_partner_tasks_by_index(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hub.db"
    previous = step_adding(sqlite_schema._MIGRATIONS, _INDEX)
    with sqlite3.connect(path) as old:
        sqlite_at(old, previous)
        old.executemany(CLAIM_PARTNER_TASK, _CLAIMS)
    old.close()
    await migrated_sqlite(path, previous, _check_migrated)
    with sqlite3.connect(path) as db:
        plan = " ".join(
            str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {PARTNER_TASKS_OF}", ("a", 5))
        )
    db.close()
    assert "COVERING INDEX partner_tasks_by_owner" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


async def test_a_postgres_database_of_the_schema_before_lists_a_callers_partner_tasks(
    postgres_cluster: PostgresCluster,
) -> None:
    import asyncpg

    previous = step_adding(postgres_schema._MIGRATIONS, _INDEX)
    async with fresh_database(postgres_cluster) as dsn:
        db = await asyncpg.connect(dsn)
        try:
            await postgres_at(db, previous)
            await db.executemany(numbered(CLAIM_PARTNER_TASK), _CLAIMS)
        finally:
            await db.close()
        assert (await read_schema("postgres", dsn=dsn)).version == previous
        store = PostgresTaskStore(dsn, pool_size=2)
        await store.open()
        try:
            await _check_migrated(store)
        finally:
            await store.close()
        assert (await read_schema("postgres", dsn=dsn)).current
        db = await asyncpg.connect(dsn)
        try:
            indexes = await db.fetch(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'partner_tasks'"
            )
        finally:
            await db.close()
    assert "partner_tasks_by_owner" in {row["indexname"] for row in indexes}
