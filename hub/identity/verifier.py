"""JWT bearer tokens from the company's identity provider (`auth.oidc`), checked with joserfc:
the signature against the issuer's keys (`hub.identity.keys`), then `iss`, `aud`, `exp`,
`nbf` and `iat` with the configured leeway, then the claim that says what the token grants.

A token that passes becomes a `Caller` named `oidc:<sub>`, a name no configured credential
can have (credential names have no `:`), with the skills and partners its claim values
grant. A token that does not pass raises `InvalidTokenError`, whose message says why in
words a client can act on (expired, another audience, an unknown key) and never holds the
token or any part of it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import replace
from typing import Any

from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
    UnsupportedAlgorithmError,
)
from joserfc.jws import extract_compact
from pydantic import SecretStr

from hub.config import OidcGrant, OidcSettings
from hub.config.callers import Caller
from hub.errors import ConfigError
from hub.identity.errors import InvalidTokenError
from hub.identity.keys import IssuerKeys, KeysUnavailableError

__all__ = ["CALLER_PREFIX", "TokenVerifier"]

CALLER_PREFIX = "oidc:"
"""Before a token's subject in its caller's name: apart from every credential's name."""

_CLAIM_PROBLEMS = {
    "iss": "the token was issued by another issuer (iss)",
    "aud": "the token is meant for another audience (aud)",
    "nbf": "the token is not valid yet (nbf)",
    "iat": "the token says it was issued in the future (iat)",
    "sub": "the token's subject (sub) is not a string",
}


class TokenVerifier:
    """Checks JWT bearer tokens against one issuer's settings.

    Args:
        settings: the `auth.oidc` settings.
        skills: the ids of the local skills served, to check the grants' skills against.
        keys: the issuer's keys (read from the settings' `jwks_url` or discovery when not
            given).

    Raises:
        ConfigError: a grant names no skill, or a skill that is not served.
    """

    def __init__(
        self,
        settings: OidcSettings,
        *,
        skills: Collection[str],
        keys: IssuerKeys | None = None,
    ) -> None:
        for value, grant in settings.map.items():
            _check_grant(value, grant, skills)
        self.settings = settings
        self._keys = keys or IssuerKeys(settings)
        self._claims = jwt.JWTClaimsRegistry(
            leeway=int(settings.leeway),
            iss={"essential": True, "value": settings.issuer},
            aud={"essential": True, "value": settings.audience},
            exp={"essential": True},
            sub={"essential": True},
        )

    async def caller(self, token: str) -> Caller:
        """The caller `token` lets in.

        Raises:
            InvalidTokenError: the token is malformed, signed with an algorithm or key the
                issuer does not use, expired, not yet valid, for another issuer or audience,
                or grants nothing here.
        """
        try:
            header = extract_compact(token.encode("latin-1")).headers()
        except (JoseError, ValueError, UnicodeEncodeError):
            raise InvalidTokenError("the bearer token is not a signed JWT") from None
        algorithm = header.get("alg")
        if algorithm not in self.settings.algorithms:
            raise InvalidTokenError(
                f"the token is signed with {_shown(algorithm)}; this hub accepts "
                f"{', '.join(self.settings.algorithms)}"
            )
        kid = header.get("kid")
        try:
            key = await self._keys.key_for(kid if isinstance(kid, str) else None)
        except KeysUnavailableError as exc:
            raise InvalidTokenError(f"{exc}; try again later") from None
        if key is None:
            raise InvalidTokenError(
                f"the token is signed with a key the issuer does not publish (kid {_shown(kid)})"
            )
        try:
            claims = jwt.decode(token, key, algorithms=[algorithm]).claims
        except BadSignatureError:
            raise InvalidTokenError(
                "the token's signature does not match the issuer's key"
            ) from None
        except (UnsupportedAlgorithmError, JoseError, ValueError):
            raise InvalidTokenError("the token could not be read as a signed JWT") from None
        self._check_claims(claims)
        return replace(self._grant(claims), token=SecretStr(token))

    def _check_claims(self, claims: dict[str, Any]) -> None:
        try:
            self._claims.validate(claims)
        except ExpiredTokenError:
            raise InvalidTokenError("the token has expired (exp)") from None
        except MissingClaimError as exc:
            raise InvalidTokenError(f"the token lacks the claims {exc.claim}") from None
        except InvalidClaimError as exc:
            problem = _CLAIM_PROBLEMS.get(exc.claim, f"the token's claim {exc.claim} is invalid")
            if exc.claim == "aud":
                problem += f"; this hub is {_shown(self.settings.audience)}"
            raise InvalidTokenError(problem) from None

    def _grant(self, claims: dict[str, Any]) -> Caller:
        name = CALLER_PREFIX + str(claims["sub"])
        values = _values(claims.get(self.settings.claim))
        if not self.settings.map:
            return Caller(name=name, groups=values, operator=False)
        grants = [
            self.settings.map[value] for value in sorted(values) if value in self.settings.map
        ]
        if not grants:
            raise InvalidTokenError(
                f"the token's {self.settings.claim} claim grants nothing on this hub"
            )
        return Caller(
            name=name,
            skills=_union(grant.skills for grant in grants),
            agents=_union(grant.agents for grant in grants),
            groups=values,
            operator=any(grant.operator for grant in grants),
            budget=next((grant.budget for grant in grants if grant.budget is not None), None),
        )


def _values(claim: object) -> frozenset[str]:
    """A claim's values: the words of a `scope` string, or the strings of a list."""
    if isinstance(claim, str):
        return frozenset(claim.split())
    if isinstance(claim, list):
        return frozenset(value for value in claim if isinstance(value, str))
    return frozenset()


def _union(scopes: Iterable[tuple[str, ...] | None]) -> frozenset[str] | None:
    """What several grants allow together: None (everything) when any allows everything."""
    allowed: set[str] = set()
    for scope in scopes:
        if scope is None:
            return None
        allowed.update(scope)
    return frozenset(allowed)


def _shown(value: object) -> str:
    """A header or claim value for a message: short, quoted, without characters that would
    break the `WWW-Authenticate` quoted string."""
    text = str(value)[:64].replace('"', "").replace("\\", "")
    return f"'{text}'"


def _check_grant(value: str, grant: OidcGrant, served: Collection[str]) -> None:
    if grant.skills is None:
        return
    unknown = [skill for skill in grant.skills if skill not in served]
    if not grant.skills or unknown:
        known = ", ".join(sorted(served))
        raise ConfigError(
            f"auth.oidc.map '{value}': skills {', '.join(unknown) or '(none)'} "
            f"{'are not served' if unknown else 'is empty'} (known: {known})"
        )
