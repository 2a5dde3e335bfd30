"""The PostgreSQL database a store works on: its driver (asyncpg, an optional dependency
imported when the store opens), the connection pool the store owns from `open` to `close`,
and the connections its parts share, with the driver's errors translated.

A server that cannot be reached raises `StoreOutageError` and starts an outage, logged once
for the whole store (`hub.store.outage`); any other database error raises `StoreError`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from hub.errors import StoreError, StoreOutageError
from hub.store.outage import Outage
from hub.store.postgres.schema import migrate

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PostgresDatabase", "import_driver", "numbered", "redact_dsn", "unreachable"]


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


def numbered(sql: str) -> str:
    """`sql` with its `?` placeholders (SQLite's, in which the statements both stores share
    are written) numbered for PostgreSQL: `$1`, `$2`, ..."""
    parts = sql.split("?")
    return "".join(f"{part}${n}" for n, part in enumerate(parts[:-1], start=1)) + parts[-1]


def unreachable(asyncpg: ModuleType) -> tuple[type[Exception], ...]:
    """The driver's errors that mean the server cannot be reached now (a restart, a cut
    connection, no connection slot, a connection a cut left mid-operation): the store is
    out, not the query wrong."""
    errors = asyncpg.exceptions
    return (
        OSError,
        asyncpg.InterfaceError,
        errors.InternalClientError,
        errors.PostgresConnectionError,
        errors.CannotConnectNowError,
        errors.AdminShutdownError,
        errors.CrashShutdownError,
        errors.TooManyConnectionsError,
    )


class PostgresDatabase:
    """A PostgreSQL database reached through a pool, its schema created or migrated on
    `open` (the `Storage` role).

    Args:
        dsn: a libpq connection URI (`postgresql://user:password@host:5432/database`).
        pool_size: most connections the store keeps open.
    """

    def __init__(self, dsn: str, *, pool_size: int = 10) -> None:
        self.dsn = dsn
        self.where = redact_dsn(dsn)
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
