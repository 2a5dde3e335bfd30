"""The JSON-RPC binding in process: every error code, both method families, the version rules."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def send_params(text: str = "hi", **message: Any) -> dict[str, Any]:
    return {
        "message": {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": text}],
            **message,
        }
    }


async def rpc(
    client: httpx.AsyncClient,
    method: str,
    params: Any,
    *,
    headers: dict[str, str] | None = None,
    request_id: Any = 1,
) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    response = await client.post("/", json=body, headers=headers if headers is not None else V1)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    document: dict[str, Any] = response.json()
    return document


def error_code(document: dict[str, Any]) -> int:
    assert "result" not in document, document
    code: int = document["error"]["code"]
    return code


async def test_send_message_returns_the_completed_task(client: httpx.AsyncClient) -> None:
    document = await rpc(client, "SendMessage", send_params("ping"), request_id="abc")
    assert document["jsonrpc"] == "2.0"
    assert document["id"] == "abc"
    task = document["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["timestamp"].endswith("Z")
    assert task["artifacts"][0]["parts"] == [{"text": "ping"}]
    got = await rpc(client, "GetTask", {"id": task["id"]})
    assert got["result"]["id"] == task["id"]


async def test_a2a_errors_carry_error_info_in_data(client: httpx.AsyncClient) -> None:
    document = await rpc(client, "GetTask", {"id": "missing"})
    assert document["error"]["code"] == -32001
    assert document["error"]["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "missing"},
        }
    ]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"[]", -32600),
        (b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]', -32600),
        (b'"just a string"', -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"GetTask","params":{"id":"x"}}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod","params":{}}', -32601),
        (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}', -32602),
        (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}', -32602),
        (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}', -32602),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
            b'{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"weird"}]}}}',
            -32602,
        ),
    ],
)
async def test_malformed_requests_get_the_standard_error_codes(
    client: httpx.AsyncClient, body: bytes, code: int
) -> None:
    response = await client.post("/", content=body, headers=V1)
    assert response.status_code == 200
    assert error_code(response.json()) == code


async def test_invalid_params_name_the_field(client: httpx.AsyncClient) -> None:
    document = await rpc(client, "SendMessage", {"message": {"role": "ROLE_USER", "parts": []}})
    assert error_code(document) == -32602
    violations = document["error"]["data"][1]["fieldViolations"]
    fields = {violation["field"] for violation in violations}
    assert {"params.message.messageId", "params.message.parts"} <= fields


async def test_a_non_json_content_type_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/", content=b"a=b", headers={"A2A-Version": "1.0", "Content-Type": "text/plain"}
    )
    assert error_code(response.json()) == -32600


async def test_a_body_over_the_limit_is_refused(client: httpx.AsyncClient) -> None:
    document = await rpc(client, "SendMessage", send_params("x" * 5000))
    assert error_code(document) == -32600
    assert "limits.max_body" in document["error"]["message"]


async def test_missing_version_on_a_v1_method_is_version_not_supported(
    client: httpx.AsyncClient,
) -> None:
    document = await rpc(
        client, "GetTask", {"id": "x"}, headers={"Content-Type": "application/json"}
    )
    assert error_code(document) == -32009
    assert "A2A-Version: 1.0" in document["error"]["message"]


@pytest.mark.parametrize("version", ["1.0", "1.0.7", " 1.0 "])
async def test_version_patch_and_spaces_are_ignored(
    client: httpx.AsyncClient, version: str
) -> None:
    headers = {"A2A-Version": version, "Content-Type": "application/json"}
    document = await rpc(client, "SendMessage", send_params(), headers=headers)
    assert "result" in document


async def test_version_may_be_sent_as_a_query_parameter(client: httpx.AsyncClient) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params()}
    response = await client.post("/?A2A-Version=1.0", json=body)
    assert "result" in response.json()


@pytest.mark.parametrize("version", ["2.0", "0.5", "banana", "1.1"])
async def test_unsupported_versions_are_refused(client: httpx.AsyncClient, version: str) -> None:
    headers = {"A2A-Version": version, "Content-Type": "application/json"}
    document = await rpc(client, "GetTask", {"id": "x"}, headers=headers)
    assert error_code(document) == -32009


async def test_v03_method_with_a_v1_header_gets_the_03_mapping_of_32009(
    client: httpx.AsyncClient,
) -> None:
    document = await rpc(client, "tasks/get", {"id": "x"}, headers=V1)
    assert error_code(document) == -32603


async def test_push_config_methods_are_refused_while_push_is_off(
    push_off_client: httpx.AsyncClient,
) -> None:
    params = {"taskId": "t", "url": "https://example.com/hook"}
    document = await rpc(push_off_client, "CreateTaskPushNotificationConfig", params)
    assert error_code(document) == -32003


async def test_extended_card_is_unsupported_when_not_offered(client: httpx.AsyncClient) -> None:
    document = await rpc(client, "GetExtendedAgentCard", {})
    assert error_code(document) == -32004


async def test_multi_turn_over_jsonrpc(client: httpx.AsyncClient) -> None:
    params = {**send_params("start"), "metadata": {"skill": "interview"}}
    first = (await rpc(client, "SendMessage", params))["result"]["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    answer = send_params("Ada", taskId=first["id"], contextId=first["contextId"])
    done = (await rpc(client, "SendMessage", answer))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
    again = await rpc(client, "SendMessage", send_params("more", taskId=first["id"]))
    assert error_code(again) == -32004


async def test_list_and_cancel_over_jsonrpc(client: httpx.AsyncClient) -> None:
    params = {**send_params("start"), "metadata": {"skill": "interview"}}
    parked = (await rpc(client, "SendMessage", params))["result"]["task"]
    listed = (await rpc(client, "ListTasks", {"status": "TASK_STATE_INPUT_REQUIRED"}))["result"]
    assert [task["id"] for task in listed["tasks"]] == [parked["id"]]
    assert listed["nextPageToken"] == ""
    assert listed["totalSize"] == 1
    canceled = (await rpc(client, "CancelTask", {"id": parked["id"]}))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert error_code(await rpc(client, "CancelTask", {"id": parked["id"]})) == -32002
    assert error_code(await rpc(client, "ListTasks", {"pageSize": 0})) == -32602


async def test_stream_frames_are_jsonrpc_responses_ending_at_completion(
    client: httpx.AsyncClient,
) -> None:
    body = {"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage", "params": send_params()}
    response = await client.post("/", json=body, headers=V1)
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = [
        json.loads(line.removeprefix("data: "))
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    assert all(frame["id"] == 9 and frame["jsonrpc"] == "2.0" for frame in frames)
    results = [frame["result"] for frame in frames]
    assert "task" in results[0]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_v03_send_and_stream_speak_03_json(client: httpx.AsyncClient) -> None:
    message = {
        "kind": "message",
        "messageId": "m1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    sent = await rpc(
        client, "message/send", {"message": message}, headers={"Content-Type": "application/json"}
    )
    task = sent["result"]
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "hi"}]
    body = {"jsonrpc": "2.0", "id": 5, "method": "message/stream", "params": {"message": message}}
    response = await client.post("/", json=body)
    events = [
        json.loads(line.removeprefix("data: "))["result"]
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    assert events[0]["kind"] == "task"
    assert [event["kind"] for event in events[1:]] == [
        "status-update",
        "artifact-update",
        "status-update",
    ]
    assert [event.get("final") for event in events if event["kind"] == "status-update"] == [
        False,
        True,
    ]
    assert events[-1]["status"]["state"] == "completed"
    got = await rpc(client, "tasks/get", {"id": task["id"], "historyLength": 0}, headers={})
    assert got["result"]["history"][0]["parts"] == [{"kind": "text", "text": "hi"}]


async def test_v03_list_tasks_does_not_exist(client: httpx.AsyncClient) -> None:
    document = await rpc(client, "tasks/list", {}, headers={})
    assert error_code(document) == -32601
