"""Answering a partner's question with `RemoteAgentTool` (`call(task_id=...)`, `stream`) and
following a waiting task with `A2AClient.subscribe`, against partners that open a follow-up
stream with a status update (0.3 and 1.0 wire) or with their stored, still waiting task."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from hub.partners import Partners
from hub.protocol import StreamResponse, TaskState
from hub.tools import ToolResult
from tests.multiturn.conftest import ASKERS, registry_of
from tests.multiturn.partners import AGAIN, QUESTION, QUESTION_AGAIN, greet

pytestmark = pytest.mark.anyio

TIMEOUT = 15


@pytest.fixture(scope="module")
async def partners(askers: dict[str, str]) -> AsyncIterator[Partners]:
    async with Partners(registry_of(askers)) as built:
        yield built


async def _call(partners: Partners, name: str, text: str, **more: str) -> ToolResult:
    with anyio.fail_after(TIMEOUT):
        return await partners[name].call(message=text, **more)


def _kinds(events: list[StreamResponse]) -> list[str]:
    """Each event as `task STATE`, `status STATE` or `artifact TEXT`."""
    shown = []
    for event in events:
        if event.task is not None:
            shown.append(f"task {event.task.status.state.name}")
        elif event.status_update is not None:
            shown.append(f"status {event.status_update.status.state.name}")
        elif event.artifact_update is not None:
            text = "".join(part.text or "" for part in event.artifact_update.artifact.parts)
            shown.append(f"artifact {text}")
        else:
            shown.append("message")
    return shown


@pytest.mark.parametrize("name", ASKERS)
async def test_an_answer_given_with_the_task_id_completes_the_partners_task(
    partners: Partners, name: str
) -> None:
    asked = await _call(partners, name, "hi")
    assert (asked.state, asked.needs_input, asked.message) == ("input-required", True, QUESTION)
    assert asked.task_id is not None

    answered = await _call(partners, name, "Ada", task_id=asked.task_id)

    assert (answered.state, answered.needs_input) == ("completed", False)
    assert answered.text == greet("Ada")
    assert (answered.task_id, answered.context_id) == (asked.task_id, asked.context_id)


@pytest.mark.parametrize("name", ASKERS)
async def test_a_question_asked_again_is_the_answer_then_the_next_answer_completes(
    partners: Partners, name: str
) -> None:
    asked = await _call(partners, name, "hi")
    assert asked.task_id is not None

    again = await _call(partners, name, AGAIN, task_id=asked.task_id)
    assert (again.state, again.needs_input, again.message) == (
        "input-required",
        True,
        QUESTION_AGAIN,
    )
    # Answered by task id alone, as `a2a-hub call NAME ANSWER --task-id T` does.
    answered = await _call(partners, name, "Ada", task_id=asked.task_id)

    assert (answered.state, answered.text) == ("completed", greet("Ada"))
    assert (answered.task_id, answered.context_id) == (asked.task_id, asked.context_id)
    assert again.context_id == asked.context_id


@pytest.mark.parametrize("name", ASKERS)
async def test_a_streamed_answer_yields_every_event_up_to_the_completed_state(
    partners: Partners, name: str
) -> None:
    asked = await _call(partners, name, "hi")
    assert asked.task_id is not None

    with anyio.fail_after(TIMEOUT):
        async with partners[name].stream(message="Ada", task_id=asked.task_id) as events:
            seen = [event async for event in events]

    opening = ["task INPUT_REQUIRED"] if name.startswith("snapshot") else []
    assert _kinds(seen) == [
        *opening,
        "status WORKING",
        f"artifact {greet('Ada')}",
        "status COMPLETED",
    ]


@pytest.mark.parametrize("name", ASKERS)
async def test_a_subscription_to_a_waiting_task_follows_it_until_the_answer_completes_it(
    partners: Partners, name: str
) -> None:
    asked = await _call(partners, name, "hi")
    assert asked.task_id is not None
    task_id = asked.task_id
    client = await partners.client(name)
    seen: list[StreamResponse] = []
    snapshot = anyio.Event()

    async def follow() -> None:
        async with client.subscribe(task_id) as events:
            async for event in events:
                seen.append(event)
                snapshot.set()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            await snapshot.wait()
            answered = await partners[name].call(message="Ada", task_id=task_id)

    assert answered.state == "completed"
    assert seen[0].task is not None
    assert seen[0].task.status.state is TaskState.INPUT_REQUIRED
    assert _kinds(seen[1:]) == [
        "status WORKING",
        f"artifact {greet('Ada')}",
        "status COMPLETED",
    ]
