"""The A2A operations, as every binding serves them: one place, so JSON-RPC and REST (and
both protocol versions) behave the same."""

from __future__ import annotations

from hub.errors import (
    ExtendedAgentCardNotConfiguredError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from hub.protocol import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
)
from hub.server.card import CardDocument
from hub.tasks import TaskManager, TaskStream

__all__ = ["A2AService"]


class A2AService:
    """The operations of §5.3 on top of the task manager.

    Args:
        manager: the running task manager.
        card: the served card document (capabilities decide what is refused).
    """

    def __init__(self, *, manager: TaskManager, card: CardDocument) -> None:
        self.manager = manager
        self.card = card
        capabilities = card.card.capabilities
        self._streaming = bool(capabilities.streaming)
        self._push = bool(capabilities.push_notifications)
        self._extended = bool(capabilities.extended_agent_card)

    async def send_message(self, request: SendMessageRequest, caller: str) -> SendMessageResponse:
        if request.configuration and request.configuration.task_push_notification_config:
            self._require_push()
        result = await self.manager.send(request, owner=caller)
        if isinstance(result, Message):
            return SendMessageResponse(message=result)
        return SendMessageResponse(task=result)

    async def stream_message(self, request: SendMessageRequest, caller: str) -> TaskStream:
        self._require_streaming("SendStreamingMessage")
        if request.configuration and request.configuration.task_push_notification_config:
            self._require_push()
        return await self.manager.stream(request, owner=caller)

    async def get_task(self, request: GetTaskRequest, caller: str) -> Task:
        return await self.manager.get(
            request.id, history_length=request.history_length, owner=caller
        )

    async def list_tasks(self, request: ListTasksRequest, caller: str) -> ListTasksResponse:
        return await self.manager.list(request, owner=caller)

    async def cancel_task(self, request: CancelTaskRequest, caller: str) -> Task:
        return await self.manager.cancel(request.id, owner=caller)

    async def subscribe(self, request: SubscribeToTaskRequest, caller: str) -> TaskStream:
        self._require_streaming("SubscribeToTask")
        return await self.manager.subscribe(request.id, owner=caller)

    def push_configs(self) -> None:
        """Every push-config operation: refused while the capability is off (§3.3.4)."""
        self._require_push()

    async def extended_card(self, caller: str) -> AgentCard:
        if not self._extended:
            raise UnsupportedOperationError(
                "this hub does not offer an extended agent card "
                "(capabilities.extendedAgentCard is false); read the public card at "
                "/.well-known/agent-card.json"
            )
        raise ExtendedAgentCardNotConfiguredError("no extended agent card is configured")

    def _require_streaming(self, operation: str) -> None:
        if not self._streaming:
            raise UnsupportedOperationError(
                f"{operation} needs streaming, which this hub has switched off "
                "(capabilities.streaming is false); use SendMessage and GetTask"
            )

    def _require_push(self) -> None:
        if not self._push:
            raise PushNotificationNotSupportedError(
                "this hub does not send push notifications (capabilities.pushNotifications is "
                "false); poll with GetTask or use a stream"
            )
