from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.store import MemoryTaskStore, SqliteTaskStore, TaskStore


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    """An open store of each kind; the SQLite one in a fresh file."""
    kind: str = request.param
    opened: TaskStore = (
        MemoryTaskStore() if kind == "memory" else SqliteTaskStore(tmp_path / "tasks.db")
    )
    await opened.open()
    yield opened
    await opened.close()
