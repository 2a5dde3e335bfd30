"""The gRPC door's place in the app: `server.grpc.enabled` starts grpcio's asyncio server in
the app's lifespan, inside the hub's core (calls end while the task manager still runs), and
stops it with the app. The grpc package is imported only then; a hub configured with the
door but without the `grpc` extra refuses to start, saying what to install.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol

from hub.config import Settings
from hub.errors import ConfigError
from hub.protocol.grpc.extra import INSTALL, grpc_installed
from hub.server.grpc.tls import TlsFiles
from hub.server.state import HubState
from hub.telemetry import Telemetry

__all__ = ["MISSING_EXTRA", "GrpcPlugin"]

MISSING_EXTRA = (
    "server.grpc.enabled is true but the `grpc` extra is not installed: "
    f"{INSTALL} (or set server.grpc.enabled: false)"
)


class GrpcPlugin(InitPluginProtocol):
    """Runs the gRPC door in the app's lifespan when `server.grpc.enabled`.

    Args:
        settings: the hub's settings.
        hub: what the HTTP doors share, which the gRPC calls use too.
        telemetry: the hub's recorders.

    Raises:
        ConfigError: the door is on and the `grpc` extra is missing, or a TLS file cannot
            be read.
    """

    def __init__(self, settings: Settings, *, hub: HubState, telemetry: Telemetry) -> None:
        door = settings.server.grpc
        self._enabled = door.enabled
        if self._enabled and not grpc_installed():
            raise ConfigError(MISSING_EXTRA)
        self._tls = TlsFiles.read(door.tls) if door.enabled and door.tls else None
        self._hub = hub
        self._telemetry = telemetry

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve gRPC for the block's life."""
        from hub.server.grpc.server import serving

        async with serving(self._hub, self._telemetry, tls=self._tls):
            yield

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        if self._enabled:

            def running(app: Litestar) -> AbstractAsyncContextManager[None]:
                return self.running()

            app_config.lifespan.append(running)
        return app_config
