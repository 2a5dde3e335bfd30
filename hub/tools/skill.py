"""`SkillTool`: a local skill as a tool, named `skill_<id>`.

The call runs the skill as a real task on the hub's task manager, so the skill behaves as it
does for any caller (progress, artifacts, questions), and returns the same `ToolResult` shape
as a partner's tool.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hub.protocol import AgentSkill, SendMessageRequest
from hub.protocol.trace import NOTHING, Allowed, CallScope, current_scope, use_scope
from hub.tasks import TaskManager
from hub.tools.arguments import ToolArguments, arguments_schema, parse_arguments
from hub.tools.base import DefinedTool, ToolDefinition
from hub.tools.describe import sanitize, tool_name
from hub.tools.result import ToolResult

__all__ = ["SKILL_PREFIX", "SkillTool"]

SKILL_PREFIX = "skill_"


class SkillTool(DefinedTool):
    """Local skill `card.id` as a tool.

    Args:
        card: the skill's card entry.
        manager: returns the task manager that runs the skill (the hub's own).
        arguments: what the skill takes: `ToolArguments` (its `skill` can only name this
            skill), or a subclass whose `options()` become the request's metadata (its
            `skill` is then the skill's to read, as the routing skills read the partner's).

    Attributes:
        reach: the partners the skill's task may reach: those of the toolbox the tool was
            taken from (`Toolbox`), none for a tool made on its own.
    """

    reach: Allowed = NOTHING

    def __init__(
        self,
        card: AgentSkill,
        manager: Callable[[], TaskManager],
        arguments: type[ToolArguments] = ToolArguments,
    ) -> None:
        self.skill_id = card.id
        self.arguments = arguments
        # The common arguments' `skill` names this skill; a skill with options of its own
        # reads `skill` itself.
        self._skills = [card.id] if arguments is ToolArguments else []
        summary = sanitize(card.description)
        self.definition = ToolDefinition(
            name=tool_name(SKILL_PREFIX, card.id),
            description=f"Run the hub's local skill '{card.id}': {summary}"
            if summary
            else f"Run the hub's local skill '{card.id}'.",
            input_schema=arguments_schema(arguments, self._skills),
        )
        self._manager = manager

    def __repr__(self) -> str:
        return f"SkillTool({self.name!r})"

    def reaching(self, reach: Allowed) -> SkillTool:
        """This tool, its task reaching the partners `reach` allows."""
        tool = copy.copy(self)
        tool.reach = reach
        return tool

    async def call(self, **arguments: Any) -> ToolResult:
        """Run the skill on `message` and wait until its task settles."""
        args = parse_arguments(self.name, arguments, self._skills, model=self.arguments)
        request = SendMessageRequest(
            message=args.to_message(), metadata={**args.options(), "skill": self.skill_id}
        )
        # The task belongs to whoever the calling work runs for, as if they had sent it, and
        # reaches the partners of the toolbox the tool came from (for `Hub` in Python, with no
        # call scope of its own, every one).
        scope = replace(current_scope() or CallScope.new(), agents=self.reach)
        with use_scope(scope):
            reply = await self._manager().send(request, owner=scope.caller)
        return ToolResult.from_reply(self.name, self.skill_id, reply)
