"""Building the store the settings name."""

from __future__ import annotations

from hub.errors import ConfigError
from hub.store.base import TaskStore
from hub.store.memory import MemoryTaskStore
from hub.store.sqlite import SqliteTaskStore

__all__ = ["build_store"]


def build_store(kind: str, path: str | None = None) -> TaskStore:
    """The task store of `kind` ("sqlite" at `path`, or "memory").

    Raises:
        ConfigError: an unknown kind, or sqlite without a path.
    """
    if kind == "memory":
        return MemoryTaskStore()
    if kind == "sqlite":
        if not path:
            raise ConfigError("store.kind is sqlite but store.path is empty; name a file")
        return SqliteTaskStore(path)
    raise ConfigError(f"unknown store.kind '{kind}' (known: sqlite, memory)")
