"""A partner agent on the official a2a-sdk, for the tests that need one: its card and the
Starlette app that serves it, over JSON-RPC (1.0, or 0.3 through the SDK's compatibility
mode) or HTTP+JSON; or its card and a grpcio server that serves it over gRPC only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import grpc
from a2a.helpers.proto_helpers import get_message_text, new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette

__all__ = ["open_task", "sdk_agent", "sdk_card", "serve_sdk_grpc"]


def sdk_card(
    url: str,
    *,
    name: str,
    description: str,
    skill: AgentSkill,
    binding: str = "JSONRPC",
    version: str = "1.0",
    streaming: bool = True,
    extensions: Sequence[AgentExtension] = (),
) -> AgentCard:
    """The card of an SDK agent with one interface, of `binding` and `version` at `url`, the
    one `skill` and the `extensions`."""
    return AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        ],
        capabilities=AgentCapabilities(
            streaming=streaming, push_notifications=False, extensions=list(extensions)
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
) -> Starlette:
    """The SDK serving `executor` at `url` (JSON-RPC at `/`, or HTTP+JSON), its card naming
    one interface of `binding` and `version`, the one `skill` and the `extensions`."""
    card = sdk_card(
        url + "/" if binding == "JSONRPC" else url,
        name=name,
        description=description,
        skill=skill,
        binding=binding,
        version=version,
        streaming=streaming,
        extensions=extensions,
    )
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    if binding == "JSONRPC":
        routes = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=version == "0.3")
    else:
        routes = create_rest_routes(handler)
    return Starlette(routes=[*create_agent_card_routes(card), *routes])


@asynccontextmanager
async def serve_sdk_grpc(
    executor: AgentExecutor, *, name: str, description: str, skill: AgentSkill
) -> AsyncIterator[AgentCard]:
    """The SDK serving `executor` over gRPC only (A2A 1.0, grpcio's asyncio server) on a free
    port of 127.0.0.1, in the test's event loop: yields its card, whose one GRPC interface
    names that `host:port`, as the spec writes a gRPC interface's URL."""
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    card = sdk_card(
        f"127.0.0.1:{port}", name=name, description=description, skill=skill, binding="GRPC"
    )
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    try:
        yield card
    finally:
        await server.stop(grace=None)


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
