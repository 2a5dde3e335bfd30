"""Partner agents for the client tests: the official a2a-sdk 1.3 in four shapes, and the hub
(over HTTP, or over its gRPC door).

Every partner answers "hello"-style text with an echo artifact and a completed task, and
"wait" with a task that works until it is canceled, so each test can run against all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentSkill,
)
from litestar import Litestar
from starlette.applications import Starlette

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import GrpcSettings, ServerSettings, Settings, StoreSettings
from hub.protocol import Part, StreamResponse, TaskState
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import LoopbackHub, serve_hub
from tests.sdk_agents import GrpcAgent, open_task, sdk_agent, sdk_grpc_agent

WAIT = "wait"


async def delegated_wait(hub: A2AClient) -> str:
    """Streams WAIT to the hub for its partner `echoer` and stops reading once the hub says it
    delegated it (the message is on its way to the partner): the hub task's id."""
    async with hub.stream(user_message(WAIT), metadata={"agent": "echoer"}) as events:
        async for event in events:
            if event.task is not None:
                task_id = event.task.id
            if event.status_update is not None:
                break
    return task_id


def streamed_texts(events: list[StreamResponse]) -> list[str]:
    """The text of each artifact part the stream's events carried, in order."""
    return [
        part.text or ""
        for event in events
        if event.artifact_update is not None
        for part in event.artifact_update.artifact.parts
    ]


def final_state(events: list[StreamResponse]) -> TaskState | None:
    """The state the stream's last event, a status update, ends in (None if it is not one)."""
    last = events[-1].status_update if events else None
    return last.status.state if last is not None else None


class EchoOrWaitExecutor(AgentExecutor):
    """Echoes the text as an artifact; for "wait", works until canceled."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater, text = await open_task(context, event_queue)
        if text == WAIT:
            await updater.start_work()
            await anyio.sleep_forever()
        await updater.add_artifact([new_text_part(text)], name="echo", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


ECHO = AgentSkill(id="echo", name="Echo", description="echoes", tags=["echo"])


def _sdk(url: str, binding: str, version: str) -> Starlette:
    return sdk_agent(
        url,
        EchoOrWaitExecutor(),
        name=f"sdk-{binding.lower()}-{version}",
        description="a2a-sdk partner for the client tests",
        skill=ECHO,
        binding=binding,
        version=version,
    )


def sdk_jsonrpc(url: str) -> Starlette:
    """The SDK speaking A2A 1.0 over JSON-RPC at `/`."""
    return _sdk(url, "JSONRPC", "1.0")


def sdk_rest(url: str) -> Starlette:
    """The SDK speaking A2A 1.0 over HTTP+JSON only."""
    return _sdk(url, "HTTP+JSON", "1.0")


def sdk_v03(url: str) -> Starlette:
    """The SDK in its 0.3 mode: a card with only a 0.3 JSON-RPC interface."""
    return _sdk(url, "JSONRPC", "0.3")


def sdk_grpc() -> AbstractAsyncContextManager[GrpcAgent]:
    """The SDK speaking A2A 1.0 over gRPC only (its card over HTTP)."""
    return sdk_grpc_agent(
        EchoOrWaitExecutor(),
        name="sdk-grpc-1.0",
        description="a2a-sdk partner for the client tests",
        skill=ECHO,
    )


@skill(id="router", description="echoes, or works until canceled when asked to wait")
async def router(ctx: SkillContext) -> list[Part]:
    if ctx.message.text() == WAIT:
        await ctx.progress("waiting")
        await anyio.sleep_forever()
    return list(ctx.message.parts)


def hub_partner(tmp_path: Path) -> Callable[[str], Litestar]:
    """The hub itself, its default skill echoing (or waiting on "wait")."""
    skills: dict[str, Skill] = {s.skill_id: s for s in (echo, router)}

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="router",
        )
        return create_app(settings, store=MemoryTaskStore(), skills=skills)

    return build


def hub_grpc_partner() -> AbstractAsyncContextManager[LoopbackHub]:
    """The hub of `hub_partner` with its gRPC door on (a free loopback port; its card lists
    the door after its HTTP interfaces)."""
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)),
        store=StoreSettings(kind="memory"),
        default_skill="router",
    )
    return serve_hub(skills=(echo, router), settings=settings)
