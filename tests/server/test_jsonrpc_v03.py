"""The 0.3 methods in process: what a 0.3 request must hold, and what refuses it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "message", "messageId": "m1", "role": "user", "parts": list(parts)}


async def call(client: httpx.AsyncClient, method: str, params: Any) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return await client.post("/", json=body, headers=JSON)


async def task_count(client: httpx.AsyncClient) -> int:
    body = {"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}}
    listed = await client.post("/", json=body, headers=V1)
    count: int = listed.json()["result"]["totalSize"]
    return count


def invalid_params(field: str, problem: str) -> dict[str, Any]:
    """The 0.3 error object of a -32602 with one field violation (its message left out)."""
    return {"code": -32602, "data": {"fieldViolations": [{"field": field, "description": problem}]}}


def error_without_message(response: httpx.Response) -> dict[str, Any]:
    document = response.json()
    assert set(document) == {"jsonrpc", "id", "error"}, document
    error = dict(document["error"])
    assert isinstance(error.pop("message"), str)
    return error


@pytest.mark.parametrize(
    ("part", "problem"),
    [
        (
            {"type": "unsupported_type", "text": "x"},
            "a part must name its 'kind': text, file or data ('type' is not a 0.3 part field)",
        ),
        ({"text": "x"}, "a part must name its 'kind': text, file or data"),
        (
            {"kind": "unsupported_type", "text": "x"},
            "unknown part kind 'unsupported_type' (expected text, file or data)",
        ),
        ({"kind": 7, "text": "x"}, "unknown part kind 7 (expected text, file or data)"),
    ],
    ids=["type-instead-of-kind", "no-kind", "unknown-kind", "kind-not-a-string"],
)
@pytest.mark.parametrize("method", ["message/send", "message/stream"])
async def test_a_v03_part_without_a_known_kind_is_invalid_params_and_runs_nothing(
    client: httpx.AsyncClient, method: str, part: dict[str, Any], problem: str
) -> None:
    text = {"kind": "text", "text": "fine"}
    response = await call(client, method, {"message": message(text, part)})
    assert response.headers["content-type"] == "application/json"
    assert error_without_message(response) == invalid_params("params.message.parts[1]", problem)
    assert problem in response.json()["error"]["message"]
    assert await task_count(client) == 0


async def test_a_negative_history_length_is_invalid_params_on_v03_get(
    client: httpx.AsyncClient,
) -> None:
    sent = await call(client, "message/send", {"message": message({"kind": "text", "text": "hi"})})
    task_id = sent.json()["result"]["id"]
    refused = await call(client, "tasks/get", {"id": task_id, "historyLength": -1})
    assert refused.status_code == 200
    assert error_without_message(refused) == invalid_params(
        "params.historyLength", "Input should be greater than or equal to 0"
    )
    # 0 keeps meaning "the whole history" on 0.3.
    whole = await call(client, "tasks/get", {"id": task_id, "historyLength": 0})
    assert [entry["messageId"] for entry in whole.json()["result"]["history"]] == ["m1"]


async def test_a_negative_history_length_in_a_v03_send_runs_nothing(
    client: httpx.AsyncClient,
) -> None:
    params = {
        "message": message({"kind": "text", "text": "hi"}),
        "configuration": {"historyLength": -1},
    }
    refused = await call(client, "message/send", params)
    assert error_without_message(refused) == invalid_params(
        "params.configuration.historyLength", "Input should be greater than or equal to 0"
    )
    assert await task_count(client) == 0
