"""An in-memory TaskStore: for tests, and for hubs that need no durability."""

from __future__ import annotations

import builtins
import heapq
from collections.abc import Collection, Sequence
from datetime import datetime
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

from hub.errors import StoreError
from hub.protocol import TERMINAL_STATES, Task, TaskState
from hub.store.columns import check_state_key, push_record, state_row, task_details
from hub.store.cursor import (
    check_page_size,
    decode_cursor,
    encode_cursor,
    epoch_micros,
    status_key,
)
from hub.store.records import (
    SEARCH_COUNT_LIMIT,
    ChildRecord,
    PushConfigRecord,
    TaskDetails,
    TaskPage,
    TaskQuery,
    TaskRecord,
)
from hub.store.search import check_search, message_text

if TYPE_CHECKING:
    from hub.store.roles import TaskStore

__all__ = ["MemoryTaskStore"]


class _Row(NamedTuple):
    body: bytes
    skill: str
    owner: str
    context_id: str
    state: TaskState
    key: tuple[int, str]
    trace_id: str
    created: int
    text: str
    """The messages' text, lower-cased, for text search."""


class _PushRow(NamedTuple):
    body: bytes
    owner: str
    protocol: str


_by_key = attrgetter("key")


class MemoryTaskStore:
    """Task records in a dict, with the same ordering and paging as `SqliteTaskStore`.

    Each task is kept as its wire JSON, so a caller that mutates a Task after `put` (or one
    returned by `get`) cannot change what is stored. Serialising on `put` and parsing on `get`
    costs about a third of a `model_copy(deep=True)` each way, which goes through
    `copy.deepcopy`. The columns that queries filter on are kept beside the JSON, so `list`
    parses only the tasks it returns.
    """

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        # task id → config id → row; dicts keep insertion order, and replacing a value keeps
        # its place, as the SQLite store's rowid order does.
        self._push: dict[str, dict[str, _PushRow]] = {}
        # parent id → (agent, child id) → line, in the order lines were first written.
        self._children: dict[str, dict[tuple[str, str], ChildRecord]] = {}
        # (agent, partner task id) → (owner, when claimed in epoch microseconds)
        self._partner_tasks: dict[tuple[str, str], tuple[str, int]] = {}
        # skill state key → (value, when it expires in epoch microseconds, or None)
        self._states: dict[str, tuple[bytes, int | None]] = {}
        self._open = False

    async def open(self) -> None:
        """Make the store usable (again, after `close`; the records are kept)."""
        self._open = True

    async def close(self) -> None:
        """Refuse further calls until `open`."""
        self._open = False

    async def ping(self) -> None:
        """Raise `StoreError` when closed; an open in-memory store always answers."""
        self._check_open()

    def _check_open(self) -> None:
        if not self._open:
            raise StoreError("the in-memory task store is closed; open() it before use")

    async def put(self, record: TaskRecord) -> None:
        """Insert or replace the record for `record.task.id`."""
        self._check_open()
        self._rows[record.task.id] = _row(record, self._rows.get(record.task.id))

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        """Insert or replace several records, all or none."""
        self._check_open()
        # Every row is built before the first one is stored: a failure stores nothing.
        rows = {record.task.id: _row(record, self._rows.get(record.task.id)) for record in records}
        self._rows.update(rows)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record for `task_id`, or None."""
        self._check_open()
        row = self._rows.get(task_id)
        return None if row is None else _record(row)

    async def list(self, query: TaskQuery) -> TaskPage:
        """A page of records matching `query`, newest status first.

        Raises:
            InvalidParamsError: the cursor is not one a store produced, or the page size is
                below 1.
        """
        self._check_open()
        page_size = check_page_size(query.page_size)
        after = decode_cursor(query.cursor) if query.cursor else None
        floor = epoch_micros(query.updated_after) if query.updated_after is not None else None
        text = None if query.text is None else check_search(query.text).lower()
        delegated = None if query.partner is None else self._delegated_to(query.partner)
        matches = [
            row
            for row in self._rows.values()
            if (query.owner is None or row.owner == query.owner)
            and (query.context_id is None or row.context_id == query.context_id)
            and (query.state is None or row.state == query.state)
            and (floor is None or row.key[0] >= floor)
            and (query.skill is None or row.skill == query.skill)
            and (delegated is None or row.key[1] in delegated)
            and (text is None or text in row.text)
        ]
        remaining = matches if after is None else [row for row in matches if row.key < after]
        rows = heapq.nlargest(page_size + 1, remaining, key=_by_key)
        page = rows[:page_size]
        return TaskPage(
            records=[_record(row) for row in page],
            next_cursor=encode_cursor(page[-1].key) if len(rows) > page_size else "",
            total_size=(
                min(len(matches), SEARCH_COUNT_LIMIT + 1)
                if query.partner is not None or query.text is not None
                else len(matches)
            ),
        )

    def _delegated_to(self, agent: str) -> builtins.set[str]:
        """The ids of the tasks that started a task on `agent`."""
        return {
            parent_id
            for parent_id, lines in self._children.items()
            if any(line_agent == agent for line_agent, _ in lines)
        }

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        """Every record whose task is in one of `states`, newest status first."""
        self._check_open()
        wanted = frozenset(states)
        rows = sorted(
            (row for row in self._rows.values() if row.state in wanted), key=_by_key, reverse=True
        )
        return [_record(row) for row in rows]

    async def delete_terminal_before(self, cutoff: datetime) -> int:
        """Delete records of terminal tasks whose status time is before `cutoff`."""
        self._check_open()
        limit = epoch_micros(cutoff)
        doomed = [
            task_id
            for task_id, row in self._rows.items()
            if row.key[0] < limit and row.state in TERMINAL_STATES
        ]
        for task_id in doomed:
            del self._rows[task_id]
            self._push.pop(task_id, None)
            self._children.pop(task_id, None)
        for key, (_, created) in list(self._partner_tasks.items()):
            if created < limit:
                del self._partner_tasks[key]
        return len(doomed)

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Insert or replace one push config."""
        self._check_open()
        row = _PushRow(record.config.to_json(), record.owner, record.protocol)
        self._push.setdefault(record.task_id, {})[record.config_id] = row

    async def get_push_config(self, task_id: str, config_id: str) -> PushConfigRecord | None:
        """The push config `config_id` of `task_id`, or None."""
        self._check_open()
        row = self._push.get(task_id, {}).get(config_id)
        return None if row is None else push_record(*row)

    async def list_push_configs(self, task_id: str) -> builtins.list[PushConfigRecord]:
        """Every push config of `task_id`, oldest first."""
        self._check_open()
        return [push_record(*row) for row in self._push.get(task_id, {}).values()]

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Delete one push config; True if it existed."""
        self._check_open()
        configs = self._push.get(task_id)
        if configs is None or configs.pop(config_id, None) is None:
            return False
        if not configs:
            del self._push[task_id]
        return True

    async def find_push_configs(
        self, states: Collection[TaskState]
    ) -> builtins.list[PushConfigRecord]:
        """Every push config whose task is stored in one of `states`."""
        self._check_open()
        wanted = frozenset(states)
        return [
            push_record(*row)
            for task_id, configs in self._push.items()
            if task_id in self._rows and self._rows[task_id].state in wanted
            for row in configs.values()
        ]

    async def put_children(self, records: Sequence[ChildRecord]) -> None:
        """Insert or replace ledger lines."""
        self._check_open()
        for record in records:
            lines = self._children.setdefault(record.parent_id, {})
            lines[record.agent, record.child_id] = record

    async def list_children(self, parent_id: str) -> builtins.list[ChildRecord]:
        """The ledger lines of `parent_id`, oldest first."""
        self._check_open()
        return list(self._children.get(parent_id, {}).values())

    async def find_live_children(self) -> builtins.list[ChildRecord]:
        """Every ledger line whose child is not terminal."""
        self._check_open()
        return [
            record
            for lines in self._children.values()
            for record in lines.values()
            if record.state not in TERMINAL_STATES
        ]

    async def describe_tasks(self, task_ids: Collection[str]) -> dict[str, TaskDetails]:
        """When each of `task_ids` was created and which partners it reached."""
        self._check_open()
        known = [task_id for task_id in dict.fromkeys(task_ids) if task_id in self._rows]
        return task_details(
            (
                (task_id, row.skill, row.owner, row.created)
                for task_id, row in ((task_id, self._rows[task_id]) for task_id in known)
            ),
            (
                (task_id, record.agent)
                for task_id in known
                for record in self._children.get(task_id, {}).values()
            ),
        )

    async def claim_partner_task(
        self, agent: str, task_id: str, owner: str, *, at: datetime
    ) -> str:
        """Record the gateway owner of a partner task, unless it has one; the owner on record."""
        self._check_open()
        recorded, _ = self._partner_tasks.setdefault((agent, task_id), (owner, epoch_micros(at)))
        return recorded

    async def partner_task_owner(self, agent: str, task_id: str) -> str | None:
        """The gateway owner of a partner task, or None."""
        self._check_open()
        found = self._partner_tasks.get((agent, task_id))
        return None if found is None else found[0]

    async def partner_tasks_of(self, owner: str, *, limit: int) -> builtins.list[tuple[str, str]]:
        """The partner tasks `owner` started through the gateway, most recently claimed
        first, at most `limit`."""
        self._check_open()
        claimed = sorted(
            (-created, agent, task_id)
            for (agent, task_id), (recorded, created) in self._partner_tasks.items()
            if recorded == owner
        )
        return [(agent, task_id) for _, agent, task_id in claimed[:limit]]

    async def load_state(self, key: str) -> bytes | None:
        """The value saved under `key`, or None."""
        self._check_open()
        found = self._states.get(check_state_key(key))
        return None if found is None else found[0]

    async def save_state(
        self, key: str, value: bytes, *, expires_at: datetime | None = None
    ) -> None:
        """Insert or replace the value under `key` (refused past the stores' limits)."""
        self._check_open()
        key, value, _, expires = state_row(key, value, expires_at)
        self._states[key] = (value, expires)

    async def drop_state(self, key: str) -> None:
        """Forget the value under `key`."""
        self._check_open()
        self._states.pop(check_state_key(key), None)

    async def drop_expired_states(self, now: datetime) -> int:
        """Delete every value that expires at or before `now`; how many went."""
        self._check_open()
        limit = epoch_micros(now)
        doomed = [
            key
            for key, (_, expires) in self._states.items()
            if expires is not None and expires <= limit
        ]
        for key in doomed:
            del self._states[key]
        return len(doomed)


def _row(record: TaskRecord, before: _Row | None) -> _Row:
    """The row of `record`, keeping the trace id and the creation time of the row it
    replaces (a task's trace id is its first record's, as in the SQL stores)."""
    task = record.task
    key = status_key(task)
    return _Row(
        task.to_json(),
        record.skill,
        record.owner,
        task.context_id or "",
        task.status.state,
        key,
        record.trace_id if before is None else before.trace_id,
        key[0] if before is None else before.created,
        message_text(task).lower(),
    )


def _record(row: _Row) -> TaskRecord:
    return TaskRecord(
        task=Task.model_validate_json(row.body),
        skill=row.skill,
        owner=row.owner,
        trace_id=row.trace_id,
    )


if TYPE_CHECKING:
    # mypy holds the store to every role it plays.
    _roles: TaskStore = MemoryTaskStore()
