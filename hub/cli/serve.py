"""`a2a-hub serve`: bind the socket, then run the app on uvicorn."""

from __future__ import annotations

import argparse
import functools
import gc
import os
import socket
import sys
from pathlib import Path

import sniffio
import uvicorn

from hub.cli.outcome import OK, Running
from hub.cli.settings import command_settings
from hub.errors import ConfigError
from hub.runtime import Hub, announce, listen
from hub.server.connections import ServerConfig, fit_open_files_limit
from hub.store import check_store_free
from hub.telemetry.logs import configure_logging

__all__ = ["HubServer", "serve"]


def serve(args: argparse.Namespace, running: Running) -> int:
    """Run the hub until interrupted: bind, print the address, serve. Without a settings file
    named (--config, $HUB_CONFIG) and with no config/hub.yaml here, say that the built-in
    defaults are served."""
    settings = command_settings(args)
    explicit = args.config is not None or "HUB_CONFIG" in os.environ
    if not explicit and not Path("config/hub.yaml").exists():
        print(
            "a2a-hub: no config/hub.yaml here: serving the built-in defaults "
            "(see docs/configuration.md)",
            file=sys.stderr,
            flush=True,
        )

    configure_logging(settings.server.log_level, settings.server.log_format)
    if settings.store.kind == "postgres":
        # Shared by replicas: migrated by `a2a-hub db migrate`, never by whichever starts first.
        import anyio

        from hub.store.schema import read_schema

        schema = anyio.run(functools.partial(read_schema, "postgres", dsn=settings.store.dsn))
        if not schema.current:
            # The operator's step is missing (exit 2, as any configuration error), unlike a
            # database that cannot be reached (a StoreError, exit 1).
            raise ConfigError(schema.describe())
    # Reads the skills and agents.yaml, whose errors come before binding; the hub's parts are
    # built once, for the app below.
    hub = Hub(settings)
    # With the default skill settled (the first skill served, unless the file names one).
    settings = hub.settings
    # A SQLite file another process serves is refused before the port is taken.
    check_store_free(settings.store.kind, settings.store.path)
    sock, settings = listen(settings)
    try:
        app = hub.asgi_app(settings)
    except BaseException:
        sock.close()
        raise
    announce(settings)
    fit_open_files_limit(settings.server.max_connections, settings.server.max_pending_connections)
    config = ServerConfig(
        app,
        settings=settings.server,
        log_level=settings.server.log_level,
        timeout_graceful_shutdown=5,
    )
    HubServer(config).run(sockets=[sock])
    return OK


class HubServer(uvicorn.Server):
    """uvicorn's server, which at start-up names the event loop's library for every request
    and, once started, sets what start-up built aside from the garbage collector.

    - anyio asks sniffio which library runs it for every event, lock, cancel scope and
      timeout it makes. Nothing has told sniffio, so each question sniffs for a running
      asyncio task (about 0.5 us a time, tens of times a request). The server names asyncio
      in the context that its lifespan, listening socket and connections inherit, as
      `anyio.run` does for the code it runs.
    - What the imports and the app's lifespan made (modules, models, schemas, the store's
      and the partners' objects) lives as long as the process. Left in the collector's
      oldest generation, every full collection walks all of it again: 40-80 ms at a time,
      about once a second under load, on the one thread that serves. Frozen, a full
      collection walks only what the requests left behind.
    """

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        sniffio.current_async_library_cvar.set("asyncio")
        await super().startup(sockets=sockets)
        gc.freeze()
