"""A private CA made for a test, with a server certificate for 127.0.0.1 and a client
certificate, written as PEM files (trustme makes them with the cryptography package)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trustme

from hub.testing import LoopbackTls

__all__ = ["PrivatePki", "private_pki"]


@dataclass(frozen=True, slots=True)
class PrivatePki:
    """The files of a private CA: its certificate, a server's and a client's pair."""

    ca_file: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def server(self, *, require_client: bool) -> LoopbackTls:
        """TLS for a loopback server with the CA's server certificate; with
        `require_client`, a client must present a certificate the CA signed."""
        return LoopbackTls(
            self.server_cert, self.server_key, self.ca_file if require_client else None
        )


def private_pki(folder: Path, *, name: str = "pki") -> PrivatePki:
    """A new CA and its two certificates, in `folder`/`name`."""
    where = folder / name
    where.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    client = ca.issue_cert("hub-client@example.test")
    files = PrivatePki(
        ca_file=where / "ca.pem",
        server_cert=where / "server.pem",
        server_key=where / "server.key",
        client_cert=where / "client.pem",
        client_key=where / "client.key",
    )
    ca.cert_pem.write_to_path(str(files.ca_file))
    server.cert_chain_pems[0].write_to_path(str(files.server_cert))
    for blob in server.cert_chain_pems[1:]:
        blob.write_to_path(str(files.server_cert), append=True)
    server.private_key_pem.write_to_path(str(files.server_key))
    client.cert_chain_pems[0].write_to_path(str(files.client_cert))
    client.private_key_pem.write_to_path(str(files.client_key))
    return files
