"""grpcio's asyncio server for the gRPC door, started and stopped by the app's lifespan, in
the event loop the HTTP server runs in."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc  # type: ignore[import-untyped]

from hub.errors import ConfigError
from hub.server.grpc.calls import A2AServiceHandler
from hub.server.grpc.tls import TlsFiles
from hub.server.state import HubState
from hub.telemetry import Telemetry

__all__ = ["STOP_GRACE", "serving"]

log = logging.getLogger("hub.server")

STOP_GRACE = 2.0
"""Seconds the calls in progress have to finish when the hub stops; then they are canceled
(open streams with them: their tasks go on, a client subscribes again elsewhere)."""


@asynccontextmanager
async def serving(
    hub: HubState, telemetry: Telemetry, *, tls: TlsFiles | None
) -> AsyncIterator[str]:
    """Serve `lf.a2a.v1.A2AService` on `server.grpc`'s address until the block exits, over
    TLS when `tls` is given; yields the address listened on.

    Raises:
        ConfigError: the address cannot be listened on.
    """
    server_settings = hub.settings.server
    address = server_settings.grpc_listen()
    server = grpc.aio.server(
        options=[
            # The same bound as the HTTP doors' bodies.
            ("grpc.max_receive_message_length", hub.settings.limits.max_body),
        ]
    )
    server.add_generic_rpc_handlers((A2AServiceHandler(hub, telemetry).generic_handler(),))
    try:
        if tls is None:
            server.add_insecure_port(address)
        else:
            server.add_secure_port(address, _credentials(tls))
    except RuntimeError as error:
        raise ConfigError(
            f"server.grpc: cannot listen on {address} ({error}); is another process using "
            "the port? Set server.grpc.port to a free one"
        ) from None
    await server.start()
    log.info("gRPC door (A2A 1.0) on %s%s", address, " with TLS" if tls else "")
    try:
        yield address
    finally:
        await server.stop(STOP_GRACE)


def _credentials(tls: TlsFiles) -> grpc.ServerCredentials:
    """The server's certificate and key, and with a client CA mutual TLS."""
    return grpc.ssl_server_credentials(
        [(tls.key, tls.cert)],
        root_certificates=tls.client_ca,
        require_client_auth=tls.client_ca is not None,
    )
