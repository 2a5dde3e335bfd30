"""The `delegate` skill relaying a partner's question and the caller's answer, over real
sockets: the hub task asks what the partner asks, goes back to work with the answer and
completes when the partner does, whichever way the partner opens its follow-up stream, for
a caller that blocks and one that streams."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.protocol import Message, StreamResponse, Task, TaskState
from hub.skills.delegate import delegate
from hub.testing import serve_hub
from tests.multiturn.conftest import ASKERS, registry_of
from tests.multiturn.partners import AGAIN, QUESTION, QUESTION_AGAIN, greet

pytestmark = pytest.mark.anyio

TIMEOUT = 15


@pytest.fixture(scope="module")
async def hub(askers: dict[str, str]) -> AsyncIterator[A2AClient]:
    """A client of a hub whose default skill is `delegate`, in front of every asker."""

    served = serve_hub(skills=[delegate], partners=registry_of(askers))
    async with served as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
        yield await A2AClient.from_url(running.url, http=http)


async def _send(hub: A2AClient, message: Message, agent: str) -> Task:
    with anyio.fail_after(TIMEOUT):
        reply = await hub.send(message, metadata={"agent": agent})
    assert isinstance(reply, Task)
    return reply


async def _stream(hub: A2AClient, message: Message, agent: str) -> list[StreamResponse]:
    with anyio.fail_after(TIMEOUT):
        async with hub.stream(message, metadata={"agent": agent}) as events:
            return [event async for event in events]


def _answer(task: Task) -> str:
    return "".join(part.text or "" for a in task.artifacts or [] for part in a.parts)


def _question(task: Task) -> str:
    assert task.status.message is not None
    return task.status.message.text()


def _state(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


def _reply(message: str, task: Task) -> Message:
    return user_message(message, task_id=task.id, context_id=task.context_id)


@pytest.mark.parametrize("agent", ASKERS)
async def test_a_blocking_caller_answers_the_partners_question_and_the_task_completes(
    hub: A2AClient, agent: str
) -> None:
    asked = await _send(hub, user_message("hi"), agent)
    assert (asked.status.state, _question(asked)) == (TaskState.INPUT_REQUIRED, QUESTION)

    answered = await _send(hub, _reply("Ada", asked), agent)

    assert answered.status.state is TaskState.COMPLETED
    assert _answer(answered) == greet("Ada")


@pytest.mark.parametrize("agent", ASKERS)
async def test_a_question_asked_again_is_asked_again_then_the_answer_completes(
    hub: A2AClient, agent: str
) -> None:
    asked = await _send(hub, user_message("hi"), agent)

    again = await _send(hub, _reply(AGAIN, asked), agent)
    assert (again.status.state, _question(again)) == (TaskState.INPUT_REQUIRED, QUESTION_AGAIN)
    answered = await _send(hub, _reply("Ada", again), agent)

    assert answered.status.state is TaskState.COMPLETED
    assert _answer(answered) == greet("Ada")


@pytest.mark.parametrize("agent", ASKERS)
async def test_a_streaming_caller_sees_the_task_work_again_and_complete_after_its_answer(
    hub: A2AClient, agent: str
) -> None:
    first = await _stream(hub, user_message("hi"), agent)
    assert first[-1].status_update is not None
    assert first[-1].status_update.status.state is TaskState.INPUT_REQUIRED
    task_id = first[-1].status_update.task_id
    context_id = first[-1].status_update.context_id

    events = await _stream(hub, user_message("Ada", task_id=task_id, context_id=context_id), agent)

    states = [_state(event) for event in events if _state(event) is not None]
    assert states[0] is TaskState.WORKING
    assert states[-1] is TaskState.COMPLETED
    assert TaskState.INPUT_REQUIRED not in states
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert ["".join(p.text or "" for p in c.artifact.parts) for c in chunks] == [greet("Ada")]
    with anyio.fail_after(TIMEOUT):
        task = await hub.get_task(task_id)
    assert task.status.state is TaskState.COMPLETED
