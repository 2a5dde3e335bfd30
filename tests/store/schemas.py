"""Stores of an older schema, for the migration tests: where a migration step sits among a
store's steps, and a SQLite file or PostgreSQL database built with only the steps before it
(whichever steps were added after)."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hub.store import SqliteTaskStore
from hub.store.postgres import schema as postgres_schema
from hub.store.schema import read_schema
from hub.store.sqlite import schema as sqlite_schema

if TYPE_CHECKING:
    import asyncpg

__all__ = ["migrated_sqlite", "postgres_at", "sqlite_at", "step_adding"]


def step_adding(migrations: Sequence[Sequence[str]], statement: str) -> int:
    """The index of the first step holding a statement that contains `statement` (a store
    of schema version index has had every step before it)."""
    for index, step in enumerate(migrations):
        if any(statement in text for text in step):
            return index
    raise LookupError(f"no migration step holds {statement!r}")


def sqlite_at(old: sqlite3.Connection, version: int) -> None:
    """Make the empty file `old` is open on a store of schema `version`."""
    old.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    old.execute("INSERT INTO schema_version VALUES (?)", (version,))
    for step in sqlite_schema._MIGRATIONS[:version]:
        for statement in step:
            old.execute(statement)


async def postgres_at(db: asyncpg.Connection, version: int) -> None:
    """Make the empty database `db` is connected to a store of schema `version`."""
    await db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    await db.execute("INSERT INTO schema_version VALUES ($1)", version)
    for step in postgres_schema._MIGRATIONS[:version]:
        for statement in step:
            await db.execute(statement)


async def migrated_sqlite(
    path: Path, previous: int, check: Callable[[SqliteTaskStore], Awaitable[None]]
) -> None:
    """Open the SQLite file at `path`, of schema `previous`, as a store (which migrates it),
    run `check` on the store, and close it; the file is then of the current schema."""
    assert (await read_schema("sqlite", path=str(path))).version == previous
    store = SqliteTaskStore(path)
    await store.open()
    try:
        await check(store)
    finally:
        await store.close()
    assert (await read_schema("sqlite", path=str(path))).current
