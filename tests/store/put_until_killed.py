"""Puts tasks into a SQLite store until killed, printing each task id once `put` returned.

Run by tests/store/test_sqlite.py as a real child process: `python put_until_killed.py DB`.
"""

from __future__ import annotations

import sys

import anyio

from hub.protocol import Artifact, Message, Part, Role, Task, TaskState, TaskStatus, utc_now
from hub.store import SqliteTaskStore, TaskRecord


async def main(path: str) -> None:
    store = SqliteTaskStore(path)
    await store.open()
    number = 0
    while True:
        task_id = f"task-{number:08d}"
        task = Task(
            id=task_id,
            context_id="ctx",
            status=TaskStatus(state=TaskState.COMPLETED, timestamp=utc_now()),
            history=[Message(message_id=f"m-{number}", role=Role.USER, parts=[Part(text="hi")])],
            artifacts=[Artifact(artifact_id=f"a-{number}", parts=[Part(text="hello")])],
        )
        await store.put(TaskRecord(task=task, skill="echo"))
        sys.stdout.write(task_id + "\n")
        sys.stdout.flush()
        number += 1


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
