"""Settings for callers who come with a token from the company's identity provider
(`auth.oidc`): whose tokens are trusted, for which audience, where the signing keys are,
and which of the hub's scopes a token's claim grants.

The checks themselves are `hub/identity`'s; these models only say what is configured.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from hub.config.base import StrictModel
from hub.config.budget import BudgetSettings
from hub.config.values import parse_duration
from hub.protocol.urls import LOOPBACK_HOSTS

__all__ = ["OidcGrant", "OidcSettings", "https_or_loopback"]

# Asymmetric algorithms only: a shared-secret HS256 key in a JWKS would let anyone who can
# read the key set mint tokens.
_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


def https_or_loopback(url: str, what: str) -> str:
    """`url`, when it is https:// or http:// to the loopback address.

    Raises:
        ValueError: it is neither; the message names `what`.
    """
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS):
        return url
    raise ValueError(
        f"{what} must be an https:// URL (http:// only on the loopback address), not {url!r}"
    )


class OidcGrant(StrictModel):
    """What one value of the token's claim lets its bearer use, as a credential's
    `skills` and `agents` do."""

    skills: tuple[str, ...] | None = None
    """Local skills; None (the default) for all."""
    agents: tuple[str, ...] | None = None
    """Partner agents; None (the default) for all."""
    operator: bool = False
    """May use the operator's actions (the kill switch); a token is an operator only when
    one of its values says so."""
    budget: BudgetSettings | None = None
    """What a subject with this value may spend over a window (the first of its values, in
    order, that names one)."""


class OidcSettings(StrictModel):
    """JWT bearer tokens from one OpenID Connect issuer."""

    issuer: str
    """The `iss` every token must carry, exactly; discovery reads
    `<issuer>/.well-known/openid-configuration`."""
    audience: str
    """The `aud` every token must name: this hub, as the identity provider knows it."""
    jwks_url: str | None = None
    """Where the issuer's signing keys are; found by discovery when not given."""
    claim: str = "scope"
    """The claim whose values `map` reads: a space-separated string (`scope`) or a list
    (`groups`)."""
    map: dict[str, OidcGrant] = {}
    """Claim value → what it grants; a token grants the union of its values' grants. Empty
    (the default): every valid token may use everything; otherwise a token none of whose
    values is listed is refused."""
    leeway: float = Field(default=30.0, ge=0, le=600)
    """Seconds of clock difference allowed on `exp`, `nbf` and `iat`."""
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    """The signature algorithms accepted."""
    keys_max_age: float = 3600.0
    """Seconds the key set is used before it is read again."""
    keys_min_interval: float = Field(default=10.0, ge=0)
    """Least seconds between two reads of the key set, so tokens naming an unknown key
    cannot make the hub hammer the identity provider."""

    @field_validator("keys_max_age", mode="before")
    @classmethod
    def _duration(cls, value: object) -> float:
        return parse_duration(value)

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        return https_or_loopback(value, "auth.oidc.issuer")

    @field_validator("jwks_url")
    @classmethod
    def _jwks(cls, value: str | None) -> str | None:
        return None if value is None else https_or_loopback(value, "auth.oidc.jwks_url")

    @field_validator("algorithms")
    @classmethod
    def _algorithms(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - _ALGORITHMS)
        if unknown or not value:
            raise ValueError(
                f"algorithms {', '.join(unknown) or '(none)'} are not accepted; use some of "
                f"{', '.join(sorted(_ALGORITHMS))}"
            )
        return value

    @model_validator(mode="after")
    def _claim(self) -> OidcSettings:
        if not self.claim.strip():
            raise ValueError("auth.oidc.claim names the claim to map; it is empty")
        return self

    @property
    def discovery_url(self) -> str:
        """The issuer's OpenID Provider metadata."""
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"
