"""a2a-hub: a hub that links AI agents over the A2A protocol.

What a skill author writes by hand is exported here (`from hub import skill, SkillContext`,
the protocol types a skill returns or reads, the errors it raises or catches), and the hub
for scripts and for embedding (`from hub import Hub`: `Hub(...).asgi_app()`,
`await Hub(...).serve()`); the app factory is also `hub.create_app`.
"""

from hub.config import Settings, load_settings
from hub.errors import ClientError, ConfigError, HubError, ProtocolError, SkillError
from hub.protocol import Artifact, Message, Part, TaskState
from hub.runtime import Hub
from hub.server import create_app
from hub.skills import Skill, SkillContext, skill
from hub.swarm import Strategy, SwarmResult
from hub.tools import Tool, ToolResult
from hub.tools.result import StateName

__all__ = [
    "Artifact",
    "ClientError",
    "ConfigError",
    "Hub",
    "HubError",
    "Message",
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
    "skill",
]
