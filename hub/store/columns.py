"""How a task is laid out in the SQL stores' rows, shared by SQLite and PostgreSQL.

A task row is the wire JSON of the whole task beside the columns that queries filter and sort
on, so a query reads bodies only for the tasks it returns. The two conditions below name the
rows that start-up looks for; each store builds a partial index on the same text, and its
queries embed it word for word (SQLite uses a partial index only for a query that carries its
condition literally).
"""

from __future__ import annotations

from hub.protocol import Task
from hub.store.base import TaskQuery, TaskRecord
from hub.store.cursor import status_key

__all__ = [
    "LIVE_CHILD",
    "UNSETTLED_TASK",
    "TaskRow",
    "counted_by_owner_and_state",
    "task_record",
    "task_row",
]

UNSETTLED_TASK = (
    "state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', "
    "'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')"
)
"""A task that is not finished: what a stopped hub may have left running or parked."""

LIVE_CHILD = (
    "state NOT IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', "
    "'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')"
)
"""A delegation ledger line whose partner task has not ended."""

TaskRow = tuple[str, str, str, int, str, str, bytes]
"""task_id, context_id, state, status time (epoch µs), owner, skill, body."""


def task_row(record: TaskRecord) -> TaskRow:
    """The columns of `record`'s row, in the order the stores' upserts bind them."""
    task = record.task
    micros, task_id = status_key(task)
    return (
        task_id,
        task.context_id or "",
        task.status.state.value,
        micros,
        record.owner,
        record.skill,
        task.to_json(),
    )


def task_record(body: bytes, skill: str, owner: str) -> TaskRecord:
    """The record a row's body, skill and owner columns hold."""
    return TaskRecord(task=Task.model_validate_json(body), skill=skill, owner=owner)


def counted_by_owner_and_state(query: TaskQuery) -> bool:
    """Whether `query`'s totalSize is a sum of the counts kept per owner and state (it
    filters on nothing else); a context, time or skill filter is counted over the rows it
    selects."""
    return query.context_id is None and query.updated_after is None and query.skill is None
