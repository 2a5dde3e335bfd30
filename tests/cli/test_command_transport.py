"""The command line's HTTP transport: TLS only for https URLs, and then always verified."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.streams.tls import TLSListener

from hub.cli.direct import cli_http_client
from tests.certificates import self_signed

pytestmark = pytest.mark.anyio

_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"


def _self_signed(folder: Path) -> ssl.SSLContext:
    """A server context with a certificate for 127.0.0.1 that no one has signed."""
    cert_file, key_file = self_signed(folder)
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
