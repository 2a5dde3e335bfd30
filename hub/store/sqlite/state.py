"""The SQLite store's skill state (the `SkillStateStore` role): the `skill_state` table, a
value per key, each save one autocommitted statement; values that expire go in the task
manager's sweep of expired tasks."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from hub.errors import StoreError
from hub.store.columns import DROP_EXPIRED_STATES, PUT_STATE, check_state_key, state_row
from hub.store.cursor import epoch_micros
from hub.store.sqlite.database import SqliteDatabase

__all__ = ["SqliteSkillState"]


class SqliteSkillState(SqliteDatabase):
    """Skills' state in the store's file, durable as a task write is (`store.py`)."""

    async def load_state(self, key: str) -> bytes | None:
        """The value saved under `key`, or None."""
        rows = self._fetch(
            "SELECT value FROM skill_state WHERE key = ?",
            (check_state_key(key),),
            f"cannot read skill state {key!r} from {self.path}",
        )
        return bytes(rows[0][0]) if rows else None

    async def save_state(
        self, key: str, value: bytes, *, expires_at: datetime | None = None
    ) -> None:
        """Insert or replace the value under `key`, durably (refused past the limits)."""
        row = state_row(key, value, expires_at)
        db = self._conn()
        try:
            db.execute(PUT_STATE, row)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write skill state {key!r} to {self.path} ({exc})") from None

    async def drop_state(self, key: str) -> None:
        """Forget the value under `key`."""
        check_state_key(key)
        db = self._conn()
        try:
            db.execute("DELETE FROM skill_state WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot delete skill state {key!r} from {self.path} ({exc})"
            ) from None

    async def drop_expired_states(self, now: datetime) -> int:
        """Delete every value that expires at or before `now`; how many went."""
        db = self._conn()
        try:
            deleted: int = db.execute(DROP_EXPIRED_STATES, (epoch_micros(now),)).rowcount
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot delete expired skill state from {self.path} ({exc})"
            ) from None
        return deleted
