"""`GET /agents` and the partners' cards as the gateway serves them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.a2a_schema import v1_problems

from .conftest import OPS_KEY, Partner

pytestmark = pytest.mark.anyio

CARD_NAMES = {
    "one": "sdk-jsonrpc-1.0",
    "old": "sdk-jsonrpc-0.3",
    "rest": "sdk-http+json-1.0",
    "guarded": "sdk-jsonrpc-1.0",
}


def gateway_card(hub: str, name: str, *, security: dict[str, Any] | None = None) -> dict[str, Any]:
    """The card of the SDK partner `name` as the gateway must serve it: the hub's interfaces
    at `/agents/{name}` (1.0 and its 0.3 reading), no push, the hub's security (if any)."""
    url = f"{hub}/agents/{name}"
    return {
        "name": CARD_NAMES[name],
        "description": "a2a-sdk partner for the client tests",
        "version": "1.0.0",
        "capabilities": {"streaming": True, "pushNotifications": False, "extendedAgentCard": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}],
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        # The same document read as a 0.3 card.
        "url": url,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "supportsAuthenticatedExtendedCard": False,
        **(security or {}),
    }


async def test_listing_names_every_partner_with_its_gateway_url_and_card(
    hub_url: str, partners: dict[str, Partner]
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{hub_url}/agents")
    assert response.status_code == 200
    listing = response.json()
    down = listing["agents"].pop()
    assert listing == {
        "agents": [
            {"name": name, "url": f"{hub_url}/agents/{name}", "card": gateway_card(hub_url, name)}
            for name in ("one", "old", "rest", "guarded")
        ]
    }
    message = down["error"].pop("message")
    assert down == {
        "name": "down",
        "url": f"{hub_url}/agents/down",
        "error": {"code": -32603, "reason": "PARTNER_UNAVAILABLE"},
    }
    assert "'down'" in message
    assert "127.0.0.1" not in message  # the partner's address stays in the hub's log


@pytest.mark.parametrize("name", ["one", "old", "rest"])
async def test_a_partner_card_points_at_the_hub_on_both_card_paths(hub_url: str, name: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        new = await http.get(f"{hub_url}/agents/{name}/.well-known/agent-card.json")
        old = await http.get(f"{hub_url}/agents/{name}/.well-known/agent.json")
        again = await http.get(
            f"{hub_url}/agents/{name}/.well-known/agent-card.json",
            headers={"If-None-Match": new.headers["etag"]},
        )
    assert new.status_code == 200
    assert new.json() == gateway_card(hub_url, name)
    assert old.content == new.content
    assert new.headers["cache-control"] == "public, max-age=300"
    assert (again.status_code, again.content) == (304, b"")


@pytest.mark.parametrize("name", ["one", "old"])
async def test_a_10_client_gets_a_partners_card_as_a_pure_10_card(hub_url: str, name: str) -> None:
    path = f"{hub_url}/agents/{name}/.well-known/agent-card.json"
    async with httpx.AsyncClient(timeout=10) as http:
        pure = await http.get(path, headers={"A2A-Version": "1.0"})
        hybrid = await http.get(path)
        again = await http.get(
            path, headers={"A2A-Version": "1.0", "If-Modified-Since": pure.headers["last-modified"]}
        )
    expected = gateway_card(hub_url, name)
    for field in (
        "url",
        "preferredTransport",
        "protocolVersion",
        "supportsAuthenticatedExtendedCard",
    ):
        del expected[field]
    assert pure.json() == expected
    assert v1_problems("Agent Card", pure.json()) == []
    assert pure.headers["vary"] == "A2A-Version"
    assert pure.headers["etag"] != hybrid.headers["etag"]
    assert (again.status_code, again.content) == (304, b"")


async def test_a_partner_card_carries_the_hubs_security_not_the_partners(
    secure_hub_url: str,
) -> None:
    key = {"X-API-Key": OPS_KEY}
    async with httpx.AsyncClient(timeout=10) as http:
        hub_card = (await http.get(f"{secure_hub_url}/.well-known/agent-card.json")).json()
        response = await http.get(
            f"{secure_hub_url}/agents/guarded/.well-known/agent-card.json", headers=key
        )
    security = {
        key: hub_card[key] for key in ("securitySchemes", "securityRequirements", "security")
    }
    assert security["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"] == "X-API-Key"
    assert response.json() == gateway_card(secure_hub_url, "guarded", security=security)
    assert response.headers["cache-control"] == "private, max-age=300"


async def test_an_unknown_partner_is_404_naming_the_known_ones(hub_url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{hub_url}/agents/nobody/.well-known/agent-card.json")
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "agent 'nobody' is not in agents.yaml "
            "(known: one, old, rest, guarded, down)",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "PARTNER_NOT_FOUND",
                    "domain": "a2a-protocol.org",
                    "metadata": {"agent": "nobody"},
                }
            ],
        }
    }
