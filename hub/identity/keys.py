"""The signing keys of one OpenID Connect issuer: its JWKS, read when first needed (from
`jwks_url`, or from the `jwks_uri` its discovery document names), kept for `keys_max_age`,
and read again when a token names a key the set does not hold (the issuer rotated its
keys), at most once per `keys_min_interval` so unknown keys cannot make the hub hammer the
identity provider.

A failed read keeps the keys read before; with none at all, `IssuerKeys.key_for` raises
`KeysUnavailableError`, which the caller turns into a refusal that says so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet

from hub.config import OidcSettings

__all__ = ["IssuerKeys", "KeysUnavailableError"]

log = logging.getLogger("hub.identity")

_TIMEOUT = httpx.Timeout(10.0)


class KeysUnavailableError(Exception):
    """The issuer's keys could not be read and none were read before."""


class IssuerKeys:
    """One issuer's key set, kept and refreshed.

    Args:
        settings: the `auth.oidc` settings (issuer, `jwks_url`, the two intervals).
        clock: seconds, monotonic.
    """

    def __init__(
        self, settings: OidcSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._keys: KeySet | None = None
        self._read_at: float | None = None
        self._jwks_url = settings.jwks_url
        self._lock = anyio.Lock()

    async def key_for(self, kid: str | None) -> Key | None:
        """The key `kid` names (the only key when the token names none and the set has one);
        None when the issuer has no such key, even after reading its set again.

        Raises:
            KeysUnavailableError: the key set could not be read, and none was read before.
        """
        if (self._keys is None or self._stale()) and self._may_read_again():
            await self._read()
        key = self._find(kid)
        if key is None and self._may_read_again():
            await self._read()
            key = self._find(kid)
        return key

    def _stale(self) -> bool:
        return (
            self._read_at is not None
            and self._clock() - self._read_at >= self._settings.keys_max_age
        )

    def _may_read_again(self) -> bool:
        return (
            self._read_at is None
            or self._clock() - self._read_at >= self._settings.keys_min_interval
        )

    def _find(self, kid: str | None) -> Key | None:
        if self._keys is None:
            raise KeysUnavailableError(
                f"the signing keys of {self._settings.issuer} could not be read"
            )
        try:
            return self._keys.get_by_kid(kid)
        except (ValueError, JoseError):
            return None

    async def _read(self) -> None:
        read_before = self._read_at
        async with self._lock:
            if self._read_at != read_before:
                return  # read by another request while this one waited
            try:
                keys = await self._fetch()
            except (httpx.HTTPError, ValueError, KeyError, TypeError, JoseError) as exc:
                # A failure counts as a read: the next try waits its interval too.
                self._read_at = self._clock()
                log.warning("could not read the signing keys of %s: %s", self._settings.issuer, exc)
                return
            self._keys, self._read_at = keys, self._clock()

    async def _fetch(self) -> KeySet:
        async with httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=False) as http:
            if self._jwks_url is None:
                metadata = await _json(http, self._settings.discovery_url)
                if metadata.get("issuer") != self._settings.issuer:
                    raise ValueError(
                        f"the discovery document names issuer {metadata.get('issuer')!r}, "
                        f"not {self._settings.issuer!r}"
                    )
                self._jwks_url = str(metadata["jwks_uri"])
            return KeySet.import_key_set(await _json(http, self._jwks_url))  # type: ignore[arg-type]


async def _json(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    response = await http.get(url, headers={"Accept": "application/json"})
    response.raise_for_status()
    document = response.json()
    if not isinstance(document, dict):
        raise ValueError(f"{url} did not answer with a JSON object")
    return document
