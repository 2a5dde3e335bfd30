"""a2a-hub: a hub that links AI agents over the A2A protocol.

What a skill author writes by hand is exported here (`from hub import skill, SkillContext`);
the app factory is `hub.server.create_app`.
"""

from hub.config import Settings, load_settings
from hub.errors import ConfigError, HubError, ProtocolError, SkillError
from hub.skills import Skill, SkillContext, skill

__all__ = [
    "ConfigError",
    "HubError",
    "ProtocolError",
    "Settings",
    "Skill",
    "SkillContext",
    "SkillError",
    "load_settings",
    "skill",
]
