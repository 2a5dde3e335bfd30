"""What only the SQLite store does: a file that survives restarts, crashes and old versions."""

from __future__ import annotations

import signal
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest

from hub.errors import StoreError
from hub.protocol import TaskState
from hub.store import ChildRecord, SqliteTaskStore, TaskPage, TaskQuery
from hub.store.columns import LIVE_CHILD, UNSETTLED_TASK
from hub.store.sqlite.schema import SCHEMA_VERSION

from .records import at, make_record

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


async def test_records_survive_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    await store.open()
    records = [make_record(f"t{n}", when=at(n), owner="alice") for n in range(3)]
    await store.put_many(records)
    await store.close()

    again = SqliteTaskStore(str(path))
    await again.open()
    assert [await again.get(f"t{n}") for n in range(3)] == records
    assert (await again.list(TaskQuery(owner="alice"))).total_size == 3
    await again.close()


async def test_the_file_is_in_wal_mode_and_its_folders_are_created(tmp_path: Path) -> None:
    path = tmp_path / "var" / "deep" / "tasks.db"
    store = SqliteTaskStore(path)
    await store.open()
    await store.put(make_record("t1"))
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert path.with_name("tasks.db-wal").exists()
    await store.close()


async def test_acknowledged_puts_survive_kill_9_of_the_writing_process(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    script = Path(__file__).with_name("put_until_killed.py")
    acknowledged: list[str] = []
    buffer = b""
    with anyio.fail_after(60):
        async with await anyio.open_process(
            [sys.executable, str(script), str(path)], cwd=REPO
        ) as process:
            assert process.stdout is not None
            async for chunk in process.stdout:
                buffer += chunk
                if buffer.count(b"\n") >= 300:
                    break
            process.send_signal(signal.SIGKILL)
            # Whatever the child printed before it died was acknowledged too.
            async for chunk in process.stdout:
                buffer += chunk
            assert await process.wait() == -signal.SIGKILL
    # Only whole lines: a line cut by the kill was never fully acknowledged.
    acknowledged = [line.decode() for line in buffer.split(b"\n")[:-1]]
    assert len(acknowledged) >= 300

    store = SqliteTaskStore(path)
    await store.open()
    missing = [task_id for task_id in acknowledged if await store.get(task_id) is None]
    assert missing == []
    await store.close()


async def test_put_many_stores_nothing_when_one_record_fails(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    await store.open()
    with sqlite3.connect(path) as other:
        other.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON tasks WHEN NEW.task_id = 'bad' "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    with pytest.raises(StoreError):
        await store.put_many([make_record("good"), make_record("bad")])
    assert await store.get("good") is None
    with pytest.raises(StoreError):
        await store.put(make_record("bad"))
    await store.put(make_record("good"))
    assert await store.get("good") is not None
    await store.close()


async def test_a_file_that_is_not_a_database_raises_store_error_naming_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.db"
    path.write_bytes(b"this is not a SQLite database, just some text " * 100)
    with pytest.raises(StoreError) as caught:
        await SqliteTaskStore(path).open()
    assert str(path) in str(caught.value)


async def test_a_path_that_cannot_be_a_file_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "tasks.db").mkdir()
    with pytest.raises(StoreError):
        await SqliteTaskStore(tmp_path / "tasks.db").open()
    (tmp_path / "plain").write_text("")
    with pytest.raises(StoreError):
        await SqliteTaskStore(tmp_path / "plain" / "tasks.db").open()


async def test_a_file_from_a_newer_hub_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    await store.open()
    await store.close()
    with sqlite3.connect(path) as other:
        other.execute("UPDATE schema_version SET version = version + 1")
    with pytest.raises(StoreError):
        await SqliteTaskStore(path).open()


async def test_a_file_of_schema_version_1_is_migrated_with_its_records(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    record = make_record("t1", when=at(1), owner="alice")
    with sqlite3.connect(path) as old:
        old.executescript(
            """
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (1);
            CREATE TABLE tasks (
                task_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL,
                status_us INTEGER NOT NULL, owner TEXT NOT NULL, skill TEXT NOT NULL,
                body BLOB NOT NULL
            );
            CREATE INDEX tasks_by_time ON tasks (status_us DESC, task_id DESC);
            CREATE INDEX tasks_by_context ON tasks (context_id, status_us DESC);
            CREATE INDEX tasks_by_state ON tasks (state);
            """
        )
        old.execute(
            "INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                "t1",
                "ctx",
                "TASK_STATE_WORKING",
                1_735_689_601_000_000,
                "alice",
                "echo",
                record.task.to_json(),
            ),
        )
    old.close()
    store = SqliteTaskStore(path)
    await store.open()
    assert await store.get("t1") == record
    assert (await store.list(TaskQuery(owner="alice"))).records == [record]
    await store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        indexes = {
            row[0]
            for row in check.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
    check.close()
    assert indexes == {
        "tasks_by_status_time",
        "tasks_by_context_time",
        "tasks_unsettled",
        "children_live",
        "partner_tasks_by_time",
        "partner_tasks_by_owner",
        "skill_state_expiring",
        "tasks_by_skill_time",
        "children_by_agent",
    }
    # The maintained counts start from the rows the old file had.
    assert (await _reopened(path)).total_size == 1


async def _reopened(path: Path) -> TaskPage:
    store = SqliteTaskStore(path)
    await store.open()
    try:
        return await store.list(TaskQuery(owner="alice"))
    finally:
        await store.close()


async def test_total_size_follows_every_insert_state_change_owner_change_and_delete(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    await store.open()
    await store.put_many(
        [make_record(f"a{n}", when=at(n), owner="alice") for n in range(5)]
        + [make_record(f"b{n}", when=at(n), owner="bob") for n in range(3)]
    )
    await store.put(make_record("a0", when=at(10), owner="alice", state=TaskState.COMPLETED))
    await store.put(make_record("a1", when=at(11), owner="bob", state=TaskState.COMPLETED))
    await store.put(make_record("a2", when=at(12), owner="alice"))  # no change of count
    assert await store.delete_terminal_before(at(11)) == 1  # a0

    async def sizes(query: TaskQuery) -> tuple[int, int]:
        """The maintained count, and a count of the rows themselves."""
        counted = (await store.list(query)).total_size
        listed, cursor = 0, ""
        while True:
            page = await store.list(
                TaskQuery(owner=query.owner, state=query.state, page_size=2, cursor=cursor)
            )
            listed += len(page.records)
            if not (cursor := page.next_cursor):
                return counted, listed

    for query in (
        TaskQuery(),
        TaskQuery(owner="alice"),
        TaskQuery(owner="bob"),
        TaskQuery(state=TaskState.COMPLETED),
        TaskQuery(owner="bob", state=TaskState.COMPLETED),
        TaskQuery(owner="carol"),
    ):
        counted, listed = await sizes(query)
        assert counted == listed, query
    assert (await store.list(TaskQuery())).total_size == 7
    await store.close()


async def test_start_up_look_ups_read_only_the_unsettled_rows(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    await store.open()
    await store.put_many(
        [make_record(f"done{n}", when=at(n), state=TaskState.COMPLETED) for n in range(50)]
        + [
            make_record("run", when=at(60)),
            make_record("ask", when=at(61), state=TaskState.INPUT_REQUIRED),
        ]
    )
    await store.put_children(
        [
            ChildRecord(parent_id="run", agent="p", child_id="c1", state=TaskState.WORKING),
            ChildRecord(parent_id="done1", agent="p", child_id="c2", state=TaskState.COMPLETED),
        ]
    )
    found = await store.find_in_states([TaskState.SUBMITTED, TaskState.WORKING])
    assert [record.task.id for record in found] == ["run"]
    assert [child.child_id for child in await store.find_live_children()] == ["c1"]
    await store.close()

    with sqlite3.connect(path) as check:
        plans = {
            table: " ".join(row[3] for row in check.execute(f"EXPLAIN QUERY PLAN {query}"))
            for table, query in (
                ("tasks", _unsettled_query()),
                ("children", _live_children_query()),
            )
        }
    check.close()
    assert "tasks_unsettled" in plans["tasks"]
    assert "children_live" in plans["children"]


def _unsettled_query() -> str:
    return (
        f"SELECT body FROM tasks WHERE {UNSETTLED_TASK} AND state IN "
        "('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING') ORDER BY status_us DESC, task_id DESC"
    )


def _live_children_query() -> str:
    return (
        f"SELECT child_id FROM children INDEXED BY children_live WHERE {LIVE_CHILD} ORDER BY rowid"
    )
