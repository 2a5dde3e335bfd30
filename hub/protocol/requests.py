"""Request and response objects of every A2A 1.0 operation (§5.3), push configs included."""

from __future__ import annotations

from pydantic import Field, model_validator

from hub.protocol.base import JsonObject, Timestamp, WireModel
from hub.protocol.task import Message, Task, TaskState

__all__ = [
    "AuthenticationInfo",
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SendMessageResponse",
    "SubscribeToTaskRequest",
    "TaskPushNotificationConfig",
]

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


class AuthenticationInfo(WireModel):
    scheme: str = Field(min_length=1)
    credentials: str | None = None


class TaskPushNotificationConfig(WireModel):
    tenant: str | None = None
    id: str | None = None
    task_id: str | None = None
    url: str = Field(min_length=1)
    token: str | None = None
    authentication: AuthenticationInfo | None = None


class SendMessageConfiguration(WireModel):
    accepted_output_modes: list[str] | None = None
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: int | None = Field(default=None, ge=0)
    return_immediately: bool = False


class SendMessageRequest(WireModel):
    tenant: str | None = None
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: JsonObject | None = None


class SendMessageResponse(WireModel):
    task: Task | None = None
    message: Message | None = None

    @model_validator(mode="after")
    def _exactly_one_payload(self) -> SendMessageResponse:
        if (self.task is None) == (self.message is None):
            raise ValueError("a send response holds exactly one of task or message")
        return self


class GetTaskRequest(WireModel):
    tenant: str | None = None
    id: str = Field(min_length=1)
    history_length: int | None = Field(default=None, ge=0)


class ListTasksRequest(WireModel):
    tenant: str | None = None
    context_id: str | None = None
    status: TaskState | None = None
    page_size: int | None = Field(default=None, ge=1, le=MAX_PAGE_SIZE)
    page_token: str | None = None
    history_length: int | None = Field(default=None, ge=0)
    status_timestamp_after: Timestamp | None = None
    include_artifacts: bool | None = None


class ListTasksResponse(WireModel):
    tasks: list[Task]
    next_page_token: str
    page_size: int
    total_size: int


class CancelTaskRequest(WireModel):
    tenant: str | None = None
    id: str = Field(min_length=1)
    metadata: JsonObject | None = None


class SubscribeToTaskRequest(WireModel):
    tenant: str | None = None
    id: str = Field(min_length=1)


class GetTaskPushNotificationConfigRequest(WireModel):
    tenant: str | None = None
    task_id: str = Field(min_length=1)
    id: str = Field(min_length=1)


class DeleteTaskPushNotificationConfigRequest(WireModel):
    tenant: str | None = None
    task_id: str = Field(min_length=1)
    id: str = Field(min_length=1)


class ListTaskPushNotificationConfigsRequest(WireModel):
    tenant: str | None = None
    task_id: str = Field(min_length=1)
    page_size: int | None = Field(default=None, ge=1, le=MAX_PAGE_SIZE)
    page_token: str | None = None


class ListTaskPushNotificationConfigsResponse(WireModel):
    # Not required by the spec's schema, and absent from a protobuf rendering of an empty
    # list (the a2a-sdk's answer over gRPC and JSON-RPC alike).
    configs: list[TaskPushNotificationConfig] = Field(default_factory=list)
    next_page_token: str = ""


class GetExtendedAgentCardRequest(WireModel):
    tenant: str | None = None
