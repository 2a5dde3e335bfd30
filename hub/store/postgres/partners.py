"""The PostgreSQL store's partners added at run time (the `RuntimePartnerStore` role): one
row per partner, and the notices every replica hears of their changes (a trigger on the
table), so each replica serves the same set."""

from __future__ import annotations

from collections.abc import Callable

from hub.store.postgres.database import PostgresDatabase
from hub.store.postgres.listener import listen
from hub.store.postgres.schema import PARTNERS_CHANNEL

__all__ = ["PostgresRuntimePartners"]


class PostgresRuntimePartners(PostgresDatabase):
    """Runtime partners in the database, in the order they were first stored (`seq`)."""

    async def put_runtime_partner(self, name: str, body: bytes) -> None:
        """Insert or replace a partner added at run time."""
        async with self._connection(f"cannot record partner '{name}' in {self.where}") as db:
            await db.execute(
                "INSERT INTO runtime_partners (name, body) VALUES ($1, $2) "
                "ON CONFLICT (name) DO UPDATE SET body = excluded.body",
                name,
                body,
            )

    async def delete_runtime_partner(self, name: str) -> bool:
        """Forget a partner added at run time; True if it was stored."""
        async with self._connection(f"cannot forget partner '{name}' in {self.where}") as db:
            status = await db.execute("DELETE FROM runtime_partners WHERE name = $1", name)
        return bool(status != "DELETE 0")

    async def list_runtime_partners(self) -> list[bytes]:
        """The stored partners added at run time, oldest first."""
        async with self._connection(f"cannot read the runtime partners of {self.where}") as db:
            rows = await db.fetch("SELECT body FROM runtime_partners ORDER BY seq")
        return [bytes(row[0]) for row in rows]

    async def runtime_partner_notices(self, receive: Callable[[], None]) -> None:
        """Call `receive` at every change of the runtime partners (and at each connection)."""
        self._open_pool()
        await listen(
            self.dsn,
            PARTNERS_CHANNEL,
            lambda _payload: receive(),
            connected=receive,
            where=self.where,
            outage=self.outage,
        )
