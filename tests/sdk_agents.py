"""A partner agent on the official a2a-sdk, for the tests that need one: its card and the
Starlette app that serves it, over JSON-RPC (1.0, or 0.3 through the SDK's compatibility
mode) or HTTP+JSON; or the SDK's gRPC server serving it over gRPC only, its card over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from a2a.helpers.proto_helpers import get_message_text, new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    SecurityScheme,
    TaskState,
)
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server
from starlette.applications import Starlette

from hub.testing import serve_on_loopback

__all__ = ["GrpcAgent", "open_task", "sdk_agent", "sdk_grpc_agent"]


def _card(
    url: str,
    binding: str,
    version: str,
    *,
    name: str,
    description: str,
    skill: AgentSkill,
    streaming: bool,
    extensions: Sequence[AgentExtension],
    push: bool = False,
    schemes: Mapping[str, SecurityScheme] | None = None,
) -> AgentCard:
    return AgentCard(
        security_schemes=dict(schemes or {}),
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        ],
        capabilities=AgentCapabilities(
            streaming=streaming, push_notifications=push, extensions=list(extensions)
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[skill],
    )


def sdk_agent(
    url: str,
    executor: AgentExecutor,
    *,
    name: str,
    description: str,
    skill: AgentSkill,
    binding: str = "JSONRPC",
    version: str = "1.0",
    streaming: bool = True,
    extensions: Sequence[AgentExtension] = (),
    sign: Callable[[AgentCard], AgentCard] | None = None,
    schemes: Mapping[str, SecurityScheme] | None = None,
) -> Starlette:
    """The SDK serving `executor` at `url` (JSON-RPC at `/`, or HTTP+JSON), its card naming
    one interface of `binding` and `version`, the one `skill`, the `extensions` and the
    security `schemes`, signed by `sign` when given (the SDK's `create_agent_card_signer`)."""
    card = _card(
        url + "/" if binding == "JSONRPC" else url,
        binding,
        version,
        name=name,
        description=description,
        skill=skill,
        streaming=streaming,
        extensions=extensions,
        schemes=schemes,
    )
    if sign is not None:
        card = sign(card)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    if binding == "JSONRPC":
        routes = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=version == "0.3")
    else:
        routes = create_rest_routes(handler)
    return Starlette(routes=[*create_agent_card_routes(card), *routes])


async def open_task(context: RequestContext, event_queue: EventQueue) -> tuple[TaskUpdater, str]:
    """The updater of the task a message is for and the message's text; a first message
    creates the task (submitted, holding it), as the SDK expects before any update."""
    task_id = context.task_id or ""
    context_id = context.context_id or ""
    if context.current_task is None:
        history = [context.message] if context.message is not None else []
        await event_queue.enqueue_event(
            new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
        )
    text = get_message_text(context.message) if context.message is not None else ""
    return TaskUpdater(event_queue, task_id, context_id), text


@dataclass(slots=True)
class GrpcAgent:
    """An SDK agent served over gRPC only: its card at `url` (HTTP), its one interface the
    gRPC `target`; `cut` stops the gRPC server at once (every call on it broken, the
    agent's tasks left running) and serves the same agent again on the same port."""

    url: str
    target: str
    card: AgentCard
    handler: GrpcHandler
    server: grpc.aio.Server
    tls: grpc.ServerCredentials | None = None

    async def cut(self) -> None:
        await self.server.stop(grace=None)
        self.server = _server(self.handler, self.target, self.tls)[0]
        await self.server.start()


def _server_tls(cert_file: Path, key_file: Path, client_ca: Path | None) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials(
        [(key_file.read_bytes(), cert_file.read_bytes())],
        root_certificates=client_ca.read_bytes() if client_ca is not None else None,
        require_client_auth=client_ca is not None,
    )


def _server(
    handler: GrpcHandler | None,
    address: str,
    tls: grpc.ServerCredentials | None,
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server(interceptors=list(interceptors))
    if tls is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, tls)
    if handler is not None:
        add_A2AServiceServicer_to_server(handler, server)
    return server, port


@asynccontextmanager
async def sdk_grpc_agent(
    executor: AgentExecutor,
    *,
    name: str,
    description: str,
    skill: AgentSkill,
    streaming: bool = True,
    extensions: Sequence[AgentExtension] = (),
    tls: tuple[Path, Path] | None = None,
    client_ca: Path | None = None,
    bare: bool = False,
    push: bool = False,
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
) -> AsyncIterator[GrpcAgent]:
    """The SDK's gRPC server serving `executor` on a loopback port, its card (one GRPC 1.0
    interface, `host:port`, or `grpcs://host:port` with `tls`: the certificate's and key's
    PEM files; `client_ca`: a client must present a certificate that CA signed; `bare`: the
    card names it `host:port` all the same) served over HTTP on another; both stopped on exit.
    With `push`, it keeps push notification configs (in memory; it sends no notification).
    `interceptors` see every call first."""
    credentials = None if tls is None else _server_tls(*tls, client_ca)
    server, port = _server(None, "127.0.0.1:0", credentials, interceptors)
    target = f"127.0.0.1:{port}"
    card = _card(
        target if tls is None or bare else f"grpcs://{target}",
        "GRPC",
        "1.0",
        name=name,
        description=description,
        skill=skill,
        streaming=streaming,
        extensions=extensions,
        push=push,
    )
    handler = GrpcHandler(
        DefaultRequestHandler(
            agent_executor=executor,
            task_store=InMemoryTaskStore(),
            agent_card=card,
            push_config_store=InMemoryPushNotificationConfigStore() if push else None,
        )
    )
    add_A2AServiceServicer_to_server(handler, server)
    await server.start()
    agent = None
    try:
        async with serve_on_loopback(
            lambda _: Starlette(routes=create_agent_card_routes(card))
        ) as url:
            agent = GrpcAgent(
                url=url, target=target, card=card, handler=handler, server=server, tls=credentials
            )
            yield agent
    finally:
        await (agent.server if agent is not None else server).stop(grace=None)
