"""`A2AClient`: call one partner agent, whatever version and binding it speaks.

The client picks the interface from the card, builds the transport for it, and wraps each
call in what makes it safe to use from a hub: per-partner timeouts, an overall deadline per
call, a retry policy that only repeats what is safe, a circuit breaker, and streams that
resume after a cut. The HTTP transports send on the httpx client they are given; the gRPC
transport (imported only for a gRPC interface) on a channel of the `GrpcChannels` given.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx

from hub.client.breaker import CircuitBreaker
from hub.client.call_auth import CallAuth
from hub.client.card_cache import CardCache, card_url
from hub.client.grpc_channels import GrpcChannels
from hub.client.interface import choose_interface
from hub.client.jsonrpc import JsonRpcTransport
from hub.client.rest import RestTransport
from hub.client.resume import ResumePolicy, resumable_stream
from hub.client.retry import RetryPolicy
from hub.client.transport import EventStream, Transport, TransportOptions
from hub.errors import (
    AgentTimeoutError,
    AgentUnreachableError,
    ConnectionLostError,
    InvalidAgentResponseError,
    NoSupportedInterfaceError,
    PartnerAuthError,
    RemoteRpcError,
)
from hub.protocol import (
    AgentCard,
    AgentInterface,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    user_message,
)
from hub.protocol.card import BINDING_GRPC, BINDING_HTTP_JSON
from hub.protocol.trace import current_scope
from hub.telemetry.budgets import charge_partner_call
from hub.telemetry.outgoing import partner_call

if TYPE_CHECKING:
    from hub.trust.tls import TlsPem  # loads the settings models: annotations only

__all__ = ["A2AClient", "Timeouts", "user_message"]

T = TypeVar("T")

# Failures that say the partner is unwell (as opposed to a well-formed refusal).
_HEALTH_FAILURES = (
    AgentUnreachableError,
    AgentTimeoutError,
    ConnectionLostError,
    InvalidAgentResponseError,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeouts:
    """Per-partner time limits.

    Attributes:
        connect: seconds to open a connection.
        read: seconds to wait for the next bytes of an answer (also between stream events);
            None to wait as long as the partner takes.
        deadline: seconds one unary call may take in all, retries and back-off included;
            None for no limit beyond connect and read. A call made for a caller with a
            deadline of its own (`hub.protocol.trace`) also ends when that one passes.
    """

    connect: float = 5.0
    read: float | None = 120.0
    deadline: float | None = None

    def httpx(self) -> httpx.Timeout:
        """The httpx form (write and pool waits share the connect limit)."""
        return httpx.Timeout(self.connect, read=self.read, write=self.connect, pool=self.connect)


class A2AClient:
    """Calls one partner through the first interface of its card that it can speak.

    Args:
        card: the partner's card (a 0.3 card upgraded with `card_to_v1`).
        http: the client to send with (its owner closes it).
        agent_name: the partner's name in messages; the card's name by default.
        protocol_version: `"1.0"`, `"0.3"` or None / `"auto"` (first supported interface).
        binding: `"jsonrpc"`, `"http+json"` or None / `"auto"`.
        headers: extra headers on every request (authentication, tracing).
        timeouts: connect and read limits and the per-call deadline.
        retry: retry policy (reads retried on transient failures, writes only when nothing
            was sent).
        breaker: the partner's circuit breaker; one is made when not given.
        resume: how to resume a cut stream.
        channels: the gRPC channels to call a gRPC interface on (its owner closes them);
            when not given, the client keeps its own, which `aclose` closes.
        tls: whether a gRPC interface whose URL names no scheme is called over TLS; None
            for yes (`from_url` sets it from the card URL's scheme).
        grpc: whether a gRPC interface may be chosen (`choose_interface`).
        tls_files: the partner's CA and client certificate for a gRPC channel (the HTTP
            client given carries its own TLS settings).
        auth: the `Authorization` value of each call, when it is a token the hub obtains
            (`hub.identity.partner_auth`); a request the partner refuses with 401 or
            UNAUTHENTICATED is sent once more with a fresh one.

    Raises:
        NoSupportedInterfaceError: the card offers nothing this client speaks.
    """

    def __init__(
        self,
        card: AgentCard,
        *,
        http: httpx.AsyncClient,
        agent_name: str | None = None,
        protocol_version: str | None = None,
        binding: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        breaker: CircuitBreaker | None = None,
        resume: ResumePolicy | None = None,
        channels: GrpcChannels | None = None,
        tls: bool | None = None,
        grpc: bool = True,
        tls_files: TlsPem | None = None,
        auth: CallAuth | None = None,
    ) -> None:
        self.card = card
        self.agent_name = agent_name or card.name
        self.interface, self.protocol_version = choose_interface(
            card, protocol_version=protocol_version, binding=binding, grpc=grpc
        )
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self.breaker = breaker or CircuitBreaker(self.agent_name)
        self.resume = resume or ResumePolicy()
        options = TransportOptions(
            agent_name=self.agent_name,
            headers=dict(headers or {}),
            timeout=self.timeouts.httpx(),
            tenant=self.interface.tenant,
            tls=tls,
            tls_files=tls_files,
            auth=auth,
        )
        self._own_channels: GrpcChannels | None = None
        if self.interface.protocol_binding.upper() == BINDING_GRPC:
            if channels is None:
                channels = self._own_channels = GrpcChannels()
            self.transport: Transport = _grpc_transport(channels, self.interface, options)
        else:
            self.transport = _build_transport(http, self.interface, self.protocol_version, options)

    @classmethod
    async def from_url(
        cls, url: str, *, http: httpx.AsyncClient, cards: CardCache | None = None, **options: Any
    ) -> A2AClient:
        """A client for the agent at `url` (a base URL or its card URL), its card read through
        `cards` (a fresh cache on `http` when not given). `options` are those of the class.

        Raises:
            CardFetchError: no valid card could be read.
            NoSupportedInterfaceError: the card offers nothing this client speaks.
        """
        cache = cards or CardCache(http)
        location = card_url(url)
        card = await cache.get(location, headers=options.get("headers"))
        options.setdefault("tls", urlsplit(location).scheme == "https")
        return cls(card, http=http, **options)

    async def aclose(self) -> None:
        """Close what the client made for itself (the gRPC channels it was not given); the
        HTTP client and a given pool of channels are their owners' to close."""
        if self._own_channels is not None:
            await self._own_channels.aclose()

    async def send(
        self,
        message: Message,
        *,
        configuration: SendMessageConfiguration | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Task | Message:
        """SendMessage: the task (or the direct message reply) the partner answers with.

        Never resent after the request may have reached the partner.

        Raises:
            BudgetExhaustedError: the current caller's `partner_calls` budget is spent
                (`hub.telemetry.spend`); nothing is sent.
        """
        charge_partner_call(self.agent_name)
        request = SendMessageRequest(
            message=message, configuration=configuration, metadata=metadata
        )
        response = await self._guarded(
            lambda: self.transport.send(request), idempotent=False, method="SendMessage"
        )
        if response.task is not None:
            return response.task
        assert response.message is not None  # SendMessageResponse holds exactly one
        return response.message

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """GetTask (retried on transient failures)."""
        request = GetTaskRequest(id=task_id, history_length=history_length)
        return await self._guarded(
            lambda: self.transport.get_task(request), idempotent=True, method="GetTask"
        )

    async def list_tasks(self, request: ListTasksRequest | None = None) -> ListTasksResponse:
        """ListTasks (retried on transient failures)."""
        query = request or ListTasksRequest()
        return await self._guarded(
            lambda: self.transport.list_tasks(query), idempotent=True, method="ListTasks"
        )

    async def cancel(self, task_id: str, *, metadata: dict[str, Any] | None = None) -> Task:
        """CancelTask."""
        request = CancelTaskRequest(id=task_id, metadata=metadata)
        return await self._guarded(
            lambda: self.transport.cancel(request), idempotent=False, method="CancelTask"
        )

    async def create_push_config(
        self, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (`config.task_id` names the task)."""
        return await self._guarded(
            lambda: self.transport.create_push_config(config),
            idempotent=False,
            method="CreateTaskPushNotificationConfig",
        )

    async def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig."""
        request = GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        return await self._guarded(
            lambda: self.transport.get_push_config(request),
            idempotent=True,
            method="GetTaskPushNotificationConfig",
        )

    async def list_push_configs(self, task_id: str) -> ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs."""
        request = ListTaskPushNotificationConfigsRequest(task_id=task_id)
        return await self._guarded(
            lambda: self.transport.list_push_configs(request),
            idempotent=True,
            method="ListTaskPushNotificationConfigs",
        )

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """DeleteTaskPushNotificationConfig."""
        request = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        await self._guarded(
            lambda: self.transport.delete_push_config(request),
            idempotent=True,
            method="DeleteTaskPushNotificationConfig",
        )

    async def extended_card(self) -> AgentCard:
        """GetExtendedAgentCard: the card an authenticated caller may see."""
        return await self._guarded(
            self.transport.extended_card, idempotent=True, method="GetExtendedAgentCard"
        )

    @asynccontextmanager
    async def stream(
        self,
        message: Message,
        *,
        configuration: SendMessageConfiguration | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        """SendStreamingMessage: `async with client.stream(msg) as events: ...`.

        A stream cut before a final event is resumed through SubscribeToTask; the caller sees
        each event once. A follow-up (a message carrying the id of a waiting task) ends at the
        partner's next state change, not at a snapshot of the state the caller knows.

        Raises:
            BudgetExhaustedError: the current caller's `partner_calls` budget is spent
                (`hub.telemetry.spend`); nothing is sent.
        """
        charge_partner_call(self.agent_name)
        request = SendMessageRequest(
            message=message, configuration=configuration, metadata=metadata
        )
        stream = self.transport.stream(request)
        follow_up = bool(message.task_id)
        async with self._resumable(
            stream, task_id=None, known_task=follow_up, method="SendStreamingMessage"
        ) as events:
            yield events

    @asynccontextmanager
    async def subscribe(self, task_id: str) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        """SubscribeToTask: the task snapshot, then its events, resumed after a cut, up to a
        terminal state or one reached after the snapshot (never the snapshot itself, unless
        terminal)."""
        first = self.transport.subscribe(SubscribeToTaskRequest(id=task_id))
        async with self._resumable(
            first, task_id=task_id, known_task=True, method="SubscribeToTask"
        ) as events:
            yield events

    @asynccontextmanager
    async def _resumable(
        self, first: EventStream, *, task_id: str | None, known_task: bool, method: str
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        with self._observed(method):
            async with self._resumed(first, task_id=task_id, known_task=known_task) as events:
                yield events

    @asynccontextmanager
    async def _resumed(
        self, first: EventStream, *, task_id: str | None, known_task: bool
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        self.breaker.before_call()
        events = resumable_stream(
            first,
            subscribe=lambda tid: self.transport.subscribe(SubscribeToTaskRequest(id=tid)),
            get_task=lambda tid: self.transport.get_task(GetTaskRequest(id=tid)),
            policy=self.resume,
            agent_name=self.agent_name,
            task_id=task_id,
            known_task=known_task,
        )
        try:
            yield events
        except BaseException as exc:
            self._record(exc)
            raise
        else:
            self.breaker.record_success()
        finally:
            await events.aclose()

    async def _guarded(
        self, operation: Callable[[], Awaitable[T]], *, idempotent: bool, method: str
    ) -> T:
        with self._observed(method):
            self.breaker.before_call()
            try:
                result = await self._within_deadline(
                    lambda: self.retry.call(operation, idempotent=idempotent)
                )
            except BaseException as exc:
                self._record(exc)
                raise
            self.breaker.record_success()
            return result

    def _observed(self, method: str) -> AbstractContextManager[object]:
        """The call's span, metrics and DEBUG line (`hub.telemetry.outgoing`)."""
        binding = self.interface.protocol_binding
        return partner_call(self.agent_name, method, binding=binding, version=self.protocol_version)

    def deadline(self) -> float | None:
        """Seconds a call starting now may take: the partner's own deadline or the time its
        caller has left (`hub.protocol.trace`), whichever is shorter; None for no limit."""
        own = self.timeouts.deadline
        scope = current_scope()
        return scope.within(own) if scope is not None else own

    async def _within_deadline(self, operation: Callable[[], Awaitable[T]]) -> T:
        own = self.timeouts.deadline
        deadline = self.deadline()
        if deadline is None:
            return await operation()
        try:
            with anyio.fail_after(deadline):
                return await operation()
        except TimeoutError:
            whose = "its" if deadline == own else "the caller's"
            raise AgentTimeoutError(
                f"agent '{self.agent_name}' did not finish the call within {whose} deadline "
                f"({deadline:.3g} s)"
            ) from None

    def _record(self, exc: BaseException) -> None:
        if isinstance(exc, _HEALTH_FAILURES) or (
            isinstance(exc, RemoteRpcError) and 500 <= exc.code < 600
        ):
            self.breaker.record_failure()
        elif isinstance(exc, PartnerAuthError):
            # No token to call with: the partner was not asked, and says nothing of its health.
            self.breaker.release()
        elif isinstance(exc, Exception):
            # A well-formed refusal (task not found, invalid params) is a healthy partner.
            self.breaker.record_success()
        else:
            self.breaker.release()


def _grpc_transport(
    channels: GrpcChannels, interface: AgentInterface, options: TransportOptions
) -> Transport:
    from hub.client.grpc_transport import GrpcTransport  # imports grpc: gRPC partners only

    try:
        return GrpcTransport(channels, interface.url, options=options)
    except ValueError as exc:
        raise NoSupportedInterfaceError(
            f"agent '{options.agent_name}' offers {exc}; a gRPC interface URL is host:port"
        ) from None


def _build_transport(
    http: httpx.AsyncClient, interface: AgentInterface, version: str, options: TransportOptions
) -> Transport:
    if interface.protocol_binding.upper() == BINDING_HTTP_JSON:
        return RestTransport(http, interface.url, options=options)
    return JsonRpcTransport(http, interface.url, options=options, version=version)
