"""`a2a-hub serve`: bind the socket, then run the app on uvicorn."""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

from hub.config import Settings
from hub.errors import ConfigError
from hub.runtime import registry_for
from hub.server import create_app
from hub.skills import load_skills
from hub.store import build_store
from hub.tools import FederationPolicy, Partners

__all__ = ["serve"]


def serve(settings: Settings, *, explicit: bool = True) -> None:
    """Run the hub until interrupted: bind, print the address, serve.

    Args:
        settings: the settings to serve.
        explicit: a settings file was named (by --config or $HUB_CONFIG); if not and there is
            no config/hub.yaml here, say that the built-in defaults are served.
    """
    import uvicorn

    if not explicit and not Path("config/hub.yaml").exists():
        print(
            "a2a-hub: no config/hub.yaml here: serving the built-in defaults "
            "(see docs/configuration.md)",
            file=sys.stderr,
            flush=True,
        )

    logging.basicConfig(
        level=settings.server.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    store = build_store(settings.store.kind, settings.store.path)
    skills = load_skills(settings.skills)
    registry = registry_for(settings)
    # Bind here, so the real port is known (also with --port 0) before the server starts.
    family = socket.AF_INET6 if ":" in settings.server.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.server.host, settings.server.port))
        # Listening now means connections queue from the moment the address is logged.
        sock.listen(2048)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {settings.server.host}:{settings.server.port} ({exc.strerror}); "
            "choose another --port or stop what is using it"
        ) from None
    port = sock.getsockname()[1]
    # With --port 0 the card must advertise the port really bound, not 0.
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"port": port})}
    )
    # Built once the port is known: the policy holds this hub's URL (never learned as a partner).
    partners = Partners(registry, federation=FederationPolicy.from_settings(settings))
    try:
        app = create_app(settings, store=store, skills=skills, partners=partners)
    except BaseException:
        sock.close()
        raise
    store_name = settings.store.path if settings.store.kind == "sqlite" else "memory"
    # Printed, not logged: the address must show whatever the log level (tests read it too).
    print(
        f"a2a-hub listening on http://{settings.server.host}:{port} (store: {store_name})",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        log_level=settings.server.log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run(sockets=[sock])
