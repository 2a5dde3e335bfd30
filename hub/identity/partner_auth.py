"""`PartnerAuth`: the token each call to one partner carries, when agents.yaml says the hub
obtains it (`auth.oauth2`, `on_behalf`).

For a call made for a caller who came with an identity provider's token (`auth.oidc`), and a
partner whose entry sets `on_behalf`:

- `token_exchange`: the caller's token is exchanged at the company's token endpoint (RFC
  8693) for one meant for the partner; with `actor` (the default) the hub's own token goes
  along as the `actor_token`, so the issued token's `act` claim names the hub. Exchanged
  tokens are kept per caller token until shortly before they expire.
- `forward_caller_token: true`: the caller's own token is sent, over TLS or to loopback
  only. Without that line the hub never sends a caller's token to a partner.

Every other call (no `on_behalf`, or a caller without such a token) carries the hub's own
token from `auth.oauth2` (the client credentials grant), or else the entry's static headers.
Its token endpoint is `auth.oauth2.token_url`, or the one the partner's card declares: the
`clientCredentials` flow of an OAuth2 scheme, or the `token_endpoint` of an OpenID Connect
scheme's discovery document.

A partner that answers 401 (gRPC: UNAUTHENTICATED) gets the request once more with a token
obtained anew (`rejected`). Tokens are never logged: errors name the partner and the fault,
and their detail the endpoint and what it said.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

import httpx

from hub.config.identity import https_or_loopback
from hub.config.tokens import OAuth2ClientSettings, OnBehalfSettings, TokenExchangeSettings
from hub.errors import PartnerAuthError
from hub.identity.tokens import (
    ACCESS_TOKEN_TYPE,
    CLIENT_CREDENTIALS,
    TOKEN_EXCHANGE,
    IssuedToken,
    TokenCache,
    TokenEndpoint,
)
from hub.protocol import AgentCard
from hub.protocol.trace import current_scope

__all__ = ["PartnerAuth", "card_token_url"]

_OWN = "own"  # the one key of the hub's own token
_DISCOVERY = "discovery:"  # marks a metadata document's URL, not a token endpoint's
_DISCOVERY_TIMEOUT = httpx.Timeout(10.0)


class PartnerAuth:
    """The `Authorization` of each call to one partner (a `hub.client.CallAuth`).

    Args:
        agent_name: the partner's name, in every error.
        oauth2: the hub's own token for it, by client credentials.
        on_behalf: what a call made for a token caller carries.
        http: the client token endpoints are posted to (its owner closes it).
        clock: where token lifetimes are measured.
    """

    def __init__(
        self,
        agent_name: str,
        *,
        oauth2: OAuth2ClientSettings | None,
        on_behalf: OnBehalfSettings | None,
        http: httpx.AsyncClient,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._agent = agent_name
        self._oauth2 = oauth2
        self._on_behalf = on_behalf
        self._http = http
        self._clock = clock
        self._own = TokenCache[str](size=1, clock=clock)
        self._own_endpoint: TokenEndpoint | None = None
        self._card_url: str | None = None  # the card's token endpoint, when it names one
        self._card_problem: str | None = None
        exchange = None if on_behalf is None else on_behalf.token_exchange
        self._exchange = exchange
        self._exchanged = TokenCache[str](clock=clock)
        self._exchange_endpoint = None if exchange is None else self._endpoint(exchange)
        self._actor = TokenCache[str](size=1, clock=clock)

    def use_card(self, card: AgentCard) -> None:
        """Read the token endpoint from the partner's card (when `auth.oauth2` names none);
        a different endpoint drops the token obtained from the last one."""
        if self._oauth2 is None or self._oauth2.token_url is not None:
            return
        try:
            url = card_token_url(card)
        except ValueError as exc:
            url, self._card_problem = None, str(exc)
        else:
            self._card_problem = None
        if url != self._card_url:
            self._card_url = url
            self._own_endpoint = None
            self._own.clear()

    # -- CallAuth ---------------------------------------------------------------------------

    async def authorization(self, *, secure: bool) -> str | None:
        caller_token = self._caller_token()
        if caller_token is not None:
            if self._exchange is not None:
                return _bearer(await self._exchanged_for(caller_token))
            if not secure:
                raise PartnerAuthError(
                    f"agent '{self._agent}': the caller's token is sent over TLS only, and "
                    "this partner's interface is plain HTTP",
                )
            return _bearer(caller_token)
        if self._oauth2 is None:
            return None
        return _bearer(await self._own_token())

    async def rejected(self, authorization: str) -> str | None:
        token = authorization.removeprefix("Bearer ")
        caller_token = self._caller_token()
        if caller_token is not None:
            if self._exchange is None:
                return None  # the caller's own token: nothing fresher to send
            self._exchanged.drop(_key(caller_token), token)
            return _bearer(await self._exchanged_for(caller_token))
        if self._oauth2 is None:
            return None
        self._own.drop(_OWN, token)
        return _bearer(await self._own_token())

    # -- the tokens -------------------------------------------------------------------------

    def _caller_token(self) -> str | None:
        """The caller's token, when this call is made on its behalf."""
        if self._on_behalf is None:
            return None
        scope = current_scope()
        token = None if scope is None else scope.caller_token
        return None if token is None else token.get_secret_value()

    async def _own_token(self) -> str:
        endpoint = self._own_endpoint or await self._own_endpoint_now()
        return await self._own.get(
            _OWN, lambda: endpoint.obtain(CLIENT_CREDENTIALS, {}, whose="a token for itself")
        )

    async def _own_endpoint_now(self) -> TokenEndpoint:
        settings = self._oauth2
        assert settings is not None
        url = settings.token_url or self._card_url
        if url is None:
            why = self._card_problem or (
                "its card declares no OAuth2 client credentials flow or OpenID Connect scheme"
            )
            raise PartnerAuthError(
                f"agent '{self._agent}': auth.oauth2 has no token_url, and {why}; set "
                "auth.oauth2.token_url in agents.yaml"
            )
        if url.startswith(_DISCOVERY):
            url = await self._discovered(url.removeprefix(_DISCOVERY))
        self._own_endpoint = self._endpoint(settings, url)
        return self._own_endpoint

    async def _discovered(self, document_url: str) -> str:
        """The `token_endpoint` of the authorization server metadata at `document_url`
        (OpenID Connect discovery, RFC 8414)."""
        problem = None
        try:
            response = await self._http.get(document_url, timeout=_DISCOVERY_TIMEOUT)
            document = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            document, problem = None, type(exc).__name__
        url = document.get("token_endpoint") if isinstance(document, dict) else None
        if not isinstance(url, str) or not url:
            raise PartnerAuthError(
                f"agent '{self._agent}': the hub could not get a token for itself: the "
                "discovery document its card names gives no token endpoint",
                detail=f"{document_url}: {problem or f'HTTP {response.status_code}'}",
            )
        try:
            return https_or_loopback(url, "the token endpoint of its card's discovery document")
        except ValueError as exc:
            raise PartnerAuthError(f"agent '{self._agent}': {exc}") from None

    async def _exchanged_for(self, caller_token: str) -> str:
        endpoint = self._exchange_endpoint
        settings = self._exchange
        assert endpoint is not None
        assert settings is not None

        async def exchange() -> IssuedToken:
            form = {
                "subject_token": caller_token,
                "subject_token_type": ACCESS_TOKEN_TYPE,
                "requested_token_type": ACCESS_TOKEN_TYPE,
            }
            if settings.actor:
                form["actor_token"] = await self._actor.get(
                    _OWN,
                    lambda: endpoint.obtain(
                        CLIENT_CREDENTIALS, {}, whose="its own token to act with", scoped=False
                    ),
                )
                form["actor_token_type"] = ACCESS_TOKEN_TYPE
            return await endpoint.obtain(
                TOKEN_EXCHANGE, form, whose="a token on the caller's behalf"
            )

        return await self._exchanged.get(_key(caller_token), exchange)

    def _endpoint(
        self, settings: OAuth2ClientSettings | TokenExchangeSettings, url: str | None = None
    ) -> TokenEndpoint:
        return TokenEndpoint(
            settings,
            url or str(settings.token_url),
            http=self._http,
            agent_name=self._agent,
            clock=self._clock,
        )


def card_token_url(card: AgentCard) -> str | None:
    """Where a partner's card says the client credentials grant is served: an OAuth2
    scheme's `clientCredentials.tokenUrl`; else, marked by a `discovery:` prefix, the
    metadata document of an OAuth2 scheme (`oauth2MetadataUrl`) or an OpenID Connect scheme
    (`openIdConnectUrl`) that names it; None when the card declares neither.

    Raises:
        ValueError: the URL it declares is not https:// (or http:// to loopback).
    """
    schemes = list((card.security_schemes or {}).values())
    for scheme in schemes:
        oauth2 = scheme.oauth2_security_scheme
        flow = None if oauth2 is None else oauth2.flows.client_credentials
        url = None if flow is None else flow.get("tokenUrl")
        if isinstance(url, str) and url:
            return https_or_loopback(url, "the token endpoint its card declares")
    for scheme in schemes:
        oauth2 = scheme.oauth2_security_scheme
        oidc = scheme.open_id_connect_security_scheme
        url = oidc.open_id_connect_url if oidc is not None else None
        if url is None and oauth2 is not None and oauth2.flows.client_credentials is not None:
            url = oauth2.oauth2_metadata_url
        if url:
            return _DISCOVERY + https_or_loopback(url, "the discovery document its card names")
    return None


def _bearer(token: str) -> str:
    return f"Bearer {token}"


def _key(caller_token: str) -> str:
    """What an exchanged token is kept under: a digest, not the caller's token itself."""
    return hashlib.sha256(caller_token.encode()).hexdigest()
