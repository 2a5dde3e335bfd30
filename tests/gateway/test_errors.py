"""What a caller of the gateway gets when something fails: the partner's own A2A errors with
their codes, on every binding and version; an unknown partner; a partner that is down; push
configs, which the gateway refuses."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from hub.registry import AgentEntry
from tests.client.scripted import card_document

from .conftest import V1, Partner, entries, serve_hub

pytestmark = pytest.mark.anyio

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def message(text: str = "hello") -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def v1_error(code: int, reason: str, agent: str) -> dict[str, Any]:
    """A 1.0 JSON-RPC error response (its message left out: see `without_message`)."""
    info = {"@type": ERROR_INFO, "reason": reason, "domain": "a2a-protocol.org"}
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": code, "data": [{**info, "metadata": {"agent": agent}}]},
    }


def rest_error(status: int, rpc_status: str, reason: str, agent: str) -> dict[str, Any]:
    info = {"@type": ERROR_INFO, "reason": reason, "domain": "a2a-protocol.org"}
    return {
        "error": {
            "code": status,
            "status": rpc_status,
            "details": [{**info, "metadata": {"agent": agent}}],
        }
    }


def without_message(document: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The document with its error message taken out, and that message."""
    error = dict(document["error"])
    text = error.pop("message")
    return {**document, "error": error}, text


async def test_the_partners_task_not_found_keeps_its_code_on_every_binding(
    hub_url: str,
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        v1 = await http.post(
            f"{hub_url}/agents/rest", json=rpc("GetTask", {"id": "nope"}), headers=V1
        )
        v03 = await http.post(f"{hub_url}/agents/one", json=rpc("tasks/get", {"id": "nope"}))
        rest = await http.get(f"{hub_url}/agents/old/tasks/nope", headers=V1)

    assert v1.status_code == 200
    body, text = without_message(v1.json())
    assert body == v1_error(-32001, "TASK_NOT_FOUND", "rest")
    assert "'rest'" in text
    # 0.3 errors carry no ErrorInfo.
    assert v03.status_code == 200
    body, text = without_message(v03.json())
    assert body == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32001}}
    assert "'one'" in text
    assert rest.status_code == 404
    body, text = without_message(rest.json())
    assert body == rest_error(404, "NOT_FOUND", "TASK_NOT_FOUND", "old")
    assert "'old'" in text


@pytest.mark.parametrize("name", ["one", "old", "rest"])
async def test_cancel_of_a_finished_partner_task_is_not_cancelable(hub_url: str, name: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        sent = await http.post(
            f"{hub_url}/agents/{name}/message:send", json={"message": message()}, headers=V1
        )
        task_id = sent.json()["task"]["id"]
        v1 = await http.post(
            f"{hub_url}/agents/{name}", json=rpc("CancelTask", {"id": task_id}), headers=V1
        )
        rest = await http.post(f"{hub_url}/agents/{name}/tasks/{task_id}:cancel", headers=V1)

    assert without_message(v1.json())[0] == v1_error(-32002, "TASK_NOT_CANCELABLE", name)
    assert rest.status_code == 400
    body = without_message(rest.json())[0]
    assert body == rest_error(400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", name)


async def test_an_unknown_partner_is_not_found_on_every_binding(hub_url: str) -> None:
    known = "known: one, old, rest, guarded, down"
    async with httpx.AsyncClient(timeout=10) as http:
        v1 = await http.post(
            f"{hub_url}/agents/nobody", json=rpc("SendMessage", {"message": message()}), headers=V1
        )
        stream = await http.post(
            f"{hub_url}/agents/nobody",
            json=rpc("SendStreamingMessage", {"message": message()}),
            headers=V1,
        )
        rest = await http.get(f"{hub_url}/agents/nobody/tasks/t1", headers=V1)

    expected = f"agent 'nobody' is not in agents.yaml ({known})"
    assert v1.status_code == 200
    assert v1.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"message": expected, **v1_error(-32601, "PARTNER_NOT_FOUND", "nobody")["error"]},
    }
    # A stream that cannot start is a plain JSON-RPC error, not an event stream.
    assert stream.headers["content-type"] == "application/json"
    assert stream.json() == v1.json()
    assert rest.status_code == 404
    assert rest.json() == {
        "error": {
            "message": expected,
            **rest_error(404, "NOT_FOUND", "PARTNER_NOT_FOUND", "nobody")["error"],
        }
    }


async def test_a_partner_that_is_down_is_named_with_a_gateway_status(
    partners: dict[str, Partner], dead_url: str
) -> None:
    # "down" has a URL (its card cannot be read); "gone" an inline card (its calls fail).
    gone = AgentEntry.model_validate(
        {
            "name": "gone",
            "card": card_document(
                dead_url,
                name="Gone",
                version="1",
                description="nothing listens at its URL",
                skills=[],
            ),
        }
    )
    async with (
        serve_hub([*entries(partners, dead_url=dead_url), gone]) as hub,
        httpx.AsyncClient(timeout=10) as http,
    ):
        results = {}
        for name in ("down", "gone"):
            v1 = await http.post(
                f"{hub}/agents/{name}", json=rpc("SendMessage", {"message": message()}), headers=V1
            )
            stream = await http.post(
                f"{hub}/agents/{name}/message:stream", json={"message": message()}, headers=V1
            )
            results[name] = (v1, stream)

    for name, (v1, stream) in results.items():
        assert v1.status_code == 200
        body, text = without_message(v1.json())
        assert body == v1_error(-32603, "PARTNER_UNAVAILABLE", name)
        assert f"agent '{name}'" in text
        assert stream.status_code == 502
        body, text = without_message(stream.json())
        assert body == rest_error(502, "UNAVAILABLE", "PARTNER_UNAVAILABLE", name)
        assert f"agent '{name}'" in text
        assert "127.0.0.1" not in text  # the partner's address stays in the hub's log
    assert "unreachable" in without_message(results["gone"][0].json())[1]


async def test_push_configs_are_refused_as_not_supported(hub_url: str) -> None:
    config = {"taskId": "t1", "id": "c1", "url": "https://example.com/hook"}
    inline = {"message": message(), "configuration": {"taskPushNotificationConfig": config}}
    async with httpx.AsyncClient(timeout=10) as http:
        create = await http.post(
            f"{hub_url}/agents/one",
            json=rpc("CreateTaskPushNotificationConfig", config),
            headers=V1,
        )
        in_send = await http.post(
            f"{hub_url}/agents/one", json=rpc("SendMessage", inline), headers=V1
        )
        v03 = await http.post(
            f"{hub_url}/agents/old",
            json=rpc(
                "tasks/pushNotificationConfig/set",
                {"taskId": "t1", "pushNotificationConfig": {"url": "https://example.com/hook"}},
            ),
        )
        rest = await http.get(f"{hub_url}/agents/rest/tasks/t1/pushNotificationConfigs", headers=V1)
        unknown = await http.get(
            f"{hub_url}/agents/nobody/tasks/t1/pushNotificationConfigs", headers=V1
        )

    refused = v1_error(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "one")
    assert without_message(create.json())[0] == refused
    assert without_message(in_send.json())[0] == refused
    assert without_message(v03.json())[0] == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32003}}
    assert rest.status_code == 400
    body = without_message(rest.json())[0]
    assert body == rest_error(400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "rest")
    # The partner's existence is checked first: a hidden partner is not revealed by a -32003.
    assert unknown.status_code == 404


async def test_the_extended_card_needs_an_authenticated_caller(hub_url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        v1 = await http.post(
            f"{hub_url}/agents/one", json=rpc("GetExtendedAgentCard", {}), headers=V1
        )
        rest = await http.get(f"{hub_url}/agents/rest/extendedAgentCard", headers=V1)
    assert without_message(v1.json())[0] == v1_error(
        -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "one"
    )
    assert rest.status_code == 400
    body = without_message(rest.json())[0]
    assert body == rest_error(
        400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "rest"
    )
