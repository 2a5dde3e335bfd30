"""Plans for the orchestrator's tests: a hub serving an orchestrator on a scripted model,
its partners on loopback, and readers of what a plan's stream says."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from hub.client import A2AClient, user_message
from hub.config import Settings
from hub.orchestrator import PLAN_KEY, orchestrator
from hub.protocol import StreamResponse, Task, TaskState
from hub.testing import ScriptedAgent, serve_hub
from hub.testing.model_server import ModelServer, serve_model

__all__ = [
    "WAIT",
    "collect",
    "final_message",
    "final_state",
    "plan_events",
    "planner_for",
    "planning",
    "served_partners",
    "settled",
    "streamed_text",
    "tool_messages",
]

WAIT = 60


def planner_for(
    server: ModelServer,
    *,
    provider: str = "openai",
    tools: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    api_key: str | None = None,
    price: Mapping[str, float] | None = None,
) -> Any:
    model: dict[str, Any] = {
        "provider": provider,
        "model": "scripted",
        "base_url": server.openai_base_url if provider == "openai" else server.anthropic_base_url,
        "timeout": 30,
    }
    if api_key is not None:
        model["api_key"] = api_key
    if price is not None:
        model["price"] = price
    return orchestrator(
        id="planner",
        description="Plans with the partners",
        model=model,
        instructions="You plan with the partners.",
        tools=tools or {"agents": ["*"]},
        limits=limits or {},
    )


@asynccontextmanager
async def planning(
    script: Any,
    partners: Sequence[ScriptedAgent] = (),
    *,
    settings: Settings | None = None,
    **planner: Any,
) -> AsyncIterator[tuple[A2AClient, ModelServer, Any]]:
    """A hub serving the planner skill, its partners and its model; yields a client of the
    hub, the model server and the hub."""
    async with serve_model(script) as model, served_partners(partners) as urls:
        skill = planner_for(model, **planner)
        async with (
            serve_hub(skills=[skill], partners=urls, settings=settings) as hub,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            yield client, model, hub


@asynccontextmanager
async def served_partners(partners: Sequence[ScriptedAgent]) -> AsyncIterator[dict[str, str]]:
    urls: dict[str, str] = {}
    async with anyio.create_task_group() as group:
        for partner in partners:
            ready = anyio.Event()

            async def run(agent: ScriptedAgent = partner, started: anyio.Event = ready) -> None:
                async with agent.serve() as url:
                    urls[agent.name] = url
                    started.set()
                    await anyio.sleep_forever()

            group.start_soon(run)
            await ready.wait()
        try:
            yield urls
        finally:
            group.cancel_scope.cancel()


async def collect(client: A2AClient, text: str, **metadata: Any) -> list[StreamResponse]:
    events = []
    with anyio.fail_after(WAIT):
        async with client.stream(
            user_message(text), metadata={"skill": "planner", **metadata}
        ) as stream:
            async for event in stream:
                events.append(event)
    return events


def plan_events(events: Sequence[StreamResponse]) -> list[dict[str, Any]]:
    return [
        e.status_update.metadata[PLAN_KEY]
        for e in events
        if e.status_update is not None and PLAN_KEY in (e.status_update.metadata or {})
    ]


def final_state(events: Sequence[StreamResponse]) -> TaskState:
    for event in reversed(events):
        if event.status_update is not None:
            return event.status_update.status.state
        if event.task is not None:
            return event.task.status.state
    raise AssertionError("no state in the stream")


def final_message(events: Sequence[StreamResponse]) -> str:
    """The text of the last status message of the stream (a failed plan's reason)."""
    status = next(e.status_update.status for e in reversed(events) if e.status_update is not None)
    assert status.message is not None
    return status.message.text()


def streamed_text(events: Sequence[StreamResponse]) -> str:
    return "".join(
        part.text or ""
        for e in events
        if e.artifact_update is not None
        for part in e.artifact_update.artifact.parts
    )


def tool_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m.get("role") == "tool"]


async def settled(client: A2AClient, reply: Any) -> Task:
    """The task `reply` is, once it has ended (followed with SubscribeToTask)."""
    assert isinstance(reply, Task)
    if not reply.status.state.is_terminal:
        async with client.subscribe(reply.id) as events:
            async for _ in events:
                pass
    return await client.get_task(reply.id)
