"""The A2A v0.3 Agent Card, with its OpenAPI-style security schemes (`type` names the kind)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hub.protocol.base import JsonObject, WireModel
from hub.protocol.card import AgentCardSignature  # the same object in both versions

__all__ = [
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTLSSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SecurityRequirement",
    "SecurityScheme",
]

SecurityRequirement = dict[str, list[str]]
"""`{scheme name: [scopes]}`, the OpenAPI form 0.3 uses in `security`."""


class APIKeySecurityScheme(WireModel):
    type: Literal["apiKey"] = "apiKey"
    description: str | None = None
    in_: Literal["query", "header", "cookie"] = Field(alias="in")
    name: str


class HTTPAuthSecurityScheme(WireModel):
    type: Literal["http"] = "http"
    description: str | None = None
    scheme: str
    bearer_format: str | None = None


class AuthorizationCodeOAuthFlow(WireModel):
    authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class ClientCredentialsOAuthFlow(WireModel):
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class ImplicitOAuthFlow(WireModel):
    authorization_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class PasswordOAuthFlow(WireModel):
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class OAuthFlows(WireModel):
    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None


class OAuth2SecurityScheme(WireModel):
    type: Literal["oauth2"] = "oauth2"
    description: str | None = None
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None


class OpenIdConnectSecurityScheme(WireModel):
    type: Literal["openIdConnect"] = "openIdConnect"
    description: str | None = None
    open_id_connect_url: str


class MutualTLSSecurityScheme(WireModel):
    type: Literal["mutualTLS"] = "mutualTLS"
    description: str | None = None


SecurityScheme = Annotated[
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTLSSecurityScheme,
    Field(discriminator="type"),
]


class AgentInterface(WireModel):
    url: str
    transport: str


class AgentProvider(WireModel):
    organization: str
    url: str


class AgentExtension(WireModel):
    uri: str
    description: str | None = None
    required: bool | None = None
    params: JsonObject | None = None


class AgentCapabilities(WireModel):
    streaming: bool | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    extensions: list[AgentExtension] | None = None


class AgentSkill(WireModel):
    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security: list[SecurityRequirement] | None = None


class AgentCard(WireModel):
    # The schema gives this a default, and 0.2-era cards leave it out.
    protocol_version: str = "0.3.0"
    name: str
    description: str
    url: str
    preferred_transport: str | None = None
    additional_interfaces: list[AgentInterface] | None = None
    icon_url: str | None = None
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme] | None = None
    security: list[SecurityRequirement] | None = None
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill]
    supports_authenticated_extended_card: bool | None = None
    signatures: list[AgentCardSignature] | None = None
