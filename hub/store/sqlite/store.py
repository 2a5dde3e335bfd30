"""The embedded default TaskStore: one SQLite file in WAL mode.

Durability: every `put` and `put_many` is its own committed transaction. With WAL and
`synchronous=NORMAL` a commit has been written to the WAL file (in the OS page cache) when the
call returns, so killing the hub process, even with `kill -9`, loses nothing it acknowledged;
only an OS crash or a power loss can drop the last commits. `synchronous=FULL` would survive
those too, at the cost of an fsync on every write.

Speed: each index is one more page written per commit, so the schema keeps two full ones: one
by status time that also carries `owner` and `state` (the ListTasks filters on those read the
index alone, never the task bodies) and one by context, the one filter selective enough to
need its own. Beside them, a partial index holds only the unsettled tasks (what start-up looks
for), and triggers keep a count per owner and state, so ListTasks' `totalSize` is one look-up
however many tasks are stored.

This module holds the task records and the store that composes every role; the file itself
is `database.py`, and each other role has a module of its own (`push_configs.py`,
`ledger.py`, `owners.py`, `state.py`), all on one connection. The schema and its migration
steps are in `schema.py`.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from hub.errors import StoreError
from hub.protocol import TERMINAL_STATES, TaskState
from hub.store.columns import (
    PUT_TASK,
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
from hub.store.records import SEARCH_COUNT_LIMIT, TaskPage, TaskQuery, TaskRecord
from hub.store.search import check_search
from hub.store.sqlite.ledger import SqliteLedger
from hub.store.sqlite.owners import SqliteGatewayOwners
from hub.store.sqlite.push_configs import SqlitePushConfigs
from hub.store.sqlite.state import SqliteSkillState

if TYPE_CHECKING:
    from hub.store.roles import TaskStore

__all__ = ["SqliteTaskStore"]


_GET = "SELECT body, skill, owner, trace_id FROM tasks WHERE task_id = ?"
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


class SqliteTaskStore(SqlitePushConfigs, SqliteLedger, SqliteGatewayOwners, SqliteSkillState):
    """Task records, and every other role's data, in one SQLite file, created with its
    folder on `open`.

    Args:
        path: the database file (its `-wal` and `-shm` companions, and the `.lock` file of
            the process that owns it, sit beside it).
    """

    async def put(self, record: TaskRecord) -> None:
        """Insert or replace the record for `record.task.id`, durably."""
        db = self._conn()
        try:
            db.execute(PUT_TASK, task_row(record))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write task {record.task.id} to {self.path} ({exc})") from None

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        """Insert or replace several records in one transaction, all or none."""
        db = self._conn()
        if not records:
            return
        rows = [task_row(record) for record in records]
        with self._transaction(f"cannot write {len(rows)} task(s) to {self.path}"):
            db.executemany(PUT_TASK, rows)

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
        # The searches: a set of tasks, looked up by key when it is small (counted first),
        # else read along the list order's index, each row checked against the set ("+"
        # keeps the planner from looking up its members).
        searched: builtins.list[str] = []
        if query.partner is not None:
            searched.append("{}task_id IN (SELECT parent_id FROM children WHERE agent = ?)")
            args.append(query.partner)
        if query.text is not None:
            searched.append("{}rowid IN (SELECT rowid FROM task_text WHERE task_text MATCH ?)")
            args.append(_phrase(check_search(query.text)))
        filters = " AND ".join([*where, *(term.format("") for term in searched)]) or "1"
        try:
            if searched:
                total = self._fetch_one(
                    f"SELECT count(*) FROM (SELECT 1 FROM tasks WHERE {filters} LIMIT ?)",
                    [*args, SEARCH_COUNT_LIMIT + 1],
                )
                if total > SEARCH_COUNT_LIMIT:
                    filters = " AND ".join([*where, *(term.format("+") for term in searched)])
            else:
                total = self._count(db, query, filters, args)
            page_filters, page_args = filters, args
            if after is not None:
                page_filters += " AND (status_us < ? OR (status_us = ? AND task_id < ?))"
                page_args = [*args, after[0], after[0], after[1]]
            chosen = f"WHERE {page_filters} {_ORDER} LIMIT ?"
            if searched:
                # A small set is sorted by its keys, and only the page's bodies are read.
                chosen = f"WHERE rowid IN (SELECT rowid FROM tasks {chosen}) {_ORDER}"
            rows = db.execute(
                f"SELECT body, skill, owner, status_us, task_id FROM tasks {chosen}",
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

    def _fetch_one(self, query: str, args: Sequence[object]) -> int:
        (value,) = self._conn().execute(query, args).fetchone()
        return int(value)

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        """Every record whose task is in one of `states`, newest status first."""
        self._conn()
        values = [TaskState(state).value for state in states]
        if not values:
            return []
        marks = ",".join("?" * len(values))
        # Unsettled states only: the partial index holds just those tasks.
        unsettled = f"{UNSETTLED_TASK} AND " if not TERMINAL_STATES.intersection(states) else ""
        query = f"SELECT body, skill, owner FROM tasks WHERE {unsettled}state IN ({marks}) {_ORDER}"
        rows = self._fetch(query, values, f"cannot read tasks from {self.path}")
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


def _phrase(text: str) -> str:
    """`text` as one FTS5 phrase: its trigrams in a row, so it matches as a substring."""
    return '"' + text.replace('"', '""') + '"'


if TYPE_CHECKING:
    # mypy holds the store to every role it plays.
    _roles: TaskStore = SqliteTaskStore("")
