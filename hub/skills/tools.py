"""Giving local skills their tools: partners and the other local skills, as `ctx.tools`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hub.config import SwarmSettings
from hub.orchestrator import Orchestrator
from hub.partners import Conversations, Partners, StatsBook
from hub.skills.api import LocalSkill, Skill
from hub.skills.toolbox import Toolbox
from hub.tasks import TaskManager

__all__ = ["with_tools"]


def with_tools(
    skills: Mapping[str, LocalSkill],
    partners: Partners,
    manager: Callable[[], TaskManager],
    *,
    swarm: SwarmSettings | None = None,
    stats: StatsBook | None = None,
    conversations: Conversations | None = None,
) -> tuple[dict[str, LocalSkill], Toolbox]:
    """The skills, each decorated skill bound to one toolbox, and that toolbox.

    Args:
        skills: the local skills by id.
        partners: the partner agents the skills may call.
        manager: returns the task manager that runs the skills (for skill tools).
        swarm: the caps of the skills' swarms (`swarm:` in hub.yaml).
        stats: the hub's call statistics per partner (the router weighs them).
        conversations: the partner context each hub conversation continues.
    """
    toolbox = Toolbox(
        partners,
        {sid: skill.card for sid, skill in skills.items()},
        manager,
        {sid: skill.arguments for sid, skill in skills.items() if isinstance(skill, Skill)},
        swarm=swarm,
        stats=stats,
        conversations=conversations,
    )
    bound: dict[str, LocalSkill] = {
        sid: skill.with_tools(toolbox) if isinstance(skill, Skill | Orchestrator) else skill
        for sid, skill in skills.items()
    }
    return bound, toolbox
