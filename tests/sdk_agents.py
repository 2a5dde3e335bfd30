"""A partner agent on the official a2a-sdk, for the tests that need one: its card and the
Starlette app that serves it, over JSON-RPC (1.0, or 0.3 through the SDK's compatibility
mode) or HTTP+JSON."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from a2a.helpers.proto_helpers import get_message_text, new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette

__all__ = ["open_task", "sdk_agent"]


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
) -> Starlette:
    """The SDK serving `executor` at `url` (JSON-RPC at `/`, or HTTP+JSON), its card naming
    one interface of `binding` and `version`, the one `skill` and the `extensions`, signed
    by `sign` when given (the SDK's `create_agent_card_signer`)."""
    card = AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=url + "/" if binding == "JSONRPC" else url,
                protocol_binding=binding,
                protocol_version=version,
            )
        ],
        capabilities=AgentCapabilities(
            streaming=streaming, push_notifications=False, extensions=list(extensions)
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[skill],
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
