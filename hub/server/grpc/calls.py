"""The eleven RPCs of `lf.a2a.v1.A2AService`, each served through `A2AOperations` as the
JSON-RPC and REST bindings serve theirs.

A call passes the same gate first (its credential in the `authorization` or the API-key
metadata, its request rate, its open streams), then its `a2a-version` is checked (a call to
the 1.0 service that names none is a 1.0 call: 0.3 had a service of its own), its message
is converted to the 1.0 models (`hub.protocol.grpc.convert`), and it runs in the call scope
its metadata asks for (`traceparent`, the hub's deadline and trail, `a2a-extensions`; the
call's gRPC deadline, when the hub's deadline metadata is absent). The answer is converted
back; an error ends the call with its status (`status.py`). Every call is observed like an
HTTP request (SERVER span, request metrics, access line).

A request whose `tenant` is `agents/<name>` is served by that partner through the gateway
(`PartnerService`), the tenant left out of what the partner is sent, the extensions it
lists forwarded to the partner; with no tenant, by the hub's own operations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc  # type: ignore[import-untyped]
from google.protobuf import empty_pb2, message  # type: ignore[import-untyped]

from hub.config.callers import Caller
from hub.errors import InvalidParamsError
from hub.protocol import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from hub.protocol.base import WireModel
from hub.protocol.extensions import EXTENSIONS_HEADER
from hub.protocol.grpc import a2a_pb2 as pb
from hub.protocol.grpc.convert import ConversionError, from_proto, to_proto
from hub.protocol.trace import DEADLINE_HEADER, TRACEPARENT_HEADER, CallScope, use_scope
from hub.server.errors import as_protocol_error
from hub.server.extensions import answer_headers, extension_scope
from hub.server.gate import StreamSlot
from hub.server.gateway.card import TENANT_PREFIX
from hub.server.grpc.status import abort
from hub.server.operations import A2AOperations
from hub.server.state import HubState
from hub.server.version import check_version, requested_version
from hub.tasks import TaskStream
from hub.telemetry import Telemetry
from hub.telemetry.access import RpcObservation, note_call, note_error, observe_rpc

__all__ = ["RPCS", "SERVICE", "A2AServiceHandler"]

SERVICE = "lf.a2a.v1.A2AService"

Context = Any
"""grpcio's `grpc.aio.ServicerContext` (grpcio ships no type information)."""
Run = Callable[[A2AOperations, Any, str], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Rpc:
    """One RPC: its name, its request's message and model, the operation it runs, and the
    message its answer (or each streamed event) is sent as."""

    name: str
    request: type[message.Message]
    model: type[WireModel]
    run: Run
    reply: type[message.Message]
    streams: bool = False

    def answer(self, result: Any) -> message.Message:
        if result is None:  # DeleteTaskPushNotificationConfig: google.protobuf.Empty
            return self.reply()
        return to_proto(result, self.reply)


RPCS = (
    Rpc(
        "SendMessage",
        pb.SendMessageRequest,
        SendMessageRequest,
        lambda ops, request, caller: ops.send_message(request, caller),
        pb.SendMessageResponse,
    ),
    Rpc(
        "SendStreamingMessage",
        pb.SendMessageRequest,
        SendMessageRequest,
        lambda ops, request, caller: ops.stream_message(request, caller),
        pb.StreamResponse,
        streams=True,
    ),
    Rpc(
        "GetTask",
        pb.GetTaskRequest,
        GetTaskRequest,
        lambda ops, request, caller: ops.get_task(request, caller),
        pb.Task,
    ),
    Rpc(
        "ListTasks",
        pb.ListTasksRequest,
        ListTasksRequest,
        lambda ops, request, caller: ops.list_tasks(request, caller),
        pb.ListTasksResponse,
    ),
    Rpc(
        "CancelTask",
        pb.CancelTaskRequest,
        CancelTaskRequest,
        lambda ops, request, caller: ops.cancel_task(request, caller),
        pb.Task,
    ),
    Rpc(
        "SubscribeToTask",
        pb.SubscribeToTaskRequest,
        SubscribeToTaskRequest,
        lambda ops, request, caller: ops.subscribe(request, caller),
        pb.StreamResponse,
        streams=True,
    ),
    Rpc(
        "CreateTaskPushNotificationConfig",
        pb.TaskPushNotificationConfig,
        TaskPushNotificationConfig,
        lambda ops, request, caller: ops.create_push_config(request, caller),
        pb.TaskPushNotificationConfig,
    ),
    Rpc(
        "GetTaskPushNotificationConfig",
        pb.GetTaskPushNotificationConfigRequest,
        GetTaskPushNotificationConfigRequest,
        lambda ops, request, caller: ops.get_push_config(request, caller),
        pb.TaskPushNotificationConfig,
    ),
    Rpc(
        "ListTaskPushNotificationConfigs",
        pb.ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsRequest,
        lambda ops, request, caller: ops.list_push_configs(request, caller),
        pb.ListTaskPushNotificationConfigsResponse,
    ),
    Rpc(
        "GetExtendedAgentCard",
        pb.GetExtendedAgentCardRequest,
        GetExtendedAgentCardRequest,
        lambda ops, request, caller: ops.extended_card(caller),
        pb.AgentCard,
    ),
    Rpc(
        "DeleteTaskPushNotificationConfig",
        pb.DeleteTaskPushNotificationConfigRequest,
        DeleteTaskPushNotificationConfigRequest,
        lambda ops, request, caller: ops.delete_push_config(request, caller),
        empty_pb2.Empty,
    ),
)
"""Every RPC of the service, in the proto's order."""


@dataclass(slots=True)
class _Admitted:
    """A call let in: the operations that serve it, its request, who sent it, its scope."""

    service: A2AOperations
    request: WireModel
    caller: Caller
    scope: CallScope


class A2AServiceHandler:
    """The service's handlers, over the app's shared state.

    Args:
        hub: what the HTTP doors share (gate, operations, gateway, settings).
        telemetry: the hub's recorders.
    """

    def __init__(self, hub: HubState, telemetry: Telemetry) -> None:
        self._hub = hub
        self._telemetry = telemetry

    def generic_handler(self) -> grpc.GenericRpcHandler:
        """The handler grpcio's server is given: every RPC of `RPCS` by name."""
        handlers = {}
        for rpc in RPCS:
            make = (
                grpc.unary_stream_rpc_method_handler
                if rpc.streams
                else (grpc.unary_unary_rpc_method_handler)
            )
            serve = self._streaming(rpc) if rpc.streams else self._unary(rpc)
            handlers[rpc.name] = make(
                serve,
                request_deserializer=rpc.request.FromString,
                response_serializer=rpc.reply.SerializeToString,
            )
        return grpc.method_handlers_generic_handler(SERVICE, handlers)

    def _unary(self, rpc: Rpc) -> Callable[[Any, Context], Awaitable[message.Message]]:
        path = f"/{SERVICE}/{rpc.name}"

        async def serve(request: Any, context: Context) -> message.Message:
            metadata = _metadata(context)
            with (
                observe_rpc(
                    self._telemetry, path=path, traceparent=metadata.get(TRACEPARENT_HEADER)
                ) as observation,
                observation.current(),
            ):
                note_call(rpc.name, binding="grpc", version="1.0")
                admitted = None
                try:
                    admitted = await self._admit(rpc, request, context, metadata, observation)
                    with use_scope(admitted.scope):
                        result = await rpc.run(
                            admitted.service, admitted.request, admitted.caller.name
                        )
                    answer = rpc.answer(result)
                except Exception as exc:
                    await _fail(context, exc, observation, admitted)
                await _echo(context, admitted)
                return answer

        return serve

    def _streaming(self, rpc: Rpc) -> Callable[[Any, Context], AsyncIterator[message.Message]]:
        path = f"/{SERVICE}/{rpc.name}"

        async def serve(request: Any, context: Context) -> AsyncIterator[message.Message]:
            metadata = _metadata(context)
            with observe_rpc(
                self._telemetry, path=path, traceparent=metadata.get(TRACEPARENT_HEADER)
            ) as observation:
                with observation.current():
                    note_call(rpc.name, binding="grpc", version="1.0")
                    admitted = None
                    slot: StreamSlot | None = None
                    try:
                        admitted = await self._admit(rpc, request, context, metadata, observation)
                        slot = self._hub.gate.open_stream(admitted.caller)
                        with use_scope(admitted.scope):
                            events: TaskStream = await rpc.run(
                                admitted.service, admitted.request, admitted.caller.name
                            )
                    except Exception as exc:
                        if slot is not None:
                            slot.release()
                        await _fail(context, exc, observation, admitted)
                assert slot is not None
                try:
                    # Known by now: a partner's first event came after its answer's head.
                    await _echo(context, admitted)
                    async with events:
                        async for update in events:
                            yield rpc.answer(update.event)
                except Exception as exc:
                    with observation.current():
                        await _fail(context, exc, observation, admitted)
                finally:
                    slot.release()

        return serve

    async def _admit(
        self,
        rpc: Rpc,
        request: message.Message,
        context: Context,
        metadata: dict[str, str],
        observation: RpcObservation,
    ) -> _Admitted:
        """Let the call in (credential, rate), check its version, read its request and
        route it by its tenant, in the call scope its metadata asks for.

        Raises:
            ProtocolError: refused (401, 429 in gRPC's words), or the request is invalid.
        """
        hub = self._hub
        caller = await hub.gate.admit(metadata, address=_address(context))
        check_version("1.0", requested_version(metadata, {}), accept_missing=True)
        try:
            model = from_proto(request, rpc.model)
        except ConversionError as error:
            raise InvalidParamsError(str(error)) from None
        service, model, own = self._route(model)
        server = hub.settings.server
        call_scope = extension_scope(
            CallScope.from_headers(
                _scope_headers(metadata, context, observation),
                here=server.base_url(),
                max_hops=server.max_hops,
            ),
            [(name.encode(), value.encode()) for name, value in metadata.items()],
            policy=hub.extensions if own else None,
        )
        return _Admitted(service, model, caller, caller.scope(call_scope))

    def _route(self, request: WireModel) -> tuple[A2AOperations, WireModel, bool]:
        """The operations that serve `request` (and whether they are the hub's own), by its
        tenant: none for the hub's own, `agents/<name>` for a partner's."""
        tenant = getattr(request, "tenant", None)
        if not tenant:
            return self._hub.service, request, True
        name = tenant.removeprefix(TENANT_PREFIX)
        if name == tenant or not name:
            raise InvalidParamsError(
                f"unknown tenant {tenant[:100]!r}: leave tenant out for this hub's own "
                f"skills, or name a partner as '{TENANT_PREFIX}<name>' (its card at "
                f"/agents/<name>/.well-known/agent-card.json lists it)",
                violations=[("tenant", f"not empty or {TENANT_PREFIX}<name>")],
            )
        # The partner is not told the hub's tenant: it is the hub's routing, not the partner's.
        return self._hub.service_for(name), request.model_copy(update={"tenant": None}), False


def _metadata(context: Context) -> dict[str, str]:
    """The call's text metadata by (lower-case) key, as the HTTP doors read headers: the
    last value of a repeated key, every `a2a-extensions` value joined."""
    found: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if key.endswith("-bin") or not isinstance(value, str):
            continue
        if key in found and key == EXTENSIONS_KEY:
            value = f"{found[key]},{value}"
        found[key] = value
    return found


EXTENSIONS_KEY = EXTENSIONS_HEADER.lower()


def _address(context: Context) -> str:
    """The client's IP address from grpcio's peer string (`ipv4:1.2.3.4:5`,
    `ipv6:[::1]:5`); "" for another kind of peer."""
    peer: str = context.peer()
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    return ""


def _scope_headers(
    metadata: dict[str, str], context: Context, observation: RpcObservation
) -> Mapping[str, str]:
    """The metadata the call scope is read from: the `traceparent` of the call's SERVER span
    (or of the trace its access line names), and the call's gRPC deadline as the hub's
    deadline when the caller sent none of the hub's own."""
    headers = metadata
    deadline = DEADLINE_HEADER.lower()
    remaining = context.time_remaining()
    if observation.traceparent is not None or (deadline not in metadata and remaining):
        headers = dict(metadata)
        if observation.traceparent is not None:
            headers[TRACEPARENT_HEADER] = observation.traceparent
        if deadline not in metadata and remaining:
            headers[deadline] = f"{remaining:.3f}"
    return headers


async def _fail(
    context: Context,
    exc: Exception,
    observation: RpcObservation,
    admitted: _Admitted | None,
) -> NoReturn:
    """End the call with `exc` as the A2A error its caller gets."""
    error = as_protocol_error(exc, where="gRPC")
    note_error(error)
    observation.status = error.rpc_status
    await abort(context, error, metadata=_echoed(admitted))


def _echoed(admitted: _Admitted | None) -> dict[str, str]:
    """The `a2a-extensions` the call activated (or, behind the gateway, the partner did)."""
    scope = admitted.scope if admitted is not None else None
    return {name.lower(): value for name, value in answer_headers(scope).items()}


async def _echo(context: Context, admitted: _Admitted | None) -> None:
    echoed = _echoed(admitted)
    if echoed:
        await context.send_initial_metadata(tuple(echoed.items()))
