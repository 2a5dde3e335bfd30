"""One change to a task: applied to the Task in memory at once, with the update that
publishes it once durable (its stream item built only if someone reads it)."""

from __future__ import annotations

from hub.errors import InvalidTransitionError
from hub.protocol import (
    Artifact,
    JsonObject,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    append_chunk,
    state_name,
    utc_now,
)
from hub.tasks.state import check_transition
from hub.tasks.stream import Update

__all__ = ["add_message", "apply_artifact", "apply_status"]


def apply_status(
    task: Task,
    state: TaskState,
    message: Message | None = None,
    metadata: JsonObject | None = None,
    *,
    history: bool = True,
) -> Update:
    """Move `task` to `state` (checked), recording an agent status message in history
    (unless `history` is False: the status alone carries it then).

    Raises:
        InvalidTransitionError: the state machine forbids the change.
    """
    check_transition(task.status.state, state)
    if message is not None:
        message = _own(task, message)
        if history:
            if task.history is None:
                task.history = []
            task.history.append(message)
    status = TaskStatus(state=state, message=message, timestamp=utc_now())
    task.status = status
    task_id, context_id = task.id, task.context_id or ""

    def event() -> StreamResponse:
        update = TaskStatusUpdateEvent(
            task_id=task_id, context_id=context_id, status=status, metadata=metadata
        )
        return StreamResponse(status_update=update)

    return Update(event, closes_stream=state.is_terminal or state.is_interrupted)


def apply_artifact(
    task: Task,
    artifact: Artifact,
    *,
    append: bool = False,
    last_chunk: bool = True,
    metadata: JsonObject | None = None,
) -> Update:
    """Add an artifact to `task`, replace one with the same id, or append parts to it (text
    joined into the text part it continues; the update published is the chunk as sent).

    Raises:
        InvalidTransitionError: the task is already terminal.
    """
    state = task.status.state
    if state.is_terminal:
        raise InvalidTransitionError(
            f"task is {state_name(state)}, a terminal state; it takes no more artifacts"
        )
    artifacts = task.artifacts
    if artifacts is None:
        artifacts = task.artifacts = []
    existing = next(
        (i for i, known in enumerate(artifacts) if known.artifact_id == artifact.artifact_id),
        None,
    )
    if existing is None:
        artifacts.append(artifact)
    elif append:
        artifacts[existing] = append_chunk(artifacts[existing], artifact)
    else:
        artifacts[existing] = artifact
    task_id, context_id = task.id, task.context_id or ""

    def event() -> StreamResponse:
        update = TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id=context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
            metadata=metadata,
        )
        return StreamResponse(artifact_update=update)

    return Update(event)


def add_message(task: Task, message: Message) -> Message:
    """Append a caller's message to `task`'s history (as one of the task's); returns it as
    appended."""
    owned = _own(task, message)
    if task.history is None:
        task.history = []
    task.history.append(owned)
    return owned


def _own(task: Task, message: Message) -> Message:
    context_id = task.context_id or ""
    if message.task_id == task.id and message.context_id == context_id:
        return message
    return message.model_copy(update={"task_id": task.id, "context_id": context_id})
