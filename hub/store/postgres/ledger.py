"""The PostgreSQL store's delegation ledger (the lines of the `LedgerStore` role): the
`children` table beside the tasks, whose lines go with their parent task when it expires."""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence

from hub.store.columns import (
    CHILD_COLUMNS,
    LIVE_CHILD,
    PUT_CHILD,
    child_record,
    child_row,
    task_details,
)
from hub.store.postgres.database import PostgresDatabase, numbered
from hub.store.records import ChildRecord, TaskDetails

__all__ = ["PostgresLedger"]

_PUT_CHILD = numbered(PUT_CHILD)


class PostgresLedger(PostgresDatabase):
    """Ledger lines in the database, in the order they were first written (`seq`)."""

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines in one transaction, durably."""
        rows = [child_row(record) for record in records]
        if not rows:
            self._open_pool()
            return
        failure = f"cannot write the delegation ledger to {self.where}"
        async with self._connection(failure, transaction=True) as db:
            await db.executemany(_PUT_CHILD, rows)

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, oldest first."""
        query = f"{CHILD_COLUMNS} WHERE parent_id = $1 ORDER BY seq"
        return await self._child_rows(query, (parent_id,))

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not terminal, oldest first."""
        return await self._child_rows(f"{CHILD_COLUMNS} WHERE {LIVE_CHILD} ORDER BY seq", ())

    async def describe_tasks(self, task_ids: Collection[str]) -> dict[str, TaskDetails]:
        """When each of `task_ids` was created and which partners it reached."""
        ids = builtins.list(dict.fromkeys(task_ids))
        if not ids:
            self._open_pool()
            return {}
        async with self._connection(f"cannot read task details from {self.where}") as db:
            created = await db.fetch(
                "SELECT task_id, skill, owner, created_us FROM tasks "
                "WHERE task_id = ANY($1::text[])",
                ids,
            )
            lines = await db.fetch(
                "SELECT parent_id, agent FROM children WHERE parent_id = ANY($1::text[]) "
                "ORDER BY seq",
                ids,
            )
        return task_details(
            ((row[0], row[1], row[2], row[3]) for row in created),
            ((row[0], row[1]) for row in lines),
        )

    async def _child_rows(self, query: str, args: Sequence[object]) -> builtins.list[ChildRecord]:
        async with self._connection(f"cannot read the delegation ledger from {self.where}") as db:
            rows = await db.fetch(query, *args)
        return [child_record(*row) for row in rows]
