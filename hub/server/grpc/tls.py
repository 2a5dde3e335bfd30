"""The gRPC door's TLS files (`server.grpc.tls`), read when the app is built: a missing file
stops start-up before anything is served. Plain Python (no grpc), so the door's plugin can
read them before grpc is imported."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hub.config import GrpcTlsSettings
from hub.errors import ConfigError

__all__ = ["TlsFiles"]


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The server's certificate chain and key, and the CA its clients' certificates must
    be signed by (None: no client certificate is asked for)."""

    cert: bytes
    key: bytes
    client_ca: bytes | None

    @classmethod
    def read(cls, tls: GrpcTlsSettings) -> TlsFiles:
        """Raises:
        ConfigError: a file cannot be read (the setting and the reason named)."""
        return cls(
            cert=_read(tls.cert_file, "cert_file"),
            key=_read(tls.key_file, "key_file"),
            client_ca=_read(tls.client_ca_file, "client_ca_file") if tls.client_ca_file else None,
        )


def _read(path: str, setting: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(
            f"server.grpc.tls.{setting}: cannot read {path} ({error.strerror})"
        ) from None
