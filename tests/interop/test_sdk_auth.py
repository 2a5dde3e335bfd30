"""The official a2a-sdk client against a hub with authentication on: it reads the public card,
its own `AuthInterceptor` finds the API key scheme there and sends the key, over 1.0 JSON-RPC,
1.0 HTTP+JSON and 0.3 JSON-RPC; without the key it is refused."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.client.client import Client
from a2a.client.errors import A2AClientError
from a2a.types import (
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)

from hub.config import (
    AuthSettings,
    CardSettings,
    CredentialSettings,
    Settings,
)
from hub.testing import serve_hub

from .conftest import interview
from .test_sdk_client import BINDINGS, collect, final_task_state

pytestmark = pytest.mark.anyio

OPS_KEY = "ops-api-key-5c7e9a1b3d"


class StaticCredentials(CredentialService):
    """The credential for each scheme name of the card, whatever the call."""

    def __init__(self, by_scheme: dict[str, str]) -> None:
        self._by_scheme = by_scheme

    async def get_credentials(
        self, security_scheme_name: str, context: ClientCallContext | None
    ) -> str | None:
        return self._by_scheme.get(security_scheme_name)


@pytest.fixture
async def hub_url() -> AsyncIterator[str]:
    from hub.skills.echo import echo

    settings = Settings(
        auth=AuthSettings(
            enabled=True, credentials=(CredentialSettings(name="ops", api_key=OPS_KEY),)
        ),
        card=CardSettings(extended_card=True),
    )
    async with serve_hub(skills=[echo, interview], settings=settings) as hub:
        yield hub.url


@asynccontextmanager
async def sdk_client(url: str, binding: str, key: str | None) -> AsyncIterator[Client]:
    """An SDK client for exactly `binding`, built from the hub's public card, with the SDK's
    AuthInterceptor holding `key` for the card's `apiKey` scheme."""
    bindings, version = BINDINGS[binding]
    async with httpx.AsyncClient(timeout=10) as http:
        factory = ClientFactory(
            ClientConfig(httpx_client=http, supported_protocol_bindings=list(bindings))
        )
        probe = await factory.create_from_url(url)  # the public card needs no credential
        card = probe._card
        keep = [
            i
            for i in card.supported_interfaces
            if i.protocol_version == version and i.protocol_binding in bindings
        ]
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
        credentials = StaticCredentials({"apiKey": key} if key else {})
        client = factory.create(card, [AuthInterceptor(credentials)])
        try:
            yield client
        finally:
            await client.close()


def user(text: str) -> SendMessageRequest:
    message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
    return SendMessageRequest(message=message)


@pytest.fixture(params=list(BINDINGS))
def binding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_the_sdk_sends_the_api_key_the_card_asks_for(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding, OPS_KEY) as client:
        card = client._card
        assert card.security_schemes["apiKey"].api_key_security_scheme.name == "X-API-Key"
        events = await collect(client.send_message(user("with a key")))
        assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
        task = await client.get_task(GetTaskRequest(id=events[0].task.id))
    assert task.artifacts[0].parts[0].text == "with a key"


async def test_the_sdk_without_the_key_is_refused(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding, None) as client:
        with anyio.fail_after(10), pytest.raises(A2AClientError, match="401"):
            await collect(client.send_message(user("no key")))


async def test_the_sdk_reads_the_extended_card_with_the_key(hub_url: str) -> None:
    async with sdk_client(hub_url, "jsonrpc-1.0", OPS_KEY) as client:
        extended = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert [skill.id for skill in extended.skills] == ["echo", "interview"]
