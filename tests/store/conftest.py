from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.store import MemoryTaskStore, PostgresTaskStore, SqliteTaskStore, TaskStore
from tests.postgres import fresh_database


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    """An open store of each kind: SQLite in a fresh file, PostgreSQL in a fresh database of
    the session's real server."""
    kind: str = request.param
    opened: TaskStore
    if kind == "memory":
        opened = MemoryTaskStore()
    elif kind == "sqlite":
        opened = SqliteTaskStore(tmp_path / "tasks.db")
    else:
        cluster = request.getfixturevalue("postgres_cluster")
        async with fresh_database(cluster) as dsn:
            opened = PostgresTaskStore(dsn)
            await opened.open()
            yield opened
            await opened.close()
        return
    await opened.open()
    yield opened
    await opened.close()
