"""The PostgreSQL store as replicas share it: versioned writes (exactly one of two writers
from the same version wins), the per-task event log, notices of changes, and leases."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import anyio
import pytest

from hub.protocol import TaskState
from hub.store import PostgresTaskStore, SharedTaskStore, TaskChange, TaskNotice, TaskRecord
from tests.postgres import PostgresCluster, fresh_database

from .records import make_record

pytestmark = pytest.mark.anyio


@pytest.fixture
async def replicas(postgres_cluster: PostgresCluster) -> AsyncIterator[list[PostgresTaskStore]]:
    """Three stores on one fresh database, as three replicas would open it."""
    async with fresh_database(postgres_cluster) as dsn:
        stores = [PostgresTaskStore(dsn, pool_size=4, lease=0.5) for _ in range(3)]
        for store in stores:
            await store.open()
        yield stores
        for store in stores:
            await store.close()


def moved(record: TaskRecord, state: TaskState, version: int) -> TaskRecord:
    task = record.task.model_copy(
        update={"status": record.task.status.model_copy(update={"state": state})}
    )
    return dataclasses.replace(record, task=task, version=version)


async def test_the_postgres_store_is_a_shared_store(replicas: list[PostgresTaskStore]) -> None:
    assert isinstance(replicas[0], SharedTaskStore)
    assert len({store.replica for store in replicas}) == 3


async def test_of_two_writers_from_one_version_exactly_one_wins(
    replicas: list[PostgresTaskStore],
) -> None:
    first, second, reader = replicas
    created = dataclasses.replace(make_record("t1"), version=1)
    assert (
        await first.commit([TaskChange(record=created, expected=0, events=[b'{"a":1}'])]) == set()
    )

    lost: dict[str, set[str]] = {}

    async def write(store: PostgresTaskStore, state: TaskState, name: str) -> None:
        change = TaskChange(
            record=moved(created, state, 2), expected=1, events=[f'{{"{name}":2}}'.encode()]
        )
        lost[name] = await store.commit([change])

    async with anyio.create_task_group() as group:
        group.start_soon(write, first, TaskState.COMPLETED, "first")
        group.start_soon(write, second, TaskState.CANCELED, "second")
    assert sorted(len(ids) for ids in lost.values()) == [0, 1]
    winner = "first" if not lost["first"] else "second"
    stored = await reader.get("t1")
    assert stored is not None
    assert stored.version == 2
    expected_state = TaskState.COMPLETED if winner == "first" else TaskState.CANCELED
    assert stored.task.status.state is expected_state
    assert await reader.events_after("t1", 0) == [
        (1, b'{"a":1}'),
        (2, f'{{"{winner}":2}}'.encode()),
    ]
    assert await reader.events_after("t1", 1) == [(2, f'{{"{winner}":2}}'.encode())]


async def test_a_batch_writes_the_tasks_that_did_not_move_and_names_those_that_did(
    replicas: list[PostgresTaskStore],
) -> None:
    first, second, _ = replicas
    a, b = (dataclasses.replace(make_record(name), version=1) for name in ("a", "b"))
    await first.commit([TaskChange(record=r, expected=0, events=[b"{}"]) for r in (a, b)])
    await second.commit(
        [TaskChange(record=moved(b, TaskState.CANCELED, 2), expected=1, events=[b"{}"])]
    )

    lost = await first.commit(
        [
            TaskChange(record=moved(a, TaskState.COMPLETED, 2), expected=1, events=[b"{}"]),
            TaskChange(record=moved(b, TaskState.COMPLETED, 2), expected=1, events=[b"{}"]),
        ]
    )
    assert lost == {"b"}
    stored_a, stored_b = await first.get("a"), await first.get("b")
    assert stored_a is not None
    assert stored_b is not None
    assert stored_a.task.status.state is TaskState.COMPLETED
    assert stored_b.task.status.state is TaskState.CANCELED


async def test_every_replica_hears_each_committed_change(replicas: list[PostgresTaskStore]) -> None:
    writer, listener, _ = replicas
    heard: list[TaskNotice] = []
    listening, arrived = anyio.Event(), anyio.Event()

    def receive(notice: TaskNotice) -> None:
        heard.append(notice)
        (arrived if notice.task_id == "t1" else listening).set()

    async with anyio.create_task_group() as group:
        group.start_soon(listener.notices, receive)
        with anyio.fail_after(5):
            await listening.wait()  # the (re)connection notice comes first
        record = dataclasses.replace(make_record("t1"), version=3)
        await writer.commit([TaskChange(record=record, expected=0, events=[b"1", b"2", b"3"])])
        with anyio.fail_after(5):
            await arrived.wait()
        group.cancel_scope.cancel()
    assert heard[0].task_id == ""
    assert heard[-1] == TaskNotice(task_id="t1", version=3, replica=writer.replica)


async def test_a_lease_not_renewed_expires_and_a_renewed_one_does_not(
    replicas: list[PostgresTaskStore],
) -> None:
    holder, other, _ = replicas
    # The holder's lease is set for each step rather than timed by the clock: a minute does
    # not run out on a busy machine, and a lease of nothing is over as soon as it is taken.
    holder.lease = 60.0
    running = dataclasses.replace(make_record("run"), version=1)
    parked = dataclasses.replace(make_record("parked", state=TaskState.INPUT_REQUIRED), version=1)
    await holder.commit(
        [TaskChange(record=r, expected=0, events=[b"{}"]) for r in (running, parked)]
    )
    assert await other.expired_leases() == []

    for _ in range(4):
        assert await holder.renew_leases(["run", "parked"]) == {"run"}
        assert await other.expired_leases() == []
    holder.lease = 0.0
    assert await holder.renew_leases(["run", "parked"]) == {"run"}
    expired = await _until_expired(other)  # a whole lease without renewal
    assert [record.task.id for record in expired] == ["run"]
    assert expired[0].version == 1

    # Renewed, the lapsed lease holds again.
    holder.lease = 60.0
    assert await holder.renew_leases(["run", "parked"]) == {"run"}
    assert await other.expired_leases() == []


async def _until_expired(store: PostgresTaskStore) -> list[TaskRecord]:
    """The expired leases `store` sees, once it sees one (it takes none as expired within one
    lease of the server's start)."""
    with anyio.fail_after(30):
        while True:
            expired = await store.expired_leases()
            if expired:
                return expired
            await anyio.sleep(0.01)


async def test_a_lease_is_renewed_only_for_the_running_tasks_named_and_held(
    replicas: list[PostgresTaskStore],
) -> None:
    holder, other, _ = replicas
    kept, dropped = (dataclasses.replace(make_record(name), version=1) for name in ("kept", "gone"))
    await holder.commit([TaskChange(record=r, expected=0, events=[b"{}"]) for r in (kept, dropped)])

    assert await other.renew_leases(["kept", "gone"]) == set()  # not its tasks
    with anyio.fail_after(10):
        while True:
            # "gone" is a row the holder no longer runs: it stops naming it, so it expires.
            assert await holder.renew_leases(["kept"]) == {"kept"}
            expired = await other.expired_leases()
            if expired:
                break
            await anyio.sleep(0.05)
    assert [record.task.id for record in expired] == ["gone"]
    assert await holder.renew_leases([]) == set()
