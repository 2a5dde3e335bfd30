"""The A2A operations, as every binding serves them: one place, so JSON-RPC and REST (and
both protocol versions) behave the same."""

from __future__ import annotations

from hub.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
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
    Message,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from hub.protocol.trace import current_scope
from hub.push import PushNotifier
from hub.server.card import CardDocument, build_extended_card
from hub.store import PushConfigRecord
from hub.tasks import TaskHook, TaskManager, TaskStream
from hub.telemetry.access import note_result

__all__ = ["A2AService"]


class A2AService:
    """The operations of §5.3 on top of the task manager.

    `protocol` ("1.0" or "0.3") is the version a call came in through: a push config created
    through 0.3 gets 0.3 notification bodies.

    Args:
        manager: the running task manager.
        card: the served card document (capabilities decide what is refused).
        push: the push notifier (None: push configs are refused).
    """

    def __init__(
        self, *, manager: TaskManager, card: CardDocument, push: PushNotifier | None = None
    ) -> None:
        self.manager = manager
        self.card = card
        self.push = push
        capabilities = card.card.capabilities
        self._streaming = bool(capabilities.streaming)
        self._push = bool(capabilities.push_notifications)
        self._extended = bool(capabilities.extended_agent_card)

    async def send_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> SendMessageResponse:
        on_task, attached = await self._inline_push(request, caller, protocol)
        result = await self.manager.send(request, owner=caller, on_task=on_task)
        note_result(result, message=request.message)
        await self._saved(attached)
        if isinstance(result, Message):
            return SendMessageResponse(message=result)
        return SendMessageResponse(task=result)

    async def stream_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> TaskStream:
        self._require_streaming("SendStreamingMessage")
        on_task, attached = await self._inline_push(request, caller, protocol)
        stream = await self.manager.stream(request, owner=caller, on_task=on_task)
        note_result(None, message=request.message)
        await self._saved(attached)
        return stream

    async def get_task(
        self, request: GetTaskRequest, caller: str, *, protocol: str = "1.0"
    ) -> Task:
        task = await self.manager.get(
            request.id, history_length=request.history_length, owner=caller
        )
        note_result(task)
        return task

    async def list_tasks(
        self,
        request: ListTasksRequest,
        caller: str,
        *,
        skill: str | None = None,
        partner: str | None = None,
        text: str | None = None,
    ) -> ListTasksResponse:
        """ListTasks. The keyword filters are the console's, not the protocol's: `skill`
        keeps one local skill's tasks, `partner` those that started a task on that partner,
        `text` those whose messages hold it (at least three characters, any case)."""
        return await self.manager.list(
            request, owner=caller, skill=skill, partner=partner, text=text
        )

    async def cancel_task(self, request: CancelTaskRequest, caller: str) -> Task:
        task = await self.manager.cancel(request.id, owner=caller)
        note_result(task)
        return task

    async def subscribe(self, request: SubscribeToTaskRequest, caller: str) -> TaskStream:
        self._require_streaming("SubscribeToTask")
        return await self.manager.subscribe(request.id, owner=caller)

    async def create_push_config(
        self, config: TaskPushNotificationConfig, caller: str, *, protocol: str = "1.0"
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig: the config's URL is checked (SSRF guard) now and
        before every delivery."""
        push = self._require_push()
        task_id = config.task_id or ""
        if not task_id:
            raise InvalidParamsError(
                "a push notification config needs the taskId of the task it follows",
                violations=[("taskId", "required")],
            )
        await self._visible(task_id, caller)  # an unknown task is reported before the URL
        accepted = await push.check(config, task_id=task_id)
        # Read again after the lookup: the task's state must be current when it is added.
        task = await self._visible(task_id, caller)
        return await push.create(accepted, task=task, owner=caller, protocol=protocol)

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, caller: str
    ) -> TaskPushNotificationConfig:
        push = self._require_push()
        await self._visible(request.task_id, caller)
        return await push.get(request.task_id, request.id)

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, caller: str
    ) -> ListTaskPushNotificationConfigsResponse:
        push = self._require_push()
        await self._visible(request.task_id, caller)
        return await push.list(
            request.task_id, page_size=request.page_size, page_token=request.page_token
        )

    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, caller: str
    ) -> None:
        push = self._require_push()
        await self._visible(request.task_id, caller)
        await push.delete(request.task_id, request.id)

    async def extended_card(self, caller: str) -> AgentCard:
        if not self._extended:
            raise UnsupportedOperationError(
                "this hub does not offer an extended agent card "
                "(capabilities.extendedAgentCard is false); read the public card at "
                "/.well-known/agent-card.json"
            )
        if not caller:  # check_card refuses to start so; kept for a hub built by hand
            raise ExtendedAgentCardNotConfiguredError(
                "the extended agent card is served only to authenticated callers, and auth is "
                "off on this hub"
            )
        scope = current_scope()
        return build_extended_card(self.card.card, skills=scope.skills if scope else None)

    def _require_streaming(self, operation: str) -> None:
        if not self._streaming:
            raise UnsupportedOperationError(
                f"{operation} needs streaming, which this hub has switched off "
                "(capabilities.streaming is false); use SendMessage and GetTask"
            )

    def _require_push(self) -> PushNotifier:
        if not self._push or self.push is None:
            raise PushNotificationNotSupportedError(
                "this hub does not send push notifications (capabilities.pushNotifications is "
                "false); poll with GetTask or use a stream"
            )
        return self.push

    async def _visible(self, task_id: str, caller: str) -> Task:
        """The task if the caller may see it (its owner-checked lookup), else TaskNotFound:
        another caller's configs are as invisible as its tasks."""
        return await self.manager.get(task_id, history_length=0, owner=caller)

    async def _inline_push(
        self, request: SendMessageRequest, caller: str, protocol: str
    ) -> tuple[TaskHook | None, list[PushConfigRecord]]:
        """For a push config sent inside SendMessage: check it now, and the hook that adds it
        to the task the message goes to before that task's first change is committed."""
        configuration = request.configuration
        config = configuration.task_push_notification_config if configuration else None
        attached: list[PushConfigRecord] = []
        if config is None:
            return None, attached
        push = self._require_push()
        await push.check(config, task_id=request.message.task_id)

        def on_task(task: Task) -> None:
            attached.append(push.attach(config, task=task, owner=caller, protocol=protocol))

        return on_task, attached

    async def _saved(self, attached: list[PushConfigRecord]) -> None:
        if self.push is not None:
            for record in attached:
                await self.push.saved(record)
