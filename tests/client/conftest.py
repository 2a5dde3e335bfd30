from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from hub.client import build_http_client
from hub.testing import serve_on_loopback
from tests.client import partners

PARTNERS = {
    "sdk-jsonrpc-1.0": partners.sdk_jsonrpc,
    "sdk-rest-1.0": partners.sdk_rest,
    "sdk-jsonrpc-0.3": partners.sdk_v03,
}


@pytest.fixture(params=[*PARTNERS, "sdk-grpc-1.0", "hub", "hub-grpc"])
async def partner_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A real partner on a loopback socket: the a2a-sdk in four shapes (the last over gRPC
    only), or the hub (the last one with its gRPC door on, which `binding` chooses)."""
    if request.param == "sdk-grpc-1.0":
        async with partners.sdk_grpc() as agent:
            yield agent.url
        return
    if request.param == "hub-grpc":
        async with partners.hub_grpc_partner() as hub:
            yield hub.url
        return
    build = partners.hub_partner(tmp_path) if request.param == "hub" else PARTNERS[request.param]
    async with serve_on_loopback(build) as url:
        yield url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """The client the hub uses in production (httpx on the aiohttp transport)."""
    async with build_http_client() as client:
        yield client


@pytest.fixture
def binding(request: pytest.FixtureRequest) -> str | None:
    """The binding the client chooses for the partner: gRPC for the hub with its door on (its
    card lists JSON-RPC first), the card's first one otherwise."""
    return "grpc" if request.node.callspec.params["partner_url"] == "hub-grpc" else None
