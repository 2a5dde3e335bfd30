"""The Agent Card and its parts (A2A 1.0, §4.4)."""

from __future__ import annotations

from pydantic import Field

from hub.protocol.base import JsonObject, WireModel

__all__ = [
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "HTTPAuthSecurityScheme",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "SecurityRequirement",
    "SecurityScheme",
    "StringList",
]

BINDING_JSONRPC = "JSONRPC"
BINDING_HTTP_JSON = "HTTP+JSON"
BINDING_GRPC = "GRPC"


class AgentInterface(WireModel):
    url: str
    protocol_binding: str
    tenant: str | None = None
    protocol_version: str


class AgentProvider(WireModel):
    url: str
    organization: str


class AgentExtension(WireModel):
    uri: str
    description: str | None = None
    required: bool = False
    params: JsonObject | None = None


class AgentCapabilities(WireModel):
    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: list[AgentExtension] | None = None
    extended_agent_card: bool | None = None


class StringList(WireModel):
    list_: list[str] = Field(default_factory=list, alias="list")


class SecurityRequirement(WireModel):
    schemes: dict[str, StringList] = Field(default_factory=dict)


class APIKeySecurityScheme(WireModel):
    description: str | None = None
    location: str
    name: str


class HTTPAuthSecurityScheme(WireModel):
    description: str | None = None
    scheme: str
    bearer_format: str | None = None


class OAuthFlows(WireModel):
    """A oneof of flows; each flow is kept as the JSON object the card carries."""

    authorization_code: JsonObject | None = None
    client_credentials: JsonObject | None = None
    implicit: JsonObject | None = None
    password: JsonObject | None = None
    device_code: JsonObject | None = None


class OAuth2SecurityScheme(WireModel):
    description: str | None = None
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None


class OpenIdConnectSecurityScheme(WireModel):
    description: str | None = None
    open_id_connect_url: str


class MutualTlsSecurityScheme(WireModel):
    description: str | None = None


class SecurityScheme(WireModel):
    api_key_security_scheme: APIKeySecurityScheme | None = None
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    mtls_security_scheme: MutualTlsSecurityScheme | None = None


class AgentSkill(WireModel):
    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security_requirements: list[SecurityRequirement] | None = None


class AgentCardSignature(WireModel):
    protected: str
    signature: str
    header: JsonObject | None = None


class AgentCard(WireModel):
    name: str
    description: str
    supported_interfaces: list[AgentInterface]
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme] | None = None
    security_requirements: list[SecurityRequirement] | None = None
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill]
    signatures: list[AgentCardSignature] | None = None
    icon_url: str | None = None
