"""`PartnerTls`: the files a partner's TLS needs (a private CA, a client certificate for
mutual TLS), and the one `ssl.SSLContext` built from them.

The context is what every way of reaching the partner uses: its HTTP client's transport, and
a gRPC channel's credentials, which read the same files (`PartnerTls.pem`).
"""

from __future__ import annotations

import ssl
from pathlib import Path

from pydantic import model_validator
from pydantic_core import PydanticCustomError

from hub.config import StrictModel
from hub.errors import ConfigError

__all__ = ["PartnerTls", "TlsPem"]


class TlsPem(StrictModel):
    """The PEM bytes of a partner's TLS files, for a client that takes bytes, not a context
    (grpcio's `ssl_channel_credentials`). Its `repr` never shows the private key."""

    ca: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None

    def __repr__(self) -> str:
        held = [name for name in ("ca", "cert", "key") if getattr(self, name) is not None]
        return f"TlsPem({', '.join(held)})"

    __str__ = __repr__


class PartnerTls(StrictModel):
    """TLS to one partner, beyond the system's trust store.

    `ca_file` alone trusts a private CA (instead of the system's); `cert_file` with
    `key_file` present a client certificate (mutual TLS), with the system's CAs or `ca_file`.
    Relative paths are read from the directory the hub runs in.
    """

    ca_file: Path | None = None
    """The CA certificates (PEM) the partner's certificate must chain to."""
    cert_file: Path | None = None
    """The hub's client certificate (PEM, the chain after it), for a partner that asks."""
    key_file: Path | None = None
    """The private key of `cert_file` (PEM, unencrypted)."""

    @model_validator(mode="after")
    def _check_files(self) -> PartnerTls:
        if self.ca_file is None and self.cert_file is None and self.key_file is None:
            raise PydanticCustomError(
                "tls_empty", "tls needs ca_file, or cert_file with key_file, or all three"
            )
        if (self.cert_file is None) != (self.key_file is None):
            raise PydanticCustomError(
                "tls_pair", "cert_file and key_file go together (the certificate and its key)"
            )
        for name in ("ca_file", "cert_file", "key_file"):
            path: Path | None = getattr(self, name)
            if path is not None and not path.is_file():
                raise PydanticCustomError(
                    "tls_file", f"{name} {str(path)!r} is not a readable file"
                )
        return self

    def ssl_context(self) -> ssl.SSLContext:
        """A client context that verifies the partner (hostname included) against `ca_file`
        (or the system's CAs) and presents the client certificate when there is one.

        Raises:
            ConfigError: a file is not valid PEM, or the key does not match the certificate
                (the message names the file, never its content).
        """
        try:
            context = ssl.create_default_context(
                cafile=None if self.ca_file is None else str(self.ca_file)
            )
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(
                f"tls.ca_file {str(self.ca_file)!r} holds no valid PEM certificate ({_reason(exc)})"
            ) from None
        if self.cert_file is not None and self.key_file is not None:
            try:
                context.load_cert_chain(self.cert_file, self.key_file)
            except (ssl.SSLError, OSError) as exc:
                raise ConfigError(
                    f"tls.cert_file {str(self.cert_file)!r} and tls.key_file "
                    f"{str(self.key_file)!r} are not a PEM certificate and its unencrypted "
                    f"key ({_reason(exc)})"
                ) from None
        return context

    def pem(self) -> TlsPem:
        """The files' bytes, for a client that takes PEM rather than a context.

        Raises:
            ConfigError: a file cannot be read.
        """

        def read(name: str) -> bytes | None:
            path: Path | None = getattr(self, name)
            if path is None:
                return None
            try:
                return path.read_bytes()
            except OSError as exc:
                raise ConfigError(
                    f"tls.{name} {str(path)!r} cannot be read ({exc.strerror})"
                ) from None

        return TlsPem(ca=read("ca_file"), cert=read("cert_file"), key=read("key_file"))


def _reason(exc: ssl.SSLError | OSError) -> str:
    """The library's reason in a few words (OpenSSL's mnemonic, or the OS's message)."""
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason).lower().replace("_", " ")
    return exc.strerror or type(exc).__name__
