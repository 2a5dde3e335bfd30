"""The SQLite task store: one WAL file, owned by one process (`lock.py`), with its schema and
numbered migrations (`schema.py`)."""

from hub.store.sqlite.store import SqliteTaskStore

__all__ = ["SqliteTaskStore"]
