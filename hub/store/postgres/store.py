"""A TaskStore on PostgreSQL, for hubs that share one database.

Durability: every `put` is its own committed transaction (several-statement writes share
one), so what a call acknowledged survives the hub process and, with the server's default
`synchronous_commit`, the server's machine.

The driver is asyncpg, through a connection pool the store owns from `open` to `close`. It is
an optional dependency (`pip install 'a2a-hub[postgres]'`), imported when the store opens.
Queries mirror the SQLite store's one for one (same cursor, same order, same maintained
counts), so the conformance suite holds both to the same answers. What replicas need beyond
that (`SharedTaskStore`) is in `hub.store.postgres.replica`.
"""

from __future__ import annotations

import builtins
import contextlib
import re
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from hub.errors import StoreError, StoreOutageError
from hub.protocol import TERMINAL_STATES, TaskPushNotificationConfig, TaskState
from hub.store.base import (
    ChildRecord,
    PushConfigRecord,
    TaskPage,
    TaskQuery,
    TaskRecord,
)
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
from hub.store.outage import Outage
from hub.store.postgres.replica import ReplicaMethods, unreachable, with_version
from hub.store.postgres.schema import migrate

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PostgresTaskStore", "import_driver", "redact_dsn"]

_PUT = (
    "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (task_id) DO UPDATE SET "
    "context_id = excluded.context_id, state = excluded.state, status_us = excluded.status_us, "
    "owner = excluded.owner, skill = excluded.skill, body = excluded.body"
)
_GET = "SELECT body, skill, owner, version FROM tasks WHERE task_id = $1"
_ORDER = "ORDER BY status_us DESC, task_id DESC"
_TERMINAL = [state.value for state in TERMINAL_STATES]
_EXPIRED = "SELECT task_id FROM tasks WHERE status_us < $1 AND state = ANY($2::text[])"
_PUT_CHILD = (
    "INSERT INTO children (parent_id, agent, child_id, state, note) VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (parent_id, agent, child_id) DO UPDATE SET "
    "state = excluded.state, note = excluded.note"
)
_CHILD_COLUMNS = "SELECT parent_id, agent, child_id, state, note FROM children"
_PUT_PUSH = (
    "INSERT INTO push_configs (task_id, config_id, owner, protocol, body) "
    "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id, config_id) DO UPDATE SET "
    "owner = excluded.owner, protocol = excluded.protocol, body = excluded.body"
)
_PUSH_COLUMNS = "SELECT body, owner, protocol FROM push_configs"
_OWNER = "SELECT owner FROM partner_tasks WHERE agent = $1 AND task_id = $2"


async def _keep_session(_db: asyncpg.Connection) -> None:
    """The pool's reset of a connection it takes back: none. The store's connections never
    LISTEN, SET or hold a session lock (listeners have connections of their own; the
    migration lock ends with its transaction), and asyncpg's default reset would cost a
    round trip at every release."""


def import_driver() -> ModuleType:
    """The asyncpg module, imported on first use (it is an optional dependency).

    Raises:
        StoreError: it is not installed; the message says how to install it.
    """
    try:
        import asyncpg
    except ImportError:
        raise StoreError(
            "store.kind is postgres but the driver is not installed: "
            "pip install 'a2a-hub[postgres]'"
        ) from None
    return cast(ModuleType, asyncpg)


def redact_dsn(dsn: str) -> str:
    """`dsn` without its password, fit for messages and logs."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", dsn)


class PostgresTaskStore(ReplicaMethods):
    """Task records in a PostgreSQL database, its schema created or migrated on `open`.

    It is a `SharedTaskStore`: hubs on one database are replicas of one hub.

    Args:
        dsn: a libpq connection URI (`postgresql://user:password@host:5432/database`).
        pool_size: most connections the store keeps open.
        lease: seconds this replica's hold on a running task lasts unless renewed.
    """

    def __init__(self, dsn: str, *, pool_size: int = 10, lease: float = 15.0) -> None:
        self.dsn = dsn
        self.where = redact_dsn(dsn)
        self.replica = uuid.uuid4().hex[:12]
        self.lease = lease
        self._pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self.outage = Outage(self.where)

    async def open(self) -> None:
        """Connect, and create or migrate the schema.

        Raises:
            StoreError: asyncpg is not installed, the server cannot be reached or refuses
                the credentials, or the schema is newer than this a2a-hub knows.
        """
        if self._pool is not None:
            return
        asyncpg = import_driver()
        try:
            # No floor of idle connections: the driver's task that restores one after a
            # server restart logs a traceback at each attempt, and the store reports the
            # outage itself (`outage`), once.
            pool = await asyncpg.create_pool(
                self.dsn,
                min_size=0,
                max_size=self._pool_size,
                command_timeout=30,
                reset=_keep_session,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise StoreError(f"cannot connect to the task store {self.where} ({exc})") from None
        try:
            async with pool.acquire() as db:
                await migrate(db, self.where)
        except BaseException as exc:
            await pool.close()
            if isinstance(exc, asyncpg.PostgresError):
                raise StoreError(f"cannot migrate the task store {self.where} ({exc})") from None
            raise
        self._pool = pool

    async def close(self) -> None:
        """Close every connection; later calls raise."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def ping(self) -> None:
        """Run `SELECT 1` on a pooled connection (raises `StoreError` when it cannot)."""
        async with self._connection(f"the task store {self.where} does not answer") as db:
            await db.fetchval("SELECT 1")

    def _open_pool(self) -> asyncpg.Pool:
        pool = self._pool
        if pool is None:
            raise StoreError(f"the task store {self.where} is closed; open() it before use")
        return pool

    @asynccontextmanager
    async def _connection(self, failure: str, *, transaction: bool = False) -> AsyncIterator[Any]:
        """A pooled connection (in a transaction if asked); a database error becomes a
        `StoreError` saying `failure` and why, a server that cannot be reached a
        `StoreOutageError` (and the start of an outage, logged once)."""
        import asyncpg

        pool = self._open_pool()
        try:
            async with pool.acquire() as db:
                try:
                    if transaction:
                        async with db.transaction():
                            yield db
                    else:
                        yield db
                except unreachable(asyncpg):
                    # Cut, or left in the middle of an operation: not given back to the pool
                    # to fail the next caller too (a cut one has gone back already).
                    with contextlib.suppress(asyncpg.InterfaceError):
                        db.terminate()
                    raise
        except unreachable(asyncpg) as exc:
            self.outage.failed(exc)
            raise StoreOutageError(f"{failure} ({exc})") from None
        except asyncpg.PostgresError as exc:
            self.outage.answered()
            raise StoreError(f"{failure} ({exc})") from None
        self.outage.answered()

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
        return None if row is None else with_version(task_record(row[0], row[1], row[2]), row[3])

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
            if counted_by_owner_and_state(query):
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

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Insert or replace one push config, durably."""
        failure = f"cannot write a push config of task {record.task_id} to {self.where}"
        async with self._connection(failure) as db:
            await db.execute(
                _PUT_PUSH,
                record.task_id,
                record.config_id,
                record.owner,
                record.protocol,
                record.config.to_json(),
            )

    async def get_push_config(self, task_id: str, config_id: str) -> PushConfigRecord | None:
        """The push config `config_id` of `task_id`, or None."""
        query = f"{_PUSH_COLUMNS} WHERE task_id = $1 AND config_id = $2"
        rows = await self._push_rows(query, (task_id, config_id), f"task {task_id}")
        return rows[0] if rows else None

    async def list_push_configs(self, task_id: str) -> builtins.list[PushConfigRecord]:
        """Every push config of `task_id`, oldest first."""
        query = f"{_PUSH_COLUMNS} WHERE task_id = $1 ORDER BY seq"
        return await self._push_rows(query, (task_id,), f"task {task_id}")

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Delete one push config; True if it existed."""
        failure = f"cannot delete a push config of task {task_id} from {self.where}"
        async with self._connection(failure) as db:
            status = await db.execute(
                "DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2",
                task_id,
                config_id,
            )
        return bool(status != "DELETE 0")

    async def find_push_configs(
        self, states: Collection[TaskState]
    ) -> builtins.list[PushConfigRecord]:
        """Every push config whose task is stored in one of `states`."""
        values = [TaskState(state).value for state in states]
        if not values:
            return []
        query = (
            "SELECT p.body, p.owner, p.protocol FROM push_configs AS p "
            "JOIN tasks AS t ON t.task_id = p.task_id WHERE t.state = ANY($1::text[]) "
            "ORDER BY p.seq"
        )
        return await self._push_rows(query, (values,), "the live tasks")

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines in one transaction, durably."""
        rows = [(r.parent_id, r.agent, r.child_id, r.state.value, r.note) for r in records]
        if not rows:
            self._open_pool()
            return
        failure = f"cannot write the delegation ledger to {self.where}"
        async with self._connection(failure, transaction=True) as db:
            await db.executemany(_PUT_CHILD, rows)

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, oldest first."""
        query = f"{_CHILD_COLUMNS} WHERE parent_id = $1 ORDER BY seq"
        return await self._child_rows(query, (parent_id,))

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not terminal, oldest first."""
        return await self._child_rows(f"{_CHILD_COLUMNS} WHERE {LIVE_CHILD} ORDER BY seq", ())

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record the gateway owner of a partner task, unless it has one; the owner on record."""
        failure = f"cannot record the owner of a partner task in {self.where}"
        async with self._connection(failure, transaction=True) as db:
            await db.execute(
                "INSERT INTO partner_tasks (agent, task_id, owner, created_us) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (agent, task_id) DO NOTHING",
                agent,
                task_id,
                owner,
                epoch_micros(at),
            )
            recorded = await db.fetchval(_OWNER, agent, task_id)
        return str(recorded)

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """The gateway owner of a partner task, or None."""
        failure = f"cannot read the owner of a partner task from {self.where}"
        async with self._connection(failure) as db:
            owner = await db.fetchval(_OWNER, agent, task_id)
        return None if owner is None else str(owner)

    async def _child_rows(self, query: str, args: Sequence[object]) -> builtins.list[ChildRecord]:
        async with self._connection(f"cannot read the delegation ledger from {self.where}") as db:
            rows = await db.fetch(query, *args)
        return [
            ChildRecord(
                parent_id=row[0],
                agent=row[1],
                child_id=row[2],
                state=TaskState(row[3]),
                note=row[4],
            )
            for row in rows
        ]

    async def _push_rows(
        self, query: str, args: Sequence[object], what: str
    ) -> builtins.list[PushConfigRecord]:
        async with self._connection(f"cannot read push configs of {what} from {self.where}") as db:
            rows = await db.fetch(query, *args)
        return [
            PushConfigRecord(
                config=TaskPushNotificationConfig.model_validate_json(row[0]),
                owner=row[1],
                protocol=row[2],
            )
            for row in rows
        ]
