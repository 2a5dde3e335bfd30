"""a2a-hub: a hub that links AI agents over the A2A protocol.

What a skill author writes by hand is exported here (`from hub import skill, SkillContext`),
and the hub in-process for scripts (`from hub import Hub`); the app factory is
`hub.server.create_app`.
"""

from hub.config import Settings, load_settings
from hub.errors import ConfigError, HubError, ProtocolError, SkillError
from hub.runtime import Hub
from hub.skills import Skill, SkillContext, skill
from hub.tools import Tool, ToolResult

__all__ = [
    "ConfigError",
    "Hub",
    "HubError",
    "ProtocolError",
    "Settings",
    "Skill",
    "SkillContext",
    "SkillError",
    "Tool",
    "ToolResult",
    "load_settings",
    "skill",
]
