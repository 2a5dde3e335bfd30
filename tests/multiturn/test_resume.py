"""Follow-ups and subscriptions cut mid-way, over real sockets with a scripted partner: the
resumed stream still ends at the partner's next change, never at a snapshot of the state the
caller already knows, and a new question found after the cut settles it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from hub.client import A2AClient, ResumePolicy, Timeouts, user_message
from hub.protocol import AgentCard, StreamResponse
from hub.testing import serve_on_loopback
from tests.client.scripted import ScriptedAgent, card_document, in_turn, sse

pytestmark = pytest.mark.anyio

TIMEOUT = 10
FAST = ResumePolicy(attempts=3, base_delay=0.001, max_delay=0.01)


def _question(message_id: str, text: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_AGENT", "parts": [{"text": text}]}


def _waiting(message_id: str = "q1", text: str = "What is your name?") -> dict[str, Any]:
    status = {"state": "TASK_STATE_INPUT_REQUIRED", "message": _question(message_id, text)}
    return {"task": {"id": "t1", "contextId": "c1", "status": status}}


def _status(state: str) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": state}}}


GREETING = {
    "artifactUpdate": {
        "taskId": "t1",
        "contextId": "c1",
        "artifact": {"artifactId": "a1", "name": "greeting", "parts": [{"text": "Hello, Ada!"}]},
        "lastChunk": True,
    }
}


@pytest.fixture
async def partner() -> AsyncIterator[tuple[ScriptedAgent, A2AClient]]:
    scripted = ScriptedAgent()
    async with serve_on_loopback(scripted) as url, httpx.AsyncClient() as http:
        card = AgentCard.model_validate(card_document(url))
        timeouts = Timeouts(connect=2, read=5)
        yield scripted, A2AClient(card, http=http, timeouts=timeouts, resume=FAST)


def _shown(event: StreamResponse) -> str:
    if event.task is not None:
        return f"task {event.task.status.state.name}"
    if event.status_update is not None:
        status = event.status_update.status
        said = f" {status.message.text()}" if status.message is not None else ""
        return f"status {status.state.name}{said}"
    assert event.artifact_update is not None
    return "artifact " + "".join(p.text or "" for p in event.artifact_update.artifact.parts)


async def test_a_follow_up_cut_after_the_stored_task_resumes_to_the_completion(
    partner: tuple[ScriptedAgent, A2AClient],
) -> None:
    scripted, client = partner
    scripted.routes["SendStreamingMessage"] = sse([_waiting()], then="reset")
    scripted.routes["SubscribeToTask"] = sse(
        [_waiting(), _status("TASK_STATE_WORKING"), GREETING, _status("TASK_STATE_COMPLETED")]
    )

    with anyio.fail_after(TIMEOUT):
        async with client.stream(user_message("Ada", task_id="t1", context_id="c1")) as events:
            seen = [_shown(event) async for event in events]

    assert seen == [
        "task INPUT_REQUIRED",
        "status WORKING",
        "artifact Hello, Ada!",
        "status COMPLETED",
    ]


async def test_a_new_question_found_after_a_cut_settles_the_follow_up(
    partner: tuple[ScriptedAgent, A2AClient],
) -> None:
    scripted, client = partner
    scripted.routes["SendStreamingMessage"] = sse([_waiting()], then="reset")
    # The partner asked again while the stream was down: its task waits on a new question.
    scripted.routes["SubscribeToTask"] = sse([_waiting("q2", "Once more, please?")])

    with anyio.fail_after(TIMEOUT):
        async with client.stream(user_message("again", task_id="t1", context_id="c1")) as events:
            seen = [_shown(event) async for event in events]

    assert seen == ["task INPUT_REQUIRED", "status INPUT_REQUIRED Once more, please?"]
    assert scripted.calls["SubscribeToTask"] == 1


async def test_a_subscription_cut_before_its_snapshot_reopens_and_is_not_ended_by_it(
    partner: tuple[ScriptedAgent, A2AClient],
) -> None:
    scripted, client = partner
    scripted.routes["SubscribeToTask"] = in_turn(
        sse([], then="reset"),
        sse([_waiting(), _status("TASK_STATE_WORKING"), _status("TASK_STATE_COMPLETED")]),
    )

    with anyio.fail_after(TIMEOUT):
        async with client.subscribe("t1") as events:
            seen = [_shown(event) async for event in events]

    assert seen == ["task INPUT_REQUIRED", "status WORKING", "status COMPLETED"]
    assert scripted.calls["SubscribeToTask"] == 2
