"""Translation of the Agent Card between A2A v0.3 and 1.0.

A partner's card is upgraded on read (`card_to_v1`), whether it is a 0.3 card or a hybrid one.
The hub serves a hybrid card: its 1.0 card plus the 0.3 top-level fields (`card_v03_fields`).
Import these through `hub.protocol.v03.translate`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from pydantic import TypeAdapter

from hub import protocol as v1
from hub.errors import VersionNotSupportedError
from hub.protocol import v03
from hub.protocol.base import JsonObject

__all__ = ["card_to_v03", "card_to_v1", "card_v03_fields", "hybrid_card"]

DEFAULT_TRANSPORT = "JSONRPC"

# The oneof member keys of a 1.0 SecurityScheme; a scheme with none of them is in 0.3 form.
_SCHEME_KEYS = frozenset(
    {
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
    }
)
# A 1.0 OAuthFlows holds one flow; of several 0.3 flows the first in this order is kept.
_FLOW_ORDER = ("authorization_code", "client_credentials", "implicit", "password")


@functools.cache
def _v03_flow_models() -> dict[str, type[v1.WireModel]]:
    # Built on first use: the 0.3 models load only when a 0.3 card is met.
    return {
        "authorization_code": v03.AuthorizationCodeOAuthFlow,
        "client_credentials": v03.ClientCredentialsOAuthFlow,
        "implicit": v03.ImplicitOAuthFlow,
        "password": v03.PasswordOAuthFlow,
    }


@functools.cache
def _v03_scheme() -> TypeAdapter[v03.SecurityScheme]:
    return TypeAdapter(v03.SecurityScheme)


def _major_minor(version: str) -> tuple[int, int] | None:
    parts = version.strip().split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def _is_v03(version: str) -> bool:
    # 0.3.x is the only pre-1.0 version with this wire form; an unreadable version is not 0.3.
    parsed = _major_minor(version)
    return parsed is not None and parsed[0] == 0 and parsed[1] >= 3


def _interface_version(version: str) -> str:
    # 1.0 names interface versions as major.minor ("0.3"); 0.3 cards said "0.3.0".
    parsed = _major_minor(version)
    return "0.3" if parsed is None else f"{parsed[0]}.{parsed[1]}"


def _requirements_to_v1(security: list[v03.SecurityRequirement]) -> list[v1.SecurityRequirement]:
    return [
        v1.SecurityRequirement(
            schemes={name: v1.StringList(list_=list(scopes)) for name, scopes in entry.items()}
        )
        for entry in security
    ]


def _requirements_to_v03(
    requirements: list[v1.SecurityRequirement],
) -> list[v03.SecurityRequirement]:
    return [
        {name: list(scopes.list_) for name, scopes in requirement.schemes.items()}
        for requirement in requirements
    ]


def _flows_to_v1(flows: v03.OAuthFlows) -> v1.OAuthFlows:
    for name in _FLOW_ORDER:
        flow = getattr(flows, name)
        if flow is not None:
            return v1.OAuthFlows(**{name: flow.to_wire()})
    return v1.OAuthFlows()


def _flows_to_v03(flows: v1.OAuthFlows) -> v03.OAuthFlows:
    # `deviceCode` and `pkceRequired` have no 0.3 form; the flow models ignore the latter.
    found = {
        name: model.model_validate(getattr(flows, name))
        for name, model in _v03_flow_models().items()
        if getattr(flows, name) is not None
    }
    return v03.OAuthFlows.model_validate(found)


def _scheme_to_v1(scheme: v03.SecurityScheme) -> v1.SecurityScheme:
    if isinstance(scheme, v03.APIKeySecurityScheme):
        return v1.SecurityScheme(
            api_key_security_scheme=v1.APIKeySecurityScheme(
                description=scheme.description, location=scheme.in_, name=scheme.name
            )
        )
    if isinstance(scheme, v03.HTTPAuthSecurityScheme):
        return v1.SecurityScheme(
            http_auth_security_scheme=v1.HTTPAuthSecurityScheme(
                description=scheme.description,
                scheme=scheme.scheme,
                bearer_format=scheme.bearer_format,
            )
        )
    if isinstance(scheme, v03.OAuth2SecurityScheme):
        return v1.SecurityScheme(
            oauth2_security_scheme=v1.OAuth2SecurityScheme(
                description=scheme.description,
                flows=_flows_to_v1(scheme.flows),
                oauth2_metadata_url=scheme.oauth2_metadata_url,
            )
        )
    if isinstance(scheme, v03.OpenIdConnectSecurityScheme):
        return v1.SecurityScheme(
            open_id_connect_security_scheme=v1.OpenIdConnectSecurityScheme(
                description=scheme.description, open_id_connect_url=scheme.open_id_connect_url
            )
        )
    return v1.SecurityScheme(
        mtls_security_scheme=v1.MutualTlsSecurityScheme(description=scheme.description)
    )


def _scheme_to_v03(scheme: v1.SecurityScheme) -> v03.SecurityScheme | None:
    if (api_key := scheme.api_key_security_scheme) is not None:
        return v03.APIKeySecurityScheme.model_validate(
            {
                "description": api_key.description,
                "in": api_key.location.lower(),
                "name": api_key.name,
            }
        )
    if (http := scheme.http_auth_security_scheme) is not None:
        return v03.HTTPAuthSecurityScheme(
            description=http.description, scheme=http.scheme, bearer_format=http.bearer_format
        )
    if (oauth2 := scheme.oauth2_security_scheme) is not None:
        return v03.OAuth2SecurityScheme(
            description=oauth2.description,
            flows=_flows_to_v03(oauth2.flows),
            oauth2_metadata_url=oauth2.oauth2_metadata_url,
        )
    if (oidc := scheme.open_id_connect_security_scheme) is not None:
        return v03.OpenIdConnectSecurityScheme(
            description=oidc.description, open_id_connect_url=oidc.open_id_connect_url
        )
    if (mtls := scheme.mtls_security_scheme) is not None:
        return v03.MutualTLSSecurityScheme(description=mtls.description)
    return None  # a scheme kind this hub does not know: nothing to say to a 0.3 client


def _skill_to_v1(skill: v03.AgentSkill) -> v1.AgentSkill:
    return v1.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=skill.tags,
        examples=skill.examples,
        input_modes=skill.input_modes,
        output_modes=skill.output_modes,
        security_requirements=None
        if skill.security is None
        else _requirements_to_v1(skill.security),
    )


def _skill_to_v03(skill: v1.AgentSkill) -> v03.AgentSkill:
    return v03.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=skill.tags,
        examples=skill.examples,
        input_modes=skill.input_modes,
        output_modes=skill.output_modes,
        security=None
        if skill.security_requirements is None
        else _requirements_to_v03(skill.security_requirements),
    )


def _upgrade(card: v03.AgentCard) -> v1.AgentCard:
    version = _interface_version(card.protocol_version)
    primary = v1.AgentInterface(
        url=card.url,
        protocol_binding=card.preferred_transport or DEFAULT_TRANSPORT,
        protocol_version=version,
    )
    interfaces = [primary]
    seen = {(primary.url, primary.protocol_binding)}
    # 0.3 asks `additionalInterfaces` to repeat the main url; it is listed once here.
    for extra in card.additional_interfaces or []:
        if (extra.url, extra.transport) not in seen:
            seen.add((extra.url, extra.transport))
            interfaces.append(
                v1.AgentInterface(
                    url=extra.url, protocol_binding=extra.transport, protocol_version=version
                )
            )
    capabilities = card.capabilities
    return v1.AgentCard(
        name=card.name,
        description=card.description,
        supported_interfaces=interfaces,
        provider=None
        if card.provider is None
        else v1.AgentProvider(url=card.provider.url, organization=card.provider.organization),
        version=card.version,
        documentation_url=card.documentation_url,
        capabilities=v1.AgentCapabilities(
            streaming=capabilities.streaming,
            push_notifications=capabilities.push_notifications,
            extensions=None
            if capabilities.extensions is None
            else [
                v1.AgentExtension(
                    uri=extension.uri,
                    description=extension.description,
                    required=bool(extension.required),
                    params=extension.params,
                )
                for extension in capabilities.extensions
            ],
            extended_agent_card=card.supports_authenticated_extended_card,
        ),
        security_schemes=None
        if card.security_schemes is None
        else {name: _scheme_to_v1(scheme) for name, scheme in card.security_schemes.items()},
        security_requirements=None if card.security is None else _requirements_to_v1(card.security),
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        skills=[_skill_to_v1(skill) for skill in card.skills],
        signatures=None
        if card.signatures is None
        else [v1.AgentCardSignature.model_validate(s.to_wire()) for s in card.signatures],
        icon_url=card.icon_url,
    )


def _upgrade_schemes(schemes: object) -> object:
    # A hybrid card may still carry a scheme only in the 0.3 `type` form.
    if not isinstance(schemes, dict):
        return schemes
    return {
        name: _scheme_to_v1(_v03_scheme().validate_python(scheme)).to_wire()
        if isinstance(scheme, dict) and "type" in scheme and not _SCHEME_KEYS & scheme.keys()
        else scheme
        for name, scheme in schemes.items()
    }


def card_to_v1(document: Mapping[str, object]) -> v1.AgentCard:
    """Read a partner's card, whichever version it is written for.

    A card with `supportedInterfaces` is read as 1.0 and its 0.3 fields are ignored. Otherwise
    it is a 0.3 card: `url`, `preferredTransport` and `additionalInterfaces` become
    `supportedInterfaces` (version from `protocolVersion`), `supportsAuthenticatedExtendedCard`
    becomes `capabilities.extendedAgentCard`, `security` becomes `securityRequirements` and
    the `type`-form security schemes become 1.0's wrapper keys.

    Raises:
        pydantic.ValidationError: the document is neither a valid 1.0 nor a valid 0.3 card.
    """
    if "supportedInterfaces" in document:
        upgraded = dict(document)
        if "securitySchemes" in upgraded:
            upgraded["securitySchemes"] = _upgrade_schemes(upgraded["securitySchemes"])
        return v1.AgentCard.model_validate(upgraded)
    return _upgrade(v03.AgentCard.model_validate(document))


def card_to_v03(card: v1.AgentCard) -> v03.AgentCard:
    """The 0.3 form of a 1.0 card, built on its 0.3 interfaces (the first is the main `url`).

    Raises:
        VersionNotSupportedError: the card lists no 0.3 interface.
    """
    legacy = [i for i in card.supported_interfaces if _is_v03(i.protocol_version)]
    if not legacy:
        raise VersionNotSupportedError(
            f"agent card '{card.name}' lists no 0.3 interface in supportedInterfaces"
        )
    primary = legacy[0]
    capabilities = card.capabilities
    schemes = {
        name: converted
        for name, scheme in (card.security_schemes or {}).items()
        if (converted := _scheme_to_v03(scheme)) is not None
    }
    return v03.AgentCard(
        protocol_version=primary.protocol_version,
        name=card.name,
        description=card.description,
        url=primary.url,
        preferred_transport=primary.protocol_binding,
        # Per 0.3, the list repeats the main interface; one interface needs no list.
        additional_interfaces=[
            v03.AgentInterface(url=i.url, transport=i.protocol_binding) for i in legacy
        ]
        if len(legacy) > 1
        else None,
        icon_url=card.icon_url,
        provider=None
        if card.provider is None
        else v03.AgentProvider(url=card.provider.url, organization=card.provider.organization),
        version=card.version,
        documentation_url=card.documentation_url,
        capabilities=v03.AgentCapabilities(
            streaming=capabilities.streaming,
            push_notifications=capabilities.push_notifications,
            extensions=None
            if capabilities.extensions is None
            else [v03.AgentExtension.model_validate(e.to_wire()) for e in capabilities.extensions],
        ),
        security_schemes=schemes or None,
        security=None
        if card.security_requirements is None
        else _requirements_to_v03(card.security_requirements),
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        skills=[_skill_to_v03(skill) for skill in card.skills],
        supports_authenticated_extended_card=capabilities.extended_agent_card,
        signatures=None
        if card.signatures is None
        else [v03.AgentCardSignature.model_validate(s.to_wire()) for s in card.signatures],
    )


def card_v03_fields(card: v1.AgentCard) -> JsonObject:
    """The 0.3 fields to merge into the hub's 1.0 card so that it also reads as a 0.3 card.

    Returns `url`, `preferredTransport`, `protocolVersion`, `additionalInterfaces`, `security`
    and `supportsAuthenticatedExtendedCard` as the 0.3 card has them; `securitySchemes` with
    the 0.3 keys (`type`, `in`, `name`, ...) merged beside the 1.0 wrapper key of each scheme;
    and, when a skill has security requirements, `skills` with each skill's 0.3 `security`
    added. The merged values are supersets of the 1.0 ones, so they may replace them. A card
    with no 0.3 interface gets no 0.3 fields.
    """
    try:
        legacy = card_to_v03(card).to_wire()
    except VersionNotSupportedError:
        return {}
    plain = (
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    )
    fields: JsonObject = {key: legacy[key] for key in plain if key in legacy}
    if card.security_schemes:
        old_schemes = legacy.get("securitySchemes", {})
        fields["securitySchemes"] = {
            name: {**scheme.to_wire(), **old_schemes.get(name, {})}
            for name, scheme in card.security_schemes.items()
        }
    if any(skill.security_requirements for skill in card.skills):
        fields["skills"] = [
            {**skill.to_wire(), **old_skill}
            for skill, old_skill in zip(card.skills, legacy["skills"], strict=True)
        ]
    return fields


def hybrid_card(card: v1.AgentCard, document: JsonObject | None = None) -> JsonObject:
    """The hybrid rendering of `card`: its 1.0 JSON (`document`, when already made) with the
    0.3 fields of `card_v03_fields` merged in; the 1.0 JSON alone for a card with no 0.3
    interface."""
    return {**(card.to_wire() if document is None else document), **card_v03_fields(card)}
