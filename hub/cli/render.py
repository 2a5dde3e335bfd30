"""How the CLI prints tasks, messages, events and tool results for people."""

from __future__ import annotations

import json

from hub.protocol import Message, StreamResponse, Task

__all__ = ["describe", "describe_event"]


def describe(result: Task | Message) -> str:
    if isinstance(result, Message):
        return f"message: {result.text()}"
    lines = [f"task {result.id} (context {result.context_id}): {result.status.state.value}"]
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
        return f"[task] {event.task.id} {event.task.status.state.value}"
    if event.message is not None:
        return f"[message] {event.message.text()}"
    if event.status_update is not None:
        status = event.status_update.status
        text = f" {status.message.text()}" if status.message else ""
        return f"[status] {status.state.value}{text}"
    assert event.artifact_update is not None
    artifact = event.artifact_update.artifact
    texts = " ".join(part.text for part in artifact.parts if part.text is not None)
    return f"[artifact] {artifact.name or artifact.artifact_id}: {texts}"
