"""Translation of the task objects between A2A v0.3 and 1.0: parts, messages, artifacts,
statuses, tasks, stream events and send results, with the role and state tables.

Import these through `hub.protocol.v03.translate`, the one entry point for 0.3 translation.
"""

from __future__ import annotations

from hub import protocol as v1
from hub.protocol import v03

__all__ = [
    "DATA_PART_COMPAT",
    "ROLE_TO_V03",
    "ROLE_TO_V1",
    "STATE_TO_V03",
    "STATE_TO_V1",
    "artifact_to_v03",
    "artifact_to_v1",
    "is_final_v1",
    "message_to_v03",
    "message_to_v1",
    "part_to_v03",
    "part_to_v1",
    "send_result_to_v03",
    "send_result_to_v1",
    "status_to_v03",
    "status_to_v1",
    "stream_event_to_v1",
    "stream_response_to_v03",
    "task_to_v03",
    "task_to_v1",
]

ROLE_TO_V1: dict[v03.Role, v1.Role] = {
    v03.Role.USER: v1.Role.USER,
    v03.Role.AGENT: v1.Role.AGENT,
}
ROLE_TO_V03: dict[v1.Role, v03.Role] = {
    v1.Role.USER: v03.Role.USER,
    v1.Role.AGENT: v03.Role.AGENT,
    # 0.3 has no unspecified role; whatever did not come from the user is the agent's.
    v1.Role.UNSPECIFIED: v03.Role.AGENT,
}
STATE_TO_V1: dict[v03.TaskState, v1.TaskState] = {
    v03.TaskState.SUBMITTED: v1.TaskState.SUBMITTED,
    v03.TaskState.WORKING: v1.TaskState.WORKING,
    v03.TaskState.INPUT_REQUIRED: v1.TaskState.INPUT_REQUIRED,
    v03.TaskState.COMPLETED: v1.TaskState.COMPLETED,
    v03.TaskState.CANCELED: v1.TaskState.CANCELED,
    v03.TaskState.FAILED: v1.TaskState.FAILED,
    v03.TaskState.REJECTED: v1.TaskState.REJECTED,
    v03.TaskState.AUTH_REQUIRED: v1.TaskState.AUTH_REQUIRED,
    v03.TaskState.UNKNOWN: v1.TaskState.UNSPECIFIED,
}
STATE_TO_V03: dict[v1.TaskState, v03.TaskState] = {new: old for old, new in STATE_TO_V1.items()}

DATA_PART_COMPAT = "data_part_compat"
"""Metadata flag on a 0.3 data part whose object only wraps a non-object 1.0 value."""


def part_to_v1(part: v03.Part) -> v1.Part:
    """A 0.3 text, file or data part as a 1.0 part (a wrapped non-object value is unwrapped)."""
    if isinstance(part, v03.TextPart):
        return v1.Part(text=part.text, metadata=part.metadata)
    if isinstance(part, v03.FilePart):
        file = part.file
        if isinstance(file, v03.FileWithBytes):
            return v1.Part(
                raw=file.bytes_,
                filename=file.name,
                media_type=file.mime_type,
                metadata=part.metadata,
            )
        return v1.Part(
            url=file.uri, filename=file.name, media_type=file.mime_type, metadata=part.metadata
        )
    metadata = part.metadata
    data = part.data
    # A JSON null has no 1.0 form in our model (`data` absent), so it stays wrapped.
    if metadata and metadata.get(DATA_PART_COMPAT) is True and data.get("value") is not None:
        metadata = {key: value for key, value in metadata.items() if key != DATA_PART_COMPAT}
        return v1.Part(data=data["value"], metadata=metadata or None)
    return v1.Part(data=data, metadata=metadata)


def part_to_v03(part: v1.Part) -> v03.Part:
    """A 1.0 part as a 0.3 part; non-object `data` is wrapped as `{"value": X}` and flagged."""
    if part.text is not None:
        return v03.TextPart(text=part.text, metadata=part.metadata)
    if part.raw is not None:
        with_bytes = v03.FileWithBytes(
            bytes_=part.raw, name=part.filename, mime_type=part.media_type
        )
        return v03.FilePart(file=with_bytes, metadata=part.metadata)
    if part.url is not None:
        with_uri = v03.FileWithUri(uri=part.url, name=part.filename, mime_type=part.media_type)
        return v03.FilePart(file=with_uri, metadata=part.metadata)
    if isinstance(part.data, dict):
        return v03.DataPart(data=part.data, metadata=part.metadata)
    # 0.3 data parts hold only objects (the SDK's convention, undone by `part_to_v1`).
    return v03.DataPart(
        data={"value": part.data}, metadata={**(part.metadata or {}), DATA_PART_COMPAT: True}
    )


def message_to_v1(message: v03.Message) -> v1.Message:
    """A 0.3 message as a 1.0 message."""
    return v1.Message(
        message_id=message.message_id,
        context_id=message.context_id,
        task_id=message.task_id,
        role=ROLE_TO_V1[message.role],
        parts=[part_to_v1(part) for part in message.parts],
        metadata=message.metadata,
        extensions=message.extensions,
        reference_task_ids=message.reference_task_ids,
    )


def message_to_v03(message: v1.Message) -> v03.Message:
    """A 1.0 message as a 0.3 message (`kind: "message"`)."""
    return v03.Message(
        message_id=message.message_id,
        context_id=message.context_id,
        task_id=message.task_id,
        role=ROLE_TO_V03[message.role],
        parts=[part_to_v03(part) for part in message.parts],
        metadata=message.metadata,
        extensions=message.extensions,
        reference_task_ids=message.reference_task_ids,
    )


def artifact_to_v1(artifact: v03.Artifact) -> v1.Artifact:
    """A 0.3 artifact as a 1.0 artifact."""
    return v1.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name,
        description=artifact.description,
        parts=[part_to_v1(part) for part in artifact.parts],
        metadata=artifact.metadata,
        extensions=artifact.extensions,
    )


def artifact_to_v03(artifact: v1.Artifact) -> v03.Artifact:
    """A 1.0 artifact as a 0.3 artifact."""
    return v03.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name,
        description=artifact.description,
        parts=[part_to_v03(part) for part in artifact.parts],
        metadata=artifact.metadata,
        extensions=artifact.extensions,
    )


def status_to_v1(status: v03.TaskStatus) -> v1.TaskStatus:
    """A 0.3 task status as 1.0 (`unknown` becomes `TASK_STATE_UNSPECIFIED`)."""
    return v1.TaskStatus(
        state=STATE_TO_V1[status.state],
        message=None if status.message is None else message_to_v1(status.message),
        timestamp=status.timestamp,
    )


def status_to_v03(status: v1.TaskStatus) -> v03.TaskStatus:
    """A 1.0 task status as 0.3 (`TASK_STATE_UNSPECIFIED` becomes `unknown`)."""
    return v03.TaskStatus(
        state=STATE_TO_V03[status.state],
        message=None if status.message is None else message_to_v03(status.message),
        timestamp=status.timestamp,
    )


def task_to_v1(task: v03.Task) -> v1.Task:
    """A 0.3 task, with its history and artifacts, as a 1.0 task."""
    return v1.Task(
        id=task.id,
        context_id=task.context_id or None,
        status=status_to_v1(task.status),
        artifacts=None if task.artifacts is None else [artifact_to_v1(a) for a in task.artifacts],
        history=None if task.history is None else [message_to_v1(m) for m in task.history],
        metadata=task.metadata,
    )


def task_to_v03(task: v1.Task) -> v03.Task:
    """A 1.0 task as a 0.3 task (`kind: "task"`; `contextId` is required in 0.3)."""
    return v03.Task(
        id=task.id,
        context_id=task.context_id or "",
        status=status_to_v03(task.status),
        artifacts=None if task.artifacts is None else [artifact_to_v03(a) for a in task.artifacts],
        history=None if task.history is None else [message_to_v03(m) for m in task.history],
        metadata=task.metadata,
    )


def is_final_v1(response: v1.StreamResponse) -> bool:
    """Whether this event ends a stream: a message, or a status update or task whose state
    is terminal or interrupted (input or auth required)."""
    if response.message is not None:
        return True
    if response.status_update is not None:
        state = response.status_update.status.state
    elif response.task is not None:
        state = response.task.status.state
    else:
        return False
    return state.is_terminal or state.is_interrupted


def stream_response_to_v03(response: v1.StreamResponse, *, final: bool) -> v03.StreamEvent:
    """A 1.0 stream item as the bare 0.3 event.

    Args:
        response: the 1.0 stream item.
        final: the 0.3 `final` flag of a status update; the caller sets it on the event that
            ends the stream, terminal or interrupted alike (see `is_final_v1`), since 0.3
            clients stop reading after it. Other events carry no such flag.
    """
    if response.task is not None:
        return task_to_v03(response.task)
    if response.message is not None:
        return message_to_v03(response.message)
    if response.status_update is not None:
        update = response.status_update
        return v03.TaskStatusUpdateEvent(
            task_id=update.task_id,
            context_id=update.context_id,
            status=status_to_v03(update.status),
            final=final,
            metadata=update.metadata,
        )
    chunk = response.artifact_update
    assert chunk is not None  # StreamResponse holds exactly one payload
    return v03.TaskArtifactUpdateEvent(
        task_id=chunk.task_id,
        context_id=chunk.context_id,
        artifact=artifact_to_v03(chunk.artifact),
        append=chunk.append,
        last_chunk=chunk.last_chunk,
        metadata=chunk.metadata,
    )


def stream_event_to_v1(event: v03.StreamEvent) -> v1.StreamResponse:
    """A 0.3 stream event as a 1.0 `StreamResponse` (`final` is dropped)."""
    if isinstance(event, v03.Task):
        return v1.StreamResponse(task=task_to_v1(event))
    if isinstance(event, v03.Message):
        return v1.StreamResponse(message=message_to_v1(event))
    if isinstance(event, v03.TaskStatusUpdateEvent):
        status_update = v1.TaskStatusUpdateEvent(
            task_id=event.task_id,
            context_id=event.context_id,
            status=status_to_v1(event.status),
            metadata=event.metadata,
        )
        return v1.StreamResponse(status_update=status_update)
    artifact_update = v1.TaskArtifactUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        artifact=artifact_to_v1(event.artifact),
        append=bool(event.append),
        last_chunk=bool(event.last_chunk),
        metadata=event.metadata,
    )
    return v1.StreamResponse(artifact_update=artifact_update)


def send_result_to_v03(response: v1.SendMessageResponse) -> v03.SendResult:
    """A 1.0 `SendMessageResponse` as the bare 0.3 Task or Message."""
    if response.task is not None:
        return task_to_v03(response.task)
    assert response.message is not None  # SendMessageResponse holds exactly one payload
    return message_to_v03(response.message)


def send_result_to_v1(result: v03.SendResult) -> v1.SendMessageResponse:
    """A 0.3 `message/send` result as a 1.0 `SendMessageResponse`."""
    if isinstance(result, v03.Task):
        return v1.SendMessageResponse(task=task_to_v1(result))
    return v1.SendMessageResponse(message=message_to_v1(result))
