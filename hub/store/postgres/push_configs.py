"""The PostgreSQL store's push notification configs (the `SharedPushConfigStore` role): their
own table, deleted with their task when it expires, and the notices every replica hears of
their changes (a trigger on the table)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection, Sequence

from hub.protocol import TaskState
from hub.store.columns import PUSH_COLUMNS, PUT_PUSH, push_record, push_row
from hub.store.postgres.database import PostgresDatabase, numbered
from hub.store.postgres.listener import listen
from hub.store.postgres.schema import PUSH_CHANNEL
from hub.store.records import PushConfigRecord

__all__ = ["PostgresPushConfigs"]

_PUT_PUSH = numbered(PUT_PUSH)


class PostgresPushConfigs(PostgresDatabase):
    """Push configs in the database, in the order they were first written (`seq`)."""

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Insert or replace one push config, durably."""
        failure = f"cannot write a push config of task {record.task_id} to {self.where}"
        async with self._connection(failure) as db:
            await db.execute(_PUT_PUSH, *push_row(record))

    async def get_push_config(self, task_id: str, config_id: str) -> PushConfigRecord | None:
        """The push config `config_id` of `task_id`, or None."""
        query = f"{PUSH_COLUMNS} WHERE task_id = $1 AND config_id = $2"
        rows = await self._push_rows(query, (task_id, config_id), f"task {task_id}")
        return rows[0] if rows else None

    async def list_push_configs(self, task_id: str) -> builtins.list[PushConfigRecord]:
        """Every push config of `task_id`, oldest first."""
        query = f"{PUSH_COLUMNS} WHERE task_id = $1 ORDER BY seq"
        return await self._push_rows(query, (task_id,), f"task {task_id}")

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Delete one push config; True if it existed."""
        failure = f"cannot delete a push config of task {task_id} from {self.where}"
        async with self._connection(failure) as db:
            status = await db.execute(
                "DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2",
                task_id,
                config_id,
            )
        return bool(status != "DELETE 0")

    async def find_push_configs(
        self, states: Collection[TaskState]
    ) -> builtins.list[PushConfigRecord]:
        """Every push config whose task is stored in one of `states`."""
        values = [TaskState(state).value for state in states]
        if not values:
            return []
        query = (
            "SELECT p.body, p.owner, p.protocol FROM push_configs AS p "
            "JOIN tasks AS t ON t.task_id = p.task_id WHERE t.state = ANY($1::text[]) "
            "ORDER BY p.seq"
        )
        return await self._push_rows(query, (values,), "the live tasks")

    async def push_config_notices(self, receive: Callable[[str], None]) -> None:
        """Call `receive` with the task id of every push config change ("" at each
        connection)."""
        self._open_pool()
        await listen(
            self.dsn,
            PUSH_CHANNEL,
            receive,
            connected=lambda: receive(""),
            where=self.where,
            outage=self.outage,
        )

    async def _push_rows(
        self, query: str, args: Sequence[object], what: str
    ) -> builtins.list[PushConfigRecord]:
        async with self._connection(f"cannot read push configs of {what} from {self.where}") as db:
            rows = await db.fetch(query, *args)
        return [push_record(*row) for row in rows]
