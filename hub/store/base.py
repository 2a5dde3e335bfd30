"""The TaskStore protocol: what the task manager (and the push notifier) need from durable
storage.

Implementations: `SqliteTaskStore` (the embedded default), `PostgresTaskStore` and
`MemoryTaskStore` (tests, and hubs that need no durability). A store several hub processes
share (replicas) implements `SharedTaskStore` as well: versioned writes with an event log,
leases, and notices of changes; the task manager detects it and uses it through
`hub.tasks.replication`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from hub.protocol import Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "ChildRecord",
    "PushConfigRecord",
    "SharedTaskStore",
    "TaskChange",
    "TaskNotice",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskStore",
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
    """

    task: Task
    skill: str
    owner: str = ""
    version: int = 0


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


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskQuery:
    """A ListTasks query. Results are ordered by status timestamp, newest first."""

    owner: str | None = None
    context_id: str | None = None
    state: TaskState | None = None
    updated_after: datetime | None = None
    skill: str | None = None
    """Only tasks run by this local skill (not a ListTasks filter: the console's)."""
    page_size: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskPage:
    records: list[TaskRecord]
    next_cursor: str
    """Opaque cursor for the next page; "" on the last page."""
    total_size: int
    """How many tasks match the query's filters, across all pages."""


@runtime_checkable
class TaskStore(Protocol):
    """Durable task records. Every write is durable when the awaited call returns."""

    async def open(self) -> None:
        """Create or migrate the storage; called once before any other method."""

    async def close(self) -> None:
        """Flush and release the storage; any later call but `open` raises `StoreError`."""

    async def ping(self) -> None:
        """Answer a trivial query, as cheaply as the storage allows (the readiness check).

        Raises:
            StoreError: the storage is closed or does not answer.
        """

    async def put(self, record: TaskRecord) -> None:
        """Insert or replace the record for `record.task.id`."""

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        """Insert or replace several records in one transaction (all or none)."""

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record for `task_id`, or None."""

    async def list(self, query: TaskQuery) -> TaskPage:
        """A page of records matching `query`, newest status first (task id breaks ties; a
        task with no status timestamp is the oldest).

        Raises:
            InvalidParamsError: the cursor is not one this store produced, or
                `query.page_size` is below 1.
        """

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        """Every record whose task is in one of `states`, newest status first (restart
        recovery)."""

    async def delete_terminal_before(self, cutoff: datetime) -> int:
        """Delete records of terminal tasks whose status timestamp is before `cutoff`, with
        their push configs and ledger lines, and gateway owner records made before `cutoff`.

        Returns:
            How many records were deleted.
        """

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Insert or replace the push config `record.config.id` of task `record.task_id`."""

    async def get_push_config(self, task_id: str, config_id: str) -> PushConfigRecord | None:
        """The push config `config_id` of `task_id`, or None."""

    async def list_push_configs(self, task_id: str) -> builtins.list[PushConfigRecord]:
        """Every push config of `task_id`, oldest first (a replaced config keeps its place)."""

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Delete one push config; True if it existed."""

    async def find_push_configs(
        self, states: Collection[TaskState]
    ) -> builtins.list[PushConfigRecord]:
        """Every push config whose task is stored in one of `states` (loaded at start-up)."""

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines (keyed by parent, agent and child id) in one
        transaction."""

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, in the order they were first written."""

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not in a terminal state (restart
        reconciliation)."""

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record that `owner` started partner `agent`'s task `task_id` through the gateway,
        unless the task has an owner already; returns the owner on record."""

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """Who started partner `agent`'s task `task_id` through the gateway, or None."""


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


@runtime_checkable
class SharedTaskStore(TaskStore, Protocol):
    """A store that several hub processes (replicas) share: versioned task writes, an
    ordered event log per task, notices of every change, and leases on running tasks.

    Its `get` returns records with their version.

    Attributes:
        replica: this process's name in the store (unique per process run).
        lease: seconds a replica's hold on a running task lasts unless renewed.
    """

    replica: str
    lease: float

    async def commit(self, changes: Sequence[TaskChange]) -> builtins.set[str]:
        """Write every change whose task is still at its `expected` version, with its
        events, held by this replica for one lease; returns the ids of the tasks that were
        not written because another replica had moved them."""

    async def events_after(self, task_id: str, version: int) -> builtins.list[tuple[int, bytes]]:
        """The events of `task_id` numbered above `version`, in order: (number, wire JSON)."""

    async def renew_leases(self, task_ids: Collection[str]) -> builtins.set[str]:
        """Extend this replica's hold on those of `task_ids` it holds and that are running,
        by one lease; their ids (a task missing there was written by another).

        Only the tasks this replica still runs are named: a row it holds but no longer
        runs (a write it gave up on) must expire, so that another replica takes it over.
        """

    async def expired_leases(self) -> builtins.list[TaskRecord]:
        """Running tasks (submitted or working) whose holder's lease has expired."""

    async def put_runtime_partner(self, name: str, body: bytes) -> None:
        """Insert or replace the partner added at run time called `name` (`body`: what the
        partners layer makes of it, opaque here)."""

    async def delete_runtime_partner(self, name: str) -> bool:
        """Forget a partner added at run time; True if it was stored."""

    async def list_runtime_partners(self) -> builtins.list[bytes]:
        """The bodies of the partners added at run time, in the order they were first
        stored."""

    async def runtime_partner_notices(self, receive: Callable[[], None]) -> None:
        """Call `receive` whenever the partners added at run time change, and whenever the
        listening connection is (re)made, until cancelled."""

    async def push_config_notices(self, receive: Callable[[str], None]) -> None:
        """Call `receive` with the task id of every push config change, and with "" whenever
        the listening connection is (re)made, until cancelled."""

    async def notices(self, receive: Callable[[TaskNotice], None]) -> None:
        """Call `receive` with every change any replica commits, until cancelled; after a
        lost connection it reconnects, and calls `receive` with a notice whose `task_id` is
        "" (every task may have changed meanwhile)."""
