"""A PostgreSQL server that goes away and comes back under a store in use: what could not be
written is written once it answers, and the outage is logged once when it begins and once
when it ends, however many calls fail meanwhile."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TypeVar

import anyio
import pytest

from hub.errors import StoreOutageError
from hub.protocol import TaskState, utc_now
from hub.store import ChildRecord, PostgresTaskStore
from hub.tasks.ledger import DelegationLedger
from tests.postgres import PostgresCluster, fresh_database, running_cluster

pytestmark = pytest.mark.anyio

T = TypeVar("T")
WORKING = TaskState.WORKING


@pytest.fixture
def own_cluster() -> Iterator[PostgresCluster]:
    """A cluster of the test's own, since the test stops and starts it."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
async def store(own_cluster: PostgresCluster) -> AsyncIterator[PostgresTaskStore]:
    async with fresh_database(own_cluster) as dsn:
        opened = PostgresTaskStore(dsn, pool_size=2)
        await opened.open()
        yield opened
        await opened.close()


class Heard(logging.Handler):
    """The store's log lines, and an event set when one says `awaited`."""

    def __init__(self, awaited: str) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self.traced = False
        self.awaited = awaited
        self.arrived = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        self.traced |= record.exc_info is not None
        if self.awaited in self.lines[-1]:
            self.arrived.set()


@pytest.fixture
def heard() -> Iterator[Heard]:
    handler = Heard("unreachable")
    logger = logging.getLogger("hub")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def _eventually(check: Callable[[], Awaitable[T | None]]) -> T:
    """What `check` returns once it is not None (checked again every 50 ms, 30 s at most)."""
    with anyio.fail_after(30):
        while True:
            found = await check()
            if found is not None:
                return found
            await anyio.sleep(0.05)


async def test_an_outage_is_logged_once_when_it_begins_and_once_when_it_ends(
    own_cluster: PostgresCluster, store: PostgresTaskStore, heard: Heard
) -> None:
    await store.ping()

    await anyio.to_thread.run_sync(own_cluster.stop)
    try:
        for _ in range(5):
            with pytest.raises(StoreOutageError):
                await store.list_children("some-task")
        with pytest.raises(StoreOutageError):
            await store.ping()
    finally:
        await anyio.to_thread.run_sync(own_cluster.start)

    async def over() -> bool | None:
        # The outage ends once the server has answered for a moment: keep asking.
        with contextlib.suppress(StoreOutageError):
            await store.ping()
        return True if any("answers again" in line for line in heard.lines) else None

    await _eventually(over)
    about_it = [line for line in heard.lines if "unreachable" in line or "answers again" in line]
    assert len(about_it) == 2, heard.lines
    assert "unreachable" in about_it[0]
    assert "answers again" in about_it[1]
    assert not heard.traced
    assert await store.list_children("some-task") == []


async def test_a_ledger_line_refused_while_the_server_is_down_is_written_once_it_is_back(
    own_cluster: PostgresCluster, store: PostgresTaskStore, heard: Heard
) -> None:
    ledger = DelegationLedger(store)
    async with anyio.create_task_group() as group:
        await group.start(ledger.run)
        await anyio.to_thread.run_sync(own_cluster.stop)
        try:
            ledger.note("parent", "billing", "child-1", TaskState.WORKING)
            with anyio.fail_after(30):
                await heard.arrived.wait()  # the ledger's write has failed
        finally:
            await anyio.to_thread.run_sync(own_cluster.start)

        async def written() -> list[ChildRecord] | None:
            with contextlib.suppress(StoreOutageError):
                return await store.list_children("parent") or None
            return None

        lines = await _eventually(written)
        group.cancel_scope.cancel()
    line = ChildRecord(parent_id="parent", agent="billing", child_id="child-1", state=WORKING)
    assert lines == [line]


async def test_skill_state_calls_while_the_server_is_down_are_outages_until_it_is_back(
    own_cluster: PostgresCluster, store: PostgresTaskStore, heard: Heard
) -> None:
    import asyncpg

    await store.save_state("plan/t1", b"step 1")
    # The test cluster does not sync its commits, and an immediate stop loses those not yet
    # written out: a checkpoint writes them (the migration's included) first.
    admin = await asyncpg.connect(own_cluster.dsn())
    try:
        await admin.execute("CHECKPOINT")
    finally:
        await admin.close()
    await anyio.to_thread.run_sync(own_cluster.stop)
    try:
        with pytest.raises(StoreOutageError, match="cannot write skill state 'plan/t1'"):
            await store.save_state("plan/t1", b"step 2")
        with pytest.raises(StoreOutageError, match="cannot read skill state 'plan/t1'"):
            await store.load_state("plan/t1")
        with pytest.raises(StoreOutageError, match="cannot delete skill state 'plan/t1'"):
            await store.drop_state("plan/t1")
        with pytest.raises(StoreOutageError, match="cannot delete expired skill state"):
            await store.drop_expired_states(utc_now())
    finally:
        await anyio.to_thread.run_sync(own_cluster.start)

    async def read() -> bytes | None:
        with contextlib.suppress(StoreOutageError):
            return await store.load_state("plan/t1")
        return None

    assert await _eventually(read) == b"step 1"
    await store.save_state("plan/t1", b"step 2")
    assert await store.load_state("plan/t1") == b"step 2"
    assert sum("unreachable" in line for line in heard.lines) == 1
