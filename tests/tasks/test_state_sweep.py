"""The task manager's sweep of expired tasks drops the skills' state that has expired too,
called directly and by itself every quarter task TTL."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from hub.config import LimitSettings
from hub.protocol import utc_now
from hub.skills.echo import echo
from hub.store import MemoryTaskStore, SqliteTaskStore, TaskStore
from hub.tasks import TaskManager

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    opened: TaskStore = (
        MemoryTaskStore() if request.param == "memory" else SqliteTaskStore(tmp_path / "hub.db")
    )
    await opened.open()
    yield opened
    await opened.close()


class Dropped(logging.Handler):
    """Set when the task manager logs that it dropped expired skill state."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.arrived = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "expired skill state" in record.getMessage():
            self.arrived.set()


@pytest.fixture
def dropped() -> Iterator[Dropped]:
    handler = Dropped()
    logger = logging.getLogger("hub.tasks")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def test_evicting_expired_tasks_drops_the_state_expired_by_then(store: TaskStore) -> None:
    now = utc_now()
    await store.save_state("plan/done", b"1", expires_at=now + timedelta(minutes=1))
    await store.save_state("plan/live", b"2", expires_at=now + timedelta(hours=1))
    await store.save_state("transcript/alice/ctx/planner", b"3")
    async with TaskManager(
        store=store, executors={"echo": echo}, default_skill="echo", limits=LimitSettings()
    ) as manager:
        assert await manager.evict_expired(now=now) == 0
        assert await store.load_state("plan/done") == b"1"
        assert await manager.evict_expired(now=now + timedelta(minutes=1)) == 0
    assert await store.load_state("plan/done") is None
    assert await store.load_state("plan/live") == b"2"
    assert await store.load_state("transcript/alice/ctx/planner") == b"3"


async def test_the_periodic_sweep_drops_expired_state_by_itself(
    store: TaskStore, dropped: Dropped
) -> None:
    await store.save_state("plan/old", b"1", expires_at=utc_now() - timedelta(seconds=1))
    await store.save_state("plan/kept", b"2")
    limits = LimitSettings(task_ttl=0.4)  # swept every 0.1 s
    async with TaskManager(
        store=store, executors={"echo": echo}, default_skill="echo", limits=limits
    ):
        with anyio.fail_after(30):
            await dropped.arrived.wait()
    assert await store.load_state("plan/old") is None
    assert await store.load_state("plan/kept") == b"2"
