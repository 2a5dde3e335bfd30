"""Records with fixed times for the store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hub.protocol import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from hub.store import TaskRecord

BASE = datetime(2025, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    """A fixed moment, `seconds` after BASE (whole milliseconds, as the wire carries)."""
    return BASE + timedelta(seconds=seconds)


def make_record(
    task_id: str,
    *,
    when: datetime | None = BASE,
    state: TaskState = TaskState.WORKING,
    context_id: str = "ctx",
    owner: str = "",
    skill: str = "echo",
) -> TaskRecord:
    """A realistic record: one message of history and one artifact."""
    task = Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=when),
        history=[Message(message_id=f"m-{task_id}", role=Role.USER, parts=[Part(text="hi")])],
        artifacts=[Artifact(artifact_id=f"a-{task_id}", parts=[Part(text="hello")])],
    )
    return TaskRecord(task=task, skill=skill, owner=owner)
