"""The built-in `delegate` skill over real sockets: a hub delegating to a2a-sdk partners and to
another hub, relaying progress and answers, questions and cancels."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from litestar import Litestar
from starlette.applications import Starlette

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Message, Task, TaskState
from hub.registry import Registry, load_registry
from hub.skills import SkillContext, skill
from hub.skills.delegate import delegate
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import ECHO, WAIT, EchoOrWaitExecutor, delegated_wait, sdk_jsonrpc
from tests.sdk_agents import sdk_agent

pytestmark = pytest.mark.anyio


@skill(id="interview", description="asks for a name and greets it", tags=["greeting"])
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}! (context {ctx.context_id})"


def _settings(url: str, default: str) -> Settings:
    return Settings(
        server=ServerSettings(public_url=url),
        store=StoreSettings(kind="memory"),
        default_skill=default,
    )


def _hub(registry: Registry) -> object:
    def build(url: str) -> Litestar:
        return create_app(
            _settings(url, "delegate"),
            store=MemoryTaskStore(),
            skills={"delegate": delegate},
            partners=Partners(registry),
        )

    return build


def _greeter(url: str) -> Litestar:
    return create_app(
        _settings(url, "interview"), store=MemoryTaskStore(), skills={"interview": interview}
    )


@pytest.fixture
async def echo_url() -> AsyncIterator[str]:
    async with serve_on_loopback(sdk_jsonrpc) as url:
        yield url


@pytest.fixture
async def hub(echo_url: str, tmp_path: Path) -> AsyncIterator[A2AClient]:
    async with serve_on_loopback(_greeter) as greeter_url:
        path = tmp_path / "agents.yaml"
        path.write_text(
            "version: 1\nagents:\n"
            f"  - name: echoer\n    url: {echo_url}\n    tags: [echo]\n"
            f"  - name: greeter\n    url: {greeter_url}\n    tags: [greeting]\n",
            encoding="utf-8",
        )
        registry = load_registry(path)
        async with serve_on_loopback(_hub(registry)) as url, httpx.AsyncClient() as http:
            yield await A2AClient.from_url(url, http=http)


def _text(task: Task) -> str:
    return "\n".join(p.text or "" for a in task.artifacts or [] for p in a.parts)


async def _send(client: A2AClient, message: Message, **metadata: object) -> Task:
    with anyio.fail_after(15):
        reply = await client.send(message, metadata=dict(metadata))
    assert isinstance(reply, Task)
    return reply


async def test_a_named_partner_answers_through_the_hub(hub: A2AClient) -> None:
    task = await _send(hub, user_message("hello there"), agent="echoer")

    assert task.status.state is TaskState.COMPLETED
    assert _text(task) == "hello there"
    assert task.artifacts is not None
    assert task.artifacts[0].metadata == {"agent": "echoer"}


async def test_the_router_picks_the_partner_with_the_tag(hub: A2AClient) -> None:
    task = await _send(hub, user_message("hi"), tags=["greeting"])

    assert task.status.state is TaskState.INPUT_REQUIRED
    assert task.status.message is not None
    assert task.status.message.text() == "What is your name?"


async def test_a_partners_question_is_the_callers_and_the_answer_goes_back(
    hub: A2AClient,
) -> None:
    asked = await _send(hub, user_message("hi"), agent="greeter")
    answered = await _send(hub, user_message("Ada", task_id=asked.id, context_id=asked.context_id))

    assert answered.status.state is TaskState.COMPLETED
    assert _text(answered).startswith("Hello, Ada!")


async def test_a_second_turn_continues_the_partners_conversation(hub: A2AClient) -> None:
    first = await _send(hub, user_message("hi"), agent="greeter")
    done = await _send(hub, user_message("Ada", task_id=first.id, context_id=first.context_id))
    again = await _send(hub, user_message("hi again", context_id=first.context_id), agent="greeter")
    second = await _send(hub, user_message("Bo", task_id=again.id, context_id=again.context_id))

    partner_context = _text(done).split("context ")[1]
    assert _text(second).endswith(f"(context {partner_context}")
    assert second.context_id == first.context_id


async def test_an_unknown_partner_fails_the_task_naming_the_known_ones(hub: A2AClient) -> None:
    task = await _send(hub, user_message("hi"), agent="nobody")

    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "nobody" in task.status.message.text()
    assert "echoer" in task.status.message.text()


async def _until_canceled_there(partner_url: str) -> list[Task]:
    """The partner's tasks, once its first one is canceled."""
    async with httpx.AsyncClient() as http:
        partner = await A2AClient.from_url(partner_url, http=http)
        with anyio.fail_after(30):
            while True:
                tasks = (await partner.list_tasks()).tasks
                if tasks and tasks[0].status.state is TaskState.CANCELED:
                    return tasks
                await anyio.sleep(0.05)


async def test_canceling_the_hub_task_cancels_the_partners_task(
    hub: A2AClient, echo_url: str
) -> None:
    with anyio.fail_after(15):
        task_id = await delegated_wait(hub)
        # Canceled at once: the partner may not have named its task yet, or even have it.
        canceled = await hub.cancel(task_id)
    tasks = await _until_canceled_there(echo_url)

    assert canceled.status.state is TaskState.CANCELED
    assert len(tasks) == 1


class _NamesLate(EchoOrWaitExecutor):
    """Names its task only once let go (`go`): until then the partner has the message
    (`received`) but the hub cannot know the task's id."""

    def __init__(self) -> None:
        self.received = anyio.Event()
        self.go = anyio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.received.set()
        await self.go.wait()
        await super().execute(context, event_queue)


async def test_a_hub_task_canceled_before_the_partner_names_its_task_cancels_it_once_named(
    tmp_path: Path,
) -> None:
    late = _NamesLate()

    def partner(url: str) -> Starlette:
        return sdk_agent(url, late, name="late", description="names its task late", skill=ECHO)

    async with serve_on_loopback(partner) as partner_url:
        path = tmp_path / "agents.yaml"
        path.write_text(f"version: 1\nagents:\n  - name: late\n    url: {partner_url}\n")
        async with (
            serve_on_loopback(_hub(load_registry(path))) as url,
            httpx.AsyncClient() as http,
        ):
            hub = await A2AClient.from_url(url, http=http)
            with anyio.fail_after(30):
                async with hub.stream(user_message(WAIT), metadata={"agent": "late"}) as events:
                    async for event in events:
                        if event.task is not None:
                            task_id = event.task.id
                            break
                await late.received.wait()
                canceled = await hub.cancel(task_id)
                late.go.set()
            tasks = await _until_canceled_there(partner_url)

    assert canceled.status.state is TaskState.CANCELED
    assert len(tasks) == 1
