"""Reference echo agent built on the official a2a-sdk, the baseline the hub is measured against.

It uses the SDK's own request handler and in-memory task store, served by uvicorn with the
same flags the hub uses, so the comparison is server against server and not setup against setup.
With `--grpc-port` the same handler is served over gRPC too, by the SDK's own `GrpcHandler` on
grpcio's asyncio server in the same event loop (the baseline of `bench.grpc`).

    python -m bench.reference_agent --port 8001
    python -m bench.reference_agent --port 8001 --grpc-port 50061
"""

from __future__ import annotations

import argparse

import uvicorn
from a2a.helpers.proto_helpers import get_message_text, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette

__all__ = [
    "EchoExecutor",
    "build_card",
    "create_reference_app",
    "jsonrpc_card",
    "main",
    "sdk_app",
]

# The flags every benchmarked server runs with; bench.run states them in its report.
UVICORN_FLAGS: dict[str, object] = {
    "loop": "uvloop",
    "http": "httptools",
    "access_log": False,
    "log_level": "warning",
}


class EchoExecutor(AgentExecutor):
    """Creates the task, emits one artifact holding the input text, completes the task."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Echo the user's text back as an artifact of a completed task."""
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        if context.current_task is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        text = get_message_text(context.message) if context.message is not None else ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.add_artifact([new_text_part(text)], name="echo", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Echo finishes at once, so a cancel only records the final state."""
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def jsonrpc_card(base_url: str, *, name: str, description: str, skill: AgentSkill) -> AgentCard:
    """A card of an a2a-sdk agent: one JSON-RPC 1.0 interface at `base_url` and one skill."""
    return AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[skill],
    )


def sdk_app(card: AgentCard, executor: AgentExecutor) -> Starlette:
    """The SDK's own request handler and in-memory task store running `executor`: a
    Starlette app serving `card` and the JSON-RPC endpoint at `/`."""
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


def build_card(base_url: str) -> AgentCard:
    """The reference agent's card: one JSON-RPC 1.0 interface and one echo skill."""
    return jsonrpc_card(
        base_url,
        name="reference-echo",
        description="Echo agent on the official a2a-sdk, used as the benchmark baseline.",
        skill=AgentSkill(
            id="echo",
            name="Echo",
            description="Returns the input text as an artifact.",
            tags=["echo", "benchmark"],
            examples=["hello"],
        ),
    )


def create_reference_app(base_url: str) -> Starlette:
    """A Starlette app serving the card and the JSON-RPC endpoint at `/`."""
    return sdk_app(build_card(base_url), EchoExecutor())


async def serve_with_grpc(host: str, port: int, grpc_port: int) -> None:
    """Serve the card and JSON-RPC over HTTP on `port` and the same handler over gRPC on
    `grpc_port`, in one event loop, until interrupted."""
    import grpc
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    card = build_card(f"http://{host}:{port}/")
    card.supported_interfaces.append(
        AgentInterface(url=f"{host}:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0")
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"{host}:{grpc_port}")
    await server.start()
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
    flags = {key: value for key, value in UVICORN_FLAGS.items() if key != "loop"}
    config = uvicorn.Config(Starlette(routes=routes), host=host, port=port, **flags)  # type: ignore[arg-type]
    try:
        await uvicorn.Server(config).serve()
    finally:
        await server.stop(None)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--grpc-port", type=int, default=None)
    args = parser.parse_args(argv)
    if args.grpc_port is not None:
        import asyncio

        import uvloop

        # The loop uvicorn runs the other servers on (UVICORN_FLAGS), made here for both.
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(serve_with_grpc(args.host, args.port, args.grpc_port))
        return
    app = create_reference_app(f"http://{args.host}:{args.port}/")
    uvicorn.run(app, host=args.host, port=args.port, **UVICORN_FLAGS)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
