"""What replicas sharing one PostgreSQL database need beyond task records: versioned writes
with their events, the event log, leases on running tasks, and the notices of changes.

A batch of changes is one statement: rows still at the version their writer read are
updated (or inserted when new), the events of exactly those rows are appended, and the
statement returns which tasks it wrote. Two replicas that write one task from the same
version cannot both win: the second waits on the row lock, then finds the version moved.
A trigger on the version column notifies every listening replica at commit (the schema's
`task_changed`). Times come from the database's clock, so replicas need not agree on theirs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from hub.store.columns import task_record, task_row
from hub.store.outage import Outage
from hub.store.postgres.database import PostgresDatabase
from hub.store.postgres.listener import listen
from hub.store.postgres.schema import NOTICE_CHANNEL, RUNNING_TASK
from hub.store.records import TaskChange, TaskNotice, TaskRecord

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "PostgresReplication",
    "commit_arguments",
    "commit_changes",
    "expired_leases",
    "listen_for_notices",
    "renew_leases",
    "with_version",
]

_NOW_US = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"

_COMMIT = f"""
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[],
                         $6::text[], $7::bytea[], $8::text[], $9::bigint[], $10::text[],
                         $11::bigint[], $12::bigint[])
        AS i(task_id, context_id, state, status_us, owner, skill, body, trace_id, created_us,
             search_text, expected, version)
),
updated AS (
    UPDATE tasks AS t SET context_id = i.context_id, state = i.state,
        status_us = i.status_us, owner = i.owner, skill = i.skill, body = i.body,
        search_text = i.search_text, version = i.version, replica = $13,
        lease_us = {_NOW_US} + $14
    FROM input AS i WHERE t.task_id = i.task_id AND t.version = i.expected
    RETURNING t.task_id
),
inserted AS (
    INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body, trace_id,
                       created_us, search_text, version, replica, lease_us)
    SELECT i.task_id, i.context_id, i.state, i.status_us, i.owner, i.skill, i.body,
           i.trace_id, i.created_us, i.search_text, i.version, $13, {_NOW_US} + $14
    FROM input AS i WHERE i.expected = 0
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
won AS (SELECT task_id FROM updated UNION ALL SELECT task_id FROM inserted),
logged AS (
    INSERT INTO task_events (task_id, seq, body)
    SELECT e.task_id, e.seq, e.body
    FROM unnest($15::text[], $16::bigint[], $17::bytea[]) AS e(task_id, seq, body)
    WHERE e.task_id IN (SELECT task_id FROM won)
)
SELECT task_id FROM won
"""

# A row another statement is writing is skipped rather than waited for (two statements
# locking the same rows in different orders deadlock): a write of this replica renews the
# lease itself, and one of another replica means the task moved, which the caller checks.
_RENEW = f"""
UPDATE tasks SET lease_us = {_NOW_US} + $2 WHERE task_id IN (
    SELECT task_id FROM tasks
    WHERE replica = $1 AND task_id = ANY($3::text[]) AND {RUNNING_TASK}
    FOR UPDATE SKIP LOCKED
) RETURNING task_id
"""
# A lease is not taken as expired within one lease of the server's start: a restart cut
# every replica off at once, and each gets that long to come back and renew what it runs.
_SERVER_START_US = "(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint"
_EXPIRED = (
    f"SELECT body, skill, owner, version, trace_id FROM tasks WHERE {RUNNING_TASK} "
    f"AND lease_us < {_NOW_US} AND {_SERVER_START_US} + $1 < {_NOW_US} ORDER BY lease_us"
)

RECONNECTED = TaskNotice(task_id="", version=0, replica="")
"""The notice given after the listening connection was (re)made: anything may have changed."""


def commit_arguments(changes: Sequence[TaskChange]) -> list[list[object]]:
    """The statement's arrays for `changes`, built at once (before any await, so the rows
    are the tasks as they were when the changes were taken)."""
    columns: list[list[object]] = [[] for _ in range(12)]
    events: list[list[object]] = [[], [], []]
    for change in changes:
        row = task_row(change.record)
        for column, value in zip(
            columns, (*row, change.expected, change.record.version), strict=True
        ):
            column.append(value)
        for offset, body in enumerate(change.events, start=1):
            events[0].append(row[0])
            events[1].append(change.expected + offset)
            events[2].append(body)
    return [*columns, *events]


async def commit_changes(
    db: asyncpg.Connection, arguments: list[list[object]], *, replica: str, lease: float
) -> set[str]:
    """Write the changes `arguments` hold in one statement; the ids of the tasks that were
    not written."""
    columns, events = arguments[:12], arguments[12:]
    rows = await db.fetch(_COMMIT, *columns, replica, round(lease * 1_000_000), *events)
    written = {row[0] for row in rows}
    return {str(task_id) for task_id in columns[0]} - written


async def renew_leases(
    db: asyncpg.Connection, task_ids: Collection[str], *, replica: str, lease: float
) -> set[str]:
    rows = await db.fetch(_RENEW, replica, round(lease * 1_000_000), list(task_ids))
    return {str(row[0]) for row in rows}


async def expired_leases(db: asyncpg.Connection, *, lease: float) -> list[TaskRecord]:
    rows = await db.fetch(_EXPIRED, round(lease * 1_000_000))
    return [with_version(task_record(row[0], row[1], row[2], row[4]), row[3]) for row in rows]


def with_version(record: TaskRecord, version: int) -> TaskRecord:
    return dataclasses.replace(record, version=version)


def parse_notice(payload: str) -> TaskNotice | None:
    task_id, _, rest = payload.partition(" ")
    version, _, replica = rest.partition(" ")
    if not task_id or not version.isdigit():
        return None
    return TaskNotice(task_id=task_id, version=int(version), replica=replica)


async def listen_for_notices(
    dsn: str, receive: Callable[[TaskNotice], None], *, where: str, outage: Outage
) -> None:
    """Every task change as a `TaskNotice`, and `RECONNECTED` whenever the listening
    connection is (re)made."""

    def heard(payload: str) -> None:
        notice = parse_notice(payload)
        if notice is not None:
            receive(notice)

    await listen(
        dsn,
        NOTICE_CHANNEL,
        heard,
        connected=lambda: receive(RECONNECTED),
        where=where,
        outage=outage,
    )


class PostgresReplication(PostgresDatabase):
    """The replicas' part of the `SharedTaskRecords` role: versioned writes, the event log,
    leases and notices (the store sets `replica` and `lease`)."""

    replica: str
    lease: float

    async def commit(self, changes: Sequence[TaskChange]) -> set[str]:
        """Write the changes still at their expected version, with their events; the ids
        of the tasks another replica had moved."""
        if not changes:
            self._open_pool()
            return set()
        arguments = commit_arguments(changes)
        failure = f"cannot write {len(changes)} task(s) to {self.where}"
        async with self._connection(failure) as db:
            return await commit_changes(db, arguments, replica=self.replica, lease=self.lease)

    async def events_after(self, task_id: str, version: int) -> list[tuple[int, bytes]]:
        """The events of `task_id` numbered above `version`, oldest first."""
        async with self._connection(f"cannot read the events of task {task_id}") as db:
            rows = await db.fetch(
                "SELECT seq, body FROM task_events WHERE task_id = $1 AND seq > $2 ORDER BY seq",
                task_id,
                version,
            )
        return [(int(row[0]), bytes(row[1])) for row in rows]

    async def renew_leases(self, task_ids: Collection[str]) -> set[str]:
        """Extend this replica's hold on those of `task_ids` it holds and that are running,
        by one lease; their ids."""
        if not task_ids:
            self._open_pool()
            return set()
        async with self._connection(f"cannot renew task leases in {self.where}") as db:
            return await renew_leases(db, task_ids, replica=self.replica, lease=self.lease)

    async def expired_leases(self) -> list[TaskRecord]:
        """Running tasks whose holder's lease has expired (none within one lease of the
        server's start: each replica gets that long to renew after a restart)."""
        async with self._connection(f"cannot read task leases from {self.where}") as db:
            return await expired_leases(db, lease=self.lease)

    async def notices(self, receive: Callable[[TaskNotice], None]) -> None:
        """Every committed change, from a listening connection of its own, until cancelled."""
        self._open_pool()
        await listen_for_notices(self.dsn, receive, where=self.where, outage=self.outage)
