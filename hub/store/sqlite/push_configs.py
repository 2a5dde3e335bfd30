"""The SQLite store's push notification configs (the `PushConfigStore` role): their own
table, keyed by task and config id, deleted with their task when it expires."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Collection, Sequence

from hub.errors import StoreError
from hub.protocol import TaskState
from hub.store.columns import PUSH_COLUMNS, PUT_PUSH, push_record, push_row
from hub.store.records import PushConfigRecord
from hub.store.sqlite.database import SqliteDatabase

__all__ = ["SqlitePushConfigs"]


class SqlitePushConfigs(SqliteDatabase):
    """Push configs in the store's file, in the order they were first written (rowid)."""

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Insert or replace one push config, durably."""
        db = self._conn()
        try:
            db.execute(PUT_PUSH, push_row(record))
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot write a push config of task {record.task_id} to {self.path} ({exc})"
            ) from None

    async def get_push_config(self, task_id: str, config_id: str) -> PushConfigRecord | None:
        """The push config `config_id` of `task_id`, or None."""
        query = f"{PUSH_COLUMNS} WHERE task_id = ? AND config_id = ?"
        rows = self._push_rows(query, (task_id, config_id), f"task {task_id}")
        return rows[0] if rows else None

    async def list_push_configs(self, task_id: str) -> builtins.list[PushConfigRecord]:
        """Every push config of `task_id`, oldest first."""
        query = f"{PUSH_COLUMNS} WHERE task_id = ? ORDER BY rowid"
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

    def _push_rows(
        self, query: str, args: Sequence[object], what: str
    ) -> builtins.list[PushConfigRecord]:
        rows = self._fetch(query, args, f"cannot read push configs of {what} from {self.path}")
        return [push_record(*row) for row in rows]
