"""A test identity provider, written for the tests with joserfc and served over real HTTP on
loopback: OpenID Provider metadata, a JWKS whose key can be rotated, tokens minted for any
claim the test wants (expired, another audience, another key), and a token endpoint for
client credentials (RFC 6749 §4.4) and token exchange (RFC 8693).

It counts what it is asked (key set reads, token requests by grant) so tests can see the
hub's caching and refreshing from the outside.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, RSAKey
from litestar import Litestar, Request, get, post
from litestar.response import Response

from hub.testing.loopback import serve_on_loopback

AUDIENCE = "a2a-hub-test"
CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def new_key() -> RSAKey:
    key = RSAKey.generate_key(2048, parameters={"kid": uuid.uuid4().hex[:12], "alg": "RS256"})
    return key


@dataclass
class Client:
    secret: str
    expires_in: int = 300


@dataclass
class IdentityProvider:
    """The provider's keys, clients and counters; `issuer` is set once it is served."""

    issuer: str = ""
    keys: list[RSAKey] = field(default_factory=lambda: [new_key()])
    clients: dict[str, Client] = field(default_factory=dict)
    key_reads: int = 0
    grants: Counter[str] = field(default_factory=Counter)
    issued: list[dict[str, Any]] = field(default_factory=list)
    """The claims of every token the token endpoint issued, in order."""

    @property
    def signing_key(self) -> RSAKey:
        return self.keys[0]

    def rotate(self) -> RSAKey:
        """Sign with a new key from now on; the old one stays published beside it."""
        self.keys.insert(0, new_key())
        return self.keys[0]

    def token(
        self,
        subject: str = "alice",
        *,
        audience: str = AUDIENCE,
        lifetime: int = 300,
        key: RSAKey | None = None,
        kid: str | None = None,
        **claims: Any,
    ) -> str:
        """A JWT as the provider would issue it; `key` signs it instead of the current key,
        `kid` names another key in its header."""
        signer = key or self.signing_key
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience,
            "iat": now,
            "exp": now + lifetime,
            "jti": uuid.uuid4().hex,
            **claims,
        }
        header = {"alg": "RS256", "kid": kid or signer.kid}
        return jwt.encode(header, payload, signer)

    def claims_of(self, token: str) -> dict[str, Any]:
        """The claims of a token this provider signed (any of its keys)."""
        return dict(jwt.decode(token, self._published()).claims)

    def _published(self) -> KeySet:
        return KeySet(list(self.keys))

    def app(self) -> Litestar:
        @get("/.well-known/openid-configuration", sync_to_thread=False)
        def metadata() -> dict[str, Any]:
            return {
                "issuer": self.issuer,
                "jwks_uri": f"{self.issuer}/jwks",
                "token_endpoint": f"{self.issuer}/token",
                "grant_types_supported": [CLIENT_CREDENTIALS, TOKEN_EXCHANGE],
                "id_token_signing_alg_values_supported": ["RS256"],
            }

        @get("/jwks", sync_to_thread=False)
        def jwks() -> dict[str, Any]:
            self.key_reads += 1
            return dict(self._published().as_dict(private=False))

        @post("/token", status_code=200)
        async def token(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
            form = dict(await request.form())
            client_id = self._authenticated(request, form)
            if client_id is None:
                return _error(401, "invalid_client", "unknown client or wrong secret")
            grant = str(form.get("grant_type", ""))
            self.grants[grant] += 1
            client = self.clients[client_id]
            claims: dict[str, Any] = {"client_id": client_id}
            if form.get("scope"):
                claims["scope"] = str(form["scope"])
            audience = str(form.get("audience") or form.get("resource") or AUDIENCE)
            if grant == CLIENT_CREDENTIALS:
                subject = client_id
            elif grant == TOKEN_EXCHANGE:
                try:
                    subject_claims = self.claims_of(str(form["subject_token"]))
                    actor_claims = (
                        self.claims_of(str(form["actor_token"])) if "actor_token" in form else None
                    )
                except (KeyError, JoseError, ValueError):
                    return _error(400, "invalid_grant", "the subject or actor token is not ours")
                subject = subject_claims["sub"]
                if actor_claims is not None:
                    act = {"sub": actor_claims["sub"]}
                    if "act" in subject_claims:
                        act["act"] = subject_claims["act"]
                    claims["act"] = act
            else:
                return _error(400, "unsupported_grant_type", grant)
            access = self.token(subject, audience=audience, lifetime=client.expires_in, **claims)
            self.issued.append(self.claims_of(access))
            return Response(
                {
                    "access_token": access,
                    "token_type": "Bearer",
                    "expires_in": client.expires_in,
                    "issued_token_type": ACCESS_TOKEN_TYPE,
                },
                headers={"Cache-Control": "no-store"},
            )

        return Litestar([metadata, jwks, token])

    def _authenticated(self, request: Request[Any, Any, Any], form: dict[str, Any]) -> str | None:
        authorization = request.headers.get("authorization", "")
        if authorization.lower().startswith("basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            client_id, _, secret = decoded.partition(":")
        else:
            client_id, secret = str(form.get("client_id", "")), str(form.get("client_secret", ""))
        client = self.clients.get(client_id)
        return client_id if client is not None and client.secret == secret else None


def _error(status: int, error: str, description: str) -> Response[dict[str, Any]]:
    return Response({"error": error, "error_description": description}, status_code=status)


@asynccontextmanager
async def serve_idp(provider: IdentityProvider | None = None) -> AsyncIterator[IdentityProvider]:
    """`provider` (a new one when None) served on loopback, its issuer set to its URL."""
    idp = provider or IdentityProvider()

    def build(url: str) -> Litestar:
        idp.issuer = url
        return idp.app()

    async with serve_on_loopback(build):
        yield idp
