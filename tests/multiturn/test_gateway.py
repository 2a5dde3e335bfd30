"""Follow-ups and subscriptions through the gateway (`/agents/{name}`), over real sockets: a
streamed answer to a partner's question, and SubscribeToTask on a task waiting for one, are
relayed event by event until the task completes, for 1.0 callers (JSON-RPC and HTTP+JSON)
and 0.3 callers (JSON-RPC), whichever way the partner opens its follow-up stream."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from hub.config import LimitSettings, Settings, StoreSettings
from hub.testing import serve_hub
from tests.multiturn.conftest import ASKERS, registry_of
from tests.multiturn.partners import AGAIN, QUESTION, greet

pytestmark = pytest.mark.anyio

TIMEOUT = 15
CALLERS = ("1.0-jsonrpc", "1.0-rest", "0.3-jsonrpc")


@pytest.fixture(scope="module")
async def hub(askers: dict[str, str]) -> AsyncIterator[str]:
    """A hub (auth off) whose gateway fronts every asker; yields its URL."""

    settings = Settings(
        store=StoreSettings(kind="memory"), limits=LimitSettings(requests_per_second=0)
    )
    async with serve_hub(partners=registry_of(askers), settings=settings) as running:
        yield running.url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        yield client


def _message(caller: str, text: str, task: dict[str, str] | None = None) -> dict[str, Any]:
    ids = {"taskId": task["id"], "contextId": task["contextId"]} if task else {}
    if caller.startswith("0.3"):
        part = {"kind": "text", "text": text}
        return {"kind": "message", "messageId": uuid.uuid4().hex, "role": "user"} | {
            "parts": [part],
            **ids,
        }
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}], **ids}


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def _ask(http: httpx.AsyncClient, hub: str, agent: str) -> dict[str, str]:
    """Start a task at `agent` through the gateway (1.0 SendMessage): it asks `QUESTION`."""
    body = _rpc("SendMessage", {"message": _message("1.0", "hi")})
    reply = await http.post(f"{hub}/agents/{agent}", json=body, headers={"A2A-Version": "1.0"})
    task: dict[str, Any] = reply.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task["status"]["message"]["parts"][0]["text"] == QUESTION
    return {"id": task["id"], "contextId": task["contextId"]}


def _request(
    hub: str, agent: str, caller: str, *, answer: dict[str, Any] | None = None, task_id: str = ""
) -> tuple[str, str, dict[str, Any] | None, dict[str, str]]:
    """(verb, URL, JSON body, headers) of a streamed `answer`, or else of SubscribeToTask."""
    base = f"{hub}/agents/{agent}"
    if caller == "1.0-rest":
        if answer is not None:
            return "POST", f"{base}/message:stream", {"message": answer}, {"A2A-Version": "1.0"}
        return "GET", f"{base}/tasks/{task_id}:subscribe", None, {"A2A-Version": "1.0"}
    if caller == "1.0-jsonrpc":
        method, params = (
            ("SendStreamingMessage", {"message": answer})
            if answer is not None
            else ("SubscribeToTask", {"id": task_id})
        )
        return "POST", base, _rpc(method, params), {"A2A-Version": "1.0"}
    method, params = (
        ("message/stream", {"message": answer})
        if answer is not None
        else ("tasks/resubscribe", {"id": task_id})
    )
    return "POST", base, _rpc(method, params), {}


def _shown(caller: str, event: dict[str, Any]) -> str:
    """One event as `task STATE`, `status STATE` or `artifact TEXT`, in 1.0 state names; a
    0.3 status update marked final gets ` final`."""
    if caller.startswith("0.3"):
        kind = event["kind"]
        if kind == "artifact-update":
            return "artifact " + event["artifact"]["parts"][0]["text"]
        state = "TASK_STATE_" + event["status"]["state"].upper().replace("-", "_")
        final = " final" if event.get("final") else ""
        return f"{'task' if kind == 'task' else 'status'} {state}{final}"
    if "artifactUpdate" in event:
        return "artifact " + event["artifactUpdate"]["artifact"]["parts"][0]["text"]
    if "task" in event:
        return "task " + event["task"]["status"]["state"]
    return "status " + event["statusUpdate"]["status"]["state"]


async def _events(response: httpx.Response, caller: str) -> AsyncIterator[str]:
    assert response.status_code == 200, await response.aread()
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            document = json.loads(line.removeprefix("data: "))
            yield _shown(caller, document if caller == "1.0-rest" else document["result"])


def _expected(caller: str, agent: str, *, subscribed: bool) -> list[str]:
    opening = ["task TASK_STATE_INPUT_REQUIRED"] if subscribed or agent.startswith("snap") else []
    final = " final" if caller.startswith("0.3") else ""
    return [
        *opening,
        "status TASK_STATE_WORKING",
        f"artifact {greet('Ada')}",
        f"status TASK_STATE_COMPLETED{final}",
    ]


@pytest.mark.parametrize("agent", ASKERS)
@pytest.mark.parametrize("caller", CALLERS)
async def test_a_streamed_answer_is_relayed_until_the_partner_completes_the_task(
    http: httpx.AsyncClient, hub: str, caller: str, agent: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        task = await _ask(http, hub, agent)
        verb, url, body, headers = _request(
            hub, agent, caller, answer=_message(caller, "Ada", task)
        )
        async with http.stream(verb, url, json=body, headers=headers) as response:
            seen = [shown async for shown in _events(response, caller)]

    assert seen == _expected(caller, agent, subscribed=False)


@pytest.mark.parametrize("agent", ASKERS)
@pytest.mark.parametrize("caller", CALLERS)
async def test_a_subscription_to_a_waiting_task_is_relayed_until_the_answer_completes_it(
    http: httpx.AsyncClient, hub: str, caller: str, agent: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        task = await _ask(http, hub, agent)
        verb, url, body, headers = _request(hub, agent, caller, task_id=task["id"])
        async with http.stream(verb, url, json=body, headers=headers) as response:
            events = _events(response, caller)
            seen = [await anext(events)]
            # The answer comes from another caller's stream, read to its end.
            answer_request = _request(
                hub, agent, "1.0-jsonrpc", answer=_message("1.0", "Ada", task)
            )
            a_verb, a_url, a_body, a_headers = answer_request
            async with http.stream(a_verb, a_url, json=a_body, headers=a_headers) as answered:
                assert (await answered.aread()).count(b"TASK_STATE_COMPLETED") == 1
            seen += [shown async for shown in events]

    assert seen == _expected(caller, agent, subscribed=True)


@pytest.mark.parametrize("agent", ASKERS)
@pytest.mark.parametrize("caller", CALLERS)
async def test_a_question_asked_again_ends_the_stream_and_the_next_answer_completes(
    http: httpx.AsyncClient, hub: str, caller: str, agent: str
) -> None:
    turns = []
    with anyio.fail_after(TIMEOUT):
        task = await _ask(http, hub, agent)
        for text in (AGAIN, "Ada"):
            verb, url, body, headers = _request(
                hub, agent, caller, answer=_message(caller, text, task)
            )
            async with http.stream(verb, url, json=body, headers=headers) as response:
                turns.append([shown async for shown in _events(response, caller)])

    opening = ["task TASK_STATE_INPUT_REQUIRED"] if agent.startswith("snap") else []
    final = " final" if caller.startswith("0.3") else ""
    assert turns == [
        [*opening, "status TASK_STATE_WORKING", f"status TASK_STATE_INPUT_REQUIRED{final}"],
        _expected(caller, agent, subscribed=False),
    ]
