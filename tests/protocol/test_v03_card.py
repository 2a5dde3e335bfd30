"""Agent Card translation: 0.3 and hybrid cards upgraded on read, the hub's hybrid fields."""

from __future__ import annotations

import copy

import pytest

from hub import protocol as v1
from hub.errors import VersionNotSupportedError
from hub.protocol import v03
from hub.protocol.v03.translate import card_to_v03, card_to_v1, card_v03_fields

from .samples import v03_card_document, v1_card_document

SKILL_V1 = {
    "id": "find",
    "name": "Find recipe",
    "description": "Finds a recipe by ingredients",
    "tags": ["cooking"],
    "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
}


def test_a_03_card_is_upgraded_to_10_on_read() -> None:
    assert card_to_v1(v03_card_document()).to_wire() == {
        "name": "Recipe Agent",
        "description": "Finds recipes",
        "supportedInterfaces": [
            {
                "url": "https://recipes.example.com/a2a/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "0.3",
            },
            {
                "url": "https://recipes.example.com/a2a/rest",
                "protocolBinding": "HTTP+JSON",
                "protocolVersion": "0.3",
            },
        ],
        "provider": {"url": "https://kitchen.example.com", "organization": "Kitchen Inc"},
        "version": "1.4.0",
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "extensions": [{"uri": "https://example.com/ext/units/v1", "required": False}],
            "extendedAgentCard": False,
        },
        "securitySchemes": {
            "apiKey": {"apiKeySecurityScheme": {"location": "query", "name": "key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
            "oauth": {
                "oauth2SecurityScheme": {
                    "description": "Kitchen SSO",
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": "https://auth.kitchen.example.com/token",
                            "scopes": {"recipes:read": "Read recipes"},
                        }
                    },
                }
            },
            "oidc": {
                "openIdConnectSecurityScheme": {
                    "openIdConnectUrl": (
                        "https://auth.kitchen.example.com/.well-known/openid-configuration"
                    )
                }
            },
            "mtls": {"mtlsSecurityScheme": {}},
        },
        "securityRequirements": [
            {"schemes": {"oauth": {"list": ["recipes:read"]}}},
            {"schemes": {"mtls": {"list": []}}},
        ],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [SKILL_V1],
    }


def test_a_03_card_without_preferred_transport_is_served_over_jsonrpc() -> None:
    document = v03_card_document()
    del document["preferredTransport"], document["additionalInterfaces"]
    document["protocolVersion"] = "0.3.1"
    assert card_to_v1(document).supported_interfaces == [
        v1.AgentInterface(
            url="https://recipes.example.com/a2a/v1",
            protocol_binding="JSONRPC",
            protocol_version="0.3",
        )
    ]


def test_a_10_card_is_read_as_it_is() -> None:
    document = v1_card_document()
    assert card_to_v1(document) == v1.AgentCard.model_validate(document)


def test_a_hybrid_card_is_read_from_its_10_fields() -> None:
    card = v1.AgentCard.model_validate(v1_card_document())
    hybrid = {**card.to_wire(), **card_v03_fields(card)}
    assert card_to_v1(hybrid) == card


def test_a_hybrid_card_with_a_type_form_scheme_is_upgraded() -> None:
    document = v1_card_document()
    document["securitySchemes"]["apiKey"] = {"type": "apiKey", "in": "cookie", "name": "sid"}
    card = card_to_v1(document)
    assert card.security_schemes is not None
    assert card.security_schemes["apiKey"].to_wire() == {
        "apiKeySecurityScheme": {"location": "cookie", "name": "sid"}
    }


def test_the_hub_card_gets_the_03_top_level_fields() -> None:
    card = v1.AgentCard.model_validate(v1_card_document())
    wire_schemes = card.to_wire()["securitySchemes"]
    assert card_v03_fields(card) == {
        "url": "https://hub.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "security": [{"oauth": ["tasks:write"]}, {"apiKey": []}],
        "supportsAuthenticatedExtendedCard": True,
        "securitySchemes": {
            "apiKey": {
                **wire_schemes["apiKey"],
                "type": "apiKey",
                "description": "Key in a header",
                "in": "header",
                "name": "X-API-Key",
            },
            "bearer": {
                **wire_schemes["bearer"],
                "type": "http",
                "scheme": "Bearer",
                "bearerFormat": "JWT",
            },
            "oauth": {
                **wire_schemes["oauth"],
                "type": "oauth2",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://auth.example.com/authorize",
                        "tokenUrl": "https://auth.example.com/token",
                        "refreshUrl": "https://auth.example.com/refresh",
                        "scopes": {"tasks:write": "Create tasks"},
                    }
                },
                "oauth2MetadataUrl": "https://auth.example.com/.well-known/oauth",
            },
            "oidc": {
                **wire_schemes["oidc"],
                "type": "openIdConnect",
                "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration",
            },
            "mtls": {
                **wire_schemes["mtls"],
                "type": "mutualTLS",
                "description": "Client certificate",
            },
        },
        "skills": [
            {**card.skills[0].to_wire(), "security": [{"bearer": []}]},
            card.skills[1].to_wire(),
        ],
    }


def test_the_hybrid_card_reads_as_a_03_card() -> None:
    card = v1.AgentCard.model_validate(v1_card_document())
    hybrid = {**card.to_wire(), **card_v03_fields(card)}
    assert v03.AgentCard.model_validate(hybrid) == card_to_v03(card)


def test_several_03_interfaces_are_listed_as_additional_interfaces() -> None:
    document = v1_card_document()
    document["supportedInterfaces"].append(
        {
            "url": "https://hub.example.com/v03",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "0.3",
        }
    )
    fields = card_v03_fields(v1.AgentCard.model_validate(document))
    assert fields["additionalInterfaces"] == [
        {"url": "https://hub.example.com/a2a", "transport": "JSONRPC"},
        {"url": "https://hub.example.com/v03", "transport": "HTTP+JSON"},
    ]


def test_a_card_without_a_03_interface_has_no_03_fields() -> None:
    card = v1.AgentCard.model_validate(v1_card_document(with_v03_interface=False))
    assert card_v03_fields(card) == {}
    with pytest.raises(VersionNotSupportedError):
        card_to_v03(card)


def test_a_03_card_survives_a_trip_through_10_except_what_10_dropped() -> None:
    document = v03_card_document()
    expected = copy.deepcopy(document)
    expected["protocolVersion"] = "0.3"
    del expected["capabilities"]["stateTransitionHistory"]
    expected["capabilities"]["extensions"][0]["required"] = False
    # 1.0 keeps one OAuth flow per scheme.
    del expected["securitySchemes"]["oauth"]["flows"]["password"]
    assert card_to_v03(card_to_v1(document)).to_wire() == expected


def test_device_code_flow_and_pkce_have_no_03_form() -> None:
    document = v1_card_document()
    flows = document["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"]
    flows["authorizationCode"]["pkceRequired"] = True
    fields = card_v03_fields(v1.AgentCard.model_validate(document))
    assert "pkceRequired" not in fields["securitySchemes"]["oauth"]["flows"]["authorizationCode"]
    flows.clear()
    flows["deviceCode"] = {
        "deviceAuthorizationUrl": "https://auth.example.com/device",
        "tokenUrl": "https://auth.example.com/token",
        "scopes": {},
    }
    fields = card_v03_fields(v1.AgentCard.model_validate(document))
    assert fields["securitySchemes"]["oauth"]["flows"] == {}
