"""The official a2a-sdk's gRPC client, made from a card the way the SDK's own factory does:
the card read over HTTP, its `GRPC` interface chosen (with that interface's tenant), a
plaintext channel to its `host:port`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types import a2a_pb2_grpc
from a2a.utils.constants import TransportProtocol


@asynccontextmanager
async def grpc_client(card_url: str, *, streaming: bool = True) -> AsyncIterator[Client]:
    """An SDK client that speaks only gRPC, to the agent whose card is at `card_url`."""
    async with httpx.AsyncClient(timeout=10) as http:
        factory = ClientFactory(
            ClientConfig(
                httpx_client=http,
                streaming=streaming,
                supported_protocol_bindings=[TransportProtocol.GRPC],
                grpc_channel_factory=grpc.aio.insecure_channel,
            )
        )
        client = await factory.create_from_url(card_url)
        try:
            yield client
        finally:
            await client.close()


@asynccontextmanager
async def raw_stub(address: str) -> AsyncIterator[a2a_pb2_grpc.A2AServiceStub]:
    """The SDK's generated stub on a channel to `address`, for what its client hides: the
    status code, the trailers, the metadata sent."""
    async with grpc.aio.insecure_channel(address) as channel:
        yield a2a_pb2_grpc.A2AServiceStub(channel)
