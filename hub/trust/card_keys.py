"""`CardKeys`: the keys a partner's card must be signed with (`verify_card` in agents.yaml),
a JWKS URL or public JWKs written in the entry. Only the settings: the check is
`hub.trust.verify`, which needs the `identity` extra."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import field_validator, model_validator
from pydantic_core import PydanticCustomError

from hub.config import StrictModel
from hub.trust.extra import IDENTITY_PIP, missing_identity_modules

__all__ = ["SIGNATURE_ALGORITHMS", "CardKeys"]

SIGNATURE_ALGORITHMS = (
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "EdDSA",
)
"""The JWS algorithms a card signature may use: asymmetric ones only (a symmetric key or
`none` would let anyone who can read the key sign a card)."""

# A JWK's private members, by key type (RFC 7518 §6, RFC 8037).
_PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")


class CardKeys(StrictModel):
    """Where the keys that sign a partner's card are: exactly one of `jwks_url` and `keys`."""

    jwks_url: str | None = None
    """A JSON Web Key Set, fetched (and fetched again for a key id it does not hold, at most
    once a minute)."""
    keys: tuple[dict[str, Any], ...] | None = None
    """Public JWKs, written out (each with its `kid`, unless there is only one)."""

    @field_validator("jwks_url")
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PydanticCustomError(
                "jwks_url", "jwks_url must be an http:// or https:// URL with a host"
            )
        return url

    @field_validator("keys")
    @classmethod
    def _check_keys(
        cls, keys: tuple[dict[str, Any], ...] | None
    ) -> tuple[dict[str, Any], ...] | None:
        if keys is None:
            return None
        if not keys:
            raise PydanticCustomError("keys_empty", "keys is empty; list the partner's JWKs")
        for index, key in enumerate(keys):
            if "kty" not in key:
                raise PydanticCustomError("jwk_kty", f"keys.{index} is not a JWK (it has no 'kty')")
            if any(member in key for member in _PRIVATE_MEMBERS):
                raise PydanticCustomError(
                    "jwk_private",
                    f"keys.{index} holds a private or symmetric key; give the partner's "
                    "public key only",
                )
            if len(keys) > 1 and "kid" not in key:
                raise PydanticCustomError(
                    "jwk_kid", f"keys.{index} has no 'kid'; with several keys each needs one"
                )
        return keys

    @model_validator(mode="after")
    def _one_source(self) -> CardKeys:
        if (self.jwks_url is None) == (self.keys is None):
            raise PydanticCustomError(
                "verify_card_source", "verify_card takes either jwks_url or keys (one of them)"
            )
        if missing_identity_modules():
            raise PydanticCustomError(
                "identity_extra", f"verify_card needs the identity extra: {IDENTITY_PIP}"
            )
        from joserfc.errors import JoseError  # the extra, there when verify_card is set
        from joserfc.jwk import JWKRegistry

        for index, key in enumerate(self.keys or ()):
            try:
                JWKRegistry.import_key(dict(key))
            except (JoseError, ValueError, TypeError, KeyError) as exc:
                raise PydanticCustomError(
                    "jwk_invalid", f"keys.{index} is not a valid JWK ({type(exc).__name__})"
                ) from None
        return self
