"""A partner behind OAuth2, for the tests: the a2a-sdk partner of tests/client/partners.py
(over HTTP, or over gRPC) behind a check of the bearer tokens the test identity provider
issued for the partner's audience.

The check keeps the claims of every token it let in and every `Authorization` value it saw,
and can refuse the next valid tokens with 401 (gRPC: UNAUTHENTICATED), as a partner does
with a token it revoked. Its card is open to all, as agent cards are.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from a2a.types.a2a_pb2 import (
    ClientCredentialsOAuthFlow,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)
from joserfc.errors import JoseError
from litestar.types import ASGIApp, Receive, Scope, Send

from hub.testing import serve_on_loopback
from tests.client.partners import ECHO, EchoOrWaitExecutor
from tests.identity.idp import Client, IdentityProvider, serve_idp
from tests.sdk_agents import GrpcAgent, sdk_agent, sdk_grpc_agent

PARTNER_AUDIENCE = "billing"
HUB_CLIENT = "a2a-hub"
HUB_SECRET = "hub-client-secret-5c2e9a71"


@asynccontextmanager
async def serve_idp_with_hub_client() -> AsyncIterator[IdentityProvider]:
    """The test identity provider, the hub registered with it as a client."""
    provider = IdentityProvider(clients={HUB_CLIENT: Client(secret=HUB_SECRET)})
    async with serve_idp(provider) as served:
        yield served


def hub_client(idp: IdentityProvider | None, **overrides: Any) -> dict[str, Any]:
    """The `auth.oauth2` settings of the hub's client at `idp` (its `token_url` unless None),
    asking for a billing token."""
    settings: dict[str, Any] = {
        "client_id": HUB_CLIENT,
        "client_secret": HUB_SECRET,
        "scopes": ["billing.read"],
        "audience": PARTNER_AUDIENCE,
    }
    if idp is not None:
        settings["token_url"] = f"{idp.issuer}/token"
    return {**settings, **overrides}


@dataclass(eq=False)
class TokenCheck:
    """What the partner lets in: tokens `idp` signed for `audience`, not expired."""

    idp: IdentityProvider
    audience: str = PARTNER_AUDIENCE
    refuse: int = 0
    """Refuse this many valid tokens next (each refusal counts one down)."""
    admitted: list[dict[str, Any]] = field(default_factory=list)
    """The claims of each token let in, in order."""
    seen: list[str] = field(default_factory=list)
    """Every `Authorization` value that came, let in or not."""
    refused: list[str] = field(default_factory=list)
    """Why each refused request was refused."""

    def verdict(self, authorization: str | None) -> str | None:
        """None to let the request in; else why not."""
        self.seen.append(authorization or "")
        why = self._why(authorization)
        if why is not None:
            self.refused.append(why)
        return why

    def _why(self, authorization: str | None) -> str | None:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return "no bearer token"
        try:
            claims = self.idp.claims_of(token)
        except (JoseError, ValueError):
            return "not a token of the identity provider"
        if claims.get("aud") != self.audience:
            return f"a token for {claims.get('aud')!r}, not {self.audience!r}"
        if claims["exp"] < time.time():
            return "expired"
        if self.refuse > 0:
            self.refuse -= 1
            return "revoked"
        self.admitted.append(claims)
        return None

    def guard(self, app: ASGIApp) -> ASGIApp:
        """`app` behind the check (its card open to all)."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and not scope["path"].startswith("/.well-known/"):
                headers = dict(scope["headers"])
                raw = headers.get(b"authorization")
                why = self.verdict(None if raw is None else raw.decode("latin-1"))
                if why is not None:
                    await _unauthorized(send, why)
                    return
            await app(scope, receive, send)

        return guarded

    def interceptor(self) -> grpc.aio.ServerInterceptor:
        """The check as a gRPC server interceptor."""
        return _Interceptor(self)


async def _unauthorized(send: Send, why: str) -> None:
    body = json.dumps({"error": "invalid_token", "error_description": why}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
        (b"www-authenticate", b'Bearer error="invalid_token"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _Interceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, check: TokenCheck) -> None:
        self._check = check

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        metadata = dict(details.invocation_metadata or ())
        why = self._check.verdict(metadata.get("authorization"))
        if why is None or handler is None:
            return handler

        async def refuse(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, why)

        async def refuse_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, why)
            yield  # pragma: no cover - abort raises

        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                refuse_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return grpc.unary_unary_rpc_method_handler(
            refuse,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def client_credentials_scheme(token_url: str) -> dict[str, SecurityScheme]:
    """A card's OAuth2 scheme with the client credentials flow at `token_url`."""
    flow = ClientCredentialsOAuthFlow(token_url=token_url, scopes={"billing.read": "read"})
    return {
        "oauth": SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(flows=OAuthFlows(client_credentials=flow))
        )
    }


def openid_scheme(issuer: str) -> dict[str, SecurityScheme]:
    """A card's OpenID Connect scheme, naming the issuer's discovery document."""
    url = f"{issuer}/.well-known/openid-configuration"
    return {
        "oidc": SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(open_id_connect_url=url)
        )
    }


@asynccontextmanager
async def protected_partner(
    check: TokenCheck,
    *,
    binding: str = "JSONRPC",
    schemes: dict[str, SecurityScheme] | None = None,
) -> AsyncIterator[str]:
    """The SDK partner over HTTP behind `check`, its card declaring `schemes`; yields its URL."""

    def build(url: str) -> ASGIApp:
        app = sdk_agent(
            url,
            EchoOrWaitExecutor(),
            name="billing",
            description="a partner behind OAuth2",
            skill=ECHO,
            binding=binding,
            schemes=schemes,
        )
        return check.guard(app)

    async with serve_on_loopback(build) as url:
        yield url


@asynccontextmanager
async def protected_grpc_partner(check: TokenCheck) -> AsyncIterator[GrpcAgent]:
    """The SDK partner over gRPC only behind `check` (its card over HTTP)."""
    async with sdk_grpc_agent(
        EchoOrWaitExecutor(),
        name="billing",
        description="a gRPC partner behind OAuth2",
        skill=ECHO,
        interceptors=[check.interceptor()],
    ) as agent:
        yield agent
