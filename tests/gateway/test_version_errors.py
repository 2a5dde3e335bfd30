"""A partner's error through the gateway reaches the caller in the caller's version, where 0.3
and 1.0 name the case with different codes: a terminal task refused a resubscribe or a
message is -32602 (InvalidParams) in 0.3 and -32004 (UnsupportedOperation) in 1.0. The
partner's message is kept.

The 0.3 partner is scripted, answering as 0.3 agents (and the 0.3 SDK) do; the 1.0 partner
is the official a2a-sdk."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from hub.client import CARD_PATH
from hub.registry import AgentEntry
from hub.testing import serve_on_loopback
from tests.client.scripted import Call, Receive, ScriptedAgent, Send, card_document, respond

from .conftest import V1, Partner, entries, serve_hub

pytestmark = pytest.mark.anyio

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
TERMINAL = "Task t-done is in terminal state: completed"
BAD_PART = "Invalid params: a part has no kind"


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}


def v1_message(task_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": "more"}],
    }
    return message | ({"taskId": task_id} if task_id else {})


def v03_message(task_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": "more"}],
    }
    return message | ({"taskId": task_id} if task_id else {})


def invalid_params(message: str) -> Any:
    async def handler(call: Call, receive: Receive, send: Send) -> None:
        error = {"code": -32602, "message": message}
        body = json.dumps({"jsonrpc": "2.0", "id": call.rpc_id, "error": error}).encode()
        await respond(200, body)(call, receive, send)

    return handler


async def v03_send(call: Call, receive: Receive, send: Send) -> None:
    """As a 0.3 agent: a message to a finished task, or a malformed one, is InvalidParams."""
    task_id = call.document["params"]["message"].get("taskId")
    await invalid_params(TERMINAL if task_id else BAD_PART)(call, receive, send)


@pytest.fixture
async def v03_partner() -> AsyncIterator[str]:
    agent = ScriptedAgent()
    async with serve_on_loopback(agent) as url:
        card = card_document(url + "/", name="old-scripted")
        card["supportedInterfaces"][0]["protocolVersion"] = "0.3"
        agent.routes[f"GET {CARD_PATH}"] = respond(200, json.dumps(card).encode())
        agent.routes["tasks/resubscribe"] = invalid_params(TERMINAL)
        agent.routes["message/send"] = v03_send
        agent.routes["message/stream"] = v03_send
        yield url


@pytest.fixture
async def hub(partners: dict[str, Partner], v03_partner: str) -> AsyncIterator[str]:
    agents = [*entries(partners), AgentEntry(name="scripted", url=v03_partner)]
    async with serve_hub(agents) as url:
        yield url


def reason(document: dict[str, Any]) -> str:
    details = document["error"].get("data") or document["error"].get("details")
    return str(next(d["reason"] for d in details if d["@type"] == ERROR_INFO))


async def test_a_03_partners_terminal_task_refusal_reaches_a_10_caller_as_unsupported(
    hub: str,
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        subscribe = await http.post(
            f"{hub}/agents/scripted", json=rpc("SubscribeToTask", {"id": "t-done"}), headers=V1
        )
        rest = await http.post(f"{hub}/agents/scripted/tasks/t-done:subscribe", headers=V1)
        message = await http.post(
            f"{hub}/agents/scripted",
            json=rpc("SendMessage", {"message": v1_message("t-done")}),
            headers=V1,
        )
        malformed = await http.post(
            f"{hub}/agents/scripted",
            json=rpc("SendMessage", {"message": v1_message()}),
            headers=V1,
        )

    for answer in (subscribe.json(), message.json()):
        assert answer["error"]["code"] == -32004
        assert reason(answer) == "UNSUPPORTED_OPERATION"
        assert TERMINAL in answer["error"]["message"]  # the partner's own words
    assert rest.status_code == 400
    assert reason(rest.json()) == "UNSUPPORTED_OPERATION"
    # A real InvalidParams of the partner stays one.
    assert malformed.json()["error"]["code"] == -32602
    assert BAD_PART in malformed.json()["error"]["message"]


async def test_a_03_partners_refusal_reaches_a_03_caller_as_it_was_sent(hub: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        resubscribe = await http.post(
            f"{hub}/agents/scripted", json=rpc("tasks/resubscribe", {"id": "t-done"})
        )
        message = await http.post(
            f"{hub}/agents/scripted", json=rpc("message/send", {"message": v03_message("t-done")})
        )

    for answer in (resubscribe.json(), message.json()):
        assert answer["error"]["code"] == -32602
        assert TERMINAL in answer["error"]["message"]


async def test_a_10_partners_terminal_task_refusal_reaches_a_03_caller_as_invalid_params(
    hub: str,
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        sent = await http.post(
            f"{hub}/agents/one", json=rpc("SendMessage", {"message": v1_message()}), headers=V1
        )
        task = sent.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        resubscribe = await http.post(
            f"{hub}/agents/one", json=rpc("tasks/resubscribe", {"id": task["id"]})
        )
        message = await http.post(
            f"{hub}/agents/one", json=rpc("message/send", {"message": v03_message(task["id"])})
        )
        subscribe_v1 = await http.post(
            f"{hub}/agents/one", json=rpc("SubscribeToTask", {"id": task["id"]}), headers=V1
        )

    for answer in (resubscribe.json(), message.json()):
        assert answer["error"]["code"] == -32602, answer
        assert "terminal state" in answer["error"]["message"]  # the partner's own words
    assert subscribe_v1.json()["error"]["code"] == -32004
