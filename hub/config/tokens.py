"""Settings for the tokens the hub obtains to call a partner (agents.yaml): OAuth2 client
credentials (`auth.oauth2`) and, on behalf of the caller, token exchange (`on_behalf`).

What the hub does with them is `hub.identity.partner_auth`'s; these models only say what is
configured. Every secret is a `SecretStr`: shown as `**********` wherever an entry is
printed or dumped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from hub.config.base import StrictModel
from hub.config.identity import https_or_loopback

__all__ = [
    "OAuth2ClientSettings",
    "OnBehalfSettings",
    "TokenClientSettings",
    "TokenExchangeSettings",
]


def _url(url: str | None, what: str) -> str | None:
    if url is None:
        return None
    try:
        return https_or_loopback(url, what)
    except ValueError as exc:
        # A plain ValueError would reach the message as "Value error, ...".
        raise PydanticCustomError("token_url", str(exc)) from None


class TokenClientSettings(StrictModel):
    """The hub as a client of a token endpoint (RFC 6749 §2.3): who it is and what it asks."""

    client_id: str = Field(min_length=1)
    """The hub's client at the token endpoint."""
    client_secret: SecretStr
    """Its secret; write it as `${NAME}`, read from the environment."""
    auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    """How the client authenticates: HTTP Basic (the default) or in the form."""
    scopes: tuple[str, ...] = ()
    """The scopes asked for (`scope`); none: the endpoint's default."""
    audience: str | None = None
    """The `audience` asked for, for endpoints that issue tokens per audience."""

    @field_validator("client_secret")
    @classmethod
    def _check_secret(cls, secret: SecretStr) -> SecretStr:
        if not secret.get_secret_value().strip():
            raise PydanticCustomError(
                "empty_secret", "the client_secret is empty (is its ${NAME} variable set?)"
            )
        return secret

    @field_validator("scopes")
    @classmethod
    def _check_scopes(cls, scopes: tuple[str, ...]) -> tuple[str, ...]:
        for scope in scopes:
            if not scope or any(c.isspace() or c in '"\\' for c in scope):
                raise PydanticCustomError(
                    "scope", f"{scope!r} is not a scope: no spaces, quotes or backslashes"
                )
        return scopes


class OAuth2ClientSettings(TokenClientSettings):
    """`auth.oauth2`: the partner is called with a token the hub obtains for itself (the
    client credentials grant, RFC 6749 §4.4), kept until shortly before it expires."""

    token_url: str | None = None
    """The token endpoint; when not set, the one the partner's card declares (the
    `clientCredentials` flow of an OAuth2 scheme, or an OpenID Connect scheme's discovery
    document)."""

    @field_validator("token_url")
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        return _url(url, "token_url")


class TokenExchangeSettings(TokenClientSettings):
    """`on_behalf.token_exchange`: the caller's token is exchanged (RFC 8693) for one meant
    for the partner, naming the hub as the actor."""

    token_url: str
    """The company's token endpoint."""
    actor: bool = True
    """Send the hub's own token (client credentials with the same client) as the
    `actor_token`, so the issued token's `act` claim names the hub."""

    @field_validator("token_url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        checked = _url(url, "token_url")
        assert checked is not None
        return checked


class OnBehalfSettings(StrictModel):
    """`on_behalf`: a call made for a caller who came with a token from the identity provider
    (`auth.oidc`) carries that caller's identity. Calls for any other caller use `auth`."""

    token_exchange: TokenExchangeSettings | None = None
    """Exchange the caller's token for a partner-audience token."""
    forward_caller_token: bool = False
    """Send the caller's own token as it came. The hub never does unless this says so, and
    then over TLS (or loopback) only."""

    @model_validator(mode="after")
    def _check_one(self) -> OnBehalfSettings:
        if self.token_exchange is not None and self.forward_caller_token:
            raise PydanticCustomError(
                "on_behalf_both",
                "use either 'token_exchange' or 'forward_caller_token', not both",
            )
        if self.token_exchange is None and not self.forward_caller_token:
            raise PydanticCustomError(
                "on_behalf_none",
                "set 'token_exchange' (or 'forward_caller_token: true'), or remove 'on_behalf'",
            )
        return self
