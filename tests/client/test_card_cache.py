"""CardCache over a real socket: TTL, conditional GETs, one fetch per URL, stale on failure."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from hub.client import CARD_PATH, CardCache, RetryPolicy, card_url
from hub.errors import CardFetchError
from hub.protocol import AgentCard
from hub.testing import serve_on_loopback
from tests.client.scripted import Call, Receive, ScriptedAgent, Send, card_document, respond

pytestmark = pytest.mark.anyio

CARD_KEY = f"GET {CARD_PATH}"
NO_RETRY = RetryPolicy(attempts=1)


class Clock:
    """Monotonic time the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CardServer:
    """Serves `document` with an ETag, answering 304 to a matching If-None-Match."""

    def __init__(self, document: dict[str, Any], *, max_age: int = 60) -> None:
        self.document = document
        self.max_age = max_age
        self.not_modified = 0
        self.gate: anyio.Event | None = None

    async def __call__(self, call: Call, receive: Receive, send: Send) -> None:
        if self.gate is not None:
            await self.gate.wait()
        body = json.dumps(self.document).encode()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        headers = [("etag", etag), ("cache-control", f"public, max-age={self.max_age}")]
        if call.headers.get("if-none-match") == etag:
            self.not_modified += 1
            await respond(304, b"", headers=headers)(call, receive, send)
            return
        await respond(200, body, headers=headers)(call, receive, send)


@pytest.fixture
async def served() -> AsyncIterator[tuple[ScriptedAgent, str]]:
    scripted = ScriptedAgent()
    async with serve_on_loopback(scripted) as url:
        yield scripted, url


async def test_a_fresh_card_is_served_from_the_cache(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    scripted.routes[CARD_KEY] = CardServer(card_document(url))
    clock = Clock()
    cache = CardCache(http, clock=clock)

    with anyio.fail_after(5):
        first = await cache.get(card_url(url))
        clock.now += 59
        second = await cache.get(card_url(url))

    assert first is second
    assert scripted.calls[CARD_KEY] == 1


async def test_an_expired_card_is_revalidated_with_its_etag(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    server = CardServer(card_document(url))
    scripted.routes[CARD_KEY] = server
    clock = Clock()
    cache = CardCache(http, clock=clock)

    with anyio.fail_after(5):
        first = await cache.get(card_url(url))
        clock.now += 61
        second = await cache.get(card_url(url))
        third = await cache.get(card_url(url))

    assert first is second is third
    assert (scripted.calls[CARD_KEY], server.not_modified) == (2, 1)


async def test_a_hundred_callers_on_a_cold_cache_cause_one_get(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    server = CardServer(card_document(url))
    server.gate = anyio.Event()
    scripted.routes[CARD_KEY] = server
    cache = CardCache(http)
    cards: list[AgentCard] = []

    async def caller() -> None:
        cards.append(await cache.get(card_url(url)))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for _ in range(100):
                group.start_soon(caller)
            while scripted.calls[CARD_KEY] == 0:
                await anyio.lowlevel.checkpoint()
            server.gate.set()

    assert len(cards) == 100
    assert all(card is cards[0] for card in cards)
    assert scripted.calls[CARD_KEY] == 1


async def test_a_failing_card_endpoint_serves_the_stale_card_with_a_warning(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    scripted, url = served
    scripted.routes[CARD_KEY] = CardServer(card_document(url))
    clock = Clock()
    cache = CardCache(http, clock=clock, grace=600, retry=NO_RETRY)

    with anyio.fail_after(5):
        good = await cache.get(card_url(url))
        scripted.routes[CARD_KEY] = respond(500, b"<h1>down</h1>", "text/html")
        clock.now += 120
        with caplog.at_level(logging.WARNING, logger="hub.client.card_cache"):
            stale = await cache.get(card_url(url))

    assert stale is good
    assert "serving the cached card" in caplog.text


async def test_past_the_grace_window_a_failing_card_endpoint_is_an_error(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    scripted.routes[CARD_KEY] = CardServer(card_document(url))
    clock = Clock()
    cache = CardCache(http, clock=clock, grace=600, retry=NO_RETRY)

    with anyio.fail_after(5):
        await cache.get(card_url(url))
        scripted.routes[CARD_KEY] = respond(500, b"down", "text/plain")
        clock.now += 60 + 601
        with pytest.raises(CardFetchError):
            await cache.get(card_url(url))


async def test_a_changed_card_notifies_subscribers(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    server = CardServer(card_document(url, version="1.0.0"))
    scripted.routes[CARD_KEY] = server
    cache = CardCache(http)
    changes: list[tuple[str, str]] = []
    cache.subscribe(lambda where, card: changes.append((where, card.version)))

    with anyio.fail_after(5):
        await cache.get(card_url(url))
        await cache.refresh(card_url(url))  # unchanged: a 304, no notification
        server.document = card_document(url, version="2.0.0")
        changed = await cache.refresh(card_url(url))

    assert changed.version == "2.0.0"
    assert changes == [(card_url(url), "2.0.0")]
    assert server.not_modified == 1


async def test_the_record_keeps_the_last_fetch_time_and_the_card_a_change_replaced(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    server = CardServer(card_document(url, version="1.0.0"))
    scripted.routes[CARD_KEY] = server
    wall = Clock()
    cache = CardCache(http, wall=wall)
    where = card_url(url)
    assert cache.record(where) is None

    with anyio.fail_after(5):
        await cache.get(where)
        first = cache.record(where)
        wall.now += 30
        await cache.refresh(where)  # a 304: fetched again, nothing changed
        revalidated = cache.record(where)
        wall.now += 30
        server.document = card_document(url, version="2.0.0")
        await cache.refresh(where)
        changed = cache.record(where)
        wall.now += 30
        await cache.refresh(where)  # unchanged since: the last change stays known
        later = cache.record(where)

    assert first is not None
    assert revalidated is not None
    assert changed is not None
    assert later is not None
    assert (first.fetched_at, first.previous, first.changed_at) == (1000.0, None, None)
    assert (revalidated.fetched_at, revalidated.previous) == (1030.0, None)
    assert changed.card.version == "2.0.0"
    assert changed.previous is not None
    assert changed.previous.version == "1.0.0"
    assert (changed.fetched_at, changed.changed_at) == (1060.0, 1060.0)
    assert later.previous is not None
    assert later.previous.version == "1.0.0"
    assert (later.fetched_at, later.changed_at) == (1090.0, 1060.0)
    assert server.not_modified == 2


async def test_an_invalid_card_is_never_cached(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    broken = card_document(url)
    del broken["supportedInterfaces"]  # neither a 1.0 card nor (without `url`) a 0.3 one
    scripted.routes[CARD_KEY] = CardServer(broken)
    cache = CardCache(http, retry=NO_RETRY)

    with anyio.fail_after(5):
        with pytest.raises(CardFetchError):
            await cache.get(card_url(url))
        assert cache.cached(card_url(url)) is None
        scripted.routes[CARD_KEY] = CardServer(card_document(url))
        card = await cache.get(card_url(url))

    assert card.name == "scripted"
    assert scripted.calls[CARD_KEY] == 2


async def test_a_0_3_card_is_upgraded_on_read(
    served: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = served
    legacy = {
        "protocolVersion": "0.3.0",
        "name": "legacy",
        "description": "a 0.3 agent",
        "url": url + "/",
        "preferredTransport": "JSONRPC",
        "version": "1.0.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    scripted.routes[CARD_KEY] = CardServer(legacy)

    with anyio.fail_after(5):
        card = await CardCache(http).get(card_url(url))

    interface = card.supported_interfaces[0]
    assert (interface.url, interface.protocol_binding) == (url + "/", "JSONRPC")
    assert interface.protocol_version.startswith("0.3")


def test_card_url_accepts_a_base_url_or_the_card_url() -> None:
    assert card_url("http://a.example/") == "http://a.example" + CARD_PATH
    assert card_url("http://a.example/cards/x.json") == "http://a.example/cards/x.json"
