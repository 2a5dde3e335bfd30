"""Both official SDK lines still read the card and work with the hub: a2a-sdk 1.3.0's client
(which asks for the card with `A2A-Version: 1.0` and gets the pure 1.0 card), its card
resolver on a bare httpx client (no version: the hybrid card), and a 0.3 client, which reads
the hybrid card with the 0.3 models and calls the 0.3 interface it names."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.compat.v0_3 import types as sdk03
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState
from litestar import Litestar

from hub.app import create_app
from hub.config import ServerSettings, Settings
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.a2a_schema import v1_problems
from tests.server.conftest import hub_skills

pytestmark = pytest.mark.anyio


@pytest.fixture
async def hub_url() -> AsyncIterator[str]:
    def build(url: str) -> Litestar:
        settings = Settings(server=ServerSettings(public_url=url))
        return create_app(settings, store=MemoryTaskStore(), skills=hub_skills())

    async with serve_on_loopback(build) as url:
        yield url


def user(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
    )


async def test_the_sdk_client_reads_the_pure_10_card_and_sends_a_message(hub_url: str) -> None:
    cards: list[httpx.Response] = []

    async def keep_card(response: httpx.Response) -> None:
        if response.url.path.endswith("agent-card.json"):
            await response.aread()
            cards.append(response)

    async with httpx.AsyncClient(timeout=10, event_hooks={"response": [keep_card]}) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
        client = await factory.create_from_url(hub_url)
        with anyio.fail_after(10):
            events = [event async for event in client.send_message(user("hello"))]
        await client.close()
    [card] = cards
    assert card.request.headers["A2A-Version"] == "1.0"
    assert v1_problems("Agent Card", card.json()) == []
    assert events[0].task.status.state == TaskState.TASK_STATE_COMPLETED
    assert events[0].task.artifacts[0].parts[0].text == "hello"


async def test_the_sdk_resolver_without_a_version_reads_the_hybrid_card(hub_url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, hub_url).get_agent_card()
        raw = (await http.get(f"{hub_url}/.well-known/agent-card.json")).json()
    assert "url" in raw  # the hybrid rendering
    assert [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
    ]
    assert card.supported_interfaces[0].url == hub_url


async def test_a_03_client_reads_the_card_and_calls_its_03_interface(hub_url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        document = (await http.get(f"{hub_url}/.well-known/agent-card.json")).json()
        card = sdk03.AgentCard.model_validate(document)
        assert card.preferred_transport == "JSONRPC"
        request: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {
                "message": {
                    "kind": "message",
                    "messageId": uuid.uuid4().hex,
                    "role": "user",
                    "parts": [{"kind": "text", "text": "hello"}],
                }
            },
        }
        response = await http.post(card.url, json=request)
    task = sdk03.SendMessageSuccessResponse.model_validate(response.json()).result
    assert isinstance(task, sdk03.Task)
    assert task.status.state == sdk03.TaskState.completed
