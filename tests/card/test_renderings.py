"""The card in two renderings: pure 1.0 for clients that ask for 1.0, hybrid 1.0 + 0.3 for
the others; each with its own ETag, `Vary: A2A-Version`, and `Last-Modified`."""

from __future__ import annotations

from email.utils import format_datetime, parsedate_to_datetime

import httpx
import pytest
from a2a.compat.v0_3 import types as sdk03

from hub.config import CardSettings, Settings
from tests.a2a_schema import v1_problems
from tests.server.auth_hub import auth_settings

from .conftest import card_hub

pytestmark = pytest.mark.anyio

CARD = "/.well-known/agent-card.json"
V03_FIELDS = {
    "url",
    "preferredTransport",
    "protocolVersion",
    "additionalInterfaces",
    "security",
    "supportsAuthenticatedExtendedCard",
}


def full_settings(**card: object) -> Settings:
    """A hub whose card has every part the hub can fill: security schemes (auth on), the
    extended card, a provider and links."""
    return auth_settings(
        card=CardSettings.model_validate(
            {
                "extended_card": True,
                "provider": {"organization": "Example", "url": "https://example.com"},
                "documentation_url": "https://example.com/docs",
                "icon_url": "https://example.com/icon.png",
                **card,
            }
        )
    )


@pytest.mark.parametrize("version", ["1.0", "1.0.2", "1.1"])
async def test_a_10_client_gets_a_card_that_validates_against_the_10_schema(
    version: str,
) -> None:
    async with card_hub(full_settings()) as http:
        response = await http.get(CARD, headers={"A2A-Version": version})
    assert response.status_code == 200
    card = response.json()
    assert v1_problems("Agent Card", card) == []
    assert not V03_FIELDS & card.keys()
    assert all("type" not in scheme for scheme in card["securitySchemes"].values())
    assert {(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]} == {
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
    }


async def test_the_version_may_be_asked_for_as_a_query_parameter() -> None:
    async with card_hub(full_settings()) as http:
        response = await http.get(CARD + "?A2A-Version=1.0")
    assert v1_problems("Agent Card", response.json()) == []


@pytest.mark.parametrize("headers", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "banana"}])
async def test_other_requests_get_the_hybrid_card_a_03_client_reads(
    headers: dict[str, str],
) -> None:
    async with card_hub(full_settings()) as http:
        hybrid = (await http.get(CARD, headers=headers)).json()
        pure = (await http.get(CARD, headers={"A2A-Version": "1.0"})).json()
    assert hybrid["url"] == "http://127.0.0.1:8000"
    assert hybrid["protocolVersion"] == "0.3"
    assert hybrid["supportsAuthenticatedExtendedCard"] is True
    # The 0.3 fields are what sets the two apart: the hybrid card is not a pure 1.0 card.
    assert v1_problems("Agent Card", hybrid) != []
    assert {key: hybrid[key] for key in pure if key not in ("securitySchemes", "skills")} == {
        key: value for key, value in pure.items() if key not in ("securitySchemes", "skills")
    }
    legacy = sdk03.AgentCard.model_validate(hybrid)
    assert legacy.url == "http://127.0.0.1:8000"
    assert legacy.preferred_transport == "JSONRPC"
    assert set(legacy.security_schemes or {}) == {"apiKey", "bearer"}


async def test_each_rendering_has_its_own_etag_and_the_answer_varies_with_the_version() -> None:
    async with card_hub(full_settings()) as http:
        pure = await http.get(CARD, headers={"A2A-Version": "1.0"})
        hybrid = await http.get(CARD)
        assert pure.headers["etag"] != hybrid.headers["etag"]
        assert pure.headers["vary"] == hybrid.headers["vary"] == "A2A-Version"
        assert pure.headers["last-modified"] == hybrid.headers["last-modified"]

        same = await http.get(
            CARD, headers={"A2A-Version": "1.0", "If-None-Match": pure.headers["etag"]}
        )
        assert same.status_code == 304
        assert same.content == b""
        assert same.headers["etag"] == pure.headers["etag"]
        assert same.headers["vary"] == "A2A-Version"
        assert same.headers["last-modified"] == pure.headers["last-modified"]

        # The hybrid card's tag does not stand for the pure card.
        other = await http.get(
            CARD, headers={"A2A-Version": "1.0", "If-None-Match": hybrid.headers["etag"]}
        )
        assert other.status_code == 200
        assert other.json() == pure.json()
        legacy = await http.get(CARD, headers={"If-None-Match": hybrid.headers["etag"]})
        assert legacy.status_code == 304


async def test_if_modified_since_is_answered_with_304_when_the_card_is_not_newer() -> None:
    async with card_hub(full_settings()) as http:
        first = await http.get(CARD, headers={"A2A-Version": "1.0"})
        stamp = parsedate_to_datetime(first.headers["last-modified"])
        assert first.headers["cache-control"] == "public, max-age=300"

        async def since(value: str, **headers: str) -> httpx.Response:
            return await http.get(
                CARD, headers={"A2A-Version": "1.0", "If-Modified-Since": value, **headers}
            )

        unchanged = await since(first.headers["last-modified"])
        assert unchanged.status_code == 304
        assert unchanged.headers["etag"] == first.headers["etag"]
        later = await since(format_datetime(stamp.replace(year=stamp.year + 1), usegmt=True))
        assert later.status_code == 304
        earlier = await since(format_datetime(stamp.replace(year=stamp.year - 1), usegmt=True))
        assert earlier.status_code == 200
        assert earlier.json() == first.json()
        assert (await since("not a date")).status_code == 200
        # If-None-Match decides when both are sent (RFC 9110 §13.2.2).
        assert (
            await since(first.headers["last-modified"], **{"If-None-Match": '"x"'})
        ).status_code == 200


async def test_with_hybrid_off_every_request_gets_the_pure_10_card() -> None:
    async with card_hub(full_settings(hybrid=False)) as http:
        bare = await http.get(CARD)
        legacy = await http.get("/.well-known/agent.json", headers={"A2A-Version": "0.3"})
        pure = await http.get(CARD, headers={"A2A-Version": "1.0"})
    assert bare.json() == legacy.json() == pure.json()
    assert v1_problems("Agent Card", bare.json()) == []
    assert bare.headers["etag"] == pure.headers["etag"]
    assert "vary" not in bare.headers  # the answer no longer depends on the version
