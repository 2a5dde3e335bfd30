"""What each transport puts on the wire: method names, paths, versions, and 0.3 shapes read
back as 1.0 objects (push configs, extended card)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.errors import RemoteRpcError, UnsupportedOperationError
from hub.protocol import AgentCard, ListTasksRequest, TaskPushNotificationConfig, TaskState
from hub.protocol.trace import CallScope, use_scope
from hub.testing import serve_on_loopback
from tests.client.scripted import ScriptedAgent, card_document, respond, rpc_result

pytestmark = pytest.mark.anyio

TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}
TASK_V03 = {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}}


@pytest.fixture
async def agent() -> AsyncIterator[tuple[ScriptedAgent, str]]:
    scripted = ScriptedAgent()
    async with serve_on_loopback(scripted) as url:
        yield scripted, url


def client_for(url: str, http: httpx.AsyncClient, binding: str, version: str) -> A2AClient:
    document = card_document(url)
    document["supportedInterfaces"] = [
        {"url": url, "protocolBinding": binding, "protocolVersion": version, "tenant": "acme"}
    ]
    return A2AClient(
        AgentCard.model_validate(document), http=http, headers={"Authorization": "Bearer k"}
    )


async def test_jsonrpc_1_0_sends_pascal_case_methods_the_version_and_the_tenant(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["GetTask"] = rpc_result(TASK)
    client = client_for(url, http, "JSONRPC", "1.0")

    with anyio.fail_after(5):
        task = await client.get_task("t1", history_length=2)

    call = scripted.seen[-1]
    assert call.headers["a2a-version"] == "1.0"
    assert call.headers["authorization"] == "Bearer k"
    assert call.document["params"] == {"id": "t1", "historyLength": 2, "tenant": "acme"}
    assert task.status.state is TaskState.COMPLETED


async def test_jsonrpc_0_3_speaks_0_3_and_answers_in_1_0_objects(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["message/send"] = rpc_result(TASK_V03)
    push = {"taskId": "t1", "pushNotificationConfig": {"id": "p1", "url": "http://cb"}}
    scripted.routes["tasks/pushNotificationConfig/set"] = rpc_result(push)
    scripted.routes["tasks/pushNotificationConfig/list"] = rpc_result([push])
    client = client_for(url, http, "JSONRPC", "0.3")

    with anyio.fail_after(5):
        task = await client.send(user_message("hi"))
        created = await client.create_push_config(
            TaskPushNotificationConfig(task_id="t1", id="p1", url="http://cb")
        )
        listed = await client.list_push_configs("t1")
        with pytest.raises(UnsupportedOperationError):
            await client.list_tasks()

    sent = scripted.seen[0]
    assert sent.headers["a2a-version"] == "0.3"
    assert sent.document["params"]["message"]["parts"] == [{"kind": "text", "text": "hi"}]
    assert scripted.seen[1].document["params"] == push
    assert task.status.state is TaskState.COMPLETED  # "completed" read as TASK_STATE_COMPLETED
    assert created == TaskPushNotificationConfig(task_id="t1", id="p1", url="http://cb")
    assert listed.configs == [created]


async def test_rest_uses_the_routes_under_the_tenant_and_reads_status_errors(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    page = {"tasks": [TASK], "nextPageToken": "", "pageSize": 50, "totalSize": 1}
    scripted.routes["GET /acme/tasks"] = respond(200, json.dumps(page).encode())
    error = {
        "error": {
            "code": 400,
            "status": "FAILED_PRECONDITION",
            "message": "task t1 cannot be canceled",
            "details": [{"reason": "TASK_NOT_CANCELABLE", "domain": "a2a-protocol.org"}],
        }
    }
    scripted.routes["POST /acme/tasks/t1:cancel"] = respond(400, json.dumps(error).encode())
    client = client_for(url, http, "HTTP+JSON", "1.0")

    with anyio.fail_after(5):
        listed = await client.list_tasks(
            ListTasksRequest(status=TaskState.COMPLETED, include_artifacts=True)
        )
        with pytest.raises(RemoteRpcError) as caught:
            await client.cancel("t1")

    query = scripted.seen[0]
    assert query.headers["a2a-version"] == "1.0"
    assert query.query == "status=TASK_STATE_COMPLETED&includeArtifacts=true"
    assert [task.id for task in listed.tasks] == ["t1"]
    assert caught.value.code == -32002


async def test_every_call_carries_the_trace_and_its_headers_and_never_a_partners_cookie(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    reply = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": TASK}}).encode()
    scripted.routes["SendMessage"] = respond(200, reply, headers=[("set-cookie", "sid=s1; Path=/")])
    client = client_for(url, http, "JSONRPC", "1.0")
    scope = CallScope.new()

    with anyio.fail_after(5), use_scope(scope):
        await client.send(user_message("one"))
        await client.send(user_message("two"))

    first, second = scripted.seen[-2:]
    for call in (first, second):
        assert call.headers["traceparent"].split("-")[1] == scope.trace_id
        assert call.headers["authorization"] == "Bearer k"
        assert call.headers["content-type"] == "application/json"
        assert call.headers["content-length"] == str(len(call.body))
    assert first.document["params"]["message"]["parts"] == [{"text": "one"}]
    assert second.document["id"] == first.document["id"] + 1
    assert "cookie" not in second.headers
