"""Settings for keeping the hub safe on a network: inbound credentials and their scopes, push
notification targets, who may change the partners at run time (federation), and the browser
origins allowed to call it."""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from hub.config.base import StrictModel
from hub.config.budget import BudgetSettings
from hub.config.identity import OidcSettings
from hub.config.values import parse_duration

__all__ = [
    "AuthSettings",
    "CorsSettings",
    "CredentialSettings",
    "FederationPermission",
    "FederationSettings",
    "PushSettings",
]

_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_HEADER = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

FederationPermission = Literal["spawn_agent", "learn"]
"""A directive that changes the hub's partners: `spawn_agent` adds one, `learn` (a
`sync_state` naming a peer hub) adds the peer's partners."""


def _networks(value: object) -> tuple[IPNetwork, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError("a list of address ranges, e.g. [10.0.0.0/8]")
    try:
        return tuple(ipaddress.ip_network(str(item), strict=False) for item in value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


class CredentialSettings(StrictModel):
    """One caller the hub lets in: a name (for logs and task ownership, never the secret) and
    exactly one secret, with the skills and partners it may use."""

    name: str = Field(pattern=_NAME)
    api_key: SecretStr | None = None
    """Sent in the API key header (`auth.api_key_header`)."""
    bearer: SecretStr | None = None
    """Sent as `Authorization: Bearer ...`."""
    skills: tuple[str, ...] | None = None
    """Local skills this caller may run; None (the default) for all."""
    agents: tuple[str, ...] | None = None
    """Partner agents this caller's tasks may reach; None (the default) for all."""
    federation: tuple[FederationPermission, ...] = ()
    """Directives that change the partners this caller may send (`spawn_agent`, `learn`);
    none by default."""
    operator: bool = False
    """May use the operator's actions: the kill switch (`POST /admin/kill`, `a2a-hub kill`,
    the console's kill buttons)."""
    budget: BudgetSettings | None = None
    """What this caller may spend over a window (partner calls, model tokens and cost);
    None (the default) for no limit."""

    @model_validator(mode="after")
    def _one_secret(self) -> CredentialSettings:
        if (self.api_key is None) == (self.bearer is None):
            raise ValueError(f"credential '{self.name}' needs exactly one of api_key or bearer")
        secret = self.api_key or self.bearer
        assert secret is not None
        if len(secret.get_secret_value()) < 16:
            raise ValueError(
                f"credential '{self.name}': the secret is shorter than 16 characters; use a "
                "long random value"
            )
        return self


class AuthSettings(StrictModel):
    enabled: bool = False
    """Require a credential for everything but the public card."""
    api_key_header: str = "X-API-Key"
    """The header API keys are sent in."""
    credentials: tuple[CredentialSettings, ...] = ()
    oidc: OidcSettings | None = None
    """JWT bearer tokens from the company's identity provider, tried for a bearer that is
    not one of `credentials` (docs/identity.md)."""

    @field_validator("api_key_header")
    @classmethod
    def _header(cls, value: str) -> str:
        if not _HEADER.match(value):
            raise ValueError(f"{value!r} is not a valid header name")
        return value

    @model_validator(mode="after")
    def _usable(self) -> AuthSettings:
        if self.enabled and not self.credentials and self.oidc is None:
            raise ValueError("auth is enabled but no credentials (nor auth.oidc) are listed")
        names = [credential.name for credential in self.credentials]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"credential names must be unique: {', '.join(twice)}")
        return self


class PushSettings(StrictModel):
    allow_hosts: tuple[str, ...] = ()
    """Host names webhooks may point at even when they resolve to a private address."""
    allow_cidrs: tuple[IPNetwork, ...] = ()
    """Address ranges webhooks may point at even when private (e.g. 10.0.0.0/8)."""
    timeout: float = 10.0
    """Seconds one delivery may take."""
    throttle: float = 1.5
    """At most one non-final update per task in this many seconds (the latest state wins)."""
    retry_delays: tuple[float, ...] = (1.0, 3.0, 9.0)
    """Waits before each retry of a failed delivery (no retry after a 4xx answer)."""
    max_configs_per_task: int = Field(default=10, ge=1)

    @field_validator("timeout", "throttle", mode="before")
    @classmethod
    def _duration(cls, value: object) -> float:
        return parse_duration(value)

    @field_validator("retry_delays", mode="before")
    @classmethod
    def _delays(cls, value: object) -> tuple[float, ...]:
        if not isinstance(value, list | tuple):
            raise ValueError("a list of durations, e.g. [1s, 3s, 9s]")
        return tuple(parse_duration(item) for item in value)

    @field_validator("allow_cidrs", mode="before")
    @classmethod
    def _cidrs(cls, value: object) -> tuple[IPNetwork, ...]:
        return _networks(value)


class FederationSettings(StrictModel):
    """Partners added while the hub runs (`spawn_agent`, learning from a peer's `sync_state`):
    who may add them without a credential, where they may be, and how many."""

    anonymous: tuple[FederationPermission, ...] = ()
    """What callers without a credential may send (every caller when auth is off); none by
    default, so an open hub cannot be given partners."""
    allow_hosts: tuple[str, ...] = ()
    """Host names partners added at run time may be at even when they resolve to a private
    address."""
    allow_cidrs: tuple[IPNetwork, ...] = ()
    """Address ranges partners added at run time may be at even when private."""
    max_agents: int = Field(default=32, ge=0)
    """Most partners added at run time at once."""

    @field_validator("allow_cidrs", mode="before")
    @classmethod
    def _cidrs(cls, value: object) -> tuple[IPNetwork, ...]:
        return _networks(value)


class CorsSettings(StrictModel):
    allow_origins: tuple[str, ...] = ()
    """Origins (scheme://host[:port]) whose browser pages may call the hub; `*` for any. The
    public card is readable from any origin whatever this says."""
    max_age: int = Field(default=600, ge=0)
    """Seconds a browser may cache a preflight answer."""
