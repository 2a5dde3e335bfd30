"""CORS: browser pages from the origins in `cors.allow_origins` may call the hub; the public
card may be read from any origin.

A small middleware of our own rather than Litestar's `CORSConfig`: the card must stay open to
every origin (preflight included) whatever the allowlist says, the JSON-RPC endpoint is a raw
ASGI route, a refused preflight answers in the hub's error shape, and browsers must be able
to read the headers that explain a refusal (`WWW-Authenticate`, `Retry-After`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from litestar.enums import ScopeType
from litestar.types import (
    ASGIApp,
    HTTPResponseStartEvent,
    HTTPScope,
    Message,
    Receive,
    Scope,
    Send,
)

from hub.config import CorsSettings
from hub.errors import A2A_DOMAIN

__all__ = ["CARD_PATHS", "CorsPolicy", "cors_middleware"]

CARD_PATHS = frozenset({"/.well-known/agent-card.json", "/.well-known/agent.json"})
API_METHODS = "GET, POST, DELETE, OPTIONS"
CARD_METHODS = "GET, HEAD, OPTIONS"
EXPOSED = "WWW-Authenticate, Retry-After, ETag, A2A-Version, A2A-Extensions, X-A2A-Extensions"
_HEADER_LIST = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$")
_CORS = frozenset(
    {
        b"access-control-allow-origin",
        b"access-control-expose-headers",
        b"access-control-allow-methods",
        b"access-control-allow-headers",
        b"access-control-max-age",
    }
)


class CorsPolicy:
    """Which origins may call the hub's API from a browser.

    Args:
        settings: the `cors` settings.
    """

    def __init__(self, settings: CorsSettings) -> None:
        self.any_origin = "*" in settings.allow_origins
        self.origins = frozenset(origin.rstrip("/") for origin in settings.allow_origins)
        self.max_age = settings.max_age

    def allows(self, origin: str) -> bool:
        return self.any_origin or origin in self.origins


def _header(scope: HTTPScope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def _replace_headers(message: HTTPResponseStartEvent, extra: list[tuple[bytes, bytes]]) -> None:
    kept = [(key, value) for key, value in message.get("headers", ()) if key.lower() not in _CORS]
    message["headers"] = kept + extra


def cors_middleware(settings: CorsSettings) -> Callable[[ASGIApp], ASGIApp]:
    """The Litestar middleware answering preflights and marking responses for browsers."""
    policy = CorsPolicy(settings)

    def middleware(app: ASGIApp) -> ASGIApp:
        async def handle(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return
            origin = _header(scope, b"origin")
            if origin is None:
                await app(scope, receive, send)
                return
            card = scope["path"] in CARD_PATHS
            allowed = card or policy.allows(origin)
            requested = _header(scope, b"access-control-request-method")
            if scope["method"] == "OPTIONS" and requested is not None:
                await _preflight(scope, send, policy, origin, card=card, allowed=allowed)
                return
            if not allowed:  # no CORS headers: the browser keeps the answer from the page
                await app(scope, receive, send)
                return
            extra = [
                (b"access-control-allow-origin", b"*" if card else origin.encode("latin-1")),
                (b"access-control-expose-headers", EXPOSED.encode()),
            ]
            if not card:
                extra.append((b"vary", b"Origin"))

            async def marked(message: Message) -> None:
                if message["type"] == "http.response.start":
                    _replace_headers(message, extra)
                await send(message)

            await app(scope, receive, marked)

        return handle

    return middleware


async def _preflight(
    scope: HTTPScope, send: Send, policy: CorsPolicy, origin: str, *, card: bool, allowed: bool
) -> None:
    if not allowed:
        body = json.dumps(
            {
                "error": {
                    "code": 403,
                    "status": "PERMISSION_DENIED",
                    "message": "this origin may not call the hub from a browser; add it to "
                    "cors.allow_origins",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "CORS_ORIGIN_NOT_ALLOWED",
                            "domain": A2A_DOMAIN,
                            "metadata": {},
                        }
                    ],
                }
            },
            separators=(",", ":"),
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"vary", b"Origin"),
        ]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return
    headers = [
        (b"access-control-allow-origin", b"*" if card else origin.encode("latin-1")),
        (b"access-control-allow-methods", (CARD_METHODS if card else API_METHODS).encode()),
        (b"access-control-max-age", str(policy.max_age).encode()),
        (b"content-length", b"0"),
    ]
    asked = _header(scope, b"access-control-request-headers")
    if asked and _HEADER_LIST.match(asked.strip()):
        # Credentials travel in headers, never in cookies: any header an allowed page asks
        # for may be sent (Authorization, the API key header, A2A-Version, ...).
        headers.append((b"access-control-allow-headers", asked.strip().encode("latin-1")))
    if not card:
        headers.append((b"vary", b"Origin"))
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
