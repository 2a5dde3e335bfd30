"""How the CLI prints tasks, messages, events and tool results for people."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from hub.cli.outcome import NEEDS_INPUT, Running, status_of
from hub.protocol import Message, StreamResponse, Task, TaskState
from hub.tools.result import state_name

__all__ = ["answer_hint", "camel_keys", "describe", "describe_event", "print_events", "task_row"]

TERMINAL_OR_WAITING = {
    TaskState.COMPLETED,
    TaskState.FAILED,
    TaskState.CANCELED,
    TaskState.REJECTED,
    TaskState.INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED,
}


def describe(result: Task | Message) -> str:
    if isinstance(result, Message):
        return f"message: {result.text()}"
    lines = [f"task {result.id} (context {result.context_id}): {state_name(result.status.state)}"]
    if result.status.message is not None:
        lines.append(f"  status: {result.status.message.text()}")
    for artifact in result.artifacts or []:
        texts = [part.text for part in artifact.parts if part.text is not None]
        data = [json.dumps(part.data) for part in artifact.parts if part.data is not None]
        lines.append(
            f"  artifact {artifact.name or artifact.artifact_id}: {' '.join(texts + data)}"
        )
    return "\n".join(lines)


def describe_event(event: StreamResponse) -> str:
    if event.task is not None:
        return f"[task] {event.task.id} {state_name(event.task.status.state)}"
    if event.message is not None:
        return f"[message] {event.message.text()}"
    if event.status_update is not None:
        status = event.status_update.status
        text = f" {status.message.text()}" if status.message else ""
        return f"[status] {state_name(status.state)}{text}"
    assert event.artifact_update is not None
    artifact = event.artifact_update.artifact
    texts = " ".join(part.text for part in artifact.parts if part.text is not None)
    return f"[artifact] {artifact.name or artifact.artifact_id}: {texts}"


_OPAQUE = frozenset({"data", "item", "items", "answer", "answers", "metadata"})


def camel_keys(value: Any) -> Any:
    """`value` with its keys in camelCase, as A2A's JSON has them (`task_id` -> `taskId`), for
    every `--json` output. What an agent sent (`data`, `item`, `answer`, ...) is left as is."""
    if isinstance(value, dict):
        return {
            _camel(key): item if key in _OPAQUE else camel_keys(item) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


def task_row(task: Task) -> str:
    """One line of `tasks list`: id, state, when it last changed, skill, context."""
    stamp = task.status.timestamp
    when = stamp.isoformat(timespec="seconds") if stamp else "-"
    skill = (task.metadata or {}).get("skill") or "-"
    return (
        f"{task.id}  {state_name(task.status.state):14}  {when:25}  {skill!s:12}  "
        f"context {task.context_id}"
    )


def answer_hint(answer_with: str, task_id: str | None, context_id: str | None = None) -> str:
    """The line that tells how to answer a task waiting for input."""
    context = f" --context-id {context_id}" if context_id else ""
    return f'  answer with: {answer_with} "..." --task-id {task_id}{context}'


async def print_events(
    events: AsyncIterator[StreamResponse], running: Running, *, as_json: bool, answer_with: str
) -> int:
    """Print a stream's events as they come, noting the task in `running` (for Ctrl-C);
    returns the exit status of the last state seen. A task left waiting for input gets the
    line that tells how to answer it (`answer_with` is the command to repeat)."""
    state: TaskState | None = None
    for_task: str | None = None
    async for event in events:
        if event.task is not None:
            for_task, state = event.task.id, event.task.status.state
        elif event.status_update is not None:
            for_task, state = event.status_update.task_id, event.status_update.status.state
        elif event.artifact_update is not None:
            for_task = event.artifact_update.task_id
        running.task_id = for_task
        print(event.to_json().decode() if as_json else describe_event(event), flush=True)
    status = status_of(state)
    if status == NEEDS_INPUT and not as_json:
        print(answer_hint(answer_with, for_task))
    if state in TERMINAL_OR_WAITING:
        running.task_id = None  # nothing is left running on the agent
    return status
