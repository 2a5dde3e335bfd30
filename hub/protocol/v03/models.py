"""A2A v0.3 JSON-RPC wire objects: parts, messages, tasks, stream events and request params.

These follow the v0.3 JSON Schema: the fields it requires are required here, unknown fields are
ignored. Objects carry their `kind` on the way out. On the way in a missing `kind` is inferred
from the object's other keys, since the content decides the type either way and some 0.3 peers
leave it out of nested objects. A request the hub serves is read under the `REQUEST` context,
where every part must name its `kind` as the schema requires: a part of a kind the hub does not
know (an image part, say) may still hold a `text` key, and reading it as text would change what
the caller asked.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from hub.protocol.base import JsonObject, Timestamp, WireModel
from hub.protocol.v03.states import Role, TaskState

__all__ = [
    "PART_KINDS",
    "REQUEST",
    "Artifact",
    "DataPart",
    "DeleteTaskPushNotificationConfigParams",
    "FilePart",
    "FileWithBytes",
    "FileWithUri",
    "GetTaskPushNotificationConfigParams",
    "ListTaskPushNotificationConfigParams",
    "Message",
    "MessageSendConfiguration",
    "MessageSendParams",
    "Part",
    "PushNotificationAuthenticationInfo",
    "PushNotificationConfig",
    "Role",
    "SendResult",
    "StreamEvent",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskIdParams",
    "TaskPushNotificationConfig",
    "TaskQueryParams",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "TextPart",
    "parse_send_result",
    "parse_stream_event",
]


def _kind_of(value: Any, infer: tuple[tuple[str, str], ...]) -> str | None:
    """The `kind` of a raw dict or a model; for a dict without one, the first inferred kind
    whose marker key is present."""
    if isinstance(value, dict):
        kind = value.get("kind")
        if kind is not None:
            return str(kind)
        return next((kind for key, kind in infer if key in value), None)
    kind = getattr(value, "kind", None)
    return None if kind is None else str(kind)


class TextPart(WireModel):
    kind: Literal["text"] = "text"
    text: str
    metadata: JsonObject | None = None


class FileWithBytes(WireModel):
    bytes_: str = Field(alias="bytes")
    name: str | None = None
    mime_type: str | None = None

    @field_validator("bytes_")
    @classmethod
    def _bytes_are_base64(cls, value: str) -> str:
        # Checked here so that a bad upload is an invalid-params error, not a failure later
        # when the part becomes a 1.0 `raw` part.
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("file.bytes must be base64-encoded bytes") from None
        return value


class FileWithUri(WireModel):
    uri: str = Field(min_length=1)
    name: str | None = None
    mime_type: str | None = None


def _file_shape(value: Any) -> str | None:
    if isinstance(value, dict):
        if "bytes" in value:
            return "bytes"
        return "uri" if "uri" in value else None
    return "bytes" if isinstance(value, FileWithBytes) else "uri"


FileContent = Annotated[
    Annotated[FileWithBytes, Tag("bytes")] | Annotated[FileWithUri, Tag("uri")],
    Discriminator(_file_shape),
]


class FilePart(WireModel):
    kind: Literal["file"] = "file"
    file: FileContent
    metadata: JsonObject | None = None


class DataPart(WireModel):
    kind: Literal["data"] = "data"
    data: JsonObject
    metadata: JsonObject | None = None


PART_KINDS = ("text", "file", "data")
"""The `kind` of every 0.3 part, as the schema defines them."""

REQUEST: Mapping[str, bool] = MappingProxyType({"request": True})
"""The validation context of a request the hub serves (see the module docstring)."""

_PART_MARKERS = tuple((kind, kind) for kind in PART_KINDS)


def _part_kind(value: Any) -> str | None:
    return _kind_of(value, _PART_MARKERS)


def _declared_kind(value: Any, info: ValidationInfo) -> Any:
    """In a request, a part must carry one of the schema's kinds; elsewhere, pass."""
    if not (info.context or {}).get("request") or not isinstance(value, dict):
        return value
    kind = value.get("kind")
    if kind in PART_KINDS:
        return value
    if kind is None:
        hint = " ('type' is not a 0.3 part field)" if "type" in value else ""
        raise PydanticCustomError(
            "part_kind_missing",
            "a part must name its 'kind': text, file or data{hint}",
            {"hint": hint},
        )
    raise PydanticCustomError(
        "part_kind_unknown",
        "unknown part kind {kind} (expected text, file or data)",
        {"kind": repr(kind)[:60]},
    )


Part = Annotated[
    Annotated[TextPart, Tag("text")]
    | Annotated[FilePart, Tag("file")]
    | Annotated[DataPart, Tag("data")],
    Discriminator(_part_kind),
    BeforeValidator(_declared_kind),
]


class Message(WireModel):
    kind: Literal["message"] = "message"
    message_id: str = Field(min_length=1)
    role: Role
    # The 0.3 schema sets no minimum, but a message without parts has no 1.0 form.
    parts: list[Part] = Field(min_length=1)
    context_id: str | None = None
    task_id: str | None = None
    metadata: JsonObject | None = None
    extensions: list[str] | None = None
    reference_task_ids: list[str] | None = None


class Artifact(WireModel):
    artifact_id: str = Field(min_length=1)
    name: str | None = None
    description: str | None = None
    parts: list[Part] = Field(min_length=1)
    metadata: JsonObject | None = None
    extensions: list[str] | None = None


class TaskStatus(WireModel):
    state: TaskState
    message: Message | None = None
    # 0.3 peers often send no zone; `Timestamp` reads that as UTC and writes `Z`.
    timestamp: Timestamp | None = None


class Task(WireModel):
    kind: Literal["task"] = "task"
    id: str = Field(min_length=1)
    context_id: str
    status: TaskStatus
    history: list[Message] | None = None
    artifacts: list[Artifact] | None = None
    metadata: JsonObject | None = None


class TaskStatusUpdateEvent(WireModel):
    kind: Literal["status-update"] = "status-update"
    task_id: str
    context_id: str
    status: TaskStatus
    final: bool
    metadata: JsonObject | None = None


class TaskArtifactUpdateEvent(WireModel):
    kind: Literal["artifact-update"] = "artifact-update"
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: JsonObject | None = None


# Order matters: a status update also has `status`, a task has neither `final` nor `artifact`.
_EVENT_MARKERS = (
    ("final", "status-update"),
    ("artifact", "artifact-update"),
    ("messageId", "message"),
    ("status", "task"),
)


def _event_kind(value: Any) -> str | None:
    return _kind_of(value, _EVENT_MARKERS)


StreamEvent = Annotated[
    Annotated[Task, Tag("task")]
    | Annotated[Message, Tag("message")]
    | Annotated[TaskStatusUpdateEvent, Tag("status-update")]
    | Annotated[TaskArtifactUpdateEvent, Tag("artifact-update")],
    Discriminator(_event_kind),
]
"""One `message/stream` result: the bare object, typed by its `kind`."""

SendResult = Annotated[
    Annotated[Task, Tag("task")] | Annotated[Message, Tag("message")],
    Discriminator(_event_kind),
]
"""The `message/send` result: a bare Task or Message."""

_STREAM_EVENT: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)
_SEND_RESULT: TypeAdapter[SendResult] = TypeAdapter(SendResult)


def parse_stream_event(raw: bytes | str | JsonObject) -> StreamEvent:
    """Read one 0.3 stream result (JSON text or an already decoded object).

    Raises:
        pydantic.ValidationError: the object is not a 0.3 task, message or update event.
    """
    if isinstance(raw, dict):
        return _STREAM_EVENT.validate_python(raw)
    return _STREAM_EVENT.validate_json(raw)


def parse_send_result(raw: bytes | str | JsonObject) -> SendResult:
    """Read a 0.3 `message/send` result (JSON text or an already decoded object).

    Raises:
        pydantic.ValidationError: the object is neither a 0.3 task nor a message.
    """
    if isinstance(raw, dict):
        return _SEND_RESULT.validate_python(raw)
    return _SEND_RESULT.validate_json(raw)


class PushNotificationAuthenticationInfo(WireModel):
    schemes: list[str]
    credentials: str | None = None


class PushNotificationConfig(WireModel):
    id: str | None = None
    url: str = Field(min_length=1)
    token: str | None = None
    authentication: PushNotificationAuthenticationInfo | None = None


class TaskPushNotificationConfig(WireModel):
    task_id: str = Field(min_length=1)
    push_notification_config: PushNotificationConfig


class MessageSendConfiguration(WireModel):
    accepted_output_modes: list[str] | None = None
    blocking: bool | None = None
    # 0 means the whole history in 0.3; a negative length means nothing and is refused.
    history_length: int | None = Field(default=None, ge=0)
    push_notification_config: PushNotificationConfig | None = None


class MessageSendParams(WireModel):
    message: Message
    configuration: MessageSendConfiguration | None = None
    metadata: JsonObject | None = None


class TaskQueryParams(WireModel):
    id: str = Field(min_length=1)
    history_length: int | None = Field(default=None, ge=0)
    metadata: JsonObject | None = None


class TaskIdParams(WireModel):
    id: str = Field(min_length=1)
    metadata: JsonObject | None = None


class GetTaskPushNotificationConfigParams(WireModel):
    """`tasks/pushNotificationConfig/get`; `id` is the task id, the config id may be left out."""

    id: str = Field(min_length=1)
    push_notification_config_id: str | None = None
    metadata: JsonObject | None = None


class ListTaskPushNotificationConfigParams(WireModel):
    id: str = Field(min_length=1)
    metadata: JsonObject | None = None


class DeleteTaskPushNotificationConfigParams(WireModel):
    id: str = Field(min_length=1)
    push_notification_config_id: str = Field(min_length=1)
    metadata: JsonObject | None = None
