"""Messages, parts, artifacts, tasks and the events that change them (A2A 1.0)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from hub.protocol.base import JsonObject, Timestamp, WireModel, new_id

__all__ = [
    "INTERRUPTED_STATES",
    "TERMINAL_STATES",
    "Artifact",
    "Message",
    "Part",
    "Role",
    "StateName",
    "StreamResponse",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "agent_message",
    "state_name",
    "user_message",
]


class Role(StrEnum):
    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


class TaskState(StrEnum):
    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        return self in INTERRUPTED_STATES


TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})

StateName = Literal[
    "unspecified",
    "submitted",
    "working",
    "completed",
    "failed",
    "canceled",
    "input-required",
    "rejected",
    "auth-required",
]
"""A task state as `ToolResult.state` names it: lowercase, as in A2A 0.3 and most tool APIs
(a `Literal`, so a typo in `result.state == "complete"` is a type error)."""

_STATE_NAMES: dict[TaskState, StateName] = {
    TaskState.UNSPECIFIED: "unspecified",
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
}


def state_name(state: TaskState) -> StateName:
    """`TaskState.INPUT_REQUIRED` → `input-required`."""
    return _STATE_NAMES[state]


_CONTENT_FIELDS = ("text", "raw", "url", "data")


class Part(WireModel):
    """One piece of content: exactly one of `text`, `raw` (base64), `url` or `data`."""

    text: str | None = None
    raw: str | None = None
    url: str | None = None
    data: Any = None
    metadata: JsonObject | None = None
    filename: str | None = None
    media_type: str | None = None

    @model_validator(mode="after")
    def _exactly_one_content(self) -> Part:
        present = [name for name in _CONTENT_FIELDS if getattr(self, name) is not None]
        if len(present) != 1:
            found = ", ".join(present) if present else "none"
            raise ValueError(
                "a part needs exactly one of text, raw, url or data "
                f"(found: {found}); 0.3-style parts with 'kind' are accepted "
                "only with A2A-Version 0.3"
            )
        return self

    @field_validator("raw")
    @classmethod
    def _raw_is_base64(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("raw must be base64-encoded bytes") from None
        return value


class Message(WireModel):
    message_id: str = Field(min_length=1)
    context_id: str | None = None
    task_id: str | None = None
    role: Role
    parts: list[Part] = Field(min_length=1)
    metadata: JsonObject | None = None
    extensions: list[str] | None = None
    reference_task_ids: list[str] | None = None

    def text(self) -> str:
        """The message's text parts joined by newlines."""
        return "\n".join(part.text for part in self.parts if part.text is not None)


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
    timestamp: Timestamp | None = None


class Task(WireModel):
    id: str = Field(min_length=1)
    context_id: str | None = None
    status: TaskStatus
    artifacts: list[Artifact] | None = None
    history: list[Message] | None = None
    metadata: JsonObject | None = None


class TaskStatusUpdateEvent(WireModel):
    task_id: str
    context_id: str
    status: TaskStatus
    metadata: JsonObject | None = None


class TaskArtifactUpdateEvent(WireModel):
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: JsonObject | None = None


class StreamResponse(WireModel):
    """One stream item: exactly one of `task`, `message`, `statusUpdate`, `artifactUpdate`."""

    task: Task | None = None
    message: Message | None = None
    status_update: TaskStatusUpdateEvent | None = None
    artifact_update: TaskArtifactUpdateEvent | None = None

    @model_validator(mode="after")
    def _exactly_one_payload(self) -> StreamResponse:
        count = sum(
            value is not None
            for value in (self.task, self.message, self.status_update, self.artifact_update)
        )
        if count != 1:
            raise ValueError(
                "a stream response holds exactly one of task, message, statusUpdate, artifactUpdate"
            )
        return self


def agent_message(content: str | Sequence[Part]) -> Message:
    """An agent message from text or parts, with a fresh id."""
    parts = [Part(text=content)] if isinstance(content, str) else list(content)
    return Message(message_id=new_id(), role=Role.AGENT, parts=parts)


def user_message(
    content: str | Sequence[Part], *, context_id: str | None = None, task_id: str | None = None
) -> Message:
    """A user message from text or parts, with a fresh id, in a context and task when given."""
    parts = [Part(text=content)] if isinstance(content, str) else list(content)
    return Message(
        message_id=new_id(),
        role=Role.USER,
        parts=parts,
        context_id=context_id,
        task_id=task_id,
    )
