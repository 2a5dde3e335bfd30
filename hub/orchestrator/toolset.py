"""The tools one plan may call: what the orchestrator's settings name, within what its
caller may reach.

A plan's tools are fixed when it starts, from the caller's view of the hub's toolbox: the
partners named (or tagged) in `tools:` that the caller may reach (`a2a_<partner>`), the local
skills named (`skill_<id>`), a tool per swarm strategy over those partners
(`swarm_<strategy>`), and `ask_user`. Nothing a tool answers can change the set; a name the
model invents, or one outside it, is answered to the model as an error and never called.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from hub.config import PlanTools, SwarmSettings
from hub.llm import ToolSpec
from hub.partners import Conversations, PartnerView, StatsBook
from hub.protocol.trace import CallScope
from hub.tools import Tool

__all__ = ["ASK_USER", "PlanTool", "PlanToolbox", "Toolset"]

ASK_USER = "ask_user"

_HIDDEN_ARGUMENTS = ("task_id", "context_id", "files")
"""Arguments the plan manages itself (which partner task, which conversation) or that a
model cannot give (files): not offered to the model."""


class PlanToolbox(Protocol):
    """What a plan needs of the hub's toolbox (`hub.skills.toolbox.Toolbox`)."""

    partners: PartnerView
    swarm: SwarmSettings
    stats: StatsBook
    conversations: Conversations

    def within(self, scope: CallScope | None) -> PlanToolbox: ...

    def __getitem__(self, name: str) -> Tool: ...

    def __iter__(self) -> Iterator[str]: ...


@dataclass(frozen=True, slots=True)
class PlanTool:
    """One tool of a plan: what the model sees and what a call runs."""

    kind: Literal["partner", "skill", "swarm", "ask"]
    spec: ToolSpec
    tool: Tool | None = None
    partner: str | None = None
    strategy: str | None = None


class Toolset(Mapping[str, PlanTool]):
    """The plan's tools by name, and the toolbox they come from."""

    def __init__(self, tools: dict[str, PlanTool], toolbox: PlanToolbox, partners: tuple[str, ...]):
        self._tools = tools
        self.toolbox = toolbox
        self.partners = partners
        """The partners the plan may call, for its swarms."""

    @classmethod
    def build(
        cls,
        settings: PlanTools,
        toolbox: PlanToolbox,
        *,
        own_skills: frozenset[str],
        allowed_skills: frozenset[str] | None = None,
    ) -> Toolset:
        """The tools `settings` names that `toolbox` (the caller's view) holds.

        Args:
            own_skills: local skill ids never offered (the orchestrators: a plan does not
                start another plan in this hub).
            allowed_skills: the local skills the caller may use (None: every one).
        """
        view = toolbox.partners
        wanted_tags = set(settings.tags)
        partners = tuple(
            name
            for name in view
            if "*" in settings.agents
            or name in settings.agents
            or (wanted_tags and wanted_tags & _partner_tags(view, name))
        )
        tools: dict[str, PlanTool] = {}
        for name in partners:
            tool = view[name]
            tools[tool.name] = PlanTool(
                "partner",
                _spec(
                    tool.definition.name, tool.definition.description, tool.definition.input_schema
                ),
                tool=tool,
                partner=name,
            )
        for skill_id in settings.skills:
            if skill_id in own_skills or (
                allowed_skills is not None and skill_id not in allowed_skills
            ):
                continue
            name = f"skill_{skill_id}".replace("-", "_").replace(".", "_")
            try:
                local = toolbox[name]
            except KeyError:
                continue
            definition = local.definition
            tools[name] = PlanTool(
                "skill", _spec(name, definition.description, definition.input_schema), tool=local
            )
        if partners:
            for strategy in settings.swarm:
                name = f"swarm_{strategy}"
                tools[name] = PlanTool(
                    "swarm", _swarm_spec(name, strategy, partners), strategy=strategy
                )
        if settings.ask_user:
            tools[ASK_USER] = PlanTool(
                "ask",
                ToolSpec(
                    name=ASK_USER,
                    description="Ask the user a question and wait for the answer; use it only "
                    "when you cannot go on without their input.",
                    input_schema={
                        "type": "object",
                        "properties": {"question": {"type": "string", "minLength": 1}},
                        "required": ["question"],
                        "additionalProperties": False,
                    },
                ),
            )
        return cls(tools, toolbox, partners)

    @property
    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def __getitem__(self, name: str) -> PlanTool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


def _partner_tags(view: PartnerView, name: str) -> set[str]:
    tags = set(view.entry(name).tags)
    card = view[name].card
    if card is not None:
        for skill in card.skills:
            tags.update(skill.tags or ())
    return tags


def _spec(name: str, description: str, schema: dict[str, Any]) -> ToolSpec:
    properties = {
        key: value
        for key, value in schema.get("properties", {}).items()
        if key not in _HIDDEN_ARGUMENTS
    }
    required = [key for key in schema.get("required", []) if key in properties]
    shown = {**schema, "properties": properties, "required": required}
    return ToolSpec(name=name, description=description, input_schema=shown)


_STRATEGY_WORDS = {
    "broadcast": "sends the message to each partner and returns every answer",
    "race": "sends the message to each partner and returns the first answer",
    "vote": "sends the message to each partner and returns the answer most of them give",
    "best_of": "sends the message to each partner and returns the best answer",
    "map": "sends each item to a partner and returns every answer, in order",
    "chain": "sends the message through the partners in turn, each given the last answer",
}


def _swarm_spec(name: str, strategy: str, partners: tuple[str, ...]) -> ToolSpec:
    properties: dict[str, Any] = {
        "message": {"type": "string", "minLength": 1, "description": "What to ask."},
        "agents": {
            "type": "array",
            "items": {"type": "string", "enum": list(partners)},
            "description": "The partners to ask (default: the router's choice).",
        },
    }
    if strategy == "map":
        properties["items"] = {
            "type": "array",
            "items": {"type": "string"},
            "description": "The items, one branch each.",
        }
    return ToolSpec(
        name=name,
        description=f"A swarm of partner agents: {_STRATEGY_WORDS.get(strategy, strategy)}.",
        input_schema={
            "type": "object",
            "properties": properties,
            "required": ["message"],
            "additionalProperties": False,
        },
    )
