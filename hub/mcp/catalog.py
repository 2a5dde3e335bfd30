"""The MCP tools a caller sees, and the hub request each tool call becomes.

Four kinds of tool, each run as a task on one of the hub's skills, so an MCP call is a hub
task like any other:

- `a2a_<partner>`: the `delegate` skill with `metadata.agent` naming the partner;
- `skill_<id>`: the local skill `id` (not the routing skills, `ROUTING_SKILLS`);
- `delegate`: the `delegate` skill, which picks the partner (`agent`, `tags`);
- `swarm`: the `swarm` skill (`strategy`, `agents` or `tags`, `quorum`, ...).

Names, descriptions and argument schemas are those of the hub's own tools (`Toolbox`,
`hub.tools.describe`, `hub.tools.arguments`); the routing tools add their options to the same
argument schema. What the current call scope may not use (a credential's `skills` and
`agents`) is not listed, and calling it fails as for a tool that does not exist.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from hub.protocol import JsonObject, SendMessageRequest
from hub.protocol.trace import current_scope
from hub.skills.delegate import ROUTING_SKILLS
from hub.swarm import STRATEGIES
from hub.tools import Toolbox, input_schema
from hub.tools.arguments import ToolArguments, parse_arguments
from hub.tools.base import ToolDefinition
from hub.tools.remote import RemoteAgentTool
from hub.tools.skill import SkillTool

__all__ = ["Catalog", "ToolCall", "UnknownToolError"]


class UnknownToolError(LookupError):
    """The tool does not exist, or not for this caller."""


class DelegateArguments(ToolArguments):
    agent: str | None = None
    tags: tuple[str, ...] = ()


class SwarmArguments(ToolArguments):
    strategy: Literal["broadcast", "race", "vote", "best_of", "map", "chain"] = "broadcast"
    agents: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    quorum: int | None = Field(default=None, ge=1)
    limit: int | None = Field(default=None, ge=1)
    judge: str | None = None
    items: list[Any] | None = None
    concurrency: int | None = Field(default=None, ge=1)
    deadline: float | None = Field(default=None, gt=0)
    branch_deadline: float | None = Field(default=None, gt=0)


_NAMES = {"type": "array", "items": {"type": "string"}}

_DELEGATE_OPTIONS: dict[str, Any] = {
    "agent": {"type": "string", "description": "The partner to hand the message to."},
    "tags": {**_NAMES, "description": "Choose among the partners with these tags."},
}

_SWARM_OPTIONS: dict[str, Any] = {
    "strategy": {
        "type": "string",
        "enum": list(STRATEGIES),
        "description": "broadcast: every answer; race: the first success, the others "
        "canceled; vote: the majority (quorum); best_of: a judge picks; map: items split "
        "across partners; chain: each answer goes to the next partner.",
    },
    "agents": {**_NAMES, "description": "The partners to send to (default: by tags)."},
    "tags": {**_NAMES, "description": "Send to the partners with these tags."},
    "quorum": {"type": "integer", "minimum": 1, "description": "Answers a vote needs."},
    "limit": {"type": "integer", "minimum": 1, "description": "Most partners to use."},
    "judge": {"type": "string", "description": "best_of: the tool that picks the answer."},
    "items": {"type": "array", "description": "map: the list to split across partners."},
    "concurrency": {"type": "integer", "minimum": 1, "description": "Branches at once."},
    "deadline": {"type": "number", "description": "Seconds for the whole swarm."},
    "branch_deadline": {"type": "number", "description": "Seconds for each branch."},
}


def _with_options(base: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    return {**base, "properties": {**base["properties"], **options}}


DELEGATE_TOOL = ToolDefinition(
    name="delegate",
    description="Hand the message to the partner agent best suited to it (agent names one, "
    "tags narrow the choice) and relay its progress and answer.",
    input_schema=_with_options(input_schema(), _DELEGATE_OPTIONS),
)

SWARM_TOOL = ToolDefinition(
    name="swarm",
    description="Send the message to several partner agents at once and combine their "
    "answers with a strategy: broadcast, race, vote, best_of, map or chain.",
    input_schema=_with_options(input_schema(), _SWARM_OPTIONS),
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
        for name in self.toolbox:
            tool = self.toolbox[name]
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
        if name == DELEGATE_TOOL.name:
            routed = parse_arguments(name, arguments, model=DelegateArguments)
            options = {
                "skill": "delegate",
                "agent": routed.agent,
                "tags": list(routed.tags),
                "agentSkill": routed.skill,
            }
            return ToolCall(tool=name, agent="delegate", request=_request(routed, options))
        return self._swarm(name, arguments)

    @staticmethod
    def _swarm(name: str, arguments: Mapping[str, Any]) -> ToolCall:
        args = parse_arguments(name, arguments, model=SwarmArguments)
        metadata = {
            "skill": "swarm",
            "strategy": args.strategy,
            "agents": list(args.agents),
            "tags": list(args.tags),
            "quorum": args.quorum,
            "limit": args.limit,
            "judge": args.judge,
            "items": args.items,
            "concurrency": args.concurrency,
            "deadline": args.deadline,
            "branchDeadline": args.branch_deadline,
            "agentSkill": args.skill,
        }
        return ToolCall(tool=name, agent="swarm", request=_request(args, metadata))
