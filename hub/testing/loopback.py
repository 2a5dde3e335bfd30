"""Serve an ASGI app on a real loopback socket, in the test's own event loop."""

from __future__ import annotations

import inspect
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import uvicorn

from hub.config import ServerSettings
from hub.server.connections import ServerConfig

__all__ = ["LoopbackTls", "reserved_port", "serve_on_loopback"]


@dataclass(frozen=True, slots=True)
class LoopbackTls:
    """TLS for a server on loopback: its certificate (valid for 127.0.0.1) and key, and the
    CA a client certificate must chain to, when the server requires one (mutual TLS)."""

    cert_file: Path
    key_file: Path
    client_ca_file: Path | None = None


@asynccontextmanager
async def serve_on_loopback(
    app: Any | Callable[[str], Any],
    *,
    startup_timeout: float = 10.0,
    settings: ServerSettings | None = None,
    tls: LoopbackTls | None = None,
) -> AsyncIterator[str]:
    """Run an ASGI app under uvicorn on 127.0.0.1 in the current event loop; yields its URL.

    Args:
        app: the app, or a function that builds it from the URL it will be served at (so a
            card can advertise the real address).
        startup_timeout: seconds to wait for the server to start.
        settings: the `server` settings whose connection limits apply (`header_timeout`,
            `idle_timeout`, `max_connections`); the defaults when None. Their host and
            port are not used.
        tls: serve HTTPS (the URL is then `https://`) with this certificate, and require a
            client certificate when it names a client CA.

    The socket is bound before the app is built (port 0), so there is no free-port race. The
    server is stopped when the block exits.
    """
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY on accepted connections only for a
    # socket whose proto says TCP; without it every answer written in two parts waited for a
    # delayed ACK (about 45 ms a request on loopback).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"{'http' if tls is None else 'https'}://127.0.0.1:{port}"
    if callable(app) and not _is_asgi_app(app):
        app = app(url)
    config = ServerConfig(
        app, settings=settings or ServerSettings(), log_level="warning", lifespan="on"
    )
    if tls is not None:
        # uvicorn builds its context from these when the server starts (`Config.load`).
        config.ssl_certfile = str(tls.cert_file)
        config.ssl_keyfile = str(tls.key_file)
        if tls.client_ca_file is not None:
            config.ssl_ca_certs = str(tls.client_ca_file)
            config.ssl_cert_reqs = ssl.CERT_REQUIRED
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [sock])
        with anyio.fail_after(startup_timeout):
            while not server.started:
                if server.should_exit:
                    raise RuntimeError("the server stopped while starting")
                await anyio.sleep(0.005)
        try:
            yield url
        finally:
            server.should_exit = True
    sock.close()


@contextmanager
def reserved_port() -> Iterator[int]:
    """A free loopback port held for the block's life by a socket that never listens, bound
    with `SO_REUSEPORT`, so that a server which sets it too (grpcio does, by default, on
    Linux) can listen on it, and nothing else can take it meanwhile: no free-port race."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
    finally:
        sock.close()


def _is_asgi_app(candidate: Any) -> bool:
    """An ASGI app is called with (scope, receive, send); a factory with one URL."""
    try:
        return len(inspect.signature(candidate).parameters) == 3
    except (TypeError, ValueError):
        return True
