"""`CardSigner`: the hub's card signed with the key of `card.signing`, as A2A 1.0 specifies
(§8.4): a JWS whose payload is the card's canonical form (`hub.trust.canonical`), detached,
kept in the card's `signatures` as its protected header and signature.

A card the hub also serves as a hybrid (its 1.0 JSON with the 0.3 fields merged in, for
clients of either version) gets a second signature, over that rendering as it is served: a
verifier that parses the card as 1.0 first (the a2a-sdk's) checks the first, one that reads
the JSON as it came (the conformance kit's) the second. Either is enough, as a card verifies
when one of its signatures does.

The key is read once, at start-up; a key that cannot be read stops the start with the file's
name and what is wrong, never the key.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from joserfc import jws
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import ECKey, JWKRegistry, Key, OKPKey, RSAKey

from hub.config import CardSigningSettings
from hub.errors import ConfigError
from hub.protocol import AgentCard, AgentCardSignature
from hub.protocol.v03.translate import hybrid_card
from hub.trust.canonical import rendering_signing_input, signing_input

__all__ = ["CardSigner"]

# The algorithm a key signs with when `alg` is not set, by key type (and curve).
_DEFAULT_ALG = {"RSA": "RS256", "P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


class CardSigner:
    """Signs cards with one private key.

    Args:
        key: the private key (RSA, EC P-256/384/521 or Ed25519).
        kid: the key id in the protected header; default: the key's own, else its RFC 7638
            thumbprint.
        alg: the JWS algorithm; default: the key's usual one.

    Raises:
        ConfigError: `alg` does not suit the key.
    """

    def __init__(self, key: Key, *, kid: str | None = None, alg: str | None = None) -> None:
        if key.is_private is False:
            raise ConfigError("card.signing: the key is a public key; give the private key")
        self._key = key
        self.kid = kid or key.kid or key.thumbprint()
        self.alg = alg or _default_alg(key)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SecurityWarning)
                jws.serialize_compact({"alg": self.alg}, b"probe", key, algorithms=[self.alg])
        except (JoseError, ValueError) as exc:
            raise ConfigError(
                f"card.signing: alg {self.alg} does not suit the {key.key_type} key ({exc})"
            ) from None

    @classmethod
    def from_settings(cls, settings: CardSigningSettings) -> CardSigner:
        """The signer of `card.signing`, its key read from `key_file`.

        Raises:
            ConfigError: the file cannot be read, or holds no private key this can sign with.
        """
        return cls(_read_key(Path(settings.key_file)), kid=settings.kid, alg=settings.alg)

    def public_jwk(self) -> dict[str, object]:
        """The public half of the key as a JWK (with its `kid` and `alg`), for a JWKS that
        lets others verify the hub's card."""
        public: dict[str, object] = dict(self._key.as_dict(private=False))
        public.update(kid=self.kid, alg=self.alg, use="sig")
        return public

    def sign(self, card: AgentCard) -> AgentCard:
        """`card` with a signature of its canonical form, and one of its hybrid rendering
        when it has one (any earlier signatures replaced)."""
        unsigned = card.model_copy(update={"signatures": None})
        payloads = [signing_input(unsigned)]
        document = unsigned.to_wire()
        hybrid = hybrid_card(unsigned, document)
        if hybrid != document:
            payloads.append(rendering_signing_input(hybrid))
        return card.model_copy(update={"signatures": [self._signature(p) for p in payloads]})

    def _signature(self, payload: bytes) -> AgentCardSignature:
        protected = {"alg": self.alg, "kid": self.kid, "typ": "JOSE"}
        with warnings.catch_warnings():
            # joserfc marks EdDSA deprecated (RFC 9864's Ed25519 replaces it); EdDSA is the
            # name the a2a-sdk's verifier (PyJWT) knows.
            warnings.simplefilter("ignore", SecurityWarning)
            compact = jws.serialize_compact(protected, payload, self._key, algorithms=[self.alg])
        header, _, signature = compact.split(".")
        return AgentCardSignature(protected=header, signature=signature)


def _default_alg(key: Key) -> str:
    if isinstance(key, OKPKey):
        return "EdDSA"
    if isinstance(key, ECKey):
        curve = str(key.curve_name)
        if curve in _DEFAULT_ALG:
            return _DEFAULT_ALG[curve]
        raise ConfigError(f"card.signing: the EC curve {curve} has no JWS algorithm; set alg")
    if isinstance(key, RSAKey):
        return _DEFAULT_ALG["RSA"]
    raise ConfigError(f"card.signing: a {key.key_type} key cannot sign a card; use RSA, EC or OKP")


def _read_key(path: Path) -> Key:
    """The private key in `path`: a JWK (JSON) or PEM."""
    where = f"card.signing.key_file {str(path)!r}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where} cannot be read ({exc.strerror})") from None
    if data.lstrip().startswith(b"{"):
        try:
            return JWKRegistry.import_key(json.loads(data))
        except (ValueError, JoseError) as exc:
            raise ConfigError(f"{where} is not a JWK private key ({type(exc).__name__})") from None
    try:
        loaded = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        # The reason, never the bytes: the message of a failed load names no key material.
        why = "it is encrypted" if "encrypted" in str(exc).lower() else "not a PEM private key"
        raise ConfigError(f"{where} cannot be used ({why})") from None
    if isinstance(loaded, rsa.RSAPrivateKey):
        return RSAKey.import_key(data)
    if isinstance(loaded, ec.EllipticCurvePrivateKey):
        return ECKey.import_key(data)
    if isinstance(loaded, ed25519.Ed25519PrivateKey):
        return OKPKey.import_key(data)
    raise ConfigError(f"{where} holds a {type(loaded).__name__}; use an RSA, EC or Ed25519 key")
