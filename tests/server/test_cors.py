"""CORS: the allowlist from the settings, preflights answered before authentication, the
public card readable from any origin, and refusals a browser page can read."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from hub.app import create_app
from hub.config import CorsSettings, Settings
from hub.store import MemoryTaskStore
from tests.server.auth_hub import ALICE, auth_settings, auth_skills, serve_in_process

pytestmark = pytest.mark.anyio

APP = "https://app.example.com"
EVIL = "https://evil.example.net"
V1 = {"A2A-Version": "1.0"}


def preflight(origin: str, method: str = "POST", headers: str = "") -> dict[str, str]:
    asked = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        asked["Access-Control-Request-Headers"] = headers
    return asked


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    settings = auth_settings(cors=CorsSettings(allow_origins=(APP,), max_age=120))
    async with serve_in_process(settings) as client:
        yield client


@pytest.mark.parametrize("path", ["/", "/message:send", "/tasks/t1:cancel", "/tasks"])
async def test_a_preflight_from_an_allowed_origin_is_answered_without_a_credential(
    http: httpx.AsyncClient, path: str
) -> None:
    answer = await http.options(
        path, headers=preflight(APP, headers="authorization, x-api-key, a2a-version, content-type")
    )
    assert answer.status_code == 204
    assert answer.headers["access-control-allow-origin"] == APP
    assert answer.headers["access-control-allow-methods"] == "GET, POST, DELETE, OPTIONS"
    assert answer.headers["access-control-allow-headers"] == (
        "authorization, x-api-key, a2a-version, content-type"
    )
    assert answer.headers["access-control-max-age"] == "120"
    assert answer.headers["vary"] == "Origin"


async def test_a_preflight_from_another_origin_is_refused_in_the_status_shape(
    http: httpx.AsyncClient,
) -> None:
    answer = await http.options("/message:send", headers=preflight(EVIL))
    assert answer.status_code == 403
    assert "access-control-allow-origin" not in answer.headers
    error = answer.json()["error"]
    assert (error["status"], error["details"][0]["reason"]) == (
        "PERMISSION_DENIED",
        "CORS_ORIGIN_NOT_ALLOWED",
    )


async def test_an_allowed_page_can_read_answers_and_the_headers_of_a_refusal(
    http: httpx.AsyncClient,
) -> None:
    refused = await http.get("/tasks", headers={**V1, "Origin": APP})
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == APP
    exposed = refused.headers["access-control-expose-headers"]
    assert "WWW-Authenticate" in exposed
    assert "Retry-After" in exposed
    listed = await http.get("/tasks", headers={**V1, **ALICE.headers, "Origin": APP})
    assert listed.status_code == 200
    assert listed.headers["access-control-allow-origin"] == APP
    assert listed.headers["vary"] == "Origin"
    rpc = await http.post(
        "/",
        json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}},
        headers={**V1, **ALICE.headers, "Origin": APP},
    )
    assert rpc.headers["access-control-allow-origin"] == APP


async def test_a_page_from_another_origin_gets_no_cors_headers(http: httpx.AsyncClient) -> None:
    answer = await http.get("/tasks", headers={**V1, **ALICE.headers, "Origin": EVIL})
    assert "access-control-allow-origin" not in answer.headers


@pytest.mark.parametrize("origin", [APP, EVIL, "null"])
async def test_the_card_is_readable_from_any_origin_preflight_included(
    http: httpx.AsyncClient, origin: str
) -> None:
    for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        card = await http.get(path, headers={"Origin": origin})
        assert card.status_code == 200
        assert card.headers["access-control-allow-origin"] == "*"
        assert "ETag" in card.headers["access-control-expose-headers"]
        asked = await http.options(path, headers=preflight(origin, "GET", "if-none-match"))
        assert asked.status_code == 204
        assert asked.headers["access-control-allow-origin"] == "*"
        assert asked.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
        assert asked.headers["access-control-allow-headers"] == "if-none-match"


async def test_with_no_allowlist_only_the_card_is_open_to_pages() -> None:
    app = create_app(Settings(), store=MemoryTaskStore(), skills=auth_skills())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
        card = await http.get("/.well-known/agent-card.json", headers={"Origin": APP})
        api = await http.options("/message:send", headers=preflight(APP))
    assert card.headers["access-control-allow-origin"] == "*"
    assert api.status_code == 403


async def test_a_star_lets_every_origin_in() -> None:
    settings = auth_settings(cors=CorsSettings(allow_origins=("*",)))
    async with serve_in_process(settings) as http:
        answer = await http.options("/", headers=preflight(EVIL))
        listed = await http.get("/tasks", headers={**V1, **ALICE.headers, "Origin": EVIL})
    assert answer.status_code == 204
    assert answer.headers["access-control-allow-origin"] == EVIL
    assert listed.headers["access-control-allow-origin"] == EVIL


async def test_an_options_request_that_is_no_preflight_goes_to_the_route(
    http: httpx.AsyncClient,
) -> None:
    answer = await http.options("/", headers={"Origin": APP})  # no Access-Control-Request-*
    assert answer.status_code == 401  # the JSON-RPC endpoint, which needs a credential
