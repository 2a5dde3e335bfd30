"""`PartnerService`: the A2A operations, served by forwarding them to one partner.

Each call goes through the partner's `A2AClient` (`Partners.client`), which speaks whatever
interface and version the partner's card offers, sends the credentials agents.yaml gives it,
and carries the caller's trace, deadline and hub trail. The bindings have already turned the
caller's request into 1.0 objects, so a 0.3 caller reaches a 1.0 partner, and the other way
round, without either noticing.
"""

from __future__ import annotations

from collections.abc import Callable

from hub.client import A2AClient
from hub.errors import (
    ExtendedAgentCardNotConfiguredError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from hub.partners import Partners, PartnerView
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
from hub.server.gateway.errors import partner_errors
from hub.server.gateway.owners import TaskOwners
from hub.server.gateway.stream import PartnerStreams
from hub.tasks import TaskStream

__all__ = ["WHOLE_HISTORY", "PartnerService"]

WHOLE_HISTORY = 2**31 - 1
"""The `historyLength` a 1.0 caller's GetTask carries to a 0.3 partner when the caller left it
unset: the largest the protocol's int32 holds, so the partner sends its whole history."""


class PartnerService:
    """The operations of §5.3 for the partner `agent_name`, forwarded to it.

    Tasks belong to the partner; the hub keeps none of them. Push notification configs are
    refused (-32003, as the card's `pushNotifications: false` says): a webhook given to the
    partner would be called by the partner, from wherever it runs, outside the hub's SSRF
    guard, with notification bodies in the partner's protocol version.

    Args:
        agent_name: the partner's name in agents.yaml.
        partners: the hub's partners (cards, clients, breakers), reached through the view of
            the call scope each operation runs in.
        streams: the owner of the partner streams' pumps.
        rewrite: turns a card of the partner into the one the gateway serves.
        streaming: the hub serves streams (`card.streaming`).
        owners: which credential started which partner task (auth on: each caller sees
            its own only).
    """

    def __init__(
        self,
        agent_name: str,
        *,
        partners: Partners,
        streams: PartnerStreams,
        rewrite: Callable[[AgentCard], AgentCard],
        streaming: bool,
        owners: TaskOwners,
    ) -> None:
        self.agent_name = agent_name
        self._owners = owners
        self._partners = partners
        self._streams = streams
        self._rewrite = rewrite
        self._streaming = streaming

    async def send_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> SendMessageResponse:
        with partner_errors(self.agent_name):
            client = await self._client()
            self._refuse_inline_push(request)
            await self._continues(request, caller)
            result = await client.send(
                request.message, configuration=request.configuration, metadata=request.metadata
            )
        if isinstance(result, Message):
            return SendMessageResponse(message=result)
        await self._owners.claim(self.agent_name, result, caller)
        return SendMessageResponse(task=result)

    async def stream_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> TaskStream:
        client = await self._stream_client("SendStreamingMessage")
        self._refuse_inline_push(request)
        await self._continues(request, caller)
        return await self._streams.open(
            self._owners.claiming(
                lambda: client.stream(
                    request.message,
                    configuration=request.configuration,
                    metadata=request.metadata,
                ),
                self.agent_name,
                caller,
            ),
            agent_name=self.agent_name,
            known_task=bool(request.message.task_id),
        )

    async def get_task(
        self, request: GetTaskRequest, caller: str, *, protocol: str = "1.0"
    ) -> Task:
        with partner_errors(self.agent_name):
            client = await self._client()
            await self._owners.check(self.agent_name, request.id, caller)
            history_length = request.history_length
            if history_length is None and protocol == "1.0" and client.protocol_version == "0.3":
                # Unset means the server's default in 1.0, the whole history here; a 0.3
                # partner may send none without it (@a2a-js/sdk 0.3.13 does), so ask for all.
                history_length = WHOLE_HISTORY
            return await client.get_task(request.id, history_length=history_length)

    async def list_tasks(self, request: ListTasksRequest, caller: str) -> ListTasksResponse:
        with partner_errors(self.agent_name):
            client = await self._client()
            # A tenant the caller named is the hub's; the client adds the partner's own.
            page = await client.list_tasks(request.model_copy(update={"tenant": None}))
        if not caller:
            return page
        # Filtered page by page: a page may hold fewer tasks than asked for, and its
        # totalSize counts only the caller's tasks on it (the rest are not counted).
        tasks = await self._owners.visible(self.agent_name, page.tasks, caller)
        return page.model_copy(update={"tasks": tasks, "total_size": len(tasks)})

    async def cancel_task(self, request: CancelTaskRequest, caller: str) -> Task:
        with partner_errors(self.agent_name):
            client = await self._client()
            await self._owners.check(self.agent_name, request.id, caller)
            return await client.cancel(request.id, metadata=request.metadata)

    async def subscribe(self, request: SubscribeToTaskRequest, caller: str) -> TaskStream:
        client = await self._stream_client("SubscribeToTask")
        await self._owners.check(self.agent_name, request.id, caller)
        return await self._streams.open(
            lambda: client.subscribe(request.id), agent_name=self.agent_name, known_task=True
        )

    async def create_push_config(
        self, config: TaskPushNotificationConfig, caller: str, *, protocol: str = "1.0"
    ) -> TaskPushNotificationConfig:
        raise await self._push_refused()

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, caller: str
    ) -> TaskPushNotificationConfig:
        raise await self._push_refused()

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, caller: str
    ) -> ListTaskPushNotificationConfigsResponse:
        raise await self._push_refused()

    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, caller: str
    ) -> None:
        raise await self._push_refused()

    async def extended_card(self, caller: str) -> AgentCard:
        with partner_errors(self.agent_name):
            client = await self._client()
            if not caller:
                # As for the hub's own: the extended card is for authenticated callers only.
                raise ExtendedAgentCardNotConfiguredError(
                    f"the extended card of agent '{self.agent_name}' is served only to "
                    "authenticated callers, and auth is off on this hub"
                )
            card = await client.extended_card()
        return self._rewrite(card)

    def _reachable(self) -> PartnerView:
        """The partners the caller may reach: those of the scope the operation runs in (the
        request's, set by the binding), none outside one."""
        return PartnerView.of(self._partners, current_scope())

    async def _client(self) -> A2AClient:
        """The partner's client; raises for a partner the caller may not reach as for one
        agents.yaml does not list."""
        return await self._reachable().client(self.agent_name)

    async def _stream_client(self, operation: str) -> A2AClient:
        with partner_errors(self.agent_name):
            client = await self._client()
        if not self._streaming:
            raise UnsupportedOperationError(
                f"{operation} needs streaming, which this hub has switched off "
                "(capabilities.streaming is false); use SendMessage and GetTask",
                metadata={"agent": self.agent_name},
            )
        return client

    async def _continues(self, request: SendMessageRequest, caller: str) -> None:
        """A message to an existing partner task must come from the caller that started it."""
        if request.message.task_id:
            await self._owners.check(self.agent_name, request.message.task_id, caller)

    def _refuse_inline_push(self, request: SendMessageRequest) -> None:
        configuration = request.configuration
        if configuration is not None and configuration.task_push_notification_config:
            raise self._push_error()

    async def _push_refused(self) -> PushNotificationNotSupportedError:
        with partner_errors(self.agent_name):
            self._reachable().entry(self.agent_name)  # an unknown partner is reported first
        return self._push_error()

    def _push_error(self) -> PushNotificationNotSupportedError:
        return PushNotificationNotSupportedError(
            f"the hub does not forward push notification configs to agent '{self.agent_name}'; "
            "poll with GetTask or use a stream",
            metadata={"agent": self.agent_name},
        )
