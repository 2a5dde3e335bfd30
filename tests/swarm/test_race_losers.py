"""A race answers as soon as its winner does; its losers are canceled afterwards, in the
background, and the delegation ledger records it. The loser here is an a2a-sdk partner that
holds the race's request open without naming its task until the test lets it (over a stream,
or a blocking SendMessage): the hub cannot cancel it before then, and must not make the
race's caller wait for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentSkill
from litestar import Litestar
from starlette.types import ASGIApp, Receive, Scope, Send

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.registry import load_registry
from hub.skills import SkillContext, skill
from hub.skills.swarm import swarm
from hub.store import ChildRecord, MemoryTaskStore, TaskStore
from hub.testing import serve_on_loopback
from tests.sdk_agents import open_task, sdk_agent

pytestmark = pytest.mark.anyio


class HangingExecutor(AgentExecutor):
    """Names no task until `release` is set, then asks a question (a blocking SendMessage
    answers only then) and waits until canceled (or `stop`)."""

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.release = anyio.Event()
        self.canceled = anyio.Event()
        self.stop = anyio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.asked.set()
        await self.release.wait()
        updater, _ = await open_task(context, event_queue)
        await updater.requires_input()
        await self.stop.wait()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.canceled.set()
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


class StreamWatch:
    """ASGI middleware: notes when the first POST it serves (the race's message) is over,
    answered or given up by its client, whether or not the app itself reads its end."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.posts = 0
        self.closed = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        self.posts += 1
        first = self.posts == 1
        to_app, from_server = anyio.create_memory_object_stream[MutableMapping[str, Any]](16)

        async def pump() -> None:
            # The one reader of the server's messages: the request's body, then its end.
            async with to_app:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect" and first:
                        self.closed.set()
                    try:
                        await to_app.send(message)
                    except anyio.BrokenResourceError:
                        return  # the app has answered and reads no more
                    if message["type"] == "http.disconnect":
                        return

        async with anyio.create_task_group() as group, from_server:
            group.start_soon(pump)
            await self.app(scope, from_server.receive, send)


@dataclass
class Loser:
    executor: HangingExecutor
    stream: StreamWatch


def _loser(loser: HangingExecutor, *, streaming: bool) -> Any:
    def build(url: str) -> StreamWatch:
        return StreamWatch(
            sdk_agent(
                url,
                loser,
                name="hanging",
                description="holds the request open without naming its task",
                skill=AgentSkill(id="work", name="Work", description="works", tags=["race"]),
                streaming=streaming,
            )
        )

    return build


def _winner(loser: HangingExecutor) -> Any:
    """A hub whose one skill answers once the loser has the race's message."""

    @skill(id="quick", description="answers as soon as the other partner is busy")
    async def quick(ctx: SkillContext) -> str:
        await loser.asked.wait()
        return "quick"

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="quick",
        )
        return create_app(settings, store=MemoryTaskStore(), skills={"quick": quick})

    return build


@dataclass
class Race:
    hub: A2AClient
    store: TaskStore
    loser: HangingExecutor
    loser_stream: StreamWatch


@pytest.fixture(params=["streaming", "blocking"])
async def race(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Race]:
    loser = HangingExecutor()
    watched: list[StreamWatch] = []

    def build_loser(url: str) -> StreamWatch:
        watched.append(_loser(loser, streaming=request.param == "streaming")(url))
        return watched[0]

    async with (
        serve_on_loopback(_winner(loser)) as winner_url,
        serve_on_loopback(build_loser) as loser_url,
    ):
        path = tmp_path / "agents.yaml"
        path.write_text(
            "version: 1\nagents:\n"
            f"  - name: winner\n    url: {winner_url}\n"
            f"  - name: loser\n    url: {loser_url}\n",
            encoding="utf-8",
        )
        store = MemoryTaskStore()

        def build(url: str) -> Litestar:
            settings = Settings(
                server=ServerSettings(public_url=url),
                store=StoreSettings(kind="memory"),
                default_skill="swarm",
            )
            partners = Partners(load_registry(path))
            return create_app(settings, store=store, skills={"swarm": swarm}, partners=partners)

        try:
            async with serve_on_loopback(build) as url, httpx.AsyncClient() as http:
                yield Race(await A2AClient.from_url(url, http=http), store, loser, watched[0])
        finally:
            # Whatever the test saw, the loser lets go before its server stops.
            loser.release.set()
            loser.stop.set()


async def _ledger_line(store: TaskStore, parent_id: str, agent: str) -> ChildRecord:
    """The parent's ledger line for `agent`, once it records the child as canceled (the
    ledger writes in batches)."""
    with anyio.fail_after(10):
        while True:
            for line in await store.list_children(parent_id):
                if line.agent == agent and line.state is TaskState.CANCELED:
                    return line
            await anyio.sleep(0.02)


async def test_a_race_answers_at_once_and_cancels_a_loser_that_had_not_named_its_task(
    race: Race,
) -> None:
    with anyio.fail_after(15):
        task = await race.hub.send(
            user_message("go"),
            metadata={"skill": "swarm", "strategy": "race", "agents": ["winner", "loser"]},
        )

    # The answer is here while the loser still holds the race's request open.
    assert race.loser.asked.is_set()
    assert not race.loser_stream.closed.is_set()
    assert not race.loser.canceled.is_set()
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    report = task.artifacts[0].parts[1].data
    assert report["answer"] == "quick"
    assert [(b["agent"], b["state"]) for b in report["branches"]] == [
        ("winner", "completed"),
        ("loser", "canceled"),
    ]

    # Once the loser names its task, the hub cancels it there and the ledger says so.
    race.loser.release.set()
    with anyio.fail_after(10):
        await race.loser.canceled.wait()
        await race.loser_stream.closed.wait()
    line = await _ledger_line(race.store, task.id, "loser")
    assert line.parent_id == task.id
