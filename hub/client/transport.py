"""The `Transport` protocol: one A2A binding and version, spoken to one interface URL.

A transport takes and returns the canonical 1.0 objects whatever it speaks on the wire, so
`A2AClient` (interface choice, retries, breaker, stream resume) never looks at a binding.
Streams are async context managers, so the connection closes when the caller stops reading.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import httpx
from httpx_sse import EventSource, ServerSentEvent

from hub.client.call_auth import CallAuth
from hub.client.http_client import send_request
from hub.client.http_errors import check_status, invalid_response, translate_http_errors
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
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

if TYPE_CHECKING:
    from hub.trust.tls import TlsPem  # loads the settings models: annotations only

__all__ = ["EventStream", "Transport", "TransportOptions", "open_event_stream"]

EventStream = AbstractAsyncContextManager[AsyncIterator[StreamResponse]]
"""`async with transport.stream(...) as events: async for event in events: ...`"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportOptions:
    """What every transport needs besides its URL.

    Attributes:
        agent_name: the partner's name, used in every error message.
        headers: extra headers sent with every request (authentication, tracing).
        timeout: connect, read, write and pool timeouts for each request.
        tenant: the interface's tenant, copied into every request that has one (§8.3.2).
        tls: whether a binding whose interface URL does not say (gRPC's `host:port`) is
            spoken over TLS; None for yes. The hub sets it from the scheme of the URL the
            card was read from.
        tls_files: the partner's own CA and client certificate (agents.yaml `tls`), for the
            bindings that take PEM bytes (gRPC); a partner with them is called over TLS.
        auth: the `Authorization` value of each call, when it changes from call to call (a
            token the hub obtains); it wins over one in `headers`.
    """

    agent_name: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: httpx.Timeout = field(default_factory=lambda: httpx.Timeout(10.0, read=60.0))
    tenant: str | None = None
    tls: bool | None = None
    tls_files: TlsPem | None = None
    auth: CallAuth | None = None


class Transport(Protocol):
    """One binding (JSON-RPC, HTTP+JSON, gRPC) at one protocol version, seen as 1.0 objects.

    Every method raises the errors of `hub.client.http_errors.translate_http_errors` (the
    same ones over gRPC: `hub.client.grpc_errors`), and `RemoteRpcError` when the partner
    answers with a protocol error.
    """

    async def send(self, request: SendMessageRequest) -> SendMessageResponse:
        """SendMessage: the task or the direct message reply."""
        ...

    def stream(self, request: SendMessageRequest) -> EventStream:
        """SendStreamingMessage, as an async context manager of events."""
        ...

    async def get_task(self, request: GetTaskRequest) -> Task:
        """GetTask."""
        ...

    async def list_tasks(self, request: ListTasksRequest) -> ListTasksResponse:
        """ListTasks (none in 0.3: `UnsupportedOperationError`)."""
        ...

    async def cancel(self, request: CancelTaskRequest) -> Task:
        """CancelTask."""
        ...

    def subscribe(self, request: SubscribeToTaskRequest) -> EventStream:
        """SubscribeToTask: the task snapshot, then its events."""
        ...

    async def create_push_config(
        self, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (`config.task_id` names the task)."""
        ...

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig."""
        ...

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs."""
        ...

    async def delete_push_config(self, request: DeleteTaskPushNotificationConfigRequest) -> None:
        """DeleteTaskPushNotificationConfig."""
        ...

    async def extended_card(self) -> AgentCard:
        """GetExtendedAgentCard (upgraded to 1.0 when the partner speaks 0.3)."""
        ...


@asynccontextmanager
async def open_event_stream(
    http: httpx.AsyncClient,
    request: httpx.Request,
    *,
    agent_name: str,
    reject: Callable[[httpx.Response], None],
    auth: CallAuth | None = None,
) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
    """Send `request` and yield its server-sent events, every failure a hub error.

    Args:
        http: the client that sends the request.
        request: the built request (its timeout extension set by the caller).
        agent_name: the partner's name, for error messages.
        reject: called with a response that is not an event stream, after its body is read;
            it raises the protocol error the body holds (an error before the first event is
            sent as a plain JSON answer). If it returns, the answer is reported as invalid.
    """
    with translate_http_errors(agent_name):
        response = await send_request(http, request, stream=True, auth=auth)
    try:
        media_type = response.headers.get("content-type", "").split(";", 1)[0].strip()
        if media_type != "text/event-stream":
            with translate_http_errors(agent_name):
                await response.aread()
            check_status(response, agent_name)  # a redirect, which no binding reads
            reject(response)
            raise invalid_response(
                agent_name,
                f"HTTP {response.status_code}, {media_type or 'no content type'} where an event "
                "stream was expected",
                response=response,
            )
        yield _events(response, agent_name)
    finally:
        with translate_http_errors(agent_name):
            await response.aclose()


async def _events(response: httpx.Response, agent_name: str) -> AsyncIterator[ServerSentEvent]:
    with translate_http_errors(agent_name):
        async for event in EventSource(response).aiter_sse():
            # Keep-alive comments and empty events carry nothing to parse.
            if event.data:
                yield event
