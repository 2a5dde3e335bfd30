"""`GrpcTransport`: the gRPC binding of A2A 1.0 (§10), over grpcio's asyncio channel.

Every call crosses `hub.protocol.grpc.convert`, so callers see the same 1.0 objects the
JSON transports give. What an HTTP request carries in headers goes in metadata, under
lower-case names: the partner's credentials from agents.yaml, `a2a-version: 1.0`, and the
current scope's `traceparent`, deadline and trail, and the extensions a call the gateway
forwards carries (`a2a-extensions`); the extensions the partner names in its answer's
metadata are recorded for the gateway's answer, as the HTTP client's hook does.

The transport's timeouts become gRPC's: a channel not yet connected gets the connect limit
to connect (then the call is refused as unreachable, nothing having been sent); a unary
call's deadline is the connect and read limits together, a stream waits at most the read
limit for each event, and neither outlasts the time the caller has left, which the partner
learns as the call's deadline. Failures become hub errors in `hub.client.grpc_errors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import grpc  # type: ignore[import-untyped]
from google.protobuf import message  # type: ignore[import-untyped]

from hub.client.call_auth import is_secure
from hub.client.grpc_channels import GrpcChannels, grpc_target
from hub.client.grpc_errors import translate_grpc_errors
from hub.client.http_errors import invalid_response
from hub.client.transport import EventStream, TransportOptions
from hub.errors import (
    AgentTimeoutError,
    AgentUnreachableError,
    InvalidAgentResponseError,
    InvalidParamsError,
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
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    WireModel,
)
from hub.protocol.extensions import EXTENSIONS_HEADER
from hub.protocol.grpc import a2a_pb2 as pb
from hub.protocol.grpc.a2a_pb2_grpc import A2AServiceStub
from hub.protocol.grpc.convert import ConversionError, from_proto, to_proto
from hub.protocol.trace import current_scope, outgoing_headers

__all__ = ["GrpcTransport"]

Model = TypeVar("Model", bound=WireModel)

_EXTENSIONS = EXTENSIONS_HEADER.lower()
# HTTP headers that mean nothing in gRPC metadata, or that gRPC sets itself.
_NOT_METADATA = frozenset(
    {"accept", "connection", "content-length", "content-type", "host", "te", "user-agent"}
)
_READY = grpc.ChannelConnectivity.READY
_SETTLED = frozenset(
    {
        grpc.ChannelConnectivity.READY,
        grpc.ChannelConnectivity.TRANSIENT_FAILURE,
        grpc.ChannelConnectivity.SHUTDOWN,
    }
)


class GrpcTransport:
    """A2A 1.0 over gRPC to one interface.

    Args:
        channels: the pool the interface's channel is taken from (its owner closes it).
        url: the interface URL from the card (`host:port`, or with a scheme).
        options: agent name, headers, timeouts, tenant and TLS (whether, and with which files).

    Raises:
        ValueError: the URL is not a gRPC target.
    """

    def __init__(self, channels: GrpcChannels, url: str, *, options: TransportOptions) -> None:
        tls = True if options.tls_files is not None else options.tls
        self._target, self._tls = grpc_target(url, tls=tls)
        host = self._target.rpartition(":")[0].strip("[]")
        self._secure = is_secure("grpcs" if self._tls else "grpc", host)
        self._channels = channels
        self._options = options
        self._agent = options.agent_name
        self._metadata = (
            *(
                (name.lower(), value)
                for name, value in options.headers.items()
                if name.lower() not in _NOT_METADATA and name.lower() != "a2a-version"
            ),
            ("a2a-version", "1.0"),
        )
        timeout = options.timeout
        self._unary_timeout = (
            None if timeout.read is None else (timeout.connect or 0.0) + timeout.read
        )
        self._channel: grpc.aio.Channel | None = None
        self._stub: A2AServiceStub | None = None

    async def send(self, request: SendMessageRequest) -> SendMessageResponse:
        proto = await self._unary("SendMessage", request, pb.SendMessageRequest)
        return self._parse(proto, SendMessageResponse)

    def stream(self, request: SendMessageRequest) -> EventStream:
        return self._stream("SendStreamingMessage", request, pb.SendMessageRequest)

    async def get_task(self, request: GetTaskRequest) -> Task:
        return self._parse(await self._unary("GetTask", request, pb.GetTaskRequest), Task)

    async def list_tasks(self, request: ListTasksRequest) -> ListTasksResponse:
        proto = await self._unary("ListTasks", request, pb.ListTasksRequest)
        return self._parse(proto, ListTasksResponse)

    async def cancel(self, request: CancelTaskRequest) -> Task:
        return self._parse(await self._unary("CancelTask", request, pb.CancelTaskRequest), Task)

    def subscribe(self, request: SubscribeToTaskRequest) -> EventStream:
        return self._stream("SubscribeToTask", request, pb.SubscribeToTaskRequest)

    async def create_push_config(
        self, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        if not config.task_id:
            raise ValueError("a push config needs the task_id it belongs to")
        proto = await self._unary(
            "CreateTaskPushNotificationConfig", config, pb.TaskPushNotificationConfig
        )
        return self._parse(proto, TaskPushNotificationConfig)

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        proto = await self._unary(
            "GetTaskPushNotificationConfig", request, pb.GetTaskPushNotificationConfigRequest
        )
        return self._parse(proto, TaskPushNotificationConfig)

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        proto = await self._unary(
            "ListTaskPushNotificationConfigs", request, pb.ListTaskPushNotificationConfigsRequest
        )
        return self._parse(proto, ListTaskPushNotificationConfigsResponse)

    async def delete_push_config(self, request: DeleteTaskPushNotificationConfigRequest) -> None:
        await self._unary(
            "DeleteTaskPushNotificationConfig", request, pb.DeleteTaskPushNotificationConfigRequest
        )

    async def extended_card(self) -> AgentCard:
        request = pb.GetExtendedAgentCardRequest(tenant=self._options.tenant or "")
        return self._parse(await self._call("GetExtendedAgentCard", request), AgentCard)

    # -- plumbing ----------------------------------------------------------------------------

    async def _unary(
        self, rpc: str, request: WireModel, proto_type: type[message.Message]
    ) -> message.Message:
        return await self._call(rpc, self._proto(request, proto_type))

    async def _call(self, rpc: str, proto: message.Message) -> message.Message:
        method = getattr(await self._stub_for(), rpc)
        authorization = await self._authorization()
        with translate_grpc_errors(self._agent, rpc):
            try:
                answer = await self._invoke(method, proto, authorization)
            except grpc.aio.AioRpcError as exc:
                fresh = await self._fresh(exc, authorization)
                if fresh is None:
                    raise
                answer = await self._invoke(method, proto, fresh)
        if answer is None:  # grpcio's word for bytes that do not parse as the answer
            raise self._unreadable(rpc)
        return answer

    async def _invoke(
        self, method: Any, proto: message.Message, authorization: str | None
    ) -> message.Message | None:
        call = method(proto, metadata=self._call_metadata(authorization), timeout=self._deadline())
        answer: message.Message | None = await call
        if self._forwards():
            self._note_extensions(await call.initial_metadata())
            self._note_extensions(await call.trailing_metadata())
        return answer

    @asynccontextmanager
    async def _stream(
        self, rpc: str, request: WireModel, proto_type: type[message.Message]
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        proto = self._proto(request, proto_type)
        method = getattr(await self._stub_for(), rpc)
        authorization = await self._authorization()
        calls: list[Any] = []

        def open_call(authorization: str | None) -> Any:
            scope = current_scope()
            left = scope.remaining() if scope is not None else None
            with translate_grpc_errors(self._agent, rpc):
                call = method(proto, metadata=self._call_metadata(authorization), timeout=left)
            calls.append(call)
            return call

        async def reopen(exc: grpc.aio.AioRpcError) -> Any | None:
            """The stream opened again with a fresh token, when the first refused it."""
            fresh = await self._fresh(exc, authorization)
            return None if fresh is None else open_call(fresh)

        first = open_call(authorization)
        try:
            yield self._events(first, rpc, reopen if authorization is not None else None)
        finally:
            for call in calls:
                call.cancel()

    async def _events(
        self,
        call: Any,
        rpc: str,
        reopen: Callable[[grpc.aio.AioRpcError], Awaitable[Any | None]] | None,
    ) -> AsyncIterator[StreamResponse]:
        wait = self._options.timeout.read
        first = True
        while True:
            with translate_grpc_errors(self._agent, rpc):
                try:
                    with anyio.fail_after(wait):
                        item = await call.read()
                except TimeoutError:
                    raise AgentTimeoutError(
                        f"agent '{self._agent}' did not answer in time (no event for {wait:.3g} s)"
                    ) from None
                except grpc.aio.AioRpcError as exc:
                    # A refused token is refused before the first event: open it once more.
                    again = await reopen(exc) if first and reopen is not None else None
                    if again is None:
                        raise
                    call, reopen = again, None
                    continue
                if first:
                    first = False
                    if self._forwards():
                        self._note_extensions(await call.initial_metadata())
            if item is grpc.aio.EOF:
                if self._forwards():
                    self._note_extensions(await call.trailing_metadata())
                return
            if item is None:
                raise self._unreadable(rpc)
            yield self._parse(item, StreamResponse)

    async def _stub_for(self) -> A2AServiceStub:
        """The stub on the interface's channel, once the channel is connected (or has failed
        to, which the call then reports)."""
        if self._channel is None or self._stub is None:
            self._channel = self._channels.channel(
                self._target, tls=self._tls, files=self._options.tls_files
            )
            self._stub = A2AServiceStub(self._channel)  # type: ignore[no-untyped-call]
        channel = self._channel
        state = channel.get_state(try_to_connect=True)
        if state is not _READY:
            connect = self._options.timeout.connect
            try:
                with anyio.fail_after(connect):
                    while state not in _SETTLED:
                        await channel.wait_for_state_change(state)
                        state = channel.get_state(try_to_connect=True)
            except TimeoutError:
                raise AgentUnreachableError(
                    f"agent '{self._agent}' is unreachable (no connection within {connect:.3g} s)",
                    detail=f"gRPC target {self._target}",
                ) from None
            if state is grpc.ChannelConnectivity.SHUTDOWN:
                raise AgentUnreachableError(
                    f"agent '{self._agent}' cannot be called: its channel is closed"
                )
        return self._stub

    def _proto(self, request: WireModel, proto_type: type[message.Message]) -> message.Message:
        try:
            proto = to_proto(request, proto_type)
        except ConversionError as exc:
            raise InvalidParamsError(f"agent '{self._agent}': {exc}") from None
        tenant = self._options.tenant
        if tenant and "tenant" in proto.DESCRIPTOR.fields_by_name and not proto.tenant:
            proto.tenant = tenant
        return proto

    def _call_metadata(self, authorization: str | None = None) -> tuple[tuple[str, str], ...]:
        scope = outgoing_headers(version="1.0").items()
        metadata = self._metadata
        if authorization is not None:
            own = tuple(item for item in metadata if item[0] != "authorization")
            metadata = (*own, ("authorization", authorization))
        return (*metadata, *((name.lower(), value) for name, value in scope))

    async def _authorization(self) -> str | None:
        auth = self._options.auth
        return None if auth is None else await auth.authorization(secure=self._secure)

    async def _fresh(self, exc: grpc.aio.AioRpcError, authorization: str | None) -> str | None:
        """A fresh `Authorization` value when the partner refused `authorization`."""
        auth = self._options.auth
        if auth is None or authorization is None:
            return None
        if exc.code() is not grpc.StatusCode.UNAUTHENTICATED:
            return None
        return await auth.rejected(authorization)

    def _deadline(self) -> float | None:
        scope = current_scope()
        return scope.within(self._unary_timeout) if scope is not None else self._unary_timeout

    @staticmethod
    def _forwards() -> bool:
        """Whether this call is one the gateway forwards (the partner's activated extensions
        then matter); the metadata is read only then."""
        scope = current_scope()
        return scope is not None and scope.forward_extensions is not None

    def _note_extensions(self, metadata: Iterable[tuple[str, Any]] | None) -> None:
        scope = current_scope()
        if scope is None or scope.forward_extensions is None or not metadata:
            return
        scope.forward_extensions.note(
            value for key, value in metadata if key == _EXTENSIONS and isinstance(value, str)
        )

    def _unreadable(self, rpc: str) -> InvalidAgentResponseError:
        return invalid_response(
            self._agent,
            f"a {rpc} answer that is not the gRPC message it should be",
            detail=f"gRPC target {self._target}",
        )

    def _parse(self, proto: Any, model_type: type[Model]) -> Model:
        try:
            return from_proto(proto, model_type)
        except ConversionError as exc:
            raise invalid_response(
                self._agent,
                "an answer that does not match the A2A schema",
                detail=str(exc)[:500],
            ) from exc
