"""Building the store the settings name."""

from __future__ import annotations

from hub.errors import ConfigError
from hub.store.base import TaskStore
from hub.store.memory import MemoryTaskStore
from hub.store.postgres import PostgresTaskStore
from hub.store.sqlite import SqliteTaskStore

__all__ = ["build_store"]


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
