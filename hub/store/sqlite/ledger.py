"""The SQLite store's delegation ledger (the lines of the `LedgerStore` role): the
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
from hub.store.records import ChildRecord, TaskDetails
from hub.store.sqlite.database import SqliteDatabase

__all__ = ["SqliteLedger"]


class SqliteLedger(SqliteDatabase):
    """Ledger lines in the store's file, in the order they were first written (rowid)."""

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines in one transaction, durably."""
        db = self._conn()
        rows = [child_row(record) for record in records]
        with self._transaction(f"cannot write the delegation ledger to {self.path}"):
            db.executemany(PUT_CHILD, rows)

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, oldest first."""
        query = f"{CHILD_COLUMNS} WHERE parent_id = ? ORDER BY rowid"
        return self._child_rows(query, (parent_id,))

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not terminal, oldest first."""
        # Named, as the planner would rather scan the table in rowid order than sort the
        # few live lines the partial index holds.
        query = f"{CHILD_COLUMNS} INDEXED BY children_live WHERE {LIVE_CHILD} ORDER BY rowid"
        return self._child_rows(query, ())

    async def describe_tasks(self, task_ids: Collection[str]) -> dict[str, TaskDetails]:
        """When each of `task_ids` was created and which partners it reached."""
        ids = builtins.list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        failure = f"cannot read task details from {self.path}"
        created = self._fetch(
            f"SELECT task_id, skill, owner, created_us FROM tasks WHERE task_id IN ({marks})",
            ids,
            failure,
        )
        lines = self._fetch(
            f"SELECT parent_id, agent FROM children WHERE parent_id IN ({marks}) ORDER BY rowid",
            ids,
            failure,
        )
        return task_details(created, lines)

    def _child_rows(self, query: str, args: Sequence[object]) -> builtins.list[ChildRecord]:
        rows = self._fetch(query, args, f"cannot read the delegation ledger from {self.path}")
        return [child_record(*row) for row in rows]
