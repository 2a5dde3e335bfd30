"""A stream that cannot start: an HTTP error on the 0.3 door and REST (the 0.3 spec asks for
one), the JSON-RPC error in a 200 body on the 1.0 door, as the 1.0 SDK clients read it."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from httpx_sse import SSEError, aconnect_sse

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
V03 = {"Content-Type": "application/json"}


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 4, "method": method, "params": params}


def v1_message(**extra: Any) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}], **extra}


def v03_message(**extra: Any) -> dict[str, Any]:
    parts = [{"kind": "text", "text": "hi"}]
    message_id = uuid.uuid4().hex
    return {"kind": "message", "messageId": message_id, "role": "user", "parts": parts, **extra}


async def completed_task(client: httpx.AsyncClient) -> str:
    sent = await client.post("/", json=rpc("SendMessage", {"message": v1_message()}), headers=V1)
    task_id: str = sent.json()["result"]["task"]["id"]
    return task_id


def failure(response: httpx.Response) -> tuple[int, str, Any, int]:
    """(HTTP status, media type, JSON-RPC id, JSON-RPC code) of a refused call."""
    document = response.json()
    assert set(document) == {"jsonrpc", "id", "error"}, document
    media_type = response.headers["content-type"].split(";", 1)[0]
    return response.status_code, media_type, document["id"], document["error"]["code"]


async def test_subscribing_to_an_unknown_task_is_a_404_on_03_and_rest_and_an_error_body_on_10(
    client: httpx.AsyncClient,
) -> None:
    v1 = await client.post("/", json=rpc("SubscribeToTask", {"id": "nope"}), headers=V1)
    v03 = await client.post("/", json=rpc("tasks/resubscribe", {"id": "nope"}), headers=V03)
    rest = await client.post("/tasks/nope:subscribe", headers=V1)
    assert failure(v1) == (200, "application/json", 4, -32001)
    assert v1.json()["error"]["data"][0]["reason"] == "TASK_NOT_FOUND"
    assert failure(v03) == (404, "application/json", 4, -32001)
    assert rest.status_code == 404
    assert rest.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


async def test_subscribing_to_a_terminal_task_is_a_400_on_03_and_rest_and_an_error_body_on_10(
    client: httpx.AsyncClient,
) -> None:
    task_id = await completed_task(client)
    v1 = await client.post("/", json=rpc("SubscribeToTask", {"id": task_id}), headers=V1)
    v03 = await client.post("/", json=rpc("tasks/resubscribe", {"id": task_id}), headers=V03)
    rest = await client.post(f"/tasks/{task_id}:subscribe", headers=V1)
    assert failure(v1) == (200, "application/json", 4, -32004)
    assert failure(v03) == (400, "application/json", 4, -32004)
    assert rest.status_code == 400
    assert rest.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


async def test_a_streaming_send_that_cannot_start_is_a_failed_request_on_03(
    client: httpx.AsyncClient,
) -> None:
    task_id = await completed_task(client)
    to_terminal = await client.post(
        "/", json=rpc("SendStreamingMessage", {"message": v1_message(taskId=task_id)}), headers=V1
    )
    v03_to_terminal = await client.post(
        "/", json=rpc("message/stream", {"message": v03_message(taskId=task_id)}), headers=V03
    )
    unknown = await client.post(
        "/", json=rpc("message/stream", {"message": v03_message(taskId="nope")}), headers=V03
    )
    no_parts = await client.post(
        "/", json=rpc("message/stream", {"message": v03_message(parts=[])}), headers=V03
    )
    assert failure(to_terminal) == (200, "application/json", 4, -32004)
    assert failure(v03_to_terminal) == (400, "application/json", 4, -32004)
    assert failure(unknown) == (404, "application/json", 4, -32001)
    assert failure(no_parts) == (400, "application/json", 4, -32602)


async def test_unary_errors_keep_http_200_as_the_sdk_sends_them(client: httpx.AsyncClient) -> None:
    v1 = await client.post("/", json=rpc("GetTask", {"id": "nope"}), headers=V1)
    v03 = await client.post("/", json=rpc("tasks/get", {"id": "nope"}), headers=V03)
    assert failure(v1) == (200, "application/json", 4, -32001)
    assert failure(v03) == (200, "application/json", 4, -32001)


async def test_an_sse_client_sees_the_failed_03_subscription_as_an_http_error(
    client: httpx.AsyncClient,
) -> None:
    async with aconnect_sse(
        client, "POST", "/", json=rpc("tasks/resubscribe", {"id": "nope"}), headers=V03
    ) as source:
        with pytest.raises(httpx.HTTPStatusError) as failed:
            source.response.raise_for_status()
        with pytest.raises(SSEError):
            await anext(source.aiter_sse())
    assert failed.value.response.status_code == 404
