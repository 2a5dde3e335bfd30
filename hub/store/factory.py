"""Building the store the settings name, and saying where it keeps the tasks."""

from __future__ import annotations

from pathlib import Path

from hub.errors import ConfigError
from hub.store.memory import MemoryTaskStore
from hub.store.postgres import PostgresTaskStore
from hub.store.postgres.database import redact_dsn
from hub.store.roles import TaskStore
from hub.store.sqlite.lock import StoreLock
from hub.store.sqlite.store import SqliteTaskStore

__all__ = ["build_store", "check_store_free", "describe_store", "store_location"]


def build_store(
    kind: str,
    path: str | None = None,
    *,
    dsn: str | None = None,
    pool_size: int = 10,
    lease: float = 15.0,
) -> TaskStore:
    """The task store of `kind`: "sqlite" at `path`, "postgres" at `dsn` (its replicas'
    running tasks held for `lease` seconds), or "memory".

    Raises:
        ConfigError: an unknown kind, sqlite without a path, or postgres without a DSN.
    """
    if kind == "memory":
        return MemoryTaskStore()
    if kind == "sqlite":
        if not path:
            raise ConfigError("store.kind is sqlite but store.path is empty; name a file")
        return SqliteTaskStore(path)
    if kind == "postgres":
        if not dsn:
            raise ConfigError(
                "store.kind is postgres but store.dsn is empty; set it to a connection URI "
                'such as "${HUB_DATABASE_URL}" (postgresql://user:password@host:5432/hub)'
            )
        return PostgresTaskStore(dsn, pool_size=pool_size, lease=lease)
    raise ConfigError(f"unknown store.kind '{kind}' (known: sqlite, postgres, memory)")


def store_location(kind: str, path: str | None = None, *, dsn: str | None = None) -> str:
    """Where the store of `kind` keeps its tasks, for people: the SQLite file's absolute path
    (a relative one depends on the folder the process started in), the DSN without its
    password, or "memory"."""
    if kind == "sqlite" and path:
        return str(Path(path).absolute())
    if kind == "postgres" and dsn:
        return redact_dsn(dsn)
    return kind


def describe_store(store: TaskStore) -> str:
    """Where `store` keeps its tasks, as `store_location` says it."""
    if isinstance(store, SqliteTaskStore):
        return store_location("sqlite", str(store.path))
    if isinstance(store, PostgresTaskStore):
        return store.where
    if isinstance(store, MemoryTaskStore):
        return "memory"
    return type(store).__name__


def check_store_free(kind: str, path: str | None = None) -> None:
    """Refuse at once a SQLite store another process has open, before a server binds its
    port and starts (the store takes the lock itself when it opens; this only checks).

    Raises:
        StoreInUseError: another process has the file open.
        StoreError: its lock file cannot be created.
    """
    if kind != "sqlite" or not path:
        return
    database = Path(path)
    if not database.parent.is_dir():
        return  # a new store: nobody can hold it, and opening it creates the folder
    probe = StoreLock(database)
    probe.acquire()
    probe.release()
