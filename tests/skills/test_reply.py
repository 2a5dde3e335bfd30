"""A default skill that answers "ping" with a direct Message and anything else with a task,
over real HTTP: JSON-RPC 1.0, REST and 0.3, blocking and streaming, and the official a2a-sdk
client."""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client.client import Client
from a2a.types import Role as SdkRole
from a2a.types import StreamResponse as SdkStreamResponse
from a2a.types import TaskState as SdkTaskState

from config.examples.my_skills import assistant
from hub.skills.echo import echo
from hub.testing import serve_hub
from tests.interop.test_sdk_client import BINDINGS, sdk_client, user

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}


@pytest.fixture
async def hub_url() -> AsyncIterator[str]:
    """A hub whose default skill is the documented example `assistant`, on a loopback
    socket."""

    async with serve_hub(skills=[assistant, echo]) as running:
        yield running.url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def message_v1(text: str, **fields: Any) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def message_v03(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **fields,
    }


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


async def call(
    http: httpx.AsyncClient, url: str, body: dict[str, Any], *, v03: bool = False
) -> Any:
    response = await http.post(url, json=body, headers={} if v03 else V1)
    assert response.status_code == 200
    document = response.json()
    assert "result" in document, document
    return document["result"]


async def sse(
    http: httpx.AsyncClient, url: str, body: dict[str, Any], *, v03: bool = False
) -> list[Any]:
    """Every `data:` of an SSE response, parsed, once the server has closed the stream."""
    headers = {"Accept": "text/event-stream", **({} if v03 else V1)}
    with anyio.fail_after(10):
        async with http.stream("POST", url, json=body, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            return [
                json.loads(line.removeprefix("data:"))
                async for line in response.aiter_lines()
                if line.startswith("data:")
            ]


async def listed_tasks(http: httpx.AsyncClient, url: str) -> list[Any]:
    result = await call(http, url, rpc("ListTasks", {}))
    tasks: list[Any] = result["tasks"]
    return tasks


async def test_jsonrpc_10_answers_ping_with_a_message_and_the_rest_with_a_task(
    http: httpx.AsyncClient, hub_url: str
) -> None:
    reply = await call(
        http, hub_url, rpc("SendMessage", {"message": message_v1("ping", contextId="c1")})
    )
    assert reply == {
        "message": {
            "messageId": reply["message"]["messageId"],
            "role": "ROLE_AGENT",
            "parts": [{"text": "pong"}],
            "contextId": "c1",
        }
    }
    assert await listed_tasks(http, hub_url) == []
    answer = await call(
        http, hub_url, rpc("SendMessage", {"message": message_v1("hello", contextId="c1")})
    )
    task = answer["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "done: hello"}]
    assert [t["id"] for t in await listed_tasks(http, hub_url)] == [task["id"]]


async def test_jsonrpc_03_answers_ping_with_kind_message_and_the_rest_with_kind_task(
    http: httpx.AsyncClient, hub_url: str
) -> None:
    reply = await call(
        http,
        hub_url,
        rpc("message/send", {"message": message_v03("ping", contextId="c3")}),
        v03=True,
    )
    assert reply == {
        "kind": "message",
        "messageId": reply["messageId"],
        "role": "agent",
        "parts": [{"kind": "text", "text": "pong"}],
        "contextId": "c3",
    }
    answer = await call(
        http, hub_url, rpc("message/send", {"message": message_v03("hello")}), v03=True
    )
    assert answer["kind"] == "task"
    assert answer["status"]["state"] == "completed"
    assert answer["artifacts"][0]["parts"] == [{"kind": "text", "text": "done: hello"}]


async def test_a_streamed_ping_is_one_message_event_on_every_door(
    http: httpx.AsyncClient, hub_url: str
) -> None:
    [v1] = await sse(
        http, hub_url, rpc("SendStreamingMessage", {"message": message_v1("ping", contextId="c1")})
    )
    assert v1["result"] == {
        "message": {
            "messageId": v1["result"]["message"]["messageId"],
            "role": "ROLE_AGENT",
            "parts": [{"text": "pong"}],
            "contextId": "c1",
        }
    }
    [rest] = await sse(
        http, f"{hub_url}/message:stream", {"message": message_v1("ping", contextId="c2")}
    )
    assert rest["message"]["parts"] == [{"text": "pong"}]
    assert rest["message"]["contextId"] == "c2"
    [v03] = await sse(
        http,
        hub_url,
        rpc("message/stream", {"message": message_v03("ping", contextId="c3")}),
        v03=True,
    )
    assert v03["result"] == {
        "kind": "message",
        "messageId": v03["result"]["messageId"],
        "role": "agent",
        "parts": [{"kind": "text", "text": "pong"}],
        "contextId": "c3",
    }
    assert await listed_tasks(http, hub_url) == []


async def test_a_streamed_task_starts_with_the_task_and_carries_every_change(
    http: httpx.AsyncClient, hub_url: str
) -> None:
    events = await sse(http, hub_url, rpc("SendStreamingMessage", {"message": message_v1("hi")}))
    results = [event["result"] for event in events]
    assert [next(iter(result)) for result in results] == [
        "task",
        "statusUpdate",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert results[2]["statusUpdate"]["status"]["message"]["parts"] == [{"text": "working on it"}]
    assert results[3]["artifactUpdate"]["artifact"]["parts"] == [{"text": "done: hi"}]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    events_03 = await sse(
        http, hub_url, rpc("message/stream", {"message": message_v03("hi")}), v03=True
    )
    kinds = [(event["result"]["kind"], event["result"].get("final")) for event in events_03]
    assert kinds[0] == ("task", None)
    assert kinds[-1] == ("status-update", True)


async def test_return_immediately_gets_a_task_even_for_ping(
    http: httpx.AsyncClient, hub_url: str
) -> None:
    params = {"message": message_v1("ping"), "configuration": {"returnImmediately": True}}
    task = (await call(http, hub_url, rpc("SendMessage", params)))["task"]
    assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    [task_id] = [t["id"] for t in await listed_tasks(http, hub_url)]
    assert task_id == task["id"]


async def sdk_send(client: Client, text: str) -> list[SdkStreamResponse]:
    with anyio.fail_after(10):
        return [event async for event in client.send_message(user(text))]


@pytest.mark.parametrize("streaming", [False, True], ids=["blocking", "streaming"])
@pytest.mark.parametrize("binding", list(BINDINGS))
async def test_the_sdk_client_gets_a_message_for_ping_and_a_task_otherwise(
    hub_url: str, binding: str, streaming: bool
) -> None:
    async with sdk_client(hub_url, binding, streaming=streaming) as client:
        [reply] = await sdk_send(client, "ping")
        assert reply.WhichOneof("payload") == "message"
        assert reply.message.role == SdkRole.ROLE_AGENT
        assert [part.text for part in reply.message.parts] == ["pong"]
        assert reply.message.context_id
        assert not reply.message.task_id
        events = await sdk_send(client, "hello")
    assert events[0].WhichOneof("payload") == "task"
    last = events[-1]
    state = last.task.status.state if last.HasField("task") else last.status_update.status.state
    assert state == SdkTaskState.TASK_STATE_COMPLETED
    if not streaming:
        assert [p.text for p in events[0].task.artifacts[0].parts] == ["done: hello"]


def test_docs_show_the_example_skill_these_tests_run() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs/skills.md").read_text()
    section = text[text.index("## Answering with a message instead of a task") :]
    block = section[section.index("```python\n") + len("```python\n") : section.index("```\n\n")]
    assert block == inspect.getsource(assistant.function)
