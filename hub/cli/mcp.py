"""`a2a-hub mcp`: the hub's tools over MCP on stdin/stdout, for clients that launch servers.

The hub is the one `a2a-hub serve` would run (the same settings, skills, agents.yaml and
store), without a socket: its app's lifespan runs (the store, the partners, the task manager,
agents.yaml followed for edits), and its MCP server speaks on stdio. Logs go to stderr;
stdout carries nothing but the protocol.
"""

from __future__ import annotations

import argparse
import logging

from hub.cli.outcome import Running
from hub.cli.settings import command_settings

__all__ = ["serve_mcp"]


def serve_mcp(args: argparse.Namespace, running: Running) -> int:
    """Serve MCP on stdio until the client closes it; the exit status.

    Raises:
        ConfigError: the settings are wrong, or the MCP door cannot be served (the `mcp`
            extra is not installed, or `mcp.enabled` is false).
    """
    import anyio

    from hub.errors import ConfigError
    from hub.runtime import Hub
    from hub.server.state import HubState

    settings = command_settings(args)
    logging.basicConfig(
        level=settings.server.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    app = Hub(settings).asgi_app(settings)
    state: HubState = app.state.hub
    door = state.mcp
    if door is None:
        raise ConfigError(
            "the MCP server is not available: install the extra (pip install 'a2a-hub[mcp]') "
            "and leave mcp.enabled true"
        )

    async def run() -> None:
        async with app.lifespan():
            server = await door.server()
            await server.serve_stdio()

    anyio.run(run)
    return 0
