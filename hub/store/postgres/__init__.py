"""The PostgreSQL task store (asyncpg, a pool): the shared store replicas use. Its pool
(`database.py`), schema and numbered migrations (`schema.py`), one module per role
(`store.py` the task records and the whole store, `push_configs.py`, `ledger.py`,
`owners.py`, `partners.py`, `state.py`), and the replicas' versioned writes, leases and notices
(`replica.py`, on the connections of `listener.py`)."""

from hub.store.postgres.store import PostgresTaskStore

__all__ = ["PostgresTaskStore"]
