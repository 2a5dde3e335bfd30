"""The agent card: hybrid 1.0 + 0.3 fields, caching headers, start-up checks."""

from __future__ import annotations

import httpx
import pytest

from hub.app import create_app
from hub.config import CardSettings, Settings
from hub.errors import CardMismatchError, ConfigError
from hub.server.card import ServedFeatures, build_card, check_card
from hub.store import MemoryTaskStore

from .conftest import hub_skills

pytestmark = pytest.mark.anyio


async def test_card_is_hybrid_and_lists_every_served_interface(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    card = response.json()
    interfaces = {(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]}
    assert interfaces == {("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")}
    assert card["protocolVersion"] == "0.3"
    assert card["url"] == "http://127.0.0.1:8000"
    assert card["preferredTransport"] == "JSONRPC"
    assert {skill["id"] for skill in card["skills"]} == {"echo", "interview"}
    assert card["capabilities"]["streaming"] is True
    legacy = await client.get("/.well-known/agent.json")
    assert legacy.json() == card


async def test_card_answers_304_to_a_matching_etag(client: httpx.AsyncClient) -> None:
    first = await client.get("/.well-known/agent-card.json")
    etag = first.headers["etag"]
    assert "max-age=" in first.headers["cache-control"]
    again = await client.get("/.well-known/agent-card.json", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    other = await client.get("/.well-known/agent-card.json", headers={"If-None-Match": '"x"'})
    assert other.status_code == 200


def test_a_card_promising_push_notifications_the_server_lacks_is_refused() -> None:
    settings = Settings(card=CardSettings(push_notifications=True))
    card = build_card(settings, [skill.card for skill in hub_skills().values()])
    with pytest.raises(CardMismatchError):
        check_card(card, ServedFeatures(push_notifications=False))
    check_card(card, ServedFeatures(push_notifications=True))


async def test_the_card_advertises_push_notifications_by_default(
    client: httpx.AsyncClient,
) -> None:
    card = (await client.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["pushNotifications"] is True


def test_a_default_skill_that_is_not_configured_is_a_start_up_error() -> None:
    with pytest.raises(ConfigError):
        create_app(Settings(default_skill="missing"), store=MemoryTaskStore(), skills=hub_skills())
