"""An in-memory TaskStore: for tests, and for hubs that need no durability."""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from datetime import datetime

from hub.errors import StoreError
from hub.protocol import TERMINAL_STATES, Task, TaskState
from hub.store.base import TaskPage, TaskQuery, TaskRecord
from hub.store.cursor import decode_cursor, encode_cursor, sort_key

__all__ = ["MemoryTaskStore"]


class MemoryTaskStore:
    """Keeps each task as its wire JSON, so a caller mutating a Task after `put` cannot
    change what is stored (serialising is cheaper than a deep copy of the model)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[bytes, str, str, tuple[int, str]]] = {}
        self._open = False

    async def open(self) -> None:
        self._open = True

    async def close(self) -> None:
        self._open = False

    def _check(self) -> None:
        if not self._open:
            raise StoreError("the task store is closed")

    async def put(self, record: TaskRecord) -> None:
        self._check()
        task = record.task
        self._rows[task.id] = (task.to_json(), record.skill, record.owner, sort_key(task))

    async def put_many(self, records: Sequence[TaskRecord]) -> None:
        for record in records:
            await self.put(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        self._check()
        row = self._rows.get(task_id)
        return None if row is None else _record(row)

    async def list(self, query: TaskQuery) -> TaskPage:
        self._check()
        after = decode_cursor(query.cursor) if query.cursor else None
        floor = (
            int(query.updated_after.timestamp() * 1_000_000)
            if query.updated_after is not None
            else None
        )
        matches = []
        for row in self._rows.values():
            record = _record(row)
            task = record.task
            if query.owner is not None and record.owner != query.owner:
                continue
            if query.context_id is not None and task.context_id != query.context_id:
                continue
            if query.state is not None and task.status.state is not query.state:
                continue
            if floor is not None and row[3][0] < floor:
                continue
            matches.append((row[3], record))
        matches.sort(key=lambda item: item[0], reverse=True)
        remaining = [item for item in matches if after is None or item[0] < after]
        page = remaining[: query.page_size]
        more = len(remaining) > query.page_size
        return TaskPage(
            records=[record for _, record in page],
            next_cursor=encode_cursor(page[-1][0]) if more and page else "",
            total_size=len(matches),
        )

    async def find_in_states(self, states: Collection[TaskState]) -> builtins.list[TaskRecord]:
        self._check()
        wanted = set(states)
        records = (_record(row) for row in self._rows.values())
        return [record for record in records if record.task.status.state in wanted]

    async def delete_terminal_before(self, cutoff: datetime) -> int:
        self._check()
        limit = int(cutoff.timestamp() * 1_000_000)
        doomed = [
            task_id
            for task_id, row in self._rows.items()
            if row[3][0] < limit
            and Task.model_validate_json(row[0]).status.state in TERMINAL_STATES
        ]
        for task_id in doomed:
            del self._rows[task_id]
        return len(doomed)


def _record(row: tuple[bytes, str, str, tuple[int, str]]) -> TaskRecord:
    return TaskRecord(task=Task.model_validate_json(row[0]), skill=row[1], owner=row[2])
