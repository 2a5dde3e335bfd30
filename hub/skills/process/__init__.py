"""Process skills: command-line programs served as A2A skills, one run per task."""

from hub.skills.process.skill import ProcessSkill, build_process_skill

__all__ = ["ProcessSkill", "build_process_skill"]
