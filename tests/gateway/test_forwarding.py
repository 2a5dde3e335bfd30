"""What the gateway sends on to a partner: the caller's trace, deadline and the hub trail (so
a forwarding loop is refused), and the partner's own credentials from agents.yaml."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import httpx
import pytest

from hub.registry import AgentEntry
from tests.client.scripted import card_document

from .conftest import V1, Partner, entries, serve_hub

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 5, "method": method, "params": params}


def message(text: str = "hi") -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def inline_entry(name: str, url: str, **extra: Any) -> AgentEntry:
    """An agents.yaml entry with an inline card: the hub calls `url` without reading a card."""
    card = card_document(url, name=name, version="1", description="an inline card", skills=[])
    return AgentEntry.model_validate({"name": name, "card": card, **extra})


@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
async def test_a_forwarded_call_carries_the_callers_trace_deadline_and_trail(
    hub_url: str, partners: dict[str, Partner], method: str
) -> None:
    headers = {
        **V1,
        "traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01",
        "X-A2A-Hub-Deadline": "30",
    }
    recorder = partners["one"].recorder
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(10):
            response = await http.post(
                f"{hub_url}/agents/one",
                json=rpc(method, {"message": message()}),
                headers=headers,
            )
    assert response.status_code == 200
    call = next(
        seen for seen in recorder.requests if seen.get("content-type") == "application/json"
    )
    version, trace_id, span, flags = call["traceparent"].split("-")
    assert (version, trace_id, flags) == ("00", TRACE_ID, "01")
    assert span != CALLER_SPAN  # a span of the hub's own
    assert 0 < float(call["x-a2a-hub-deadline"]) <= 30
    assert call["x-a2a-hub-trail"] == hub_url
    assert call["a2a-version"] == "1.0"


async def test_a_partner_that_leads_back_to_the_hub_is_refused_as_a_loop() -> None:
    # "loop" is the hub's own gateway entry for "loop": the call would go round for ever.
    async with (
        serve_hub(lambda url: [inline_entry("loop", f"{url}/agents/loop")]) as hub,
        httpx.AsyncClient(timeout=10) as http,
    ):
        with anyio.fail_after(10):
            response = await http.post(
                f"{hub}/agents/loop", json=rpc("SendMessage", {"message": message()}), headers=V1
            )
    error = response.json()["error"]
    assert error["code"] == -32600
    assert error["data"][0]["reason"] == "INVALID_REQUEST"
    assert error["data"][0]["metadata"] == {"agent": "loop"}
    assert "forwarding loop" in error["message"]


async def test_a_partner_refusing_the_hubs_credentials_is_unavailable(
    partners: dict[str, Partner],
) -> None:
    guarded = partners["guarded"].url + "/"
    wrong = inline_entry("wrong", guarded, auth={"bearer": "not-the-partner-token-0000"})
    async with (
        serve_hub([*entries(partners), wrong]) as hub,
        httpx.AsyncClient(timeout=10) as http,
    ):
        jsonrpc = await http.post(
            f"{hub}/agents/wrong", json=rpc("SendMessage", {"message": message()}), headers=V1
        )
        rest = await http.post(
            f"{hub}/agents/wrong/message:send", json={"message": message()}, headers=V1
        )
        right = await http.post(
            f"{hub}/agents/guarded/message:send", json={"message": message()}, headers=V1
        )
    error = jsonrpc.json()["error"]
    assert (error["code"], error["data"][0]["reason"]) == (-32603, "PARTNER_UNAVAILABLE")
    assert "agent 'wrong' refused the hub's credentials" in error["message"]
    assert rest.status_code == 502
    assert rest.json()["error"]["status"] == "UNAVAILABLE"
    assert right.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_the_partner_url_with_a_trailing_slash_is_the_same_json_rpc_endpoint(
    hub_url: str,
) -> None:
    # JS SDK clients resolve the card path against the URL they are given, so they need it
    # with a trailing slash: both forms must reach the partner.
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(10):
            answers = [
                await http.post(
                    f"{hub_url}/agents/one{tail}",
                    json=rpc("SendMessage", {"message": message()}),
                    headers=V1,
                )
                for tail in ("", "/")
            ]
            card = await http.get(f"{hub_url}/agents/one/.well-known/agent-card.json")
    assert [answer.status_code for answer in answers] == [200, 200]
    states = [answer.json()["result"]["task"]["status"]["state"] for answer in answers]
    assert states == ["TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"]
    assert card.status_code == 200
