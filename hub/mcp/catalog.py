"""The MCP tools a caller sees, and the hub request each tool call becomes.

Four kinds of tool, each run as a task on one of the hub's skills, so an MCP call is a hub
task like any other:

- `a2a_<partner>`: the `delegate` skill with `metadata.agent` naming the partner;
- `skill_<id>`: the local skill `id` (not the routing skills, `ROUTING_SKILLS`);
- `delegate`: the `delegate` skill, which picks the partner (`agent`, `tags`);
- `swarm`: the `swarm` skill (`strategy`, `agents` or `tags`, `quorum`, ...).

Names, descriptions and argument schemas are those of the hub's own tools (`Toolbox`,
`hub.tools.describe`, `hub.tools.arguments`); `delegate` and `swarm` take the arguments the
hub's `skill_delegate` and `skill_swarm` tools take (`DelegateArguments`, `SwarmArguments`:
one model each, its schema generated from it; the swarm's options are `SwarmSpec`'s
fields). What the current call scope may not use (a credential's `skills` and `agents`) is
not listed, and calling it fails as for a tool that does not exist.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hub.protocol import JsonObject, SendMessageRequest
from hub.protocol.trace import current_scope
from hub.skills.delegate import ROUTING_SKILLS, DelegateArguments
from hub.skills.swarm import SwarmArguments
from hub.skills.toolbox import Toolbox
from hub.tools.arguments import ToolArguments, arguments_schema, parse_arguments
from hub.tools.base import ToolDefinition
from hub.tools.remote import RemoteAgentTool
from hub.tools.skill import SkillTool

__all__ = ["Catalog", "ToolCall", "UnknownToolError"]


class UnknownToolError(LookupError):
    """The tool does not exist, or not for this caller."""


DELEGATE_TOOL = ToolDefinition(
    name="delegate",
    description="Hand the message to the partner agent best suited to it (agent names one, "
    "tags narrow the choice) and relay its progress and answer.",
    input_schema=arguments_schema(DelegateArguments),
)

SWARM_TOOL = ToolDefinition(
    name="swarm",
    description="Send the message to several partner agents at once and combine their "
    "answers with a strategy: broadcast, race, vote, best_of, map or chain.",
    input_schema=arguments_schema(SwarmArguments),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call as the hub runs it.

    Attributes:
        tool: the tool's name.
        agent: the partner or local skill that answers (as `ToolResult.agent` names it).
        request: the SendMessage that starts (or continues) the hub task.
    """

    tool: str
    agent: str
    request: SendMessageRequest


def _compact(metadata: Mapping[str, Any]) -> JsonObject:
    return {key: value for key, value in metadata.items() if value not in (None, (), [])}


def _request(arguments: ToolArguments, metadata: Mapping[str, Any]) -> SendMessageRequest:
    return SendMessageRequest(message=arguments.to_message(), metadata=_compact(metadata))


class Catalog:
    """The hub's tools as MCP serves them, for the caller of the current call scope.

    Args:
        toolbox: the hub's tools (partners' and local skills').
        skills: the ids of the local skills served.
    """

    def __init__(self, toolbox: Toolbox, skills: Collection[str]) -> None:
        self.toolbox = toolbox
        self._served = frozenset(skills)

    def _may_run(self, skill_id: str) -> bool:
        if skill_id not in self._served:
            return False
        scope = current_scope()
        return scope is None or scope.skills is None or skill_id in scope.skills

    def _tools(self) -> Iterator[tuple[ToolDefinition, RemoteAgentTool | SkillTool | None]]:
        delegating = self._may_run("delegate")
        # The partners the caller may reach, none outside a call scope.
        toolbox = self.toolbox.within(current_scope())
        for name in toolbox:
            tool = toolbox[name]
            if isinstance(tool, RemoteAgentTool):
                if delegating:
                    yield tool.definition, tool
            elif (
                isinstance(tool, SkillTool)
                and tool.skill_id not in ROUTING_SKILLS
                and self._may_run(tool.skill_id)
            ):
                yield tool.definition, tool
        if delegating:
            yield DELEGATE_TOOL, None
        if self._may_run("swarm"):
            yield SWARM_TOOL, None

    def definitions(self) -> list[ToolDefinition]:
        """The tools the current caller may call, partners first."""
        return [definition for definition, _ in self._tools()]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """Tool `name`'s argument schema (None for no such tool), for checking a request's
        headers before its call runs: the call itself is checked against the caller's
        scope."""
        for definition, _ in self._tools():
            if definition.name == name:
                return definition.input_schema
        return None

    def resolve(self, name: str, arguments: Mapping[str, Any]) -> ToolCall:
        """The hub request a call of tool `name` with `arguments` becomes.

        Raises:
            UnknownToolError: no such tool for this caller (the message lists the known).
            InvalidParamsError: the arguments do not match the tool's schema.
        """
        found = {definition.name: tool for definition, tool in self._tools()}
        if name not in found:
            close = difflib.get_close_matches(name, list(found), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            known = ", ".join(sorted(found)) or "none"
            raise UnknownToolError(f"no tool named '{name}'{hint} (known: {known})")
        tool = found[name]
        if isinstance(tool, RemoteAgentTool):
            args = parse_arguments(name, arguments, tool.skills)
            partner = {"skill": "delegate", "agent": tool.agent, "agentSkill": args.skill}
            return ToolCall(tool=name, agent=tool.agent, request=_request(args, partner))
        if isinstance(tool, SkillTool):
            args = parse_arguments(name, arguments, [tool.skill_id])
            local = {"skill": tool.skill_id}
            return ToolCall(tool=name, agent=tool.skill_id, request=_request(args, local))
        routing: dict[str, type[ToolArguments]] = {
            DELEGATE_TOOL.name: DelegateArguments,
            SWARM_TOOL.name: SwarmArguments,
        }
        routed = parse_arguments(name, arguments, model=routing[name])
        options = {**routed.options(), "skill": name}
        return ToolCall(tool=name, agent=name, request=_request(routed, options))
