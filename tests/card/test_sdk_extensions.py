"""a2a-sdk 1.3.0 as the client of a hub that requires an extension: it activates it through
its service parameters, on each of the hub's three interfaces, and without it gets the
SDK's own ExtensionSupportRequiredError."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import ExtensionSupportRequiredError
from google.protobuf.struct_pb2 import Struct
from litestar import Litestar

from hub.app import create_app
from hub.config import CardSettings, ServerSettings, Settings
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

from .test_extensions import TRACE, skills

pytestmark = pytest.mark.anyio

BINDINGS = {
    "jsonrpc-1.0": (TransportProtocol.JSONRPC, "1.0"),
    "rest-1.0": (TransportProtocol.HTTP_JSON, "1.0"),
    "jsonrpc-0.3": (TransportProtocol.JSONRPC, "0.3"),
}


@pytest.fixture
async def hub_url() -> AsyncIterator[str]:
    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            card=CardSettings.model_validate({"extensions": [{"uri": TRACE, "required": True}]}),
        )
        return create_app(settings, store=MemoryTaskStore(), skills=skills())

    async with serve_on_loopback(build) as url:
        yield url


async def client_for(http: httpx.AsyncClient, url: str, binding: str) -> Client:
    transport, version = BINDINGS[binding]
    factory = ClientFactory(
        ClientConfig(httpx_client=http, streaming=False, supported_protocol_bindings=[transport])
    )
    card = (await factory.create_from_url(url))._card
    keep = [
        i
        for i in card.supported_interfaces
        if i.protocol_version == version and i.protocol_binding == transport
    ]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(keep)
    return factory.create(card)


def request() -> SendMessageRequest:
    metadata = Struct()
    metadata.update({"skill": "extensions"})
    return SendMessageRequest(
        message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text="x")]),
        metadata=metadata,
    )


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    with anyio.fail_after(10):
        return [event async for event in events]


@pytest.mark.parametrize("binding", list(BINDINGS))
async def test_the_sdk_client_activates_a_required_extension(hub_url: str, binding: str) -> None:
    context = ClientCallContext(
        service_parameters=ServiceParametersFactory.create([with_a2a_extensions([TRACE])])
    )
    async with httpx.AsyncClient(timeout=10) as http:
        client = await client_for(http, hub_url, binding)
        events = await collect(client.send_message(request(), context=context))
        await client.close()
    assert events[0].task.artifacts[0].parts[0].text == TRACE


@pytest.mark.parametrize("binding", ["jsonrpc-1.0", "rest-1.0"])
async def test_without_it_the_sdk_client_gets_extension_support_required(
    hub_url: str, binding: str
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        client = await client_for(http, hub_url, binding)
        with pytest.raises(ExtensionSupportRequiredError):
            await collect(client.send_message(request()))
        await client.close()
