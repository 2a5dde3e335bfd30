"""The PostgreSQL store's owners of gateway tasks (the `GatewayOwnerStore` role): who started
each partner task reached through the gateway, kept as long as a finished task."""

from __future__ import annotations

from datetime import datetime

from hub.store.columns import CLAIM_PARTNER_TASK, PARTNER_TASK_OWNER, PARTNER_TASKS_OF
from hub.store.cursor import epoch_micros
from hub.store.postgres.database import PostgresDatabase, numbered

__all__ = ["PostgresGatewayOwners"]

_CLAIM = numbered(CLAIM_PARTNER_TASK)
_OWNER = numbered(PARTNER_TASK_OWNER)
_OWNED = numbered(PARTNER_TASKS_OF)


class PostgresGatewayOwners(PostgresDatabase):
    """The `partner_tasks` table: the first claim of a task wins, on any replica."""

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record the gateway owner of a partner task, unless it has one; the owner on record."""
        failure = f"cannot record the owner of a partner task in {self.where}"
        async with self._connection(failure, transaction=True) as db:
            await db.execute(_CLAIM, agent, task_id, owner, epoch_micros(at))
            recorded = await db.fetchval(_OWNER, agent, task_id)
        return str(recorded)

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """The gateway owner of a partner task, or None."""
        failure = f"cannot read the owner of a partner task from {self.where}"
        async with self._connection(failure) as db:
            owner = await db.fetchval(_OWNER, agent, task_id)
        return None if owner is None else str(owner)

    async def partner_tasks_of(self, owner: str, *, limit: int) -> list[tuple[str, str]]:
        """The partner tasks `owner` started through the gateway, most recently claimed
        first, at most `limit`."""
        failure = f"cannot read the partner tasks of a caller from {self.where}"
        async with self._connection(failure) as db:
            rows = await db.fetch(_OWNED, owner, limit)
        return [(str(row["agent"]), str(row["task_id"])) for row in rows]
