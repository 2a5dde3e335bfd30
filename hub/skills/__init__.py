"""Local skills: the `@skill` API, `SkillContext`, built-in skills and the loader."""

from hub.skills.api import LocalSkill, Skill, SkillResult, skill
from hub.skills.context import SkillContext
from hub.skills.loader import BUILTIN_SKILLS, configured_skills, load_skills

__all__ = [
    "BUILTIN_SKILLS",
    "LocalSkill",
    "Skill",
    "SkillContext",
    "SkillResult",
    "configured_skills",
    "load_skills",
    "skill",
]
