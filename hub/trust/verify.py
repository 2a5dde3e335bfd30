"""`CardVerifier`: a partner's card accepted only when one of its signatures verifies with
the keys of its `verify_card` (A2A 1.0 §8.4.3), refused with the reason otherwise.

The payload is the card's canonical form (`hub.trust.canonical`), the same bytes the hub
signs its own card over. A JWKS is fetched when first needed, and again when a signature
names a key id it does not hold, at most once a `refetch_after`: a card signed with a new
key is accepted once the partner publishes it, and a card naming keys that do not exist
cannot make the hub fetch the JWKS at every read.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import httpx
from joserfc import jws
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import JWKRegistry, Key
from joserfc.registry import HeaderParameter

from hub.errors import CardRefusedError
from hub.protocol import AgentCard, AgentCardSignature
from hub.protocol.urls import shown_url
from hub.trust.canonical import signing_input
from hub.trust.card_keys import SIGNATURE_ALGORITHMS, CardKeys

__all__ = ["CardVerifier"]

REFETCH_AFTER = 60.0
"""Seconds between two fetches of a JWKS for a key id it did not hold."""


class CardVerifier:
    """Checks the cards of one partner against the keys of its `verify_card`.

    Args:
        keys: the partner's `verify_card`.
        http: the client a JWKS is fetched with (the partner's, so its TLS applies).
        refetch_after: seconds before a JWKS is fetched again for an unknown key id.
        clock: monotonic seconds; injectable for tests.
    """

    def __init__(
        self,
        keys: CardKeys,
        http: httpx.AsyncClient,
        *,
        refetch_after: float = REFETCH_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._source = keys
        self._http = http
        self._refetch_after = refetch_after
        self._clock = clock
        self._keys: dict[str | None, Key] = {} if keys.keys is None else _by_kid(keys.keys)
        self._fetched_at: float | None = None
        self._lock = anyio.Lock()

    async def verify(self, name: str, card: AgentCard) -> None:
        """Return when one of `card`'s signatures verifies; refuse the card otherwise.

        Args:
            name: the partner's name, for the message.
            card: the card as read.

        Raises:
            CardRefusedError: no signature, none that verifies, or the keys could not be
                read; the message says which, naming the key id and never a key.
        """
        if not card.signatures:
            raise CardRefusedError(
                f"agent '{name}': its agent card has no signature (verify_card is set)"
            )
        payload = signing_input(card)
        reasons = []
        for signature in card.signatures:
            reason = await self._check(name, signature, payload)
            if reason is None:
                return
            reasons.append(reason)
        raise CardRefusedError(f"agent '{name}': its agent card {'; '.join(reasons)}")

    async def _check(self, name: str, signature: AgentCardSignature, payload: bytes) -> str | None:
        """None when `signature` verifies, else why not."""
        header = _protected_header(signature.protected)
        if header is None:
            return "has a signature whose protected header is not a JSON object in base64url"
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in SIGNATURE_ALGORITHMS:
            return f"is signed with alg {alg!r}, which is not accepted"
        key = await self._key(name, kid if isinstance(kid, str) else None)
        if key is None:
            return f"is signed with key {kid!r}, which verify_card does not hold"
        try:
            with warnings.catch_warnings():
                # joserfc calls EdDSA deprecated (RFC 9864); it is what cards are signed with.
                warnings.simplefilter("ignore", SecurityWarning)
                jws.deserialize_compact(
                    f"{signature.protected}..{signature.signature}",
                    key,
                    payload=payload,
                    registry=_registry(alg),
                )
        except (JoseError, ValueError):
            return f"signature does not verify with key {kid!r}"
        return None

    async def _key(self, name: str, kid: str | None) -> Key | None:
        """The key `kid` names (the only key, when the signature names none)."""
        key = self._lookup(kid)
        if key is not None or self._source.jwks_url is None:
            return key
        async with self._lock:
            key = self._lookup(kid)
            fresh = self._fetched_at is not None and (
                self._clock() - self._fetched_at < self._refetch_after
            )
            if key is None and not fresh:
                self._keys = await self._fetch(name, self._source.jwks_url)
                self._fetched_at = self._clock()
                key = self._lookup(kid)
        return key

    def _lookup(self, kid: str | None) -> Key | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    async def _fetch(self, name: str, url: str) -> dict[str | None, Key]:
        where = shown_url(url)
        try:
            response = await self._http.get(
                url, headers={"Accept": "application/json"}, timeout=httpx.Timeout(5.0, read=10.0)
            )
        except httpx.HTTPError as exc:
            raise CardRefusedError(
                f"agent '{name}': the keys of verify_card could not be read (unreachable)",
                detail=f"GET {where}: {type(exc).__name__}: {exc}",
            ) from None
        if response.status_code != 200:
            raise CardRefusedError(
                f"agent '{name}': the keys of verify_card could not be read "
                f"(HTTP {response.status_code})",
                detail=f"GET {where}",
            )
        try:
            document = response.json()
            listed = document["keys"]
            if not isinstance(listed, list):
                raise TypeError("keys is not a list")
            return _by_kid(listed)
        except (ValueError, TypeError, KeyError, JoseError) as exc:
            raise CardRefusedError(
                f"agent '{name}': the keys of verify_card could not be read (not a JWKS)",
                detail=f"GET {where}: {type(exc).__name__}",
            ) from None


def _url_or_null(value: Any) -> None:
    if value is not None and not (isinstance(value, str) and value.startswith("https://")):
        raise ValueError("must be an https URL")


def _registry(alg: str) -> jws.JWSRegistry:
    """A registry that accepts only `alg`, and a `jku` of null: the a2a-sdk's signer writes
    one when its caller gives none (its protected header type lists `jku` as optional)."""
    return jws.JWSRegistry(
        header_registry={"jku": HeaderParameter("JWK Set URL, or null", _url_or_null)},
        algorithms=[alg],
    )


def _by_kid(jwks: Any) -> dict[str | None, Key]:
    """Public keys by key id (a key without one under None), private members ignored."""
    keys: dict[str | None, Key] = {}
    for jwk in jwks:
        if not isinstance(jwk, Mapping):
            raise TypeError("a key is not a JSON object")
        if jwk.get("use", "sig") != "sig":
            continue
        key = JWKRegistry.import_key(dict(jwk))
        public = JWKRegistry.import_key(dict(key.as_dict(private=False)))
        keys[jwk.get("kid")] = public
    return keys


def _protected_header(protected: str) -> dict[str, Any] | None:
    try:
        decoded = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
    except (binascii.Error, ValueError):
        return None
    return decoded if isinstance(decoded, dict) else None
