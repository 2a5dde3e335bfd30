"""The SQLite store's owners of gateway tasks (the `GatewayOwnerStore` role): who started
each partner task reached through the gateway, kept as long as a finished task."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from hub.errors import StoreError
from hub.store.columns import CLAIM_PARTNER_TASK, PARTNER_TASK_OWNER, PARTNER_TASKS_OF
from hub.store.cursor import epoch_micros
from hub.store.sqlite.database import SqliteDatabase

__all__ = ["SqliteGatewayOwners"]


class SqliteGatewayOwners(SqliteDatabase):
    """The `partner_tasks` table of the store's file: the first claim of a task wins."""

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record the gateway owner of a partner task, unless it has one; the owner on record."""
        with self._transaction(f"cannot record the owner of a partner task in {self.path}"):
            db = self._conn()
            db.execute(CLAIM_PARTNER_TASK, (agent, task_id, owner, epoch_micros(at)))
            (recorded,) = db.execute(PARTNER_TASK_OWNER, (agent, task_id)).fetchone()
        return str(recorded)

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """The gateway owner of a partner task, or None."""
        db = self._conn()
        try:
            row = db.execute(PARTNER_TASK_OWNER, (agent, task_id)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot read the owner of a partner task from {self.path} ({exc})"
            ) from None
        return None if row is None else str(row[0])

    async def partner_tasks_of(self, owner: str, *, limit: int) -> list[tuple[str, str]]:
        """The partner tasks `owner` started through the gateway, most recently claimed
        first, at most `limit`."""
        db = self._conn()
        try:
            rows = db.execute(PARTNER_TASKS_OF, (owner, limit)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot read the partner tasks of a caller from {self.path} ({exc})"
            ) from None
        return [(str(agent), str(task_id)) for agent, task_id in rows]
