"""The gateway's test bed: official a2a-sdk partners (1.0 JSON-RPC, 0.3 JSON-RPC, 1.0 REST) on
loopback sockets, each behind a recorder of what reaches it, and hubs on loopback sockets
whose agents.yaml names them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from hub import testing
from hub.config import (
    AuthSettings,
    CredentialSettings,
    LimitSettings,
    ServerSettings,
    Settings,
    StoreSettings,
)
from hub.registry import AgentEntry
from hub.testing import PartnerList, serve_on_loopback
from tests.client import partners as sdk

OPS_KEY = "ops-gateway-key-4f1c9e2a7b"
SCOPED_KEY = "scoped-gateway-key-8d3b6a0c5e"
PARTNER_TOKEN = "partner-token-2e7f0b9c4d1a"
V1 = {"A2A-Version": "1.0"}

SDK_PARTNERS: dict[str, Callable[[str], Any]] = {
    "one": sdk.sdk_jsonrpc,  # A2A 1.0 over JSON-RPC
    "old": sdk.sdk_v03,  # A2A 0.3 over JSON-RPC
    "rest": sdk.sdk_rest,  # A2A 1.0 over HTTP+JSON
}


@dataclass(eq=False)
class Recorder:
    """ASGI middleware in front of a partner: keeps each request's headers and body, counts
    its open event streams, and (with `token`) answers 401 to a request without that bearer
    token."""

    token: str | None = None
    app: ASGIApp | None = None
    requests: list[dict[str, str]] = field(default_factory=list)
    bodies: list[bytearray] = field(default_factory=list)
    open_streams: int = 0
    stream_opened: anyio.Event = field(default_factory=anyio.Event)
    stream_closed: anyio.Event = field(default_factory=anyio.Event)

    def reset(self) -> None:
        """Forget what earlier tests sent (a stream of theirs still open is a failure)."""
        assert self.open_streams == 0, "a stream of an earlier test is still open"
        self.requests.clear()
        self.bodies.clear()
        self.stream_opened = anyio.Event()
        self.stream_closed = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        self.requests.append(headers)
        body = bytearray()
        self.bodies.append(body)

        async def kept() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
            return message

        if self.token is not None and headers.get("authorization") != f"Bearer {self.token}":
            await _refuse(send)
            return
        streaming = False

        async def watched(message: Message) -> None:
            nonlocal streaming
            if message["type"] == "http.response.start":
                content_type = dict(message.get("headers", [])).get(b"content-type", b"")
                streaming = content_type.startswith(b"text/event-stream")
                if streaming:
                    self.open_streams += 1
                    self.stream_opened.set()
            await send(message)

        try:
            await self.app(scope, kept, watched)
        finally:
            if streaming:
                self.open_streams -= 1
                self.stream_closed.set()


async def _refuse(send: Send) -> None:
    body = json.dumps({"detail": "a bearer token is required"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


@dataclass(frozen=True)
class Partner:
    url: str
    recorder: Recorder


def _recorded(build: Callable[[str], Any], recorder: Recorder) -> Callable[[str], Recorder]:
    def factory(url: str) -> Recorder:
        recorder.app = build(url)
        return recorder

    return factory


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """One event loop for each test module, so the partners start once per module."""
    return "asyncio"


@pytest.fixture
async def partners(running_partners: dict[str, Partner]) -> dict[str, Partner]:
    """The module's partners, each recorder starting the test with nothing seen."""
    for partner in running_partners.values():
        partner.recorder.reset()
    return running_partners


@pytest.fixture(scope="module")
async def running_partners() -> AsyncIterator[dict[str, Partner]]:
    """The three SDK partners, by the name agents.yaml gives them; "guarded" is the 1.0
    JSON-RPC one again, wanting the bearer token `PARTNER_TOKEN`."""
    async with AsyncExitStack() as stack:
        running: dict[str, Partner] = {}
        shapes = {**SDK_PARTNERS, "guarded": sdk.sdk_jsonrpc}
        for name, build in shapes.items():
            recorder = Recorder(token=PARTNER_TOKEN if name == "guarded" else None)
            url = await stack.enter_async_context(serve_on_loopback(_recorded(build, recorder)))
            running[name] = Partner(url=url, recorder=recorder)
        yield running


@pytest.fixture
def dead_url(refusing_port: int) -> str:
    """A loopback address where connections are refused for as long as the test runs."""
    return f"http://127.0.0.1:{refusing_port}"


def entries(partners: dict[str, Partner], *, dead_url: str | None = None) -> list[AgentEntry]:
    """agents.yaml for the partners (the guarded one with its token), and "down" at
    `dead_url`."""
    found = [
        AgentEntry.model_validate(
            {"name": name, "url": partner.url}
            | ({"auth": {"bearer": PARTNER_TOKEN}} if partner.recorder.token else {})
        )
        for name, partner in partners.items()
    ]
    if dead_url is not None:
        found.append(AgentEntry(name="down", url=dead_url))
    return found


def auth_settings() -> AuthSettings:
    """Two credentials: `ops` reaches every partner, `scoped` only "old"."""
    return AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="ops", api_key=OPS_KEY),
            CredentialSettings(name="scoped", api_key=SCOPED_KEY, agents=("old",)),
        ),
    )


@asynccontextmanager
async def serve_hub(
    agents: PartnerList | Callable[[str], PartnerList],
    *,
    auth: AuthSettings | None = None,
    limits: dict[str, Any] | None = None,
    keepalive: float = 15.0,
) -> AsyncIterator[str]:
    """A hub on a loopback socket whose agents.yaml holds `agents` (or what `agents` makes of
    the hub's own URL); yields that URL."""
    settings = Settings(
        server=ServerSettings(keepalive=keepalive),
        store=StoreSettings(kind="memory"),
        auth=auth or AuthSettings(),
        limits=LimitSettings.model_validate({"requests_per_second": 0, **(limits or {})}),
    )
    async with testing.serve_hub(partners=agents, settings=settings) as hub:
        yield hub.url


@pytest.fixture
async def hub_url(partners: dict[str, Partner], dead_url: str) -> AsyncIterator[str]:
    """A hub, auth off, in front of every partner and of "down"."""
    async with serve_hub(entries(partners, dead_url=dead_url)) as url:
        yield url


@pytest.fixture
async def secure_hub_url(partners: dict[str, Partner]) -> AsyncIterator[str]:
    """A hub with auth on (`auth_settings`), in front of every partner."""
    async with serve_hub(entries(partners), auth=auth_settings()) as url:
        yield url
