"""GetTask through the gateway to a 0.3 partner that, like `@a2a-js/sdk` 0.3.13, sends no
history unless `historyLength` is given: a 1.0 caller that leaves it unset gets the whole
history (the hub's default for unset), one that sets it gets what it asked for, and a 0.3
caller's request goes on as it was sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.registry import load_registry
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.raw_asgi import read_request

pytestmark = pytest.mark.anyio

_HISTORY = [
    {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    },
    {
        "kind": "message",
        "messageId": "m-2",
        "role": "agent",
        "parts": [{"kind": "text", "text": "hello"}],
    },
]


class JsSdkLikePartner:
    """A 0.3 JSON-RPC partner whose `tasks/get` leaves the history out unless the request
    gives `historyLength` (then it keeps that many of the latest). It records each
    `tasks/get` params."""

    def __init__(self) -> None:
        self.url = ""
        self.queries: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await read_request(scope, receive, send)
        if body is None:
            return
        if scope["method"] == "GET":
            await _send(send, _card(self.url))
            return
        call = json.loads(body)
        params = call.get("params") or {}
        self.queries.append(params)
        task: dict[str, Any] = {
            "kind": "task",
            "id": params.get("id", "t-1"),
            "contextId": "c-1",
            "status": {"state": "completed"},
        }
        length = params.get("historyLength")
        if length is not None:
            task["history"] = _HISTORY[-length:] if length > 0 else []
        await _send(send, {"jsonrpc": "2.0", "id": call["id"], "result": task})


def _card(url: str) -> dict[str, Any]:
    return {
        "protocolVersion": "0.3.0",
        "name": "js-like",
        "description": "answers tasks/get as @a2a-js/sdk 0.3.13 does",
        "url": url,
        "preferredTransport": "JSONRPC",
        "version": "0.3.13",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "chat", "name": "chat", "description": "chat", "tags": []}],
    }


async def _send(send: Any, document: Any) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(document).encode()})


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[tuple[str, JsSdkLikePartner]]:
    partner = JsSdkLikePartner()

    def partner_app(url: str) -> JsSdkLikePartner:
        partner.url = url
        return partner

    async with serve_on_loopback(partner_app) as partner_url:
        agents = tmp_path / "agents.yaml"
        agents.write_text(f"version: 1\nagents:\n  - name: js\n    url: {partner_url}\n")
        registry = load_registry(agents)

        def build(url: str) -> Litestar:
            settings = Settings(
                server=ServerSettings(public_url=url), store=StoreSettings(kind="memory")
            )
            return create_app(
                settings,
                store=MemoryTaskStore(),
                skills={"echo": echo},
                partners=Partners(registry),
            )

        async with serve_on_loopback(build) as url:
            yield url, partner


async def _get(url: str, params: dict[str, Any], *, version: str) -> dict[str, Any]:
    method = "GetTask" if version == "1.0" else "tasks/get"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"A2A-Version": version} if version == "1.0" else {}
    async with httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(30):
            response = await http.post(f"{url}/agents/js", json=body, headers=headers)
    document: dict[str, Any] = response.json()
    assert "result" in document, document
    result: dict[str, Any] = document["result"]
    return result


async def test_a_1_0_get_task_without_history_length_gets_the_whole_history(
    gateway: tuple[str, JsSdkLikePartner],
) -> None:
    url, partner = gateway

    task = await _get(url, {"id": "t-1"}, version="1.0")

    assert [message["messageId"] for message in task["history"]] == ["m-1", "m-2"]
    assert partner.queries[-1]["historyLength"] > len(_HISTORY)


async def test_a_1_0_get_task_with_history_length_gets_what_it_asked_for(
    gateway: tuple[str, JsSdkLikePartner],
) -> None:
    url, partner = gateway

    task = await _get(url, {"id": "t-1", "historyLength": 1}, version="1.0")

    assert [message["messageId"] for message in task["history"]] == ["m-2"]
    assert partner.queries[-1]["historyLength"] == 1


async def test_a_0_3_get_task_goes_on_as_it_was_sent(
    gateway: tuple[str, JsSdkLikePartner],
) -> None:
    url, partner = gateway

    task = await _get(url, {"id": "t-1"}, version="0.3")

    assert "history" not in task
    assert "historyLength" not in partner.queries[-1]
