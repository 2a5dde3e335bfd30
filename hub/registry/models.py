"""The models behind `agents.yaml`: one `AgentEntry` per partner, inside an `AgentsFile`.

They are strict (unknown keys are refused) and frozen, like the hub's settings. Secrets are
`SecretStr`, so neither `repr` nor `str` of a model shows them; `AuthSettings.http_headers()`
is the one place their values come out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from hub.config import StrictModel, parse_duration
from hub.config.identity import https_or_loopback
from hub.config.tokens import OAuth2ClientSettings, OnBehalfSettings
from hub.protocol import AgentCard, urls
from hub.protocol.grpc.extra import INSTALL as GRPC_INSTALL
from hub.protocol.grpc.extra import grpc_installed
from hub.protocol.v03.translate import card_to_v1
from hub.trust import CardKeys, PartnerTls

__all__ = [
    "CARD_PATH",
    "AgentEntry",
    "AgentsFile",
    "AuthSettings",
    "ProtocolSettings",
    "TimeoutSettings",
    "same_name_key",
]

CARD_PATH = urls.CARD_PATH
"""Where a partner's card is, below its base URL."""

_AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,47}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 7230 token
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _header_name(name: str) -> str:
    if not _HEADER_NAME.fullmatch(name):
        raise PydanticCustomError(
            "header_name",
            f"{name!r} is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)",
        )
    return name


def _secret(secret: SecretStr) -> SecretStr:
    value = secret.get_secret_value()
    if not value:
        raise PydanticCustomError(
            "secret_empty", "the secret is empty (its environment variable is set to '')"
        )
    if _CONTROL.search(value):
        # A line break in a header value would let the variable add headers of its own.
        raise PydanticCustomError(
            "secret_control", "the secret contains a line break or another control character"
        )
    return secret


class AuthSettings(StrictModel):
    """How the hub authenticates to a partner: headers sent with every request, or a token
    it obtains (`oauth2`).

    At most one of `bearer`, `api_key` and `oauth2`; any can be combined with `headers`.
    """

    bearer: SecretStr | None = None
    """Sent as `Authorization: Bearer <token>`."""
    api_key: SecretStr | None = None
    """Sent in the header named by `header`."""
    header: str = "X-API-Key"
    """The header that carries `api_key`."""
    headers: dict[str, SecretStr] = {}
    """Any other headers, by name."""
    oauth2: OAuth2ClientSettings | None = None
    """A token obtained by the client credentials grant, sent as `Authorization: Bearer`."""

    @field_validator("bearer", "api_key")
    @classmethod
    def _check_secret(cls, secret: SecretStr | None) -> SecretStr | None:
        return None if secret is None else _secret(secret)

    @field_validator("header")
    @classmethod
    def _check_header(cls, name: str) -> str:
        return _header_name(name)

    @field_validator("headers")
    @classmethod
    def _check_headers(cls, headers: dict[str, SecretStr]) -> dict[str, SecretStr]:
        for name, secret in headers.items():
            _header_name(name)
            _secret(secret)
        return headers

    @model_validator(mode="after")
    def _check_combination(self) -> AuthSettings:
        chosen = [
            name
            for name, value in (
                ("bearer", self.bearer),
                ("api_key", self.api_key),
                ("oauth2", self.oauth2),
            )
            if value is not None
        ]
        if len(chosen) > 1:
            raise PydanticCustomError(
                "auth_both",
                f"use one of 'bearer', 'api_key' and 'oauth2', not {' and '.join(chosen)} "
                "(put other headers under 'headers')",
            )
        if "header" in self.model_fields_set and self.api_key is None:
            raise PydanticCustomError(
                "auth_header", "'header' names the header for 'api_key'; set 'api_key' too"
            )
        seen: set[str] = set()
        for name in self.http_header_names():
            if name.lower() in seen:
                raise PydanticCustomError(
                    "auth_header_twice", f"the header {name!r} is set twice; keep one"
                )
            seen.add(name.lower())
        return self

    def http_header_names(self) -> list[str]:
        """The names of the headers `http_headers()` gives (and `Authorization` for a token
        obtained by `oauth2`), without their values."""
        names = ["Authorization"] if self.bearer is not None or self.oauth2 is not None else []
        if self.api_key is not None:
            names.append(self.header)
        return [*names, *self.headers]

    def http_headers(self) -> dict[str, str]:
        """The headers to send, with the secrets' real values."""
        result: dict[str, str] = {}
        if self.bearer is not None:
            result["Authorization"] = f"Bearer {self.bearer.get_secret_value()}"
        if self.api_key is not None:
            result[self.header] = self.api_key.get_secret_value()
        for name, secret in self.headers.items():
            result[name] = secret.get_secret_value()
        return result


def _seconds(value: object) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        # A plain ValueError would reach the message as "Value error, ...".
        raise PydanticCustomError("duration", str(exc)) from None


class TimeoutSettings(StrictModel):
    """Time limits for calls to a partner, in seconds (numbers or durations such as `2m`)."""

    connect: float = 5.0
    """To open a connection."""
    read: float | None = 120.0
    """To wait for the next bytes of an answer; null to wait as long as the partner takes."""
    deadline: float | None = None
    """For one whole call, retries included; null for no overall limit."""

    @field_validator("connect", mode="before")
    @classmethod
    def _duration(cls, value: object) -> float:
        return _seconds(value)

    @field_validator("read", "deadline", mode="before")
    @classmethod
    def _optional_duration(cls, value: object) -> float | None:
        return None if value is None else _seconds(value)


class ProtocolSettings(StrictModel):
    """Which of the partner card's interfaces the hub may use; `auto` allows any."""

    version: Literal["auto", "1.0", "0.3"] = "auto"
    binding: Literal["auto", "jsonrpc", "http+json", "grpc"] = "auto"
    """`grpc` needs the `grpc` extra (`pip install 'a2a-hub[grpc]'`): without it the file is
    refused, naming the command."""

    @field_validator("binding")
    @classmethod
    def _grpc_installed(cls, binding: str) -> str:
        if binding == "grpc" and not grpc_installed():
            raise PydanticCustomError(
                "grpc_extra", f"binding grpc needs the grpc extra: {GRPC_INSTALL}"
            )
        return binding

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: object) -> object:
        # YAML reads an unquoted 1.0 or 0.3 as a number.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {1.0: "1.0", 0.3: "0.3"}.get(float(value), value)
        return value


class AgentEntry(StrictModel):
    """One partner agent: where it is, how to authenticate, and how to call it."""

    name: str
    """The name the hub and its callers use for the partner."""
    url: str | None = None
    """The partner's base URL, or its card's URL when it ends in `.json`."""
    card: AgentCard | None = None
    """An inline card (1.0 or 0.3 JSON shape), used instead of fetching one."""
    auth: AuthSettings = AuthSettings()
    timeout: TimeoutSettings = TimeoutSettings()
    tags: tuple[str, ...] = ()
    """Keywords for choosing partners (`Registry.with_tag`)."""
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    """A relative weight for choosing among partners that do the same work."""
    protocol: ProtocolSettings = ProtocolSettings()
    tls: PartnerTls | None = None
    """A private CA and a client certificate for the partner (its card read too)."""
    verify_card: CardKeys | None = None
    """Accept the partner's card only when one of its signatures verifies with these keys."""
    on_behalf: OnBehalfSettings | None = None
    """Calls made for a caller with an identity provider's token carry that caller's
    identity: a token exchanged for one (RFC 8693), or the caller's own when allowed."""
    enabled: bool = True
    """A disabled entry stays in the file but cannot be called."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _AGENT_NAME.fullmatch(name):
            raise PydanticCustomError(
                "agent_name",
                f"{name!r} is not a valid agent name: use 1 to 48 lowercase letters, digits, "
                "'-' or '_', starting with a letter or a digit",
            )
        return name

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - reading it validates the port
        except ValueError:
            raise PydanticCustomError("url", "not a valid URL") from None
        if parts.scheme.lower() not in ("http", "https"):
            scheme = f"'{parts.scheme}'" if parts.scheme else "no scheme"
            raise PydanticCustomError(
                "url_scheme", f"the URL must start with http:// or https:// (it has {scheme})"
            )
        if not parts.hostname:
            raise PydanticCustomError("url_host", "the URL has no host")
        if parts.username is not None or parts.password is not None:
            raise PydanticCustomError(
                "url_credentials",
                "the URL carries a user name or password; put the partner's credentials in "
                "its 'auth' section (bearer, api_key or headers), which is never logged",
            )
        return url

    @field_validator("card", mode="before")
    @classmethod
    def _read_card(cls, value: object) -> object:
        if value is None or isinstance(value, AgentCard):
            return value
        if not isinstance(value, Mapping):
            raise PydanticCustomError(
                "card_type", "an inline card is a mapping in the agent card's JSON shape"
            )
        version = "1.0" if "supportedInterfaces" in value else "0.3"
        try:
            return card_to_v1(value)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(step) for step in error['loc']) or 'card'}: {error['msg']}"
                for error in exc.errors()
            ]
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise PydanticCustomError(
                "card_invalid",
                f"not a valid {version} agent card: {'; '.join(problems[:3])}{more}",
            ) from None

    @field_validator("tags", mode="before")
    @classmethod
    def _tags_as_list(cls, value: object) -> object:
        if isinstance(value, str):
            raise PydanticCustomError("tags_list", f"tags is a list: write [{value}]")
        return value

    @model_validator(mode="after")
    def _check_location(self) -> AgentEntry:
        if self.url is None and self.card is None:
            raise PydanticCustomError(
                "agent_location", f"agent '{self.name}' needs a 'url', an inline 'card', or both"
            )
        return self

    @model_validator(mode="after")
    def _check_tokens(self) -> AgentEntry:
        oauth2 = self.auth.oauth2
        if oauth2 is not None and oauth2.token_url is None and self.url is None:
            raise PydanticCustomError(
                "oauth2_token_url",
                "auth.oauth2 needs a token_url when the partner's card is inline (the token "
                "endpoint is otherwise read from the card)",
            )
        if self.on_behalf is not None and self.on_behalf.forward_caller_token and self.url:
            try:
                https_or_loopback(self.url, "the url of a partner given the caller's token")
            except ValueError as exc:
                raise PydanticCustomError("forward_plain", str(exc)) from None
        return self

    @property
    def card_url(self) -> str | None:
        """Where the partner's card is read from; None when there is no `url`."""
        return None if self.url is None else urls.card_url(self.url)


class AgentsFile(StrictModel):
    """The whole `agents.yaml` document."""

    version: Literal[1]
    """The format's version; 1 is the only one."""
    agents: list[AgentEntry] = []
    """The partners, in the order the router considers them."""

    @field_validator("version", mode="before")
    @classmethod
    def _check_version(cls, value: object) -> object:
        if value != 1 or isinstance(value, bool) or not isinstance(value, int | float):
            raise PydanticCustomError(
                "agents_version", f"version {value!r} is not known; the known version is 1"
            )
        return 1

    @field_validator("agents", mode="before")
    @classmethod
    def _no_agents(cls, value: object) -> object:
        # `agents:` with nothing under it reads as null.
        return [] if value is None else value

    @model_validator(mode="after")
    def _unique_names(self) -> AgentsFile:
        first: dict[str, int] = {}
        for index, entry in enumerate(self.agents):
            key = same_name_key(entry.name)
            if key in first:
                raise PydanticCustomError(
                    "agent_name_twice",
                    f"agent name '{entry.name}' is used twice "
                    f"(agents.{first[key]} and agents.{index}; '-' and '_' count as the same)",
                )
            first[key] = index
        return self


def same_name_key(name: str) -> str:
    """Names that give one tool name (`a-b`, `a_b` → `a2a_a_b`) are one name."""
    return name.replace("-", "_")
