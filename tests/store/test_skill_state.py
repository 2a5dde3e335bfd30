"""Skills' own state (`SkillStateStore`): a value per key, saved and read byte for byte on
every backend, refused past its limits, swept when it expires, kept across a reopened SQLite
file, read by every replica of a PostgreSQL store, and added to a store of the schema before."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from hub.errors import StoreError
from hub.protocol import TaskState
from hub.store import (
    MAX_STATE_KEY,
    MAX_STATE_VALUE,
    PostgresTaskStore,
    SqliteTaskStore,
    TaskStore,
)
from hub.store.columns import PUT_CHILD, child_row, task_row
from hub.store.postgres import schema as postgres_schema
from hub.store.records import ChildRecord
from hub.store.schema import migrate_schema, read_schema
from hub.store.sqlite import schema as sqlite_schema
from tests.postgres import PostgresCluster, fresh_database

from .records import at, make_record
from .schemas import postgres_at, sqlite_at, step_adding

pytestmark = pytest.mark.anyio

PLAN = "plan/task-1"
TRANSCRIPT = "transcript/alice/ctx-1/planner"
EVERY_BYTE = bytes(range(256)) * 4


async def test_a_saved_value_is_loaded_byte_for_byte(store: TaskStore) -> None:
    await store.save_state(PLAN, b'{"step": 1}')
    await store.save_state(TRANSCRIPT, EVERY_BYTE)
    assert await store.load_state(PLAN) == b'{"step": 1}'
    assert await store.load_state(TRANSCRIPT) == EVERY_BYTE


async def test_a_key_never_saved_loads_none(store: TaskStore) -> None:
    assert await store.load_state("plan/nobody") is None


@pytest.mark.parametrize("value", [b"", b"\x00", b"\x00\xff\x00", "ünïcødé ✓".encode()], ids=repr)
async def test_empty_and_binary_values_survive_exactly(store: TaskStore, value: bytes) -> None:
    await store.save_state(PLAN, value)
    loaded = await store.load_state(PLAN)
    assert loaded == value
    assert type(loaded) is bytes


async def test_a_save_replaces_the_value_and_its_expiry(store: TaskStore) -> None:
    await store.save_state(PLAN, b"step 1", expires_at=at(10))
    await store.save_state(PLAN, b"step 2, longer than the first")
    assert await store.load_state(PLAN) == b"step 2, longer than the first"
    # The second save set no expiry: the sweep keeps it.
    assert await store.drop_expired_states(at(100)) == 0
    await store.save_state(PLAN, b"2")
    assert await store.load_state(PLAN) == b"2"


async def test_a_dropped_key_loads_none_and_dropping_it_again_is_harmless(
    store: TaskStore,
) -> None:
    await store.save_state(PLAN, b"x")
    await store.save_state(TRANSCRIPT, b"y")
    await store.drop_state(PLAN)
    assert await store.load_state(PLAN) is None
    await store.drop_state(PLAN)
    await store.drop_state("never-saved")
    assert await store.load_state(TRANSCRIPT) == b"y"


async def test_the_sweep_drops_the_values_expired_by_then_and_counts_them(
    store: TaskStore,
) -> None:
    await store.save_state("early", b"1", expires_at=at(0))
    await store.save_state("on-time", b"2", expires_at=at(5))
    await store.save_state("later", b"3", expires_at=at(10))
    await store.save_state("forever", b"4")
    # An expired value is read until the sweep drops it.
    assert await store.load_state("early") == b"1"
    assert await store.drop_expired_states(at(5)) == 2
    assert await store.drop_expired_states(at(5)) == 0
    assert [await store.load_state(key) for key in ("early", "on-time", "later", "forever")] == [
        None,
        None,
        b"3",
        b"4",
    ]
    assert await store.drop_expired_states(at(1_000_000)) == 1
    assert await store.load_state("forever") == b"4"


async def test_keys_up_to_the_limit_are_kept_apart(store: TaskStore) -> None:
    longest = "k" * MAX_STATE_KEY
    await store.save_state(longest, b"long")
    await store.save_state(longest[:-1], b"shorter")
    await store.save_state("plan/Task-1", b"case")
    await store.save_state(PLAN, b"lower")
    assert await store.load_state(longest) == b"long"
    assert await store.load_state(longest[:-1]) == b"shorter"
    assert await store.load_state("plan/Task-1") == b"case"
    assert await store.load_state(PLAN) == b"lower"


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("k" * (MAX_STATE_KEY + 1), "keys are at most 512"),
        ("", "must not be empty"),
        ("plan/\x00", "NUL"),
    ],
    ids=["too long", "empty", "NUL"],
)
async def test_a_bad_key_is_refused_naming_what_to_fix(
    store: TaskStore, key: str, said: str
) -> None:
    with pytest.raises(ValueError, match=said):
        await store.save_state(key, b"x")
    with pytest.raises(ValueError, match=said):
        await store.load_state(key)
    with pytest.raises(ValueError, match=said):
        await store.drop_state(key)


async def test_a_value_past_8_mib_is_refused_and_one_at_the_limit_is_kept(
    store: TaskStore,
) -> None:
    assert MAX_STATE_VALUE == 8 * 1024 * 1024
    at_limit = bytes(range(256)) * (MAX_STATE_VALUE // 256)
    await store.save_state(PLAN, at_limit)
    assert await store.load_state(PLAN) == at_limit
    with pytest.raises(ValueError, match=r"at most 8388608 bytes \(8 MiB\)"):
        await store.save_state(PLAN, at_limit + b"!")
    with pytest.raises(ValueError, match="8 MiB"):
        await store.save_state(TRANSCRIPT, at_limit + b"!")
    # A refused save changes nothing.
    assert await store.load_state(PLAN) == at_limit
    assert await store.load_state(TRANSCRIPT) is None


_CALLS: dict[str, Callable[[TaskStore], Awaitable[object]]] = {
    "load_state": lambda s: s.load_state(PLAN),
    "save_state": lambda s: s.save_state(PLAN, b"x"),
    "drop_state": lambda s: s.drop_state(PLAN),
    "drop_expired_states": lambda s: s.drop_expired_states(at(0)),
}


@pytest.mark.parametrize("call", _CALLS.values(), ids=_CALLS.keys())
async def test_every_state_call_after_close_raises_store_error(
    store: TaskStore, call: Callable[[TaskStore], Awaitable[object]]
) -> None:
    await store.close()
    with pytest.raises(StoreError):
        await call(store)


async def test_sqlite_state_survives_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "hub.db"
    store = SqliteTaskStore(path)
    await store.open()
    await store.save_state(PLAN, EVERY_BYTE, expires_at=at(5))
    await store.save_state(TRANSCRIPT, b"")
    await store.close()

    again = SqliteTaskStore(path)
    await again.open()
    try:
        assert await again.load_state(PLAN) == EVERY_BYTE
        assert await again.load_state(TRANSCRIPT) == b""
        # The expiry was kept with it.
        assert await again.drop_expired_states(at(5)) == 1
    finally:
        await again.close()


async def test_sqlite_sweep_reads_only_the_values_that_expire(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "hub.db")
    await store.open()
    await store.close()
    with sqlite3.connect(tmp_path / "hub.db") as db:
        plan = db.execute(
            "EXPLAIN QUERY PLAN DELETE FROM skill_state WHERE expires_us <= ?", (0,)
        ).fetchall()
    db.close()
    assert any("skill_state_expiring" in str(row[-1]) for row in plan), plan


async def test_a_sqlite_file_of_the_previous_schema_gains_the_state_table_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hub.db"
    record = make_record("t1", when=at(1), owner="alice")
    line = ChildRecord(parent_id="t1", agent="billing", child_id="c1", state=TaskState.WORKING)
    previous = step_adding(sqlite_schema._MIGRATIONS, "CREATE TABLE skill_state")
    with sqlite3.connect(path) as old:
        sqlite_at(old, previous)
        old.execute(
            "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            task_row(record)[:7],
        )
        old.execute(PUT_CHILD, child_row(line))
    old.close()
    before = await read_schema("sqlite", path=str(path))
    assert (before.version, before.current) == (previous, False)

    store = SqliteTaskStore(path)
    await store.open()
    try:
        assert await store.get("t1") == record
        assert await store.list_children("t1") == [line]
        assert await store.load_state(PLAN) is None
        await store.save_state(PLAN, b"first", expires_at=at(2))
        assert await store.load_state(PLAN) == b"first"
        assert await store.drop_expired_states(at(2)) == 1
    finally:
        await store.close()
    assert (await read_schema("sqlite", path=str(path))).current


async def test_every_postgres_replica_reads_what_another_saved(
    postgres_cluster: PostgresCluster,
) -> None:
    async with fresh_database(postgres_cluster) as dsn:
        first, second = PostgresTaskStore(dsn, pool_size=2), PostgresTaskStore(dsn, pool_size=2)
        await first.open()
        await second.open()
        try:
            await first.save_state(PLAN, EVERY_BYTE)
            assert await second.load_state(PLAN) == EVERY_BYTE
            await second.save_state(PLAN, b"step 2", expires_at=at(5))
            assert await first.load_state(PLAN) == b"step 2"
            assert await first.drop_expired_states(at(5)) == 1
            assert await second.load_state(PLAN) is None
            await second.save_state(TRANSCRIPT, b"turns")
            await first.drop_state(TRANSCRIPT)
            assert await second.load_state(TRANSCRIPT) is None
        finally:
            await first.close()
            await second.close()


async def test_a_postgres_database_of_the_previous_schema_gains_the_state_table(
    postgres_cluster: PostgresCluster,
) -> None:
    import asyncpg

    record = make_record("t1", when=at(1), owner="alice")
    previous = step_adding(postgres_schema._MIGRATIONS, "CREATE TABLE skill_state")
    async with fresh_database(postgres_cluster) as dsn:
        db = await asyncpg.connect(dsn)
        try:
            await postgres_at(db, previous)
            await db.execute(
                "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7)",
                *task_row(record)[:7],
            )
        finally:
            await db.close()
        before = await read_schema("postgres", dsn=dsn)
        assert before.version == previous
        assert "a2a-hub db migrate" in before.describe()

        assert (await migrate_schema("postgres", dsn=dsn)).version == previous
        assert (await read_schema("postgres", dsn=dsn)).current
        store = PostgresTaskStore(dsn, pool_size=2)
        await store.open()
        try:
            got = await store.get("t1")
            assert got is not None
            assert got.task == record.task
            await store.save_state(PLAN, b"first")
            assert await store.load_state(PLAN) == b"first"
        finally:
            await store.close()
