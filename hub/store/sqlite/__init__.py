"""The SQLite task store: one WAL file, owned by one process (`lock.py`), with its schema and
numbered migrations (`schema.py`), the file itself (`database.py`), and one module per role
(`store.py` the task records and the whole store, `push_configs.py`, `ledger.py`,
`owners.py`, `state.py`)."""

from hub.store.sqlite.store import SqliteTaskStore

__all__ = ["SqliteTaskStore"]
