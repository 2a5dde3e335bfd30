"""How tasks, push configs, ledger lines and skills' state are laid out in the stores' rows,
shared by SQLite and PostgreSQL (and by the in-memory store for push configs and state).

The statements every SQL store writes alike are here too, with SQLite's `?` placeholders
(the PostgreSQL store numbers them, `hub.store.postgres.database.numbered`), beside the rows
they bind: an upsert rewrites the row in place, where INSERT OR REPLACE would delete and
re-insert it, touching every index twice.

A task row is the wire JSON of the whole task beside the columns that queries filter and sort
on, so a query reads bodies only for the tasks it returns. The two conditions below name the
rows that start-up looks for; each store builds a partial index on the same text, and its
queries embed it word for word (SQLite uses a partial index only for a query that carries its
condition literally).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from hub.protocol import Task, TaskPushNotificationConfig, TaskState
from hub.store.cursor import NO_TIMESTAMP, epoch_micros, status_key
from hub.store.records import ChildRecord, PushConfigRecord, TaskDetails, TaskQuery, TaskRecord
from hub.store.search import search_text

__all__ = [
    "CHILD_COLUMNS",
    "CLAIM_PARTNER_TASK",
    "DROP_EXPIRED_STATES",
    "LIVE_CHILD",
    "MAX_STATE_KEY",
    "MAX_STATE_VALUE",
    "PARTNER_TASKS_OF",
    "PARTNER_TASK_OWNER",
    "PUSH_COLUMNS",
    "PUT_CHILD",
    "PUT_PUSH",
    "PUT_STATE",
    "PUT_TASK",
    "UNSETTLED_TASK",
    "ChildRow",
    "PushRow",
    "StateRow",
    "TaskRow",
    "check_state_key",
    "child_record",
    "child_row",
    "counted_by_owner_and_state",
    "push_record",
    "push_row",
    "state_row",
    "task_details",
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

# The trace id is the creating request's and the creation time the first write's: an update
# leaves them as they were first written.
PUT_TASK = (
    "INSERT INTO tasks (task_id, context_id, state, status_us, owner, skill, body, trace_id, "
    "created_us, search_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (task_id) DO UPDATE SET "
    "context_id = excluded.context_id, state = excluded.state, status_us = excluded.status_us, "
    "owner = excluded.owner, skill = excluded.skill, body = excluded.body, "
    "search_text = excluded.search_text"
)
PUT_PUSH = (
    "INSERT INTO push_configs (task_id, config_id, owner, protocol, body) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (task_id, config_id) DO UPDATE SET "
    "owner = excluded.owner, protocol = excluded.protocol, body = excluded.body"
)
PUSH_COLUMNS = "SELECT body, owner, protocol FROM push_configs"
# A line keeps its place in the ledger (rowid, seq) when it is updated.
PUT_CHILD = (
    "INSERT INTO children (parent_id, agent, child_id, state, note) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (parent_id, agent, child_id) DO UPDATE SET "
    "state = excluded.state, note = excluded.note"
)
CHILD_COLUMNS = "SELECT parent_id, agent, child_id, state, note FROM children"
CLAIM_PARTNER_TASK = (
    "INSERT INTO partner_tasks (agent, task_id, owner, created_us) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (agent, task_id) DO NOTHING"
)
PARTNER_TASK_OWNER = "SELECT owner FROM partner_tasks WHERE agent = ? AND task_id = ?"
# Read off the index `partner_tasks_by_owner` alone, in its order: no sort, no table row.
PARTNER_TASKS_OF = (
    "SELECT agent, task_id FROM partner_tasks WHERE owner = ? "
    "ORDER BY created_us DESC, agent, task_id LIMIT ?"
)
PUT_STATE = (
    "INSERT INTO skill_state (key, value, updated_us, expires_us) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET "
    "value = excluded.value, updated_us = excluded.updated_us, expires_us = excluded.expires_us"
)
# The comparison implies `expires_us IS NOT NULL`: the partial index on it serves the sweep.
DROP_EXPIRED_STATES = "DELETE FROM skill_state WHERE expires_us <= ?"

MAX_STATE_KEY = 512
"""The longest key of a skill's state, in characters."""

MAX_STATE_VALUE = 8 * 1024 * 1024
"""The largest value of a skill's state, in bytes (8 MiB): a checkpoint is written whole at
every step, so a state past this belongs in files or artifacts, not in the store's rows."""

TaskRow = tuple[str, str, str, int, str, str, bytes, str, int, str]
"""task_id, context_id, state, status time (epoch µs), owner, skill, body, trace id, creation
time (the status time of the first write), the text searched (`search_text`)."""


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
        record.trace_id,
        micros,
        search_text(task),
    )


def task_record(body: bytes, skill: str, owner: str, trace_id: str = "") -> TaskRecord:
    """The record a row's body, skill, owner and (when read) trace id columns hold."""
    return TaskRecord(
        task=Task.model_validate_json(body), skill=skill, owner=owner, trace_id=trace_id
    )


PushRow = tuple[str, str, str, str, bytes]
"""task_id, config_id, owner, protocol, body (the config's wire JSON, secrets included)."""


def push_row(record: PushConfigRecord) -> PushRow:
    """The columns of `record`'s row, in the order the stores' upserts bind them."""
    return (
        record.task_id,
        record.config_id,
        record.owner,
        record.protocol,
        record.config.to_json(),
    )


def push_record(body: bytes, owner: str, protocol: str) -> PushConfigRecord:
    """The record a row's body, owner and protocol columns hold."""
    config = TaskPushNotificationConfig.model_validate_json(body)
    return PushConfigRecord(config=config, owner=owner, protocol=protocol)


ChildRow = tuple[str, str, str, str, str]
"""parent_id, agent, child_id, state, note."""


def child_row(record: ChildRecord) -> ChildRow:
    """The columns of a ledger line's row, in the order the stores' upserts bind them."""
    return (record.parent_id, record.agent, record.child_id, record.state.value, record.note)


def child_record(parent_id: str, agent: str, child_id: str, state: str, note: str) -> ChildRecord:
    """The ledger line a row's columns hold."""
    return ChildRecord(
        parent_id=parent_id, agent=agent, child_id=child_id, state=TaskState(state), note=note
    )


def task_details(
    rows: Iterable[tuple[str, str, str, int | None]], lines: Iterable[tuple[str, str]]
) -> dict[str, TaskDetails]:
    """The details of tasks from their (task id, skill, owner, creation time) rows, the time
    in epoch µs (None or `NO_TIMESTAMP` when not known), and their ledger lines' (parent,
    agent) pairs, oldest line first."""
    partners: dict[str, dict[str, None]] = {}
    for parent_id, agent in lines:
        partners.setdefault(parent_id, {})[agent] = None
    return {
        task_id: TaskDetails(
            skill=skill,
            owner=owner,
            created=None if micros is None or micros == NO_TIMESTAMP else _moment(micros),
            partners=tuple(partners.get(task_id, ())),
        )
        for task_id, skill, owner, micros in rows
    }


def _moment(micros: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)


def counted_by_owner_and_state(query: TaskQuery) -> bool:
    """Whether `query`'s totalSize is a sum of the counts kept per owner and state (it
    filters on nothing else); a context, time, skill, partner or text filter is counted over
    the rows it selects."""
    return (
        query.context_id is None
        and query.updated_after is None
        and query.skill is None
        and query.partner is None
        and query.text is None
    )


StateRow = tuple[str, bytes, int, int | None]
"""key, value, when it was written (epoch µs), when it expires (epoch µs, or None)."""


def check_state_key(key: str) -> str:
    """`key`, if a skill's state may be kept under it.

    Raises:
        ValueError: the key is empty, longer than `MAX_STATE_KEY` characters or holds a NUL
            character.
    """
    if not key:
        raise ValueError("a skill state key must not be empty")
    if len(key) > MAX_STATE_KEY:
        raise ValueError(
            f"the skill state key {key[:40]!r}... is {len(key)} characters long; "
            f"keys are at most {MAX_STATE_KEY}"
        )
    if "\x00" in key:
        # PostgreSQL's text cannot hold it: refused alike by every store.
        raise ValueError(f"the skill state key {key!r} holds a NUL character; remove it")
    return key


def state_row(key: str, value: bytes, expires_at: datetime | None) -> StateRow:
    """The columns of a skill state's row, written now, in the order the upserts bind them.

    Raises:
        ValueError: the key is not one `check_state_key` accepts, or the value is longer
            than `MAX_STATE_VALUE` bytes.
    """
    check_state_key(key)
    value = bytes(value)
    if len(value) > MAX_STATE_VALUE:
        raise ValueError(
            f"the skill state {key!r} is {len(value)} bytes; a state is at most "
            f"{MAX_STATE_VALUE} bytes (8 MiB)"
        )
    expires = None if expires_at is None else epoch_micros(expires_at)
    return key, value, epoch_micros(datetime.now(UTC)), expires
