"""The hub's gate in front of the gateway: no credential, no partner; a credential scoped to
some partners sees the others as unknown; the request rate holds; and the official SDK
client authenticates from the partner card the gateway serves."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor
from a2a.client.client import Client
from a2a.types import GetTaskRequest, TaskState

from tests.interop.test_sdk_auth import StaticCredentials
from tests.interop.test_sdk_client import collect, final_task_state, user

from .conftest import OPS_KEY, SCOPED_KEY, V1, Partner, entries, serve_hub

pytestmark = pytest.mark.anyio


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}


def message() -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}


async def test_every_gateway_route_needs_a_credential(secure_hub_url: str) -> None:
    hub = secure_hub_url
    async with httpx.AsyncClient(timeout=10) as http:
        answers = [
            await http.get(f"{hub}/agents"),
            await http.get(f"{hub}/agents/one/.well-known/agent-card.json"),
            await http.get(f"{hub}/agents/one/tasks", headers=V1),
            await http.post(
                f"{hub}/agents/one/message:stream", json={"message": message()}, headers=V1
            ),
        ]
        jsonrpc = await http.post(
            f"{hub}/agents/one", json=rpc("SendMessage", {"message": message()}), headers=V1
        )
    challenge = 'ApiKey realm="a2a-hub", header="X-API-Key"'
    for answer in answers:
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == challenge
        assert answer.json()["error"]["details"][0]["reason"] == "UNAUTHENTICATED"
    assert jsonrpc.status_code == 401
    assert jsonrpc.headers["www-authenticate"] == challenge
    assert jsonrpc.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32000,
            "message": "this hub needs a credential: an API key in the X-API-Key header",
            "data": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "UNAUTHENTICATED",
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ],
        },
    }


async def test_a_scoped_credential_sees_other_partners_as_unknown(secure_hub_url: str) -> None:
    hub = secure_hub_url
    scoped = {"X-API-Key": SCOPED_KEY, **V1}
    async with httpx.AsyncClient(timeout=10, headers=scoped) as http:
        listing = (await http.get(f"{hub}/agents")).json()
        answers: dict[str, list[httpx.Response]] = {}
        for name in ("one", "zzz"):  # "one" is hidden from this credential, "zzz" unknown
            answers[name] = [
                await http.get(f"{hub}/agents/{name}/.well-known/agent-card.json"),
                await http.post(
                    f"{hub}/agents/{name}", json=rpc("SendMessage", {"message": message()})
                ),
                await http.post(f"{hub}/agents/{name}/message:send", json={"message": message()}),
            ]
        allowed = await http.post(f"{hub}/agents/old/message:send", json={"message": message()})

    assert [entry["name"] for entry in listing["agents"]] == ["old"]
    for hidden, unknown in zip(answers["one"], answers["zzz"], strict=True):
        assert hidden.status_code == unknown.status_code
        assert hidden.text.replace("'one'", "'zzz'").replace('"one"', '"zzz"') == unknown.text
    card, jsonrpc, rest = answers["one"]
    assert card.status_code == rest.status_code == 404
    assert jsonrpc.json()["error"]["code"] == -32601
    assert jsonrpc.json()["error"]["message"] == "agent 'one' is not in agents.yaml (known: old)"
    assert allowed.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_the_request_rate_holds_on_the_gateway(partners: dict[str, Partner]) -> None:
    limits = {"requests_per_second": 0.01, "burst": 1, "per_address": True}
    async with (
        serve_hub(entries(partners), limits=limits) as hub,
        httpx.AsyncClient(timeout=10) as http,
    ):
        first = await http.get(f"{hub}/agents/one/.well-known/agent-card.json")
        second = await http.post(f"{hub}/agents/one", json=rpc("GetTask", {"id": "t1"}), headers=V1)
    assert first.status_code == 200
    assert second.status_code == 429
    assert int(second.headers["retry-after"]) >= 1
    assert second.json()["error"]["data"][0]["reason"] == "RATE_LIMITED"


@asynccontextmanager
async def authenticated_sdk_client(url: str) -> AsyncIterator[Client]:
    """An SDK client built from the gateway card (read with the key), whose AuthInterceptor
    finds the hub's apiKey scheme on that card and sends the key on every call."""
    async with httpx.AsyncClient(timeout=10) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http))
        interceptor = AuthInterceptor(StaticCredentials({"apiKey": OPS_KEY}))
        client = await factory.create_from_url(
            url,
            interceptors=[interceptor],
            resolver_http_kwargs={"headers": {"X-API-Key": OPS_KEY}},
        )
        try:
            yield client
        finally:
            await client.close()


async def test_the_sdk_authenticates_from_the_gateway_card(
    secure_hub_url: str, partners: dict[str, Partner]
) -> None:
    async with authenticated_sdk_client(f"{secure_hub_url}/agents/guarded") as client:
        events = await collect(client.send_message(user("with the hub's key")))
        with anyio.fail_after(10):
            task = await client.get_task(GetTaskRequest(id=events[0].task.id))
    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "with the hub's key"
    # The partner got the token agents.yaml holds for it, never the caller's key.
    seen = partners["guarded"].recorder.requests
    assert seen
    assert all(
        headers.get("authorization") == "Bearer partner-token-2e7f0b9c4d1a" for headers in seen
    )
    assert not any("x-api-key" in headers for headers in seen)
