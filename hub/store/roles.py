"""The roles a task store plays, one protocol each, and the two compositions every backend
implements.

Each user is typed against the role it needs, so what it may do with the store is read off
its signature:

    Storage             open, close, ping                 the readiness check
    TaskRecords         tasks                             GroupCommit, ListTasks, recovery
    LedgerStore         TaskRecords + the ledger's lines  the task manager's ledger
    PushConfigStore     push notification configs         the push notifier
    GatewayOwnerStore   owners of gateway tasks           the gateway (TaskOwners)
    SkillStateStore     skills' own state, by key         skills (the orchestrator's plans
                                                          and transcripts)
    TaskManagerStore    LedgerStore + SkillStateStore     the task manager (it drops expired
                                                          state with the expired tasks)

    TaskStore           all of the above                  SqliteTaskStore, MemoryTaskStore;
                                                          the composition root, the console

A store several hub processes share (replicas) plays three roles more:

    SharedTaskRecords      versioned writes, event log, leases, notices   Replication
    SharedPushConfigStore  notices of push config changes                 the push notifier
    RuntimePartnerStore    partners added at run time                     PartnerSync

    SharedTaskStore     all of them                       PostgresTaskStore

A role that needs a task's record beside its own data extends `TaskRecords`: the ledger
notes a reconciled child's outcome on its parent, and a replica reads whether the task of a
config changed elsewhere is still live. The task manager, the push notifier and the partner
sync tell a shared store apart by `isinstance` against the shared role they use, which is why
those roles are `runtime_checkable`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from hub.protocol import TaskState
from hub.store.records import (
    ChildRecord,
    PushConfigRecord,
    TaskChange,
    TaskDetails,
    TaskNotice,
    TaskPage,
    TaskQuery,
    TaskRecord,
)

__all__ = [
    "GatewayOwnerStore",
    "LedgerStore",
    "PushConfigStore",
    "RuntimePartnerStore",
    "SharedPushConfigStore",
    "SharedTaskRecords",
    "SharedTaskStore",
    "SkillStateStore",
    "Storage",
    "TaskManagerStore",
    "TaskRecords",
    "TaskStore",
]


class Storage(Protocol):
    """The storage's life: opened once before use, closed at the end, pinged for readiness."""

    async def open(self) -> None:
        """Create or migrate the storage; called once before any other method."""

    async def close(self) -> None:
        """Flush and release the storage; any later call but `open` raises `StoreError`."""

    async def ping(self) -> None:
        """Answer a trivial query, as cheaply as the storage allows (the readiness check).

        Raises:
            StoreError: the storage is closed or does not answer.
        """


class TaskRecords(Protocol):
    """Durable task records. Every write is durable when the awaited call returns."""

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


class PushConfigStore(Protocol):
    """Push notification configs, each kept until it is deleted or its task expires."""

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


class LedgerStore(TaskRecords, Protocol):
    """The delegation ledger: a line per task the hub started on a partner, kept beside the
    record of the hub task it works for (the parent), which reconciliation after a restart
    notes the child's outcome on."""

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines (keyed by parent, agent and child id) in one
        transaction."""

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, in the order they were first written."""

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not in a terminal state (restart
        reconciliation)."""

    async def describe_tasks(self, task_ids: Collection[str]) -> dict[str, TaskDetails]:
        """When each of `task_ids` was created and which partners it reached (the console's
        task list); an id with no stored task is left out."""


class GatewayOwnerStore(Protocol):
    """Which credential started each partner task reached through the gateway."""

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record that `owner` started partner `agent`'s task `task_id` through the gateway,
        unless the task has an owner already; returns the owner on record."""

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """Who started partner `agent`'s task `task_id` through the gateway, or None."""

    async def partner_tasks_of(self, owner: str, *, limit: int) -> list[tuple[str, str]]:
        """The partner tasks `owner` started through the gateway, as (agent, task id): the
        most recently claimed first, at most `limit` of them. A claim lasts as long as a
        finished task (`delete_terminal_before` drops it with them)."""


class SkillStateStore(Protocol):
    """A small key/value journal in which skills keep their own state durably: a value is
    opaque bytes under a key the skill chooses (the orchestrator keeps its plans under
    `plan/<task_id>`, its transcripts under `transcript/<owner>/<context_id>/<skill_id>`).

    Keys are 1 to `MAX_STATE_KEY` (512) characters, without NUL; values at most
    `MAX_STATE_VALUE` bytes (8 MiB). A value with an `expires_at` stays readable until the
    task manager's sweep of expired tasks drops it (`drop_expired_states`): expiry is
    reclaimed space, not a deadline the reads enforce. On a shared store every replica reads
    what any of them saved.
    """

    async def load_state(self, key: str) -> bytes | None:
        """The value saved under `key`, byte for byte, or None.

        Raises:
            ValueError: the key is not one a value may be saved under (as `save_state`).
        """

    async def save_state(
        self, key: str, value: bytes, *, expires_at: datetime | None = None
    ) -> None:
        """Insert or replace the value under `key`, with when it may be dropped (None:
        never). One statement: the value is durable when the call returns, so it serves as
        a checkpoint at every step.

        Raises:
            ValueError: the key is empty, longer than 512 characters or holds a NUL, or the
                value is larger than 8 MiB; the message says which.
        """

    async def drop_state(self, key: str) -> None:
        """Forget the value under `key` (nothing happens if there is none).

        Raises:
            ValueError: the key is not one a value may be saved under (as `save_state`).
        """

    async def drop_expired_states(self, now: datetime) -> int:
        """Delete every value whose `expires_at` is at or before `now`; how many went."""


@runtime_checkable
class TaskStore(
    Storage,
    PushConfigStore,
    GatewayOwnerStore,
    LedgerStore,
    TaskRecords,
    SkillStateStore,
    Protocol,
):
    """Every role of a hub's store: what each backend implements, and what the composition
    root opens, closes and hands to each user."""


class TaskManagerStore(LedgerStore, SkillStateStore, Protocol):
    """What the task manager is handed: the task records with the delegation ledger, and
    the skills' state, whose expired values it drops when it evicts expired tasks."""


@runtime_checkable
class SharedTaskRecords(TaskRecords, Protocol):
    """Task records several hub processes (replicas) share: versioned task writes, an
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

    async def notices(self, receive: Callable[[TaskNotice], None]) -> None:
        """Call `receive` with every change any replica commits, until cancelled; after a
        lost connection it reconnects, and calls `receive` with a notice whose `task_id` is
        "" (every task may have changed meanwhile)."""


@runtime_checkable
class SharedPushConfigStore(PushConfigStore, TaskRecords, Protocol):
    """Push configs several replicas share: each hears of the others' changes, and reads
    the config's task to know whether it still needs routing."""

    async def push_config_notices(self, receive: Callable[[str], None]) -> None:
        """Call `receive` with the task id of every push config change, and with "" whenever
        the listening connection is (re)made, until cancelled."""


@runtime_checkable
class RuntimePartnerStore(Protocol):
    """Partners added at run time, shared by the replicas of one hub."""

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


@runtime_checkable
class SharedTaskStore(
    TaskStore, SharedTaskRecords, SharedPushConfigStore, RuntimePartnerStore, Protocol
):
    """Every role of a store that several hub processes (replicas) share; the task manager,
    the push notifier and the partner sync detect their shared role and use it."""
