"""The PostgreSQL task store (asyncpg, a pool): the shared store replicas use, with its schema
and numbered migrations (`schema.py`) and the replicas' versioned writes, leases and notices
(`replica.py`)."""

from hub.store.postgres.store import PostgresTaskStore

__all__ = ["PostgresTaskStore"]
