"""Tokens the hub obtains from an OAuth2 token endpoint to call partners with: its own
(client credentials, RFC 6749 §4.4) and a caller's exchanged for one meant for a partner
(token exchange, RFC 8693).

A `TokenEndpoint` is one endpoint and the hub's client at it: it posts one grant's form,
authenticates the client (HTTP Basic, or in the form), and reads the answer; every failure
is a `PartnerAuthError` whose message names the partner and the fault, never a secret, and
whose detail (for the log) names the endpoint and what it said. A `TokenCache` keeps the
tokens obtained, each until shortly before it expires, and asks the endpoint once however
many calls want the same token at the same moment.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hub.config.tokens import TokenClientSettings
from hub.errors import PartnerAuthError

__all__ = [
    "ACCESS_TOKEN_TYPE",
    "CLIENT_CREDENTIALS",
    "TOKEN_EXCHANGE",
    "IssuedToken",
    "TokenCache",
    "TokenEndpoint",
]

CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"

# A token is obtained again once 90 % of its life has passed, and at the latest a minute
# before it expires: a call never leaves with a token about to lapse on the way.
_REFRESH_SHARE = 0.1
_REFRESH_AT_MOST = 60.0
# A token issued without `expires_in` is kept this long (or until a partner refuses it).
_UNKNOWN_LIFETIME = 300.0
_TIMEOUT = httpx.Timeout(10.0)
_SHOWN = 200  # characters of an endpoint's own words kept in a detail
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """An access token and when it is no longer used (a `time.monotonic()` value)."""

    value: str = field(repr=False)
    fresh_until: float


class _Answer(BaseModel):
    """A token endpoint's success answer (RFC 6749 §5.1, RFC 8693 §2.2.1)."""

    model_config = ConfigDict(extra="ignore")

    access_token: str = Field(min_length=1)
    token_type: str
    expires_in: float | None = Field(default=None, ge=0)


class _Refusal(BaseModel):
    """A token endpoint's error answer (RFC 6749 §5.2)."""

    model_config = ConfigDict(extra="ignore")

    error: str
    error_description: str | None = None


class TokenEndpoint:
    """One token endpoint and the hub's client at it, for the calls to one partner.

    Args:
        settings: the client: its id, secret, authentication method, scopes and audience.
        url: the endpoint.
        http: the client the endpoint is posted to (its owner closes it).
        agent_name: the partner the tokens are for, named in every error.
        clock: where `fresh_until` is measured (`time.monotonic`).
    """

    def __init__(
        self,
        settings: TokenClientSettings,
        url: str,
        *,
        http: httpx.AsyncClient,
        agent_name: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.url = url
        self._http = http
        self._agent = agent_name
        self._clock = clock

    async def obtain(
        self, grant: str, form: dict[str, str], *, whose: str, scoped: bool = True
    ) -> IssuedToken:
        """A token by `grant`, with the grant's own `form` fields.

        Args:
            whose: what the token is, for the errors ("a token for itself", "a token on the
                caller's behalf").
            scoped: ask for the settings' scopes and audience (not for the hub's own token
                that goes along as an exchange's actor).

        Raises:
            PartnerAuthError: the endpoint could not be reached, refused, or answered with
                no bearer token.
        """
        settings = self.settings
        data = {"grant_type": grant, **form}
        if scoped and settings.scopes:
            data["scope"] = " ".join(settings.scopes)
        if scoped and settings.audience is not None:
            data["audience"] = settings.audience
        secret = settings.client_secret.get_secret_value()
        sent: dict[str, Any] = {}
        if settings.auth_method == "client_secret_basic":
            # RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined.
            sent["auth"] = httpx.BasicAuth(
                quote(settings.client_id, safe=""), quote(secret, safe="")
            )
        else:
            data["client_id"] = settings.client_id
            data["client_secret"] = secret
        started = self._clock()
        try:
            response = await self._http.post(
                self.url,
                data=data,
                headers={"Accept": "application/json"},
                timeout=_TIMEOUT,
                **sent,
            )
        except httpx.HTTPError as exc:
            raise self._failed(
                whose, "its token endpoint could not be reached", f"{type(exc).__name__}"
            ) from None
        return self._read(response, whose, started)

    def _read(self, response: httpx.Response, whose: str, started: float) -> IssuedToken:
        status = response.status_code
        try:
            document: Any = response.json()
        except ValueError:
            document = None
        if not 200 <= status < 300:
            try:
                refusal = _Refusal.model_validate(document)
            except ValidationError:
                raise self._failed(
                    whose, f"its token endpoint answered HTTP {status}", _said(response)
                ) from None
            said = f"HTTP {status} {refusal.error}"
            if refusal.error_description:
                said += f": {_clean(refusal.error_description)}"
            raise self._failed(whose, f"its token endpoint refused ({refusal.error})", said)
        try:
            answer = _Answer.model_validate(document)
        except ValidationError:
            raise self._failed(
                whose, "its token endpoint answered without an access token", _said(response)
            ) from None
        if answer.token_type.lower() != "bearer":
            raise self._failed(
                whose,
                f"its token endpoint issued a token of type {_clean(answer.token_type)!r}; the "
                "hub sends bearer tokens only",
                f"HTTP {status}",
            )
        lifetime = _UNKNOWN_LIFETIME if answer.expires_in is None else answer.expires_in
        margin = min(_REFRESH_AT_MOST, lifetime * _REFRESH_SHARE)
        return IssuedToken(answer.access_token, started + lifetime - margin)

    def _failed(self, whose: str, what: str, said: str) -> PartnerAuthError:
        return PartnerAuthError(
            f"agent '{self._agent}': the hub could not get {whose}: {what}",
            detail=f"token endpoint {self.url}: {said}",
        )


def _said(response: httpx.Response) -> str:
    media_type = response.headers.get("content-type", "(no content type)").split(";")[0]
    return f"HTTP {response.status_code} {media_type}"


def _clean(text: str) -> str:
    return _CONTROL.sub(" ", text)[:_SHOWN]


K = TypeVar("K", bound=Hashable)


class TokenCache(Generic[K]):
    """Tokens by key, each kept until its `fresh_until`; one request at a time per key.

    Args:
        size: the most tokens kept; the least recently used goes first.
        clock: the clock `fresh_until` is measured on.
    """

    def __init__(self, *, size: int = 256, clock: Callable[[], float] = time.monotonic) -> None:
        self._size = size
        self._clock = clock
        self._kept: OrderedDict[K, IssuedToken] = OrderedDict()
        self._pending: dict[K, asyncio.Task[IssuedToken]] = {}

    async def get(self, key: K, obtain: Callable[[], Awaitable[IssuedToken]]) -> str:
        """The token kept for `key` while it is fresh, else a new one from `obtain` (which
        the calls that want the same key meanwhile wait on too).

        Raises:
            PartnerAuthError: no token could be obtained.
        """
        kept = self._kept.get(key)
        if kept is not None and self._clock() < kept.fresh_until:
            self._kept.move_to_end(key)
            return kept.value
        pending = self._pending.get(key)
        if pending is None:
            pending = self._pending[key] = asyncio.create_task(self._fetch(key, obtain))
            pending.add_done_callback(_observed)
        # Shielded: a caller that gives up does not cancel the request the others wait on.
        return (await asyncio.shield(pending)).value

    def drop(self, key: K, value: str) -> None:
        """Forget the token kept for `key` if it is still `value` (a partner refused it); the
        next `get` obtains another. A token obtained since is kept."""
        kept = self._kept.get(key)
        if kept is not None and kept.value == value:
            del self._kept[key]

    def clear(self) -> None:
        """Forget every token (the endpoint changed)."""
        self._kept.clear()

    async def _fetch(self, key: K, obtain: Callable[[], Awaitable[IssuedToken]]) -> IssuedToken:
        try:
            token = await obtain()
            self._kept[key] = token
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
            return token
        finally:
            self._pending.pop(key, None)


def _observed(task: asyncio.Task[IssuedToken]) -> None:
    """Mark a request's failure as seen, so one nobody waited on is not logged by asyncio."""
    if not task.cancelled():
        task.exception()
