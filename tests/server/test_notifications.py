"""JSON-RPC notifications (requests without `id`): run as usual, answered with nothing."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
V03 = {"Content-Type": "application/json"}


def v1_message(**extra: Any) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}], **extra}


def v03_message() -> dict[str, Any]:
    parts = [{"kind": "text", "text": "hi"}]
    return {"kind": "message", "messageId": uuid.uuid4().hex, "role": "user", "parts": parts}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


async def post(client: httpx.AsyncClient, body: Any, headers: dict[str, str]) -> httpx.Response:
    return await client.post("/", content=json.dumps(body).encode(), headers=headers)


async def tasks(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    listed: list[dict[str, Any]] = (await post(client, body, V1)).json()["result"]["tasks"]
    return listed


def assert_no_answer(response: httpx.Response) -> None:
    assert (response.status_code, response.content) == (204, b"")
    assert "content-type" not in response.headers


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("SendMessage", {"message": v1_message()}, V1),
        ("message/send", {"message": v03_message()}, V03),
    ],
)
async def test_a_send_notification_runs_and_gets_no_answer(
    client: httpx.AsyncClient, method: str, params: Any, headers: dict[str, str]
) -> None:
    response = await post(client, notification(method, params), headers)
    assert_no_answer(response)
    assert [task["status"]["state"] for task in await tasks(client)] == ["TASK_STATE_COMPLETED"]


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("SendStreamingMessage", {"message": v1_message()}, V1),
        ("message/stream", {"message": v03_message()}, V03),
    ],
)
async def test_a_stream_notification_starts_the_task_and_opens_no_stream(
    client: httpx.AsyncClient, method: str, params: Any, headers: dict[str, str]
) -> None:
    response = await post(client, notification(method, params), headers)
    assert_no_answer(response)
    assert len(await tasks(client)) == 1


@pytest.mark.parametrize(("method", "headers"), [("CancelTask", V1), ("tasks/cancel", V03)])
async def test_a_cancel_notification_cancels(
    client: httpx.AsyncClient, method: str, headers: dict[str, str]
) -> None:
    parked = await post(
        client,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": v1_message(), "metadata": {"skill": "interview"}},
        },
        V1,
    )
    task_id = parked.json()["result"]["task"]["id"]
    assert_no_answer(await post(client, notification(method, {"id": task_id}), headers))
    assert [task["status"]["state"] for task in await tasks(client)] == ["TASK_STATE_CANCELED"]


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("GetTask", {"id": "nope"}, V1),
        ("SubscribeToTask", {"id": "nope"}, V1),
        ("SendMessage", {"message": {"role": "ROLE_USER", "parts": []}}, V1),
        ("SendMessage", [1], V1),
        ("NoSuchMethod", {}, V1),
        ("GetTask", {"id": "nope"}, {"Content-Type": "application/json"}),
        ("tasks/get", {"id": "nope"}, V03),
        ("tasks/resubscribe", {"id": "nope"}, V03),
        ("message/send", {"message": {**v03_message(), "parts": [{"text": "no kind"}]}}, V03),
        ("tasks/list", {}, V03),
    ],
    ids=[
        "v1-not-found",
        "v1-subscribe-not-found",
        "v1-bad-params",
        "v1-params-not-object",
        "unknown-method",
        "v1-without-version",
        "v03-not-found",
        "v03-resubscribe-not-found",
        "v03-bad-part",
        "v03-unknown-method",
    ],
)
async def test_a_failing_notification_is_answered_with_nothing_and_runs_nothing(
    client: httpx.AsyncClient, method: str, params: Any, headers: dict[str, str]
) -> None:
    assert_no_answer(await post(client, notification(method, params), headers))
    assert await tasks(client) == []


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [("GetTask", {"id": "nope"}, V1), ("tasks/get", {"id": "nope"}, V03)],
)
async def test_an_explicit_null_id_is_a_request_and_is_answered(
    client: httpx.AsyncClient, method: str, params: Any, headers: dict[str, str]
) -> None:
    response = await post(client, {**notification(method, params), "id": None}, headers)
    assert response.status_code == 200
    document = response.json()
    assert (document["id"], document["error"]["code"]) == (None, -32001)
    sent = await post(
        client, {**notification("SendMessage", {"message": v1_message()}), "id": None}, V1
    )
    assert sent.json()["id"] is None
    assert sent.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_batch_of_notifications_is_refused_whole_and_runs_nothing(
    client: httpx.AsyncClient,
) -> None:
    batch = [notification("SendMessage", {"message": v1_message()})] * 2
    response = await post(client, batch, V1)
    assert response.status_code == 200
    document = response.json()
    assert (document["id"], document["error"]["code"]) == (None, -32600)
    assert await tasks(client) == []


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "1.0", "method": "GetTask", "params": {"id": "x"}},
        {"jsonrpc": "2.0", "method": 7},
        {"method": "GetTask", "params": {"id": "x"}},
    ],
    ids=["wrong-version", "method-not-a-string", "no-jsonrpc-member"],
)
async def test_a_body_without_id_that_is_no_request_object_is_answered(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    response = await post(client, body, V1)
    assert response.status_code == 200
    document = response.json()
    assert (document["id"], document["error"]["code"]) == (None, -32600)
