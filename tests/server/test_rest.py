"""The HTTP+JSON binding in process: routes, verbs and google.rpc.Status errors."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}


def send_body(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]},
        **extra,
    }


def media_type(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";", 1)[0].strip()


def assert_status(response: httpx.Response, http: int, reason: str) -> None:
    assert response.status_code == http, response.text
    assert media_type(response) == "application/json"
    error = response.json()["error"]
    assert error["code"] == http
    assert error["details"][0]["reason"] == reason
    assert error["details"][0]["domain"] == "a2a-protocol.org"


async def test_send_get_and_list_over_rest(client: httpx.AsyncClient) -> None:
    sent = await client.post("/message:send", json=send_body("ping"), headers=V1)
    assert sent.status_code == 200
    assert media_type(sent) == "application/json"
    task = sent.json()["task"]
    assert task["artifacts"][0]["parts"] == [{"text": "ping"}]
    got = await client.get(f"/tasks/{task['id']}", params={"historyLength": 0}, headers=V1)
    assert got.json()["id"] == task["id"]
    assert "history" not in got.json()
    listed = await client.get(
        "/tasks", params={"contextId": task["contextId"], "includeArtifacts": "true"}, headers=V1
    )
    body = listed.json()
    assert [t["id"] for t in body["tasks"]] == [task["id"]]
    assert body["tasks"][0]["artifacts"] == task["artifacts"]
    assert body["nextPageToken"] == ""


async def test_cancel_and_subscribe_verbs(client: httpx.AsyncClient) -> None:
    parked = (
        await client.post(
            "/message:send", json=send_body(metadata={"skill": "interview"}), headers=V1
        )
    ).json()["task"]
    canceled = await client.post(f"/tasks/{parked['id']}:cancel", headers=V1)
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"
    assert_status(
        await client.post(f"/tasks/{parked['id']}:cancel", headers=V1), 400, "TASK_NOT_CANCELABLE"
    )
    assert_status(
        await client.post(f"/tasks/{parked['id']}:subscribe", headers=V1),
        400,
        "UNSUPPORTED_OPERATION",
    )
    assert_status(
        await client.get(f"/tasks/{parked['id']}:subscribe", headers=V1),
        400,
        "UNSUPPORTED_OPERATION",
    )


async def test_every_json_answer_of_the_rest_binding_is_application_json(
    client: httpx.AsyncClient,
) -> None:
    sent = await client.post(
        "/message:send", json=send_body(metadata={"skill": "interview"}), headers=V1
    )
    task_id = sent.json()["task"]["id"]
    successes = [
        sent,
        await client.get(f"/tasks/{task_id}", headers=V1),
        await client.get("/tasks", headers=V1),
        await client.get(f"/tasks/{task_id}/pushNotificationConfigs", headers=V1),
        await client.delete(f"/tasks/{task_id}/pushNotificationConfigs/cfg", headers=V1),
        await client.post(f"/tasks/{task_id}:cancel", headers=V1),
    ]
    failures = [
        await client.get("/tasks/nope", headers=V1),
        await client.get(f"/tasks/{task_id}/pushNotificationConfigs/cfg", headers=V1),
        await client.post(f"/tasks/{task_id}:cancel", headers=V1),
        await client.get("/extendedAgentCard", headers=V1),
    ]
    assert [(answer.status_code, media_type(answer)) for answer in successes] == [
        (200, "application/json")
    ] * len(successes)
    assert [(answer.status_code, media_type(answer)) for answer in failures] == [
        (404, "application/json"),
        (404, "application/json"),
        (400, "application/json"),
        (400, "application/json"),
    ]


async def test_rest_stream_carries_bare_stream_responses(client: httpx.AsyncClient) -> None:
    response = await client.post("/message:stream", json=send_body(), headers=V1)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [
        json.loads(line.removeprefix("data: "))
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_rest_errors_use_the_spec_statuses(client: httpx.AsyncClient) -> None:
    assert_status(await client.get("/tasks/nope", headers=V1), 404, "TASK_NOT_FOUND")
    assert_status(await client.get("/tasks/nope"), 400, "VERSION_NOT_SUPPORTED")
    assert_status(
        await client.post(
            "/message:send", content=b"{oops", headers={**V1, "Content-Type": "application/json"}
        ),
        400,
        "PARSE_ERROR",
    )
    assert_status(
        await client.post("/message:send", json={"message": {}}, headers=V1), 400, "INVALID_PARAMS"
    )
    assert_status(
        await client.post(
            "/message:send", content=b"text", headers={**V1, "Content-Type": "text/plain"}
        ),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    )
    assert_status(
        await client.post("/message:send", json=send_body("x" * 5000), headers=V1),
        413,
        "PAYLOAD_TOO_LARGE",
    )
    assert_status(await client.get("/no/such/route", headers=V1), 404, "METHOD_NOT_FOUND")
    assert_status(
        await client.get("/tasks", params={"pageSize": 500}, headers=V1), 400, "INVALID_PARAMS"
    )
    assert_status(
        await client.post(
            "/tasks/t/pushNotificationConfigs", json={"url": "https://x"}, headers=V1
        ),
        404,
        "TASK_NOT_FOUND",
    )
    assert_status(await client.get("/extendedAgentCard", headers=V1), 400, "UNSUPPORTED_OPERATION")


async def test_push_config_routes_are_refused_while_push_is_off(
    push_off_client: httpx.AsyncClient,
) -> None:
    assert_status(
        await push_off_client.post(
            "/tasks/t/pushNotificationConfigs", json={"url": "https://x"}, headers=V1
        ),
        400,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    )
