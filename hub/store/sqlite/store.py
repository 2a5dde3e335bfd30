"""The embedded default TaskStore: one SQLite file in WAL mode.

Durability: every `put` and `put_many` is its own committed transaction. With WAL and
`synchronous=NORMAL` a commit has been written to the WAL file (in the OS page cache) when the
call returns, so killing the hub process, even with `kill -9`, loses nothing it acknowledged;
only an OS crash or a power loss can drop the last commits. `synchronous=FULL` would survive
those too, at the cost of an fsync on every write.

Speed: the calls run on the event loop's thread. A write takes tens of microseconds, less than
handing it to a worker thread and back would cost; each index is one more page written per
commit, so the schema keeps two full ones: one by status time that also carries `owner` and
`state` (the ListTasks filters on those read the index alone, never the task bodies) and one by
context, the one filter selective enough to need its own. Beside them, a partial index holds
only the unsettled tasks (what start-up looks for), and triggers keep a count per owner and
state, so ListTasks' `totalSize` is one look-up however many tasks are stored.

Push notification configs live in their own table, keyed by task and config id; they are
deleted with their task when it expires.

The schema and its migration steps are in `hub.store.sqlite.schema`. The delegation ledger
(`children`) sits beside the tasks and goes with its parent task when that expires.

One process owns the file from `open` to `close` (`hub.store.sqlite.lock`): a second store
on it, in another process or this one, is refused with `StoreInUseError`.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from hub.errors import StoreError
from hub.protocol import TERMINAL_STATES, TaskPushNotificationConfig, TaskState
from hub.store.base import ChildRecord, PushConfigRecord, TaskPage, TaskQuery, TaskRecord
from hub.store.columns import (
    LIVE_CHILD,
    UNSETTLED_TASK,
    counted_by_owner_and_state,
    task_record,
    task_row,
)
from hub.store.cursor import (
    check_page_size,
    decode_cursor,
    encode_cursor,
    epoch_micros,
)
from hub.store.sqlite.lock import StoreLock
from hub.store.sqlite.schema import configure, migrate

__all__ = ["SqliteTaskStore"]


# An upsert rewrites the row in place; INSERT OR REPLACE would delete and re-insert it,
# touching every index twice.
_PUT = (
    "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET "
    "context_id = excluded.context_id, state = excluded.state, status_us = excluded.status_us, "
    "owner = excluded.owner, skill = excluded.skill, body = excluded.body"
)
_GET = "SELECT body, skill, owner FROM tasks WHERE task_id = ?"
_ORDER = "ORDER BY status_us DESC, task_id DESC"
_TERMINAL = tuple(state.value for state in TERMINAL_STATES)
_DELETE_TERMINAL = (
    f"DELETE FROM tasks WHERE status_us < ? AND state IN ({','.join('?' * len(_TERMINAL))})"
)

_DELETE_EXPIRED_PUSH = (
    "DELETE FROM push_configs WHERE task_id IN (SELECT task_id FROM tasks "
    f"WHERE status_us < ? AND state IN ({','.join('?' * len(_TERMINAL))}))"
)
_DELETE_EXPIRED_CHILDREN = (
    "DELETE FROM children WHERE parent_id IN (SELECT task_id FROM tasks "
    f"WHERE status_us < ? AND state IN ({','.join('?' * len(_TERMINAL))}))"
)
# A line keeps its rowid (its place in `list_children`) when it is updated.
_PUT_CHILD = (
    "INSERT INTO children (parent_id, agent, child_id, state, note) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (parent_id, agent, child_id) DO UPDATE SET "
    "state = excluded.state, note = excluded.note"
)
_CLAIM = (
    "INSERT INTO partner_tasks (agent, task_id, owner, created_us) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (agent, task_id) DO NOTHING"
)
_OWNER = "SELECT owner FROM partner_tasks WHERE agent = ? AND task_id = ?"
_CHILD_COLUMNS = "SELECT parent_id, agent, child_id, state, note FROM children"
_PUT_PUSH = (
    "INSERT INTO push_configs (task_id, config_id, owner, protocol, body) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (task_id, config_id) DO UPDATE SET "
    "owner = excluded.owner, protocol = excluded.protocol, body = excluded.body"
)
_PUSH_COLUMNS = "SELECT body, owner, protocol FROM push_configs"


class SqliteTaskStore:
    """Task records in one SQLite file, created with its folder on `open`.

    Args:
        path: the database file (its `-wal` and `-shm` companions, and the `.lock` file of
            the process that owns it, sit beside it).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._lock = StoreLock(self.path)

    async def open(self) -> None:
        """Open the file, creating it or bringing its schema up to date.

        Raises:
            StoreInUseError: another process (or another store in this one) has it open.
            StoreError: the file cannot be created or read, is not a task store, or was
                written by a newer a2a-hub.
        """
        if self._db is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the task store {self.path} ({exc.strerror}); "
                "point store.path at a writable place"
            ) from None
        # Before the file is read: migrating it under a running hub is no better.
        self._lock.acquire()
        try:
            self._db = self._connect()
        except BaseException:
            self._lock.release()
            raise

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open the task store {self.path} ({exc}); "
                "point store.path at a writable file"
            ) from None
        try:
            configure(db, self.path)
            migrate(db, self.path)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise StoreError(
                f"cannot read the task store {self.path} ({exc}); if the file is damaged, "
                "move it (with its -wal file) aside and the hub will start a new one"
            ) from None
        except BaseException:
            db.close()
            raise
        return db

    async def close(self) -> None:
        """Checkpoint the WAL into the database file, close it and let another process
        have it; later calls raise."""
        db, self._db = self._db, None
        if db is not None:
            db.close()
        self._lock.release()

    async def ping(self) -> None:
        """Run `SELECT 1` on the connection (raises `StoreError` when closed or failing)."""
        db = self._conn()
        try:
            db.execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"the task store {self.path} does not answer ({exc})") from None

    @contextmanager
    def _transaction(self, failure: str) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back if it raises; an
        SQLite error becomes a `StoreError` saying `failure` and why."""
        db = self._conn()
        try:
            db.execute("BEGIN")
            try:
                yield
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"{failure} ({exc})") from None

    def _conn(self) -> sqlite3.Connection:
        db = self._db
        if db is None:
            raise StoreError(f"the task store {self.path} is closed; open() it before use")
        return db

    async def put(self, record: TaskRecord) -> None:
        """Insert or replace the record for `record.task.id`, durably."""
        db = self._conn()
        try:
            db.execute(_PUT, task_row(record))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write task {record.task.id} to {self.path} ({exc})") from None

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        """Insert or replace several records in one transaction, all or none."""
        db = self._conn()
        if not records:
            return
        rows = [task_row(record) for record in records]
        with self._transaction(f"cannot write {len(rows)} task(s) to {self.path}"):
            db.executemany(_PUT, rows)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record for `task_id`, or None."""
        db = self._conn()
        try:
            row = db.execute(_GET, (task_id,)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read task {task_id} from {self.path} ({exc})") from None
        return None if row is None else task_record(*row)

    async def list(self, query: TaskQuery) -> TaskPage:
        """A page of records matching `query`, newest status first.

        Raises:
            InvalidParamsError: the cursor is not one a store produced, or the page size is
                below 1.
        """
        db = self._conn()
        page_size = check_page_size(query.page_size)
        after = decode_cursor(query.cursor) if query.cursor else None
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
            args.append(epoch_micros(query.updated_after))
        if query.skill is not None:
            where.append("skill = ?")
            args.append(query.skill)
        filters = " AND ".join(where) or "1"
        page_filters, page_args = filters, args
        if after is not None:
            page_filters += " AND (status_us < ? OR (status_us = ? AND task_id < ?))"
            page_args = [*args, after[0], after[0], after[1]]
        try:
            total = self._count(db, query, filters, args)
            rows = db.execute(
                f"SELECT body, skill, owner, status_us, task_id FROM tasks "
                f"WHERE {page_filters} {_ORDER} LIMIT ?",
                [*page_args, page_size + 1],
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot list tasks in {self.path} ({exc})") from None
        page = rows[:page_size]
        # The cursor is built from the stored key, never recomputed from the parsed task.
        last = page[-1] if page else None
        return TaskPage(
            records=[task_record(row[0], row[1], row[2]) for row in page],
            next_cursor=encode_cursor((last[3], last[4])) if last and len(rows) > page_size else "",
            total_size=total,
        )

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        """Every record whose task is in one of `states`, newest status first."""
        db = self._conn()
        values = [TaskState(state).value for state in states]
        if not values:
            return []
        marks = ",".join("?" * len(values))
        # Unsettled states only: the partial index holds just those tasks.
        unsettled = f"{UNSETTLED_TASK} AND " if not TERMINAL_STATES.intersection(states) else ""
        try:
            rows = db.execute(
                f"SELECT body, skill, owner FROM tasks WHERE {unsettled}state IN ({marks}) "
                f"{_ORDER}",
                values,
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read tasks from {self.path} ({exc})") from None
        return [task_record(*row) for row in rows]

    async def delete_terminal_before(self, cutoff: datetime) -> int:
        """Delete records of terminal tasks whose status time is before `cutoff`."""
        db = self._conn()
        args = (epoch_micros(cutoff), *_TERMINAL)
        with self._transaction(f"cannot delete expired tasks from {self.path}"):
            db.execute(_DELETE_EXPIRED_PUSH, args)
            db.execute(_DELETE_EXPIRED_CHILDREN, args)
            deleted: int = db.execute(_DELETE_TERMINAL, args).rowcount
            db.execute("DELETE FROM partner_tasks WHERE created_us < ?", args[:1])
        return deleted

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Insert or replace one push config, durably."""
        db = self._conn()
        row = (
            record.task_id,
            record.config_id,
            record.owner,
            record.protocol,
            record.config.to_json(),
        )
        try:
            db.execute(_PUT_PUSH, row)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot write a push config of task {record.task_id} to {self.path} ({exc})"
            ) from None

    async def get_push_config(self, task_id: str, config_id: str) -> PushConfigRecord | None:
        """The push config `config_id` of `task_id`, or None."""
        query = f"{_PUSH_COLUMNS} WHERE task_id = ? AND config_id = ?"
        rows = self._push_rows(query, (task_id, config_id), f"task {task_id}")
        return rows[0] if rows else None

    async def list_push_configs(self, task_id: str) -> builtins.list[PushConfigRecord]:
        """Every push config of `task_id`, oldest first."""
        query = f"{_PUSH_COLUMNS} WHERE task_id = ? ORDER BY rowid"
        return self._push_rows(query, (task_id,), f"task {task_id}")

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Delete one push config; True if it existed."""
        db = self._conn()
        try:
            deleted: int = db.execute(
                "DELETE FROM push_configs WHERE task_id = ? AND config_id = ?",
                (task_id, config_id),
            ).rowcount
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot delete a push config of task {task_id} from {self.path} ({exc})"
            ) from None
        return deleted > 0

    async def find_push_configs(
        self, states: Collection[TaskState]
    ) -> builtins.list[PushConfigRecord]:
        """Every push config whose task is stored in one of `states`."""
        values = [TaskState(state).value for state in states]
        if not values:
            return []
        marks = ",".join("?" * len(values))
        query = (
            "SELECT p.body, p.owner, p.protocol FROM push_configs AS p "
            f"JOIN tasks AS t ON t.task_id = p.task_id WHERE t.state IN ({marks}) "
            "ORDER BY p.rowid"
        )
        return self._push_rows(query, values, "the live tasks")

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines in one transaction, durably."""
        db = self._conn()
        rows = [(r.parent_id, r.agent, r.child_id, r.state.value, r.note) for r in records]
        with self._transaction(f"cannot write the delegation ledger to {self.path}"):
            db.executemany(_PUT_CHILD, rows)

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, oldest first."""
        query = f"{_CHILD_COLUMNS} WHERE parent_id = ? ORDER BY rowid"
        return self._child_rows(query, (parent_id,))

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not terminal, oldest first."""
        # Named, as the planner would rather scan the table in rowid order than sort the
        # few live lines the partial index holds.
        query = (
            "SELECT parent_id, agent, child_id, state, note FROM children "
            f"INDEXED BY children_live WHERE {LIVE_CHILD} ORDER BY rowid"
        )
        return self._child_rows(query, ())

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record the gateway owner of a partner task, unless it has one; the owner on record."""
        with self._transaction(f"cannot record the owner of a partner task in {self.path}"):
            db = self._conn()
            db.execute(_CLAIM, (agent, task_id, owner, epoch_micros(at)))
            (recorded,) = db.execute(_OWNER, (agent, task_id)).fetchone()
        return str(recorded)

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """The gateway owner of a partner task, or None."""
        db = self._conn()
        try:
            row = db.execute(_OWNER, (agent, task_id)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot read the owner of a partner task from {self.path} ({exc})"
            ) from None
        return None if row is None else str(row[0])

    @staticmethod
    def _count(
        db: sqlite3.Connection, query: TaskQuery, filters: str, args: Sequence[object]
    ) -> int:
        """How many tasks match: from the maintained counts when only owner and state
        filter, so an unfiltered first page costs the same at a million tasks as at ten."""
        if not counted_by_owner_and_state(query):
            # Bounded by what the context or time filter selects, read from an index.
            (total,) = db.execute(f"SELECT count(*) FROM tasks WHERE {filters}", args).fetchone()
            return int(total)
        (total,) = db.execute(
            f"SELECT coalesce(sum(n), 0) FROM task_counts WHERE {filters}", args
        ).fetchone()
        return int(total)

    def _child_rows(self, query: str, args: Sequence[object]) -> builtins.list[ChildRecord]:
        db = self._conn()
        try:
            rows = db.execute(query, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot read the delegation ledger from {self.path} ({exc})"
            ) from None
        return [
            ChildRecord(
                parent_id=parent_id,
                agent=agent,
                child_id=child_id,
                state=TaskState(state),
                note=note,
            )
            for parent_id, agent, child_id, state, note in rows
        ]

    def _push_rows(
        self, query: str, args: Sequence[object], what: str
    ) -> builtins.list[PushConfigRecord]:
        db = self._conn()
        try:
            rows = db.execute(query, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot read push configs of {what} from {self.path} ({exc})"
            ) from None
        return [
            PushConfigRecord(
                config=TaskPushNotificationConfig.model_validate_json(body),
                owner=owner,
                protocol=protocol,
            )
            for body, owner, protocol in rows
        ]
