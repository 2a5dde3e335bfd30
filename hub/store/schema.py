"""Where a SQL store's schema stands against this a2a-hub, and bringing it up to date.

`a2a-hub db check` and `a2a-hub db migrate` use these, and `a2a-hub serve` refuses a
PostgreSQL database whose schema is not the one it knows: several replicas share that
database, so its migrations are an explicit operator step, taken once, not a side effect of
whichever replica starts first. A SQLite file belongs to one process and is still brought up
to date when its store opens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hub.errors import ConfigError, StoreError
from hub.store.postgres import schema as postgres_schema
from hub.store.postgres.database import import_driver, redact_dsn
from hub.store.sqlite import schema as sqlite_schema

if TYPE_CHECKING:
    import asyncpg

__all__ = ["SchemaState", "migrate_schema", "read_schema", "require_current_schema"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaState:
    """How many migration steps a store has had, against how many this a2a-hub knows.

    Attributes:
        where: the store, fit for messages (a file, or a DSN without its password).
        version: the store's schema version (0: no schema yet).
        expected: the version this a2a-hub writes.
    """

    where: str
    version: int
    expected: int

    @property
    def current(self) -> bool:
        return self.version == self.expected

    def describe(self) -> str:
        """One line: where the schema stands and what to do about it."""
        if self.current:
            return f"the task store {self.where} is at schema {self.version}, the current one"
        if self.version > self.expected:
            return (
                f"the task store {self.where} is at schema {self.version}, newer than this "
                f"a2a-hub knows ({self.expected}); upgrade a2a-hub"
            )
        missing = "has no schema yet" if self.version == 0 else f"is at schema {self.version}"
        return (
            f"the task store {self.where} {missing}, this a2a-hub needs schema "
            f"{self.expected}; run `a2a-hub db migrate` (with the same settings) first"
        )


async def read_schema(kind: str, *, path: str = "", dsn: str = "") -> SchemaState:
    """The schema state of the store `kind` names, read without changing anything.

    Raises:
        ConfigError: the memory store has no schema.
        StoreError: the store cannot be reached or read.
    """
    if kind == "postgres":
        async with _postgres(dsn) as db:
            version = await postgres_schema.schema_version(db)
        return SchemaState(
            where=redact_dsn(dsn), version=version, expected=postgres_schema.SCHEMA_VERSION
        )
    file = _sqlite_file(kind, path)
    if not file.exists():
        return SchemaState(where=str(file), version=0, expected=sqlite_schema.SCHEMA_VERSION)
    try:
        db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        try:
            version = sqlite_schema.schema_version(db)
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the task store {file} ({exc})") from None
    return SchemaState(where=str(file), version=version, expected=sqlite_schema.SCHEMA_VERSION)


async def migrate_schema(kind: str, *, path: str = "", dsn: str = "") -> SchemaState:
    """Run the migration steps the store has not had; returns its state before them.

    Raises:
        ConfigError: the memory store has no schema.
        StoreError: the store cannot be reached, or is newer than this a2a-hub.
    """
    before = await read_schema(kind, path=path, dsn=dsn)
    if kind == "postgres":
        async with _postgres(dsn) as db:
            try:
                await postgres_schema.migrate(db, before.where)
            except import_driver().PostgresError as exc:
                raise StoreError(f"cannot migrate the task store {before.where} ({exc})") from None
        return before
    from hub.store.sqlite.store import SqliteTaskStore

    store = SqliteTaskStore(_sqlite_file(kind, path))
    await store.open()  # a SQLite store migrates itself when it opens
    await store.close()
    return before


async def require_current_schema(kind: str, *, dsn: str = "") -> None:
    """Refuse a PostgreSQL store whose schema is not this a2a-hub's (other kinds pass).

    Raises:
        StoreError: the schema is missing, older or newer, or the database is unreachable;
            the message says what to run.
    """
    if kind != "postgres":
        return
    state = await read_schema(kind, dsn=dsn)
    if not state.current:
        raise StoreError(state.describe())


def _sqlite_file(kind: str, path: str) -> Path:
    if kind == "memory":
        raise ConfigError("store.kind is memory: it keeps nothing, so it has no schema")
    if not path:
        raise ConfigError("store.kind is sqlite but store.path is empty; name a file")
    return Path(path)


@asynccontextmanager
async def _postgres(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    if not dsn:
        raise ConfigError("store.kind is postgres but store.dsn is empty; set it")
    asyncpg = import_driver()
    try:
        db = await asyncpg.connect(dsn, timeout=10)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise StoreError(f"cannot connect to the task store {redact_dsn(dsn)} ({exc})") from None
    try:
        yield db
    finally:
        await db.close()
