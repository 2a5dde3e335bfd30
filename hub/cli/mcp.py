"""`a2a-hub mcp`: the hub's tools over MCP on stdin/stdout, for clients that launch servers.

The hub is the one `a2a-hub serve` would run (the same settings, skills and agents.yaml),
without a socket: its app's lifespan runs (the store, the partners, the task manager,
agents.yaml followed for edits), and its MCP server speaks on stdio. Three things differ,
because an MCP client (Claude Desktop, VS Code) starts this process itself, in a folder of
its own choosing, as often as it likes, beside a hub that may be serving:

- The routing skills `delegate` and `swarm` are served even when the settings do not list
  them (the built-in defaults, used where there is no config/hub.yaml, serve only `echo`):
  they are what makes every partner of agents.yaml a tool.
- Tasks are kept in memory unless `--store` names a file: the settings' SQLite file belongs
  to `a2a-hub serve`, and one SQLite store serves one process. A PostgreSQL store, made for
  several processes, is used as the settings say.
- The log shows warnings and errors only (`--log-level` for more): the client shows this
  process's stderr to its user as the server's complaints. Stdout carries nothing but the
  protocol.
"""

from __future__ import annotations

import argparse

from hub.cli.outcome import OK, Running
from hub.cli.settings import command_settings
from hub.config import Settings

__all__ = ["serve_mcp"]

ROUTING_TOOLS_SKILLS = ("delegate", "swarm")
"""The skills behind the `a2a_<partner>`, `delegate` and `swarm` tools."""


def mcp_settings(args: argparse.Namespace) -> Settings:
    """The command's settings, with the store `a2a-hub mcp` uses: `--store` (a file or
    `memory`), else the settings' PostgreSQL store, else memory.

    Raises:
        ConfigError: the settings are wrong.
    """
    settings = command_settings(args)
    if args.store or settings.store.kind == "postgres":
        return settings
    memory = settings.store.model_copy(update={"kind": "memory"})
    return settings.model_copy(update={"store": memory})


def serve_mcp(args: argparse.Namespace, running: Running) -> int:
    """Serve MCP on stdio until the client closes it; the exit status.

    Raises:
        ConfigError: the settings are wrong, the store is a SQLite file another process has
            open, or the MCP door cannot be served (the `mcp` extra is not installed, or
            `mcp.enabled` is false).
    """
    import anyio

    from hub.errors import ConfigError
    from hub.runtime import Hub
    from hub.server.mcp_door import McpPlugin
    from hub.skills import BUILTIN_SKILLS, configured_skills
    from hub.telemetry.logs import configure_logging

    settings = mcp_settings(args)
    configure_logging(args.log_level or "warning", settings.server.log_format)
    skills = configured_skills(settings)
    for skill_id in ROUTING_TOOLS_SKILLS:
        skills.setdefault(skill_id, BUILTIN_SKILLS[skill_id])
    app = Hub(settings, skills=skills).asgi_app()
    door = app.plugins.get(McpPlugin).door
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
    return OK
