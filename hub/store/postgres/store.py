"""A TaskStore on PostgreSQL, for hubs that share one database.

Durability: every `put` is its own committed transaction (several-statement writes share
one), so what a call acknowledged survives the hub process and, with the server's default
`synchronous_commit`, the server's machine.

Queries mirror the SQLite store's one for one (same cursor, same order, same maintained
counts), so the conformance suite holds both to the same answers. This module holds the task
records and the store that composes every role; the pool is `database.py`, each other role
has a module of its own (`push_configs.py`, `ledger.py`, `owners.py`, `partners.py`,
`state.py`), and what replicas need beyond that (`SharedTaskRecords`) is in `replica.py`.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

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
from hub.store.postgres.database import numbered
from hub.store.postgres.ledger import PostgresLedger
from hub.store.postgres.owners import PostgresGatewayOwners
from hub.store.postgres.partners import PostgresRuntimePartners
from hub.store.postgres.push_configs import PostgresPushConfigs
from hub.store.postgres.replica import PostgresReplication, with_version
from hub.store.postgres.state import PostgresSkillState
from hub.store.records import SEARCH_COUNT_LIMIT, TaskPage, TaskQuery, TaskRecord
from hub.store.search import check_search

if TYPE_CHECKING:
    from hub.store.roles import SharedTaskStore

__all__ = ["PostgresTaskStore"]

_PUT = numbered(PUT_TASK)
_GET = "SELECT body, skill, owner, version, trace_id FROM tasks WHERE task_id = $1"
_ORDER = "ORDER BY status_us DESC, task_id DESC"
_TERMINAL = [state.value for state in TERMINAL_STATES]
_EXPIRED = "SELECT task_id FROM tasks WHERE status_us < $1 AND state = ANY($2::text[])"


class PostgresTaskStore(
    PostgresReplication,
    PostgresPushConfigs,
    PostgresLedger,
    PostgresGatewayOwners,
    PostgresRuntimePartners,
    PostgresSkillState,
):
    """Task records, and every other role's data, in a PostgreSQL database, its schema
    created or migrated on `open`.

    It is a `SharedTaskStore`: hubs on one database are replicas of one hub.

    Args:
        dsn: a libpq connection URI (`postgresql://user:password@host:5432/database`).
        pool_size: most connections the store keeps open.
        lease: seconds this replica's hold on a running task lasts unless renewed.
    """

    def __init__(self, dsn: str, *, pool_size: int = 10, lease: float = 15.0) -> None:
        super().__init__(dsn, pool_size=pool_size)
        self.replica = uuid.uuid4().hex[:12]
        self.lease = lease

    async def put(self, record: TaskRecord) -> None:
        """Insert or replace the record for `record.task.id`, durably."""
        async with self._connection(f"cannot write task {record.task.id} to {self.where}") as db:
            await db.execute(_PUT, *task_row(record))

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        """Insert or replace several records in one transaction, all or none."""
        if not records:
            self._open_pool()
            return
        rows = [task_row(record) for record in records]
        failure = f"cannot write {len(rows)} task(s) to {self.where}"
        async with self._connection(failure, transaction=True) as db:
            await db.executemany(_PUT, rows)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record for `task_id`, or None."""
        async with self._connection(f"cannot read task {task_id} from {self.where}") as db:
            row = await db.fetchrow(_GET, task_id)
        return (
            None
            if row is None
            else with_version(task_record(row[0], row[1], row[2], row[4]), row[3])
        )

    async def list(self, query: TaskQuery) -> TaskPage:
        """A page of records matching `query`, newest status first.

        Raises:
            InvalidParamsError: the cursor is not one a store produced, or the page size is
                below 1.
        """
        page_size = check_page_size(query.page_size)
        after = decode_cursor(query.cursor) if query.cursor else None
        where: builtins.list[str] = []
        args: builtins.list[object] = []

        def bind(condition: str, value: object) -> None:
            args.append(value)
            where.append(condition.replace("?", f"${len(args)}"))

        if query.owner is not None:
            bind("owner = ?", query.owner)
        if query.state is not None:
            bind("state = ?", query.state.value)
        counted = " AND ".join(where) or "TRUE"
        count_args = builtins.list(args)
        if query.context_id is not None:
            bind("context_id = ?", query.context_id)
        if query.updated_after is not None:
            bind("status_us >= ?", epoch_micros(query.updated_after))
        if query.skill is not None:
            bind("skill = ?", query.skill)
        if query.partner is not None:
            bind("task_id IN (SELECT parent_id FROM children WHERE agent = ?)", query.partner)
        if query.text is not None:
            bind("search_text ILIKE ?", _pattern(check_search(query.text)))
        filters = " AND ".join(where) or "TRUE"
        filter_args = builtins.list(args)
        if after is not None:
            args.append(after[0])
            args.append(after[1])
            n = len(args)
            where.append(f"(status_us < ${n - 1} OR (status_us = ${n - 1} AND task_id < ${n}))")
        args.append(page_size + 1)
        page_query = (
            f"SELECT body, skill, owner, status_us, task_id FROM tasks "
            f"WHERE {' AND '.join(where) or 'TRUE'} {_ORDER} LIMIT ${len(args)}"
        )
        async with self._connection(f"cannot list tasks in {self.where}") as db:
            if query.partner is not None or query.text is not None:
                limit = SEARCH_COUNT_LIMIT + 1
                total = await db.fetchval(
                    f"SELECT count(*) FROM (SELECT 1 FROM tasks WHERE {filters} "
                    f"LIMIT {limit}) AS found",
                    *filter_args,
                )
            elif counted_by_owner_and_state(query):
                total = await db.fetchval(
                    f"SELECT coalesce(sum(n), 0) FROM task_counts WHERE {counted}", *count_args
                )
            else:
                total = await db.fetchval(
                    f"SELECT count(*) FROM tasks WHERE {filters}", *filter_args
                )
            rows = await db.fetch(page_query, *args)
        page = rows[:page_size]
        last = page[-1] if page else None
        return TaskPage(
            records=[task_record(row[0], row[1], row[2]) for row in page],
            next_cursor=encode_cursor((last[3], last[4])) if last and len(rows) > page_size else "",
            total_size=int(total),
        )

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        """Every record whose task is in one of `states`, newest status first."""
        values = [TaskState(state).value for state in states]
        if not values:
            return []
        unsettled = f"{UNSETTLED_TASK} AND " if not TERMINAL_STATES.intersection(states) else ""
        query = (
            f"SELECT body, skill, owner FROM tasks WHERE {unsettled}state = ANY($1::text[]) "
            f"{_ORDER}"
        )
        async with self._connection(f"cannot read tasks from {self.where}") as db:
            rows = await db.fetch(query, values)
        return [task_record(row[0], row[1], row[2]) for row in rows]

    async def delete_terminal_before(self, cutoff: datetime) -> int:
        """Delete records of terminal tasks whose status time is before `cutoff`."""
        micros = epoch_micros(cutoff)
        failure = f"cannot delete expired tasks from {self.where}"
        async with self._connection(failure, transaction=True) as db:
            await db.execute(
                f"DELETE FROM push_configs WHERE task_id IN ({_EXPIRED})", micros, _TERMINAL
            )
            await db.execute(
                f"DELETE FROM children WHERE parent_id IN ({_EXPIRED})", micros, _TERMINAL
            )
            await db.execute(
                f"DELETE FROM task_events WHERE task_id IN ({_EXPIRED})", micros, _TERMINAL
            )
            status = await db.execute(
                "DELETE FROM tasks WHERE status_us < $1 AND state = ANY($2::text[])",
                micros,
                _TERMINAL,
            )
            await db.execute("DELETE FROM partner_tasks WHERE created_us < $1", micros)
        return int(status.rsplit(" ", 1)[-1])


def _pattern(text: str) -> str:
    """An ILIKE pattern matching `text` anywhere (its wildcards and backslashes escaped)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


if TYPE_CHECKING:
    # mypy holds the store to every role it plays.
    _roles: SharedTaskStore = PostgresTaskStore("")
