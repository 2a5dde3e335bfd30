"""A gRPC server that answers every A2A RPC as a test scripts it, over a real loopback port:
a status with or without a `google.rpc.Status` (ErrorInfo, RetryInfo), bytes that are not
the answer's message, or a delay; it records each call's metadata."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from hub.protocol import AgentCard
from tests.client.scripted import card_document

Answer = Callable[[bytes, grpc.aio.ServicerContext], Awaitable[bytes]]

SERVICE = "lf.a2a.v1.A2AService"
UNARY = (
    "SendMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "GetExtendedAgentCard",
    "DeleteTaskPushNotificationConfig",
)


def abort(
    code: grpc.StatusCode,
    message: str,
    *,
    reason: str | None = None,
    retry_after: float | None = None,
) -> Answer:
    """An answer ending the call with `code`, a `google.rpc.Status` in its trailers when it
    has a `reason` (A2A's ErrorInfo) or a `retry_after` (RetryInfo)."""

    async def answer(_: bytes, context: grpc.aio.ServicerContext) -> bytes:
        details = []
        if reason is not None:
            info = error_details_pb2.ErrorInfo(reason=reason, domain="a2a-protocol.org")
            details.append(_packed(info))
        if retry_after is not None:
            delay = duration_pb2.Duration(seconds=int(retry_after))
            details.append(_packed(error_details_pb2.RetryInfo(retry_delay=delay)))
        trailers: tuple[tuple[str, Any], ...] = ()
        if details:
            status = status_pb2.Status(code=code.value[0], message=message, details=details)
            trailers = (("grpc-status-details-bin", status.SerializeToString()),)
        await context.abort(code, message, trailing_metadata=trailers)
        raise AssertionError("abort raises")

    return answer


def reply(payload: bytes, *, delay: float = 0.0) -> Answer:
    """An answer of `payload` as the message's bytes, after `delay` seconds."""

    async def answer(_: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await anyio.sleep(delay)
        return payload

    return answer


def _packed(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


@dataclass
class ScriptedGrpc:
    """The server's script (RPC name → answer) and what it was sent."""

    target: str
    routes: dict[str, Answer] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    deadlines: list[float | None] = field(default_factory=list)
    """The seconds each call had left when it arrived (its gRPC deadline), None for none."""

    def card(self, *, url: str | None = None) -> AgentCard:
        """A card naming this server as its one interface (GRPC 1.0, plaintext)."""
        document = card_document("http://127.0.0.1")
        document["supportedInterfaces"] = [
            {
                "url": url or f"grpc://{self.target}",
                "protocolBinding": "GRPC",
                "protocolVersion": "1.0",
            }
        ]
        return AgentCard.model_validate(document)

    def handler(self, rpc: str) -> grpc.RpcMethodHandler:
        async def unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            metadata = {key: value for key, value in context.invocation_metadata() or ()}
            self.calls.append((rpc, metadata))
            self.deadlines.append(context.time_remaining())
            answer = self.routes.get(rpc) or abort(grpc.StatusCode.UNIMPLEMENTED, "no")
            return await answer(request, context)

        return grpc.unary_unary_rpc_method_handler(unary)


@asynccontextmanager
async def scripted_grpc() -> AsyncIterator[ScriptedGrpc]:
    """The scripted server on a loopback port, stopped on exit."""
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    scripted = ScriptedGrpc(target=f"127.0.0.1:{port}")
    handlers = {rpc: scripted.handler(rpc) for rpc in UNARY}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    await server.start()
    try:
        yield scripted
    finally:
        await server.stop(grace=None)
