"""Task storage: the roles a store plays (`hub.store.roles`), the records it keeps
(`hub.store.records`), and its SQLite, PostgreSQL and in-memory implementations."""

from hub.store.columns import MAX_STATE_KEY, MAX_STATE_VALUE
from hub.store.factory import build_store, check_store_free, describe_store, store_location
from hub.store.memory import MemoryTaskStore
from hub.store.postgres import PostgresTaskStore
from hub.store.records import (
    SEARCH_COUNT_LIMIT,
    ChildRecord,
    PushConfigRecord,
    TaskChange,
    TaskDetails,
    TaskNotice,
    TaskPage,
    TaskQuery,
    TaskRecord,
)
from hub.store.roles import (
    GatewayOwnerStore,
    LedgerStore,
    PushConfigStore,
    RuntimePartnerStore,
    SharedPushConfigStore,
    SharedTaskRecords,
    SharedTaskStore,
    SkillStateStore,
    Storage,
    TaskManagerStore,
    TaskRecords,
    TaskStore,
)
from hub.store.sqlite import SqliteTaskStore

__all__ = [
    "MAX_STATE_KEY",
    "MAX_STATE_VALUE",
    "SEARCH_COUNT_LIMIT",
    "ChildRecord",
    "GatewayOwnerStore",
    "LedgerStore",
    "MemoryTaskStore",
    "PostgresTaskStore",
    "PushConfigRecord",
    "PushConfigStore",
    "RuntimePartnerStore",
    "SharedPushConfigStore",
    "SharedTaskRecords",
    "SharedTaskStore",
    "SkillStateStore",
    "SqliteTaskStore",
    "Storage",
    "TaskChange",
    "TaskDetails",
    "TaskManagerStore",
    "TaskNotice",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskRecords",
    "TaskStore",
    "build_store",
    "check_store_free",
    "describe_store",
    "store_location",
]
