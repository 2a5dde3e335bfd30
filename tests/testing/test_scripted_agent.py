"""`hub.testing.ScriptedAgent` over real HTTP: each kind of reply, its card, what it records."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.protocol import SendMessageConfiguration, StreamResponse, Task, TaskState
from hub.testing import ScriptedAgent, answer, ask, fail, stream

pytestmark = pytest.mark.anyio


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


def _texts(task: Task) -> list[str | None]:
    return [part.text for artifact in task.artifacts or [] for part in artifact.parts]


async def _sent(agent: ScriptedAgent, http: httpx.AsyncClient, *texts: str) -> list[Task]:
    """Serve the agent and send it each text in turn; the tasks it answered."""
    async with agent.serve() as url:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(30):
            answered = [await client.send(user_message(text)) for text in texts]
    tasks = [reply for reply in answered if isinstance(reply, Task)]
    assert len(tasks) == len(texts)
    return tasks


async def test_the_card_names_the_agent_its_skill_and_its_tags(http: httpx.AsyncClient) -> None:
    agent = ScriptedAgent(
        "billing", description="pays invoices", skill_id="pay", tags=("money",), streaming=False
    )
    async with agent.serve() as url:
        client = await A2AClient.from_url(url, http=http)

    card = client.card
    assert (card.name, card.description) == ("billing", "pays invoices")
    assert [(s.id, s.description, s.tags) for s in card.skills] == [
        ("pay", "pays invoices", ["money"])
    ]
    assert card.capabilities.streaming is False
    assert card.supported_interfaces[0].url.startswith(url)


async def test_by_default_it_echoes_and_records_each_message(http: httpx.AsyncClient) -> None:
    agent = ScriptedAgent()
    first, second = await _sent(agent, http, "one", "two")

    assert (first.status.state, _texts(first)) == (TaskState.COMPLETED, ["one"])
    assert _texts(second) == ["two"]
    assert [message.text() for message in agent.messages] == ["one", "two"]


async def test_replies_are_chosen_by_the_messages_text(http: httpx.AsyncClient) -> None:
    agent = ScriptedAgent(reply=answer("[{text}]"), replies={"ping": answer("pong")})
    pinged, other = await _sent(agent, http, "ping", "hello")

    assert (_texts(pinged), _texts(other)) == (["pong"], ["[hello]"])


async def test_a_streamed_reply_appends_its_chunks_to_one_artifact(
    http: httpx.AsyncClient,
) -> None:
    agent = ScriptedAgent(reply=stream("Hel", "lo ", "{text}"))
    async with agent.serve() as url:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(30):
            async with client.stream(user_message("you")) as events:
                seen: list[StreamResponse] = [event async for event in events]
            assert seen[0].task is not None
            stored = await client.get_task(seen[0].task.id)

    updates = [event.artifact_update for event in seen if event.artifact_update is not None]
    assert [[part.text for part in update.artifact.parts] for update in updates] == [
        ["Hel"],
        ["lo "],
        ["you"],
    ]
    assert [bool(update.append) for update in updates] == [False, True, True]
    assert [bool(update.last_chunk) for update in updates] == [False, False, True]
    assert len({update.artifact.artifact_id for update in updates}) == 1
    assert _texts(stored) == ["Hello you"]


async def test_a_question_waits_for_the_answer_on_the_same_task(http: httpx.AsyncClient) -> None:
    agent = ScriptedAgent(reply=ask("which colour?", then=answer("painted {text}")))
    async with agent.serve() as url:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(30):
            asked = await client.send(user_message("the door"))
            assert isinstance(asked, Task)
            reply = user_message("red", task_id=asked.id, context_id=asked.context_id)
            done = await client.send(reply)

    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    assert asked.status.message.text() == "which colour?"
    assert isinstance(done, Task)
    assert (done.id, done.status.state) == (asked.id, TaskState.COMPLETED)
    assert _texts(done) == ["painted red"]
    assert [message.text() for message in agent.messages] == ["the door", "red"]


async def test_a_failure_fails_the_task_with_its_message(http: httpx.AsyncClient) -> None:
    [failed] = await _sent(ScriptedAgent(reply=fail("no money for {text}")), http, "rent")

    assert failed.status.state is TaskState.FAILED
    assert failed.status.message is not None
    assert failed.status.message.text() == "no money for rent"


async def test_an_endless_delay_works_until_the_task_is_canceled(
    http: httpx.AsyncClient,
) -> None:
    agent = ScriptedAgent(reply=answer("never", delay=math.inf, progress="working on it"))
    async with agent.serve() as url:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(30):
            started = await client.send(
                user_message("go"), configuration=SendMessageConfiguration(return_immediately=True)
            )
            assert isinstance(started, Task)
            async with client.subscribe(started.id) as events:
                async for event in events:
                    task = event.task
                    status = event.status_update.status if event.status_update else None
                    status = status or (task.status if task else None)
                    if status is not None and status.message is not None:
                        break
            canceled = await client.cancel(started.id)

    assert status is not None
    assert status.message is not None
    assert (status.state, status.message.text()) == (TaskState.WORKING, "working on it")
    assert canceled.status.state is TaskState.CANCELED
    assert _texts(canceled) == []
