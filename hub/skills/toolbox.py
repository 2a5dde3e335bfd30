"""`Toolbox`: every tool of the hub by name, partners' and local skills' together.

`hub.tools["a2a_research"]` is partner `research`; `hub.tools["skill_echo"]` the local skill
`echo`. Partner tools are looked up live, so a changed card or a reloaded agents.yaml shows at
once.

A toolbox reaches the partners of its `PartnerView`: the hub's own (`Hub.tools`) every one,
the one a skill's task gets (`within`) those its caller may reach. It also hands the skills
the hub's call statistics and partner conversations, which the routing skills read and keep.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterator, Mapping

from hub.config import SwarmSettings
from hub.errors import ConfigError
from hub.partners import Conversations, Partners, PartnerView, StatsBook
from hub.protocol import AgentSkill
from hub.protocol.trace import CallScope
from hub.tasks import TaskManager
from hub.tools.arguments import ToolArguments
from hub.tools.base import Tool
from hub.tools.skill import SkillTool

__all__ = ["Toolbox"]


class Toolbox(Mapping[str, Tool]):
    """The partners' tools and the local skills' tools, by tool name.

    Raises:
        ConfigError: two local skills would have the same tool name.

    Args:
        partners: the partner agents (`Partners`: every one).
        skills: the card entries of the local skills offered as tools.
        manager: returns the task manager that runs local skills.
        arguments: what a local skill takes as a tool, by skill id, when it takes more than
            the common arguments (`ToolArguments`).
        swarm: the caps of the swarms the skills start (`ctx.swarm`).
        stats: recent latency and error rate per partner, which the router weighs and the
            routing skills record (a book of its own when not given).
        conversations: the partner context each hub conversation continues (`delegate`; a
            map of its own when not given).
    """

    def __init__(
        self,
        partners: Partners,
        skills: Mapping[str, AgentSkill] | None = None,
        manager: Callable[[], TaskManager] | None = None,
        arguments: Mapping[str, type[ToolArguments]] | None = None,
        *,
        swarm: SwarmSettings | None = None,
        stats: StatsBook | None = None,
        conversations: Conversations | None = None,
    ) -> None:
        self.partners = PartnerView.whole(partners)
        self.swarm = swarm or SwarmSettings()
        self.stats = stats if stats is not None else StatsBook()
        self.conversations = conversations if conversations is not None else Conversations()
        self._skills: dict[str, SkillTool] = {}
        if skills and manager is not None:
            for card in skills.values():
                tool = SkillTool(card, manager, (arguments or {}).get(card.id, ToolArguments))
                clash = self._skills.get(tool.name)
                if clash is not None:
                    raise ConfigError(
                        f"local skills '{clash.skill_id}' and '{card.id}' would both be the tool "
                        f"'{tool.name}'; rename one (tool names keep only a-z, 0-9 and '_')"
                    )
                self._skills[tool.name] = tool

    def within(self, scope: CallScope | None) -> Toolbox:
        """This toolbox as the caller of `scope` sees it: the partners it may reach (none
        without a scope), and skill tools whose tasks reach those only."""
        view = copy.copy(self)
        view.partners = PartnerView.of(self.partners, scope)
        return view

    def _remote(self) -> dict[str, Tool]:
        tools = (self.partners[name] for name in self.partners)
        return {tool.name: tool for tool in tools}

    def __getitem__(self, name: str) -> Tool:
        # A skill tool is bound to this toolbox's reach when it is taken, not for every task
        # whose toolbox is narrowed (most never take one).
        skill = self._skills.get(name)
        tool: Tool | None = skill.reaching(self.partners.allowed) if skill is not None else None
        if tool is None:
            tool = self._remote().get(name)
        if tool is None:
            known = sorted(self)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise KeyError(f"no tool named '{name}'{hint} (known: {', '.join(known) or 'none'})")
        return tool

    def __iter__(self) -> Iterator[str]:
        yield from self._remote()
        yield from self._skills

    def __len__(self) -> int:
        return len(self._skills) + len(self.partners)
