"""a2a-hub: a hub that links AI agents over the A2A protocol.

What a skill author writes by hand is exported here (`from hub import skill, SkillContext`,
`orchestrator` for a skill a language model does,
the protocol types a skill returns or reads, the errors it raises or catches), and the hub
for scripts and for embedding (`from hub import Hub`: `Hub(...).asgi_app()`,
`await Hub(...).serve()`); the app factory is also `hub.create_app`.

Each name is imported when it is first used (`hub.lazy`), so that `a2a-hub --help` and the
client commands do not load the server.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.app import create_app
    from hub.config import Settings, load_settings
    from hub.errors import ClientError, ConfigError, HubError, ProtocolError, SkillError
    from hub.orchestrator import Orchestrator, orchestrator
    from hub.protocol import Artifact, Message, Part, StateName, TaskState
    from hub.runtime import Hub
    from hub.skills import Skill, SkillContext, skill
    from hub.swarm import Strategy, SwarmResult
    from hub.tools import Tool, ToolResult

__all__ = [
    "Artifact",
    "ClientError",
    "ConfigError",
    "Hub",
    "HubError",
    "Message",
    "Orchestrator",
    "Part",
    "ProtocolError",
    "Settings",
    "Skill",
    "SkillContext",
    "SkillError",
    "StateName",
    "Strategy",
    "SwarmResult",
    "TaskState",
    "Tool",
    "ToolResult",
    "create_app",
    "load_settings",
    "orchestrator",
    "skill",
]

if not TYPE_CHECKING:
    from hub.lazy import lazy_exports

    # Hidden from type checkers: a module `__getattr__` would make every name resolve.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "hub.config": ["Settings", "load_settings"],
            "hub.errors": ["ClientError", "ConfigError", "HubError", "ProtocolError", "SkillError"],
            "hub.orchestrator": ["Orchestrator", "orchestrator"],
            "hub.protocol": ["Artifact", "Message", "Part", "StateName", "TaskState"],
            "hub.runtime": ["Hub"],
            "hub.app": ["create_app"],
            "hub.skills": ["Skill", "SkillContext", "skill"],
            "hub.swarm": ["Strategy", "SwarmResult"],
            "hub.tools": ["Tool", "ToolResult"],
        },
    )
