"""Task storage: the `TaskStore` protocol and its SQLite and in-memory implementations."""

from hub.store.base import TaskPage, TaskQuery, TaskRecord, TaskStore

__all__ = ["TaskPage", "TaskQuery", "TaskRecord", "TaskStore"]
