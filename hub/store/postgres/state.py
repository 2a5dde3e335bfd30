"""The PostgreSQL store's skill state (the `SkillStateStore` role): the `skill_state` table,
a value per key that every replica reads, each save one autocommitted statement; values that
expire go in the task manager's sweep of expired tasks."""

from __future__ import annotations

from datetime import datetime

from hub.store.columns import DROP_EXPIRED_STATES, PUT_STATE, check_state_key, state_row
from hub.store.cursor import epoch_micros
from hub.store.postgres.database import PostgresDatabase, numbered

__all__ = ["PostgresSkillState"]

_PUT = numbered(PUT_STATE)
_DROP_EXPIRED = numbered(DROP_EXPIRED_STATES)


class PostgresSkillState(PostgresDatabase):
    """Skills' state in the database, durable when a save returns (its own transaction)."""

    async def load_state(self, key: str) -> bytes | None:
        """The value saved under `key`, or None."""
        check_state_key(key)
        failure = f"cannot read skill state {key!r} from {self.where}"
        async with self._connection(failure) as db:
            value = await db.fetchval("SELECT value FROM skill_state WHERE key = $1", key)
        return None if value is None else bytes(value)

    async def save_state(
        self, key: str, value: bytes, *, expires_at: datetime | None = None
    ) -> None:
        """Insert or replace the value under `key`, durably (refused past the limits)."""
        row = state_row(key, value, expires_at)
        async with self._connection(f"cannot write skill state {key!r} to {self.where}") as db:
            await db.execute(_PUT, *row)

    async def drop_state(self, key: str) -> None:
        """Forget the value under `key`."""
        check_state_key(key)
        async with self._connection(f"cannot delete skill state {key!r} from {self.where}") as db:
            await db.execute("DELETE FROM skill_state WHERE key = $1", key)

    async def drop_expired_states(self, now: datetime) -> int:
        """Delete every value that expires at or before `now`; how many went."""
        failure = f"cannot delete expired skill state from {self.where}"
        async with self._connection(failure) as db:
            status = await db.execute(_DROP_EXPIRED, epoch_micros(now))
        return int(status.rsplit(" ", 1)[-1])
