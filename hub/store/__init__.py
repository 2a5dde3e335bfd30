"""Task storage: the `TaskStore` protocol and its SQLite, PostgreSQL and in-memory
implementations."""

from hub.store.base import (
    ChildRecord,
    PushConfigRecord,
    SharedTaskStore,
    TaskChange,
    TaskNotice,
    TaskPage,
    TaskQuery,
    TaskRecord,
    TaskStore,
)
from hub.store.factory import build_store, check_store_free, describe_store, store_location
from hub.store.memory import MemoryTaskStore
from hub.store.postgres import PostgresTaskStore
from hub.store.sqlite import SqliteTaskStore

__all__ = [
    "ChildRecord",
    "MemoryTaskStore",
    "PostgresTaskStore",
    "PushConfigRecord",
    "SharedTaskStore",
    "SqliteTaskStore",
    "TaskChange",
    "TaskNotice",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskStore",
    "build_store",
    "check_store_free",
    "describe_store",
    "store_location",
]
