"""The command line's HTTP transport: TLS only for https URLs, and then always verified."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.streams.tls import TLSListener
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from hub.cli.direct import cli_http_client

pytestmark = pytest.mark.anyio

_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"


def _self_signed(folder: Path) -> ssl.SSLContext:
    """A server context with a certificate for 127.0.0.1 that no one has signed."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context


async def _serve(tls: ssl.SSLContext | None) -> AsyncIterator[int]:
    async def answer(stream: anyio.abc.ByteStream) -> None:
        async with stream:
            try:
                await stream.receive()
                await stream.send(_ANSWER)
            except (anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError, OSError):
                pass

    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = tcp.extra(anyio.abc.SocketAttribute.local_port)
    listener: anyio.abc.Listener[Any] = tcp
    if tls is not None:
        listener = TLSListener(tcp, tls, standard_compatible=False)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, answer)
        yield port
        group.cancel_scope.cancel()


@pytest.fixture
async def plain_port() -> AsyncIterator[int]:
    async for port in _serve(None):
        yield port


@pytest.fixture
async def tls_port(tmp_path: Path) -> AsyncIterator[int]:
    async for port in _serve(_self_signed(tmp_path)):
        yield port


async def test_an_http_agent_is_reached_without_tls(plain_port: int) -> None:
    async with cli_http_client() as http:
        response = await http.get(f"http://127.0.0.1:{plain_port}/")
    assert response.status_code == 200
    assert response.text == "ok"


async def test_an_https_agent_with_a_certificate_no_one_signed_is_refused(
    plain_port: int, tls_port: int
) -> None:
    async with cli_http_client() as http:
        # A plain request first: the https one must not reuse its unverified transport.
        assert (await http.get(f"http://127.0.0.1:{plain_port}/")).status_code == 200
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await http.get(f"https://127.0.0.1:{tls_port}/")
