"""`A2AOperations`: what a binding (JSON-RPC, REST, either version) calls to serve a request.

Two things serve it: `A2AService`, the hub's own tasks, and `PartnerService`, a partner
reached through the gateway (`/agents/{name}/...`). The bindings parse, negotiate the version
and render the same way for both.
"""

from __future__ import annotations

from typing import Protocol

from hub.protocol import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from hub.tasks import TaskStream

__all__ = ["A2AOperations"]


class A2AOperations(Protocol):
    """The operations of §5.3, in 1.0 objects; `caller` is the credential's name ("" with auth
    off), `protocol` the version the call came in through ("1.0" or "0.3").

    What the caller should learn of a failure is raised as a `ProtocolError`; the binding
    renders it, and anything else as an internal error.
    """

    async def send_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> SendMessageResponse: ...

    async def stream_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> TaskStream: ...

    async def get_task(
        self, request: GetTaskRequest, caller: str, *, protocol: str = "1.0"
    ) -> Task: ...

    async def list_tasks(self, request: ListTasksRequest, caller: str) -> ListTasksResponse: ...

    async def cancel_task(self, request: CancelTaskRequest, caller: str) -> Task: ...

    async def subscribe(self, request: SubscribeToTaskRequest, caller: str) -> TaskStream: ...

    async def create_push_config(
        self, config: TaskPushNotificationConfig, caller: str, *, protocol: str = "1.0"
    ) -> TaskPushNotificationConfig: ...

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, caller: str
    ) -> TaskPushNotificationConfig: ...

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, caller: str
    ) -> ListTaskPushNotificationConfigsResponse: ...

    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, caller: str
    ) -> None: ...

    async def extended_card(self, caller: str) -> AgentCard: ...
