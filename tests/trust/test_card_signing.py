"""The hub signs its card (`card.signing`): the a2a-sdk 1.3 client's own signature check
verifies it, in both renderings the hub serves, for EC, RSA and Ed25519 keys given as PEM or
as a JWK; a card changed after signing fails that check; the key never shows."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import rfc8785
from a2a.client.card_resolver import A2ACardResolver, parse_agent_card
from a2a.types import AgentCard as SdkAgentCard
from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry

from hub.config import (
    CardSettings,
    CardSigningSettings,
    ExtensionSettings,
    ProviderSettings,
    Settings,
    StoreSettings,
)
from hub.errors import ConfigError
from hub.protocol import AgentCard
from hub.server.card import build_card, sign_card
from hub.skills.echo import echo
from hub.testing import serve_hub
from hub.trust.canonical import signing_input
from tests.trust.keys import KeyKind, public_jwk, write_key

pytestmark = pytest.mark.anyio

ALGORITHMS = ["ES256", "RS256", "EdDSA"]


def signing_settings(key_file: Path, *, kid: str | None = None) -> Settings:
    """Settings whose card has every kind of field the canonical form treats specially: an
    extension with `required: false` and params (numbers, a nested empty value, a false),
    a provider, and `streaming: false` (an optional bool kept when false)."""
    card = CardSettings(
        name="signed-hub",
        description="A hub whose card is signed — ünïcode included",
        provider=ProviderSettings(organization="Example", url="https://example.com"),
        streaming=False,
        extensions=(
            ExtensionSettings(
                uri="https://example.com/ext/v1",
                description="an extension",
                params={"limit": 3, "ratio": 0.5, "empty": "", "off": False, "nested": {}},
            ),
        ),
        signing=CardSigningSettings(key_file=str(key_file), kid=kid),
    )
    return Settings(card=card, store=StoreSettings(kind="memory"))


def verifier(jwk: dict[str, Any]) -> Callable[[SdkAgentCard], None]:
    """The SDK's verifier, its keys being the one public JWK."""
    key = jwt.PyJWK(jwk)

    def by_kid(kid: str | None, jku: str | None) -> jwt.PyJWK:
        assert kid == jwk["kid"]
        return key

    return create_signature_verifier(by_kid, ALGORITHMS)


@pytest.mark.parametrize(
    ("kind", "as_jwk"), [("ec", False), ("rsa", False), ("ed25519", False), ("ec", True)]
)
async def test_the_sdk_client_verifies_the_hubs_signed_card_in_both_renderings(
    tmp_path: Path, kind: KeyKind, as_jwk: bool
) -> None:
    key_file = write_key(tmp_path / "card.key", kind, as_jwk=as_jwk)
    settings = signing_settings(key_file, kid="hub-2026")
    async with serve_hub(skills=[echo], settings=settings) as hub, httpx.AsyncClient() as http:
        check = verifier(public_jwk(key_file, kid="hub-2026"))
        for version in ("1.0", None):  # the pure 1.0 card, and the hybrid one
            headers = {"A2A-Version": version} if version else {}
            card = await A2ACardResolver(http, hub.url).get_agent_card(
                http_kwargs={"headers": headers}, signature_verifier=check
            )
            assert card.name == "signed-hub"
            # One over the 1.0 card, one over the hybrid rendering as it is served.
            assert len(card.signatures) == 2
            for signature in card.signatures:
                header = json.loads(base64.urlsafe_b64decode(signature.protected + "=="))
                assert header["kid"] == "hub-2026"
                assert header["typ"] == "JOSE"
                assert header["alg"] == {"ec": "ES256", "rsa": "RS256", "ed25519": "EdDSA"}[kind]


@pytest.mark.parametrize("version", ["1.0", None], ids=["pure 1.0", "hybrid"])
async def test_a_verifier_that_reads_the_card_as_served_verifies_each_rendering(
    tmp_path: Path, version: str | None
) -> None:
    key_file = write_key(tmp_path / "card.key")
    # A plain card: such a verifier and the a2a-sdk's disagree on empty values inside an
    # extension's params (the SDK drops them, as the hub's canonical form does).
    settings = Settings(
        card=CardSettings(signing=CardSigningSettings(key_file=str(key_file), kid="k1")),
        store=StoreSettings(kind="memory"),
    )
    async with serve_hub(skills=[echo], settings=settings) as hub, httpx.AsyncClient() as http:
        headers = {"A2A-Version": version} if version else {}
        served = await http.get(f"{hub.url}/.well-known/agent-card.json", headers=headers)
    document = served.json()
    assert ("protocolVersion" in document) == (version is None)  # 0.3 fields in the hybrid
    key = JWKRegistry.import_key(public_jwk(key_file, kid="k1"))
    assert strict_verification(document, key)
    document["url"] = "https://elsewhere.example"  # a 0.3 field changed after signing
    assert not strict_verification(document, key)


def strict_verification(document: dict[str, Any], key: Any) -> bool:
    """Whether one of the card's signatures verifies over the card as it came, read the way
    a verifier that does not parse it as a 1.0 card reads it: `signatures` left out, the
    defaults of the fields the 1.0 proto knows left out (those without presence, and empty
    lists and maps), every other field kept as it is (RFC 8785, then a detached JWS)."""
    content = {k: v for k, v in document.items() if k != "signatures"}
    payload = rfc8785.dumps(_stripped(content, SdkAgentCard.DESCRIPTOR))
    for signature in document.get("signatures", []):
        try:
            jws.deserialize_compact(
                f"{signature['protected']}..{signature['signature']}", key, payload=payload
            )
        except JoseError:
            continue
        return True
    return False


def _stripped(value: dict[str, Any], descriptor: Any) -> dict[str, Any]:
    fields = {field.json_name: field for field in descriptor.fields}
    kept: dict[str, Any] = {}
    for name, item in value.items():
        field = fields.get(name)
        if field is None:
            kept[name] = item
            continue
        message = field.message_type
        is_map = message is not None and message.GetOptions().map_entry
        if field.is_repeated or is_map:
            if not item:
                continue
            if is_map:
                inner = message.fields_by_name["value"].message_type
                kept[name] = {k: _stripped(v, inner) if inner else v for k, v in item.items()}
            elif message is not None:
                kept[name] = [_stripped(entry, message) for entry in item]
            else:
                kept[name] = item
        elif message is not None:
            kept[name] = _stripped(item, message) if isinstance(item, dict) else item
        elif field.has_presence or item != field.default_value:
            kept[name] = item
    return kept


async def test_a_card_changed_after_signing_fails_the_sdk_check(tmp_path: Path) -> None:
    key_file = write_key(tmp_path / "card.key")
    settings = signing_settings(key_file, kid="k1")
    async with serve_hub(skills=[echo], settings=settings) as hub, httpx.AsyncClient() as http:
        document = (await http.get(f"{hub.url}/.well-known/agent-card.json")).json()
    document["description"] = "a different hub"
    with pytest.raises(InvalidSignaturesError):
        verifier(public_jwk(key_file, kid="k1"))(parse_agent_card(document))


def test_the_default_kid_is_the_keys_thumbprint_and_the_payload_is_canonical(
    tmp_path: Path,
) -> None:
    key_file = write_key(tmp_path / "card.key")
    settings = signing_settings(key_file)
    card = sign_card(build_card(settings, [echo.card]), settings)
    assert card.signatures is not None
    header = json.loads(base64.urlsafe_b64decode(card.signatures[0].protected + "=="))
    assert header["kid"] == JWKRegistry.import_key(public_jwk(key_file)).thumbprint()
    payload = signing_input(card)
    assert b"signatures" not in payload
    assert b'"required"' not in payload  # the extension's required: false is a default
    assert b'"streaming":false' in payload  # an optional bool keeps its false
    assert b'"off":false' in payload  # a false inside params is a value
    assert b'"empty"' not in payload
    assert b"nested" not in payload
    assert "ünïcode".encode() in payload  # RFC 8785: UTF-8, not \\u escapes
    assert signing_input(AgentCard.model_validate_json(card.to_json())) == payload


def test_a_signing_key_that_cannot_be_used_stops_start_up_without_showing_it(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "public-only.pem"
    real = write_key(tmp_path / "card.key")
    secret.write_text("-----BEGIN PRIVATE KEY-----\nnot really a key\n-----END PRIVATE KEY-----\n")
    for path, expected in [
        (tmp_path / "absent.pem", "cannot be read"),
        (secret, "not a PEM private key"),
    ]:
        with pytest.raises(ConfigError, match=expected) as caught:
            sign_card(build_card(signing_settings(path), [echo.card]), signing_settings(path))
        assert "not really a key" not in str(caught.value)
    wrong_alg = signing_settings(real).card.model_copy(
        update={"signing": CardSigningSettings(key_file=str(real), alg="RS256")}
    )
    settings = Settings(card=wrong_alg, store=StoreSettings(kind="memory"))
    with pytest.raises(ConfigError, match="alg RS256 does not suit the EC key"):
        sign_card(build_card(settings, [echo.card]), settings)
