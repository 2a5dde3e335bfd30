"""Signing keys made for a test: a private key written as PEM or as a JWK, with its public
half as a JWK (what a JWKS or a `verify_card.keys` entry holds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc.jwk import JWKRegistry

__all__ = ["KeyKind", "public_jwk", "write_key"]

KeyKind = Literal["ec", "rsa", "ed25519"]


def write_key(path: Path, kind: KeyKind = "ec", *, as_jwk: bool = False) -> Path:
    """A new private key of `kind` in `path`, PEM (PKCS#8) or a JWK in JSON."""
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey
    if kind == "ec":
        key = ec.generate_private_key(ec.SECP256R1())
    elif kind == "rsa":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    if as_jwk:
        jwk_type = {"ec": "EC", "rsa": "RSA", "ed25519": "OKP"}[kind]
        imported = JWKRegistry.import_key(pem, jwk_type)
        path.write_text(json.dumps(imported.as_dict(private=True)))
    else:
        path.write_bytes(pem)
    return path


def public_jwk(path: Path, *, kid: str | None = None) -> dict[str, Any]:
    """The public JWK of the private key in `path` (PEM or JWK), with `kid` when given."""
    data = path.read_bytes()
    if data.lstrip().startswith(b"{"):
        imported = JWKRegistry.import_key(json.loads(data))
    else:
        loaded = serialization.load_pem_private_key(data, password=None)
        kind = (
            "EC"
            if isinstance(loaded, ec.EllipticCurvePrivateKey)
            else "RSA"
            if isinstance(loaded, rsa.RSAPrivateKey)
            else "OKP"
        )
        imported = JWKRegistry.import_key(data, kind)
    public = dict(imported.as_dict(private=False))
    if kid is not None:
        public["kid"] = kid
    return public
