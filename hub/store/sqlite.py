"""The embedded default TaskStore: one SQLite file in WAL mode.

Durability: every `put` is its own committed transaction. With WAL and `synchronous=NORMAL`
a commit is in the WAL file (in the OS page cache) when the call returns, so killing the hub
process, even with SIGKILL, loses nothing it acknowledged; only a power loss or an OS crash
can drop the last commits. `synchronous=FULL` would survive those too, at the cost of an
fsync per write.

The calls are made on the event loop's thread: a write here takes tens of microseconds, less
than handing it to a worker thread would cost.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path

from hub.errors import StoreError
from hub.protocol import TERMINAL_STATES, Task, TaskState
from hub.store.base import TaskPage, TaskQuery, TaskRecord
from hub.store.cursor import decode_cursor, encode_cursor, sort_key

__all__ = ["SqliteTaskStore"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    task_id    TEXT PRIMARY KEY,
    context_id TEXT NOT NULL,
    state      TEXT NOT NULL,
    status_us  INTEGER NOT NULL,
    owner      TEXT NOT NULL,
    skill      TEXT NOT NULL,
    body       BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_time ON tasks (status_us DESC, task_id DESC);
CREATE INDEX IF NOT EXISTS tasks_by_context ON tasks (context_id, status_us DESC);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state);
"""
# An upsert updates the row in place; INSERT OR REPLACE would delete and re-insert it,
# touching every index twice.
_PUT = (
    "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET "
    "state = excluded.state, status_us = excluded.status_us, body = excluded.body"
)


class SqliteTaskStore:
    """Tasks in a SQLite file (created with its folder on `open`).

    Args:
        path: the database file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(_SCHEMA)
            row = db.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer a2a-hub (schema {row[0]}, this one "
                    f"knows {SCHEMA_VERSION}); upgrade a2a-hub or point store.path elsewhere"
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the task store {self.path} ({exc}); if the file is damaged, "
                "move it away and the hub will start a new one"
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot create the task store {self.path} ({exc.strerror})") from None
        self._db = db

    async def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"the task store {self.path} is closed")
        return self._db

    async def put(self, record: TaskRecord) -> None:
        try:
            self._conn().execute(_PUT, _row(record))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write task {record.task.id} to {self.path} ({exc})") from None

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        db = self._conn()
        rows = [_row(record) for record in records]
        try:
            db.execute("BEGIN")
            try:
                db.executemany(_PUT, rows)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {len(rows)} task(s) to {self.path} ({exc})") from None

    async def get(self, task_id: str) -> TaskRecord | None:
        row = (
            self._conn()
            .execute("SELECT body, skill, owner FROM tasks WHERE task_id = ?", (task_id,))
            .fetchone()
        )
        return None if row is None else _record(row)

    async def list(self, query: TaskQuery) -> TaskPage:
        where: builtins.list[str] = []
        args: builtins.list[object] = []
        if query.owner is not None:
            where.append("owner = ?")
            args.append(query.owner)
        if query.context_id is not None:
            where.append("context_id = ?")
            args.append(query.context_id)
        if query.state is not None:
            where.append("state = ?")
            args.append(query.state.value)
        if query.updated_after is not None:
            where.append("status_us >= ?")
            args.append(int(query.updated_after.timestamp() * 1_000_000))
        filters = " AND ".join(where) or "1"
        db = self._conn()
        total = db.execute(f"SELECT count(*) FROM tasks WHERE {filters}", args).fetchone()[0]
        page_filters, page_args = filters, list(args)
        if query.cursor:
            micros, task_id = decode_cursor(query.cursor)
            page_filters += " AND (status_us < ? OR (status_us = ? AND task_id < ?))"
            page_args += [micros, micros, task_id]
        rows = db.execute(
            f"SELECT body, skill, owner FROM tasks WHERE {page_filters} "
            "ORDER BY status_us DESC, task_id DESC LIMIT ?",
            [*page_args, query.page_size + 1],
        ).fetchall()
        records = [_record(row) for row in rows[: query.page_size]]
        more = len(rows) > query.page_size
        return TaskPage(
            records=records,
            next_cursor=encode_cursor(sort_key(records[-1].task)) if more and records else "",
            total_size=total,
        )

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        values = [state.value for state in states]
        if not values:
            return []
        marks = ",".join("?" * len(values))
        rows = (
            self._conn()
            .execute(f"SELECT body, skill, owner FROM tasks WHERE state IN ({marks})", values)
            .fetchall()
        )
        return [_record(row) for row in rows]

    async def delete_terminal_before(self, cutoff: datetime) -> int:
        terminal = [state.value for state in TERMINAL_STATES]
        marks = ",".join("?" * len(terminal))
        cursor = self._conn().execute(
            f"DELETE FROM tasks WHERE status_us < ? AND state IN ({marks})",
            [int(cutoff.timestamp() * 1_000_000), *terminal],
        )
        return cursor.rowcount


def _row(record: TaskRecord) -> tuple[str, str, str, int, str, str, bytes]:
    task = record.task
    return (
        task.id,
        task.context_id or "",
        task.status.state.value,
        sort_key(task)[0],
        record.owner,
        record.skill,
        task.to_json(),
    )


def _record(row: tuple[bytes, str, str]) -> TaskRecord:
    return TaskRecord(task=Task.model_validate_json(row[0]), skill=row[1], owner=row[2])
