"""A partner that answers something that is not A2A, an HTTP error page, or nothing at all,
reached through the gateway on every binding and version: the caller gets -32006 (not A2A)
or a PARTNER_UNAVAILABLE error naming the partner and the kind of fault, never the partner's
address or what it said; the hub logs the details once, without a traceback."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from hub.registry import AgentEntry
from tests.client.faulty import FAULTS, KIND, FaultyPartner, assert_nothing_leaks, faulty_partner

from .conftest import V1, serve_hub

pytestmark = pytest.mark.anyio

NOT_A2A = {"code": -32006, "status": 500, "reason": "INVALID_AGENT_RESPONSE"}
UNAVAILABLE = {"code": -32603, "status": 502, "reason": "PARTNER_UNAVAILABLE"}
EXPECTED = {
    "html": NOT_A2A,
    "invalid-json": NOT_A2A,
    "truncated-json": NOT_A2A,
    "redirect": NOT_A2A,
    "http-500": UNAVAILABLE,
    "refused": UNAVAILABLE,
}


def message() -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}


@pytest.fixture(params=FAULTS)
async def partner(request: pytest.FixtureRequest) -> AsyncIterator[FaultyPartner]:
    async with faulty_partner(request.param) as running:
        yield running


@pytest.fixture
async def hub(partner: FaultyPartner) -> AsyncIterator[str]:
    async with serve_hub([AgentEntry(name="faulty", url=partner.url)]) as url:
        yield url


def v03_message() -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }


CALLS = {
    "jsonrpc-1.0": ("", rpc("SendMessage", {"message": message()}), V1),
    "jsonrpc-1.0-stream": ("", rpc("SendStreamingMessage", {"message": message()}), V1),
    "jsonrpc-0.3": ("", rpc("message/send", {"message": v03_message()}), {}),
    "jsonrpc-0.3-stream": ("", rpc("message/stream", {"message": v03_message()}), {}),
    "rest": ("/message:send", {"message": message()}, V1),
    "rest-stream": ("/message:stream", {"message": message()}, V1),
}


@pytest.mark.parametrize("call", list(CALLS))
async def test_a_faulty_partner_is_named_with_the_kind_of_fault(
    hub: str,
    partner: FaultyPartner,
    call: str,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fault = str(request.node.callspec.params["partner"])
    path, body, headers = CALLS[call]
    async with httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(30):
            response = await http.post(f"{hub}/agents/faulty{path}", json=body, headers=headers)

    expected = EXPECTED[fault]
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    if call.startswith("rest"):
        assert response.status_code == expected["status"]
        error = document["error"]
        assert error["details"][0]["reason"] == expected["reason"]
        assert error["details"][0]["metadata"] == {"agent": "faulty"}
    else:
        # A 0.3 stream that cannot start carries the REST status, as the 0.3 spec asks.
        refused_03_stream = call == "jsonrpc-0.3-stream"
        assert response.status_code == (expected["status"] if refused_03_stream else 200)
        error = document["error"]
        assert error["code"] == expected["code"]
    assert error["message"].startswith(f"agent 'faulty' {KIND[fault]}"), error["message"]
    assert_nothing_leaks(response.text, partner)

    assert not [record for record in caplog.records if record.exc_info]
    details = [
        record
        for record in caplog.records
        if record.levelno == logging.WARNING and partner.interface in record.getMessage()
    ]
    assert len(details) == 1, [record.getMessage() for record in caplog.records]
