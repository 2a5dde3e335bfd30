"""Who is calling: the credential table built from the `auth` settings, and the caller a
request's headers name (a `Caller`, `hub/config/callers.py`, where a credential becomes a
call scope for the server and for resumed tasks alike).

A bearer that is none of the configured secrets is, when `auth.oidc` is set, checked as a
JWT from the company's identity provider (`hub.identity.verifier`); a token refused there is
answered with the reason in the challenge's `error_description` (RFC 6750 §3).

Secrets are hashed (SHA-256) when the table is built; a presented secret is hashed the same
way and compared with every stored digest in constant time (`hmac.compare_digest`, no early
exit), so neither the comparison nor the number of credentials tells an attacker anything.
No secret, and no part of a presented one, ever goes into a message or a log.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from hub.config import AuthSettings, CredentialSettings, OidcSettings
from hub.config.callers import Caller
from hub.errors import ConfigError, UnauthenticatedError
from hub.identity.errors import InvalidTokenError

if TYPE_CHECKING:
    from hub.identity.verifier import TokenVerifier

__all__ = ["Authenticator", "Caller"]

REALM = "a2a-hub"


def _digest(secret: bytes) -> bytes:
    return hashlib.sha256(secret).digest()


class Authenticator:
    """The credentials of `auth.credentials`, by the digest of their secret.

    Args:
        settings: the `auth` settings.
        skills: the ids of the local skills served, to check the credentials' skill scopes.

    Raises:
        ConfigError: a credential is scoped to no skill, or to a skill that is not served.
    """

    def __init__(self, settings: AuthSettings, *, skills: Collection[str]) -> None:
        self.enabled = settings.enabled
        self.api_key_header = settings.api_key_header
        self._header_key = settings.api_key_header.lower()
        api_keys: list[tuple[bytes, Caller]] = []
        bearers: list[tuple[bytes, Caller]] = []
        for credential in settings.credentials:
            _check_skills(credential, skills)
            if credential.api_key is not None:
                secret = credential.api_key.get_secret_value().encode()
                api_keys.append((_digest(secret), Caller.of(credential)))
            if credential.bearer is not None:
                secret = credential.bearer.get_secret_value().encode()
                bearers.append((_digest(secret), Caller.of(credential)))
        self._api_keys = tuple(api_keys)
        self._bearers = tuple(bearers)
        self._tokens = None if settings.oidc is None else _token_verifier(settings.oidc, skills)

    @property
    def schemes(self) -> frozenset[str]:
        """The card's names of the schemes enforced: `apiKey`, `bearer`, `oidc` (none with
        auth off)."""
        if not self.enabled:
            return frozenset()
        names = {"apiKey"} if self._api_keys else set()
        names |= {"bearer"} if self._bearers else set()
        return frozenset(names | ({"oidc"} if self._tokens is not None else set()))

    def challenge(self, *, invalid_token: str | None = None) -> str:
        """The `WWW-Authenticate` value: one challenge per accepted scheme, the bearer one
        saying why a token was refused when `invalid_token` does."""
        challenges = []
        if self._bearers or self._tokens is not None:
            error = ""
            if invalid_token is not None:
                error = f', error="invalid_token", error_description="{invalid_token}"'
            challenges.append(f'Bearer realm="{REALM}"{error}')
        if self._api_keys:
            challenges.append(f'ApiKey realm="{REALM}", header="{self.api_key_header}"')
        return ", ".join(challenges)

    async def identify(self, headers: Mapping[str, str], *, address: str = "") -> Caller:
        """The caller the request's credentials name (anonymous when auth is off).

        Args:
            headers: the request's headers, looked up by lowercase name.
            address: the client's IP address.

        Raises:
            UnauthenticatedError: auth is on and no credential was sent, or one that does not
                match, or two that name different credentials.
        """
        if not self.enabled:
            return Caller(address=address)
        found: list[Caller] = []
        api_key = headers.get(self._header_key)
        if api_key is not None:
            caller = self._match(self._api_keys, api_key.strip())
            if caller is None:
                raise self._refuse(f"the API key in {self.api_key_header} is not valid")
            found.append(caller)
        authorization = headers.get("authorization")
        if authorization is not None:
            scheme, _, token = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise self._refuse(
                    "the Authorization header must be 'Bearer <token>'"
                    + (f" (API keys go in {self.api_key_header})" if self._api_keys else "")
                )
            found.append(await self._bearer(token.strip()))
        if not found:
            raise self._refuse(f"this hub needs a credential: {self._how()}")
        if len(found) == 2 and found[0].name != found[1].name:
            raise self._refuse("the API key and the bearer token name different credentials")
        return replace(found[0], address=address)

    def _how(self) -> str:
        ways = []
        if self._api_keys:
            ways.append(f"an API key in the {self.api_key_header} header")
        if self._bearers or self._tokens is not None:
            ways.append("a bearer token in 'Authorization: Bearer <token>'")
        return " or ".join(ways)

    async def _bearer(self, token: str) -> Caller:
        caller = self._match(self._bearers, token)
        if caller is not None:
            return caller
        reason = "the bearer token is not valid"
        if self._tokens is not None:
            try:
                return await self._tokens.caller(token)
            except InvalidTokenError as refused:
                reason = str(refused)
        raise self._refuse(reason, invalid_token=reason)

    def _refuse(self, message: str, *, invalid_token: str | None = None) -> UnauthenticatedError:
        return UnauthenticatedError(message, challenge=self.challenge(invalid_token=invalid_token))

    @staticmethod
    def _match(table: tuple[tuple[bytes, Caller], ...], presented: str) -> Caller | None:
        try:
            # Header values arrive decoded as latin-1: this gives back the bytes that were sent.
            digest = _digest(presented.encode("latin-1"))
        except UnicodeEncodeError:
            digest = b""
        found = None
        for stored, caller in table:
            # Every entry is compared, matched or not: the time taken says nothing.
            if hmac.compare_digest(stored, digest):
                found = caller
        return found


def _token_verifier(settings: OidcSettings, skills: Collection[str]) -> TokenVerifier:
    """The checker of `auth.oidc` tokens; it needs the `identity` extra."""
    try:
        from hub.identity.verifier import TokenVerifier
    except ImportError as exc:
        raise ConfigError(
            f"auth.oidc needs the identity extra ({exc.name} is not installed): "
            "pip install 'a2a-hub[identity]'"
        ) from None
    return TokenVerifier(settings, skills=skills)


def _check_skills(credential: CredentialSettings, served: Collection[str]) -> None:
    if credential.skills is None:
        return
    known = ", ".join(sorted(served))
    if not credential.skills:
        raise ConfigError(
            f"auth.credentials '{credential.name}': skills is empty, so it could run nothing; "
            f"list some (known: {known}) or leave skills out for all"
        )
    unknown = [skill for skill in credential.skills if skill not in served]
    if unknown:
        raise ConfigError(
            f"auth.credentials '{credential.name}': skills {', '.join(unknown)} are not served "
            f"by this hub (known: {known})"
        )
