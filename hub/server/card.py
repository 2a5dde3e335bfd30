"""The hub's own Agent Card: built from the settings and the local skills, checked against
what the server really serves, and rendered once as a pure 1.0 document and as a hybrid
1.0 + 0.3 one."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from hub.config import AuthSettings, Settings
from hub.errors import CardMismatchError
from hub.protocol import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from hub.protocol.base import JsonObject
from hub.protocol.card import BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC
from hub.protocol.v03.translate import hybrid_card
from hub.server.extensions import card_extensions
from hub.trust.extra import require_identity_extra

__all__ = [
    "CardBody",
    "CardDocument",
    "ServedFeatures",
    "build_card",
    "build_extended_card",
    "check_card",
    "grpc_interface",
    "sign_card",
]

DEFAULT_MODES = ["text/plain", "application/json"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedFeatures:
    """What this server process actually implements, to check the card against."""

    streaming: bool = True
    push_notifications: bool = False
    extended_card: bool = False
    """An extended card can be served: only to authenticated callers, so only with auth on."""
    security_schemes: frozenset[str] = frozenset()
    """The schemes the server enforces (`apiKey`, `bearer`, `oidc`); none when auth is off."""
    bindings: frozenset[tuple[str, str]] = frozenset(
        {(BINDING_JSONRPC, "1.0"), (BINDING_HTTP_JSON, "1.0"), (BINDING_JSONRPC, "0.3")}
    )

    def with_grpc(self, served: bool) -> ServedFeatures:
        """These features, with the gRPC door's interface when it is `served`."""
        if not served:
            return self
        return replace(self, bindings=self.bindings | {(BINDING_GRPC, "1.0")})


def _security(auth: AuthSettings) -> dict[str, SecurityScheme]:
    """The schemes a caller may use, exactly those the server checks: none with auth off."""
    if not auth.enabled:
        return {}
    schemes = {}
    if any(credential.api_key is not None for credential in auth.credentials):
        schemes["apiKey"] = SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(
                description=f"an API key in the {auth.api_key_header} header",
                location="header",
                name=auth.api_key_header,
            )
        )
    if any(credential.bearer is not None for credential in auth.credentials):
        schemes["bearer"] = SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                description="a bearer token in 'Authorization: Bearer <token>'", scheme="Bearer"
            )
        )
    if auth.oidc is not None:
        schemes["oidc"] = SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                description=(
                    f"a JWT from {auth.oidc.issuer} for the audience {auth.oidc.audience}, "
                    "in 'Authorization: Bearer <token>'"
                ),
                open_id_connect_url=auth.oidc.discovery_url,
            )
        )
    return schemes


def build_card(settings: Settings, skills: Sequence[AgentSkill]) -> AgentCard:
    """The card that describes this hub: its interfaces, capabilities, extensions and local
    skills.

    Raises:
        ConfigError: an extension names a skill that is not among `skills`.
    """
    base = settings.server.base_url()
    card = settings.card
    schemes = _security(settings.auth)
    interfaces = [
        AgentInterface(url=base, protocol_binding=BINDING_JSONRPC, protocol_version="1.0"),
        AgentInterface(url=base, protocol_binding=BINDING_HTTP_JSON, protocol_version="1.0"),
        AgentInterface(url=base, protocol_binding=BINDING_JSONRPC, protocol_version="0.3"),
    ]
    if settings.server.grpc.enabled:
        interfaces.append(grpc_interface(settings.server.grpc_address()))
    return AgentCard(
        name=card.name,
        description=card.description,
        version=card.version,
        supported_interfaces=interfaces,
        provider=(
            AgentProvider(organization=card.provider.organization, url=card.provider.url)
            if card.provider
            else None
        ),
        documentation_url=card.documentation_url,
        icon_url=card.icon_url,
        capabilities=AgentCapabilities(
            streaming=card.streaming,
            push_notifications=card.push_notifications,
            extended_agent_card=card.extended_card,
            extensions=card_extensions(card.extensions, skills=[skill.id for skill in skills]),
        ),
        # Any one of the schemes will do: one requirement per scheme (they are alternatives).
        security_schemes=schemes or None,
        security_requirements=[
            SecurityRequirement(schemes={name: StringList()}) for name in schemes
        ]
        or None,
        default_input_modes=list(DEFAULT_MODES),
        default_output_modes=list(DEFAULT_MODES),
        skills=list(skills),
    )


def grpc_interface(address: str, *, tenant: str | None = None) -> AgentInterface:
    """The gRPC door's interface: its `host:port` (no scheme, §5.8), and the `tenant` a
    request carries to be served by a partner through the gateway (`agents/<name>`)."""
    return AgentInterface(
        url=address, protocol_binding=BINDING_GRPC, tenant=tenant, protocol_version="1.0"
    )


def sign_card(card: AgentCard, settings: Settings) -> AgentCard:
    """`card` signed with the key of `card.signing` (unchanged when it is not set).

    Raises:
        ConfigError: the identity extra is not installed (the message gives the pip
            command), or the key cannot be used.
    """
    if settings.card.signing is None:
        return card
    require_identity_extra("card.signing")
    from hub.trust.signing import CardSigner  # the identity extra's libraries

    return CardSigner.from_settings(settings.card.signing).sign(card)


def build_extended_card(card: AgentCard, *, skills: frozenset[str] | None) -> AgentCard:
    """The card an authenticated caller gets from GetExtendedAgentCard: the public card with
    its skills narrowed to those the caller's credential may use (None: all). A narrowed
    card is another card: the public card's signatures do not cover it and are left out."""
    if skills is None:
        return card
    return card.model_copy(
        update={
            "skills": [skill for skill in card.skills if skill.id in skills],
            "signatures": None,
        }
    )


def check_card(card: AgentCard, served: ServedFeatures) -> None:
    """Refuse to start with a card that promises what the server does not do.

    Raises:
        CardMismatchError: a capability or interface in the card is not served.
    """
    problems = []
    capabilities = card.capabilities
    if capabilities.streaming and not served.streaming:
        problems.append("capabilities.streaming is on but streaming is not served")
    if capabilities.push_notifications and not served.push_notifications:
        problems.append(
            "capabilities.pushNotifications is on (card.push_notifications) but push "
            "notifications are not served; set card.push_notifications: false"
        )
    if capabilities.extended_agent_card and not served.extended_card:
        problems.append(
            "capabilities.extendedAgentCard is on (card.extended_card) but the extended card "
            "is served only to authenticated callers and auth is off; set auth.enabled: true "
            "(with credentials) or card.extended_card: false"
        )
    advertised = frozenset(card.security_schemes or {})
    required = {
        name for requirement in card.security_requirements or [] for name in requirement.schemes
    }
    if advertised != served.security_schemes or required != served.security_schemes:
        problems.append(
            "the card's securitySchemes / securityRequirements "
            f"({', '.join(sorted(advertised | required)) or 'none'}) are not the schemes the "
            f"server enforces ({', '.join(sorted(served.security_schemes)) or 'none'})"
        )
    for interface in card.supported_interfaces:
        key = (interface.protocol_binding, interface.protocol_version)
        if key not in served.bindings:
            problems.append(
                f"interface {interface.protocol_binding} {interface.protocol_version} at "
                f"{interface.url} is not served"
            )
    if not card.skills:
        problems.append("the card lists no skills; configure at least one under 'skills:'")
    if problems:
        raise CardMismatchError("the agent card does not match the server: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class CardBody:
    """One rendering of the card: its JSON bytes and a strong ETag over them."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, document: JsonObject) -> CardBody:
        body = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
        return cls(body=body, etag='"' + hashlib.sha256(body).hexdigest()[:32] + '"')

    def matches(self, if_none_match: str | None) -> bool:
        """True when the client's `If-None-Match` names this rendering (answer 304)."""
        if not if_none_match:
            return False
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or self.etag in tags


@dataclass(frozen=True, slots=True)
class CardDocument:
    """The card as served, in two renderings of the same card.

    Attributes:
        card: the card itself.
        v1: the pure 1.0 card, which validates against the 1.0 AgentCard schema (it allows
            no other fields).
        hybrid: the 1.0 card plus the 0.3 top-level fields, readable by clients of either
            version (the same document as `v1` when the card lists no 0.3 interface).
        last_modified: when this card was rendered, in whole seconds (HTTP dates have no
            finer grain), for `Last-Modified` and `If-Modified-Since`.
    """

    card: AgentCard
    v1: CardBody
    hybrid: CardBody
    last_modified: datetime

    @classmethod
    def render(cls, card: AgentCard, *, now: datetime | None = None) -> CardDocument:
        document = card.to_wire()
        # 0.3 clients read the top-level fields; 1.0 clients read supportedInterfaces. The
        # merged values (skills, securitySchemes) carry both versions' fields.
        hybrid = hybrid_card(card, document)
        moment = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
        return cls(
            card=card,
            v1=CardBody.of(document),
            hybrid=CardBody.of(hybrid),
            last_modified=moment,
        )
