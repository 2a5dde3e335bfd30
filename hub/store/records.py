"""What the stores keep and return: task records, push config records, ledger lines, the
ListTasks query and its page, and the replicas' changes and notices. The roles a store plays
over them are the protocols of `hub.store.roles`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hub.protocol import Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "SEARCH_COUNT_LIMIT",
    "ChildRecord",
    "PushConfigRecord",
    "TaskChange",
    "TaskDetails",
    "TaskNotice",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """A task as stored: the wire object plus what the hub needs to serve it again.

    Attributes:
        task: the whole task, full history and artifacts included.
        skill: id of the local skill that runs the task (used to resume it after a restart).
        owner: name of the credential that created the task ("" when auth is off).
        version: how many changes the task has had since it was created (a shared store
            keeps it; the others leave it 0).
        trace_id: the trace of the request that created the task (32 hex digits), for the
            console's link to the operator's tracing UI; "" for a task stored before the
            stores kept it. Written with the task's first record and never changed after:
            a later write of the same task keeps the stored one.
    """

    task: Task
    skill: str
    owner: str = ""
    version: int = 0
    trace_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PushConfigRecord:
    """A push notification config as stored, kept until it is deleted or its task expires.

    Attributes:
        config: the config, with its `task_id` and `id` always set (secrets included: the
            hub needs them to deliver).
        owner: name of the credential that created it ("" when auth is off).
        protocol: the protocol version it was created through ("1.0" or "0.3"); it decides
            the shape of the notifications' bodies.
    """

    config: TaskPushNotificationConfig
    owner: str = ""
    protocol: str = "1.0"

    @property
    def task_id(self) -> str:
        return self.config.task_id or ""

    @property
    def config_id(self) -> str:
        return self.config.id or ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildRecord:
    """A task the hub started on a partner for one of its own tasks: one line of the
    delegation ledger.

    Attributes:
        parent_id: the hub task the child works for.
        agent: the partner's name in agents.yaml.
        child_id: the partner's task id.
        state: the child's last known state.
        note: what the hub did about the child beyond following it ("" when nothing), e.g.
            that it was canceled after a hub restart.
    """

    parent_id: str
    agent: str
    child_id: str
    state: TaskState
    note: str = ""


SEARCH_COUNT_LIMIT = 1000
"""How far a list filtered by partner or text counts its matches: past this, its totalSize
is `SEARCH_COUNT_LIMIT + 1` ("more than 1,000"). Counting every task that holds a common word
would read them all on every page; the first thousand say as much to an operator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskQuery:
    """A ListTasks query. Results are ordered by status timestamp, newest first."""

    owner: str | None = None
    context_id: str | None = None
    state: TaskState | None = None
    updated_after: datetime | None = None
    skill: str | None = None
    """Only tasks run by this local skill (not a ListTasks filter: the console's)."""
    partner: str | None = None
    """Only tasks that started a task on this partner, by the delegation ledger (the
    console's)."""
    text: str | None = None
    """Only tasks whose messages hold this text, ignoring case (the console's; see
    `hub.store.search` for what is searched and which searches are accepted)."""
    page_size: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskDetails:
    """What the console shows beside a listed task that the task itself does not say.

    Attributes:
        skill: the local skill that runs the task.
        owner: the credential that created it ("" when auth is off).
        created: when the task was first stored (None for a task stored before the store
            kept it).
        partners: the partners the task started tasks on (its ledger lines' agents), in
            the order they were first written, each once.
    """

    skill: str
    owner: str
    created: datetime | None = None
    partners: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskPage:
    records: list[TaskRecord]
    next_cursor: str
    """Opaque cursor for the next page; "" on the last page."""
    total_size: int
    """How many tasks match the query's filters, across all pages."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskChange:
    """A task written by one replica: its new record, the version it read, and the events
    that took it from there (`record.version == expected + len(events)`).

    Attributes:
        record: the task as it is now, with its new version.
        expected: the version the writer last saw; the write is refused if the stored task
            has moved on (another replica wrote it).
        events: the wire JSON of each `StreamResponse` the change published, in order.
    """

    record: TaskRecord
    expected: int
    events: Sequence[bytes]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskNotice:
    """A committed change, as every replica hears of it: which task, its version now, and
    which replica wrote it ("" when a replica-less writer did)."""

    task_id: str
    version: int
    replica: str
