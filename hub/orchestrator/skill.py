"""`Orchestrator`: a local skill whose work a language model does with the hub's tools.

Declared in hub.yaml (`skills: - orchestrator: {...}`) or in Python with `orchestrator(...)`,
next to `@skill`; either way it is a `LocalSkill` like any other: on the card, in `a2a-hub
skills`, as `skill_<id>` over MCP and in the console. Its tasks are resumable: a hub that
restarts (or a replica that takes a task over) runs it again, and the plan goes on from its
journal (`hub.orchestrator.plan`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hub.config import ModelSettings, OrchestratorSettings, PlanLimits, PlanTools
from hub.config.models import TranscriptSettings
from hub.errors import ConfigError, SkillError
from hub.llm import ChatModel, require_llm_extra
from hub.orchestrator.plan import Plan
from hub.orchestrator.toolset import PlanToolbox, Toolset
from hub.protocol import AgentSkill, TaskState
from hub.protocol.trace import current_scope
from hub.store import SkillStateStore
from hub.tasks import ReplyMode, TaskRun
from hub.tools import ToolArguments

__all__ = ["Orchestrator", "orchestrator"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Orchestrator:
    """An orchestrator skill: its card entry, its settings, and (once the hub binds it) its
    model, tools and store.

    Implements the task manager's `TaskExecutor` (and `LocalSkill`).
    """

    card: AgentSkill
    settings: OrchestratorSettings
    model_settings: ModelSettings | None = None
    """The model, when given directly; otherwise `settings.model` names an entry of
    `models:`."""
    tools: PlanToolbox | None = field(default=None, repr=False, compare=False)
    store: SkillStateStore | None = field(default=None, repr=False, compare=False)
    model: ChatModel | None = field(default=None, repr=False, compare=False)
    orchestrators: frozenset[str] = frozenset()
    """The ids of the hub's orchestrator skills, never offered as tools to a plan."""
    arguments: type[ToolArguments] = ToolArguments
    mode: ReplyMode = "task"
    resumable: bool = True

    @property
    def skill_id(self) -> str:
        return self.card.id

    @property
    def reply_mode(self) -> ReplyMode:
        return self.mode

    def with_tools(self, tools: PlanToolbox) -> Orchestrator:
        return replace(self, tools=tools)

    def bound(
        self,
        store: SkillStateStore,
        models: Mapping[str, ModelSettings],
        orchestrators: frozenset[str] = frozenset(),
    ) -> Orchestrator:
        """This skill with its store and its model, from `models:` unless given directly.

        Raises:
            ConfigError: the model it names is not in `models:`.
        """
        settings = self.model_settings
        name = self.settings.model
        if settings is None:
            settings = models.get(name)
            if settings is None:
                known = ", ".join(sorted(models)) or "none"
                raise ConfigError(
                    f"orchestrator '{self.skill_id}' uses model '{name}', which models: does "
                    f"not declare (declared: {known})"
                )
        return replace(
            self,
            store=store,
            model=ChatModel(name, settings),
            orchestrators=orchestrators | {self.skill_id},
        )

    async def run(self, run: TaskRun) -> None:
        if run.state is TaskState.SUBMITTED:
            await run.status(TaskState.WORKING)
        if self.tools is None or self.store is None or self.model is None:
            raise SkillError(
                f"orchestrator '{self.skill_id}' runs outside a hub (serve it with a2a-hub or Hub)"
            )
        scope = current_scope()
        tools = Toolset.build(
            self.settings.tools,
            self.tools.within(scope),
            own_skills=self.orchestrators,
            allowed_skills=scope.skills if scope is not None else None,
        )
        await Plan(run, self.settings, self.model, tools, self.store).execute()


def from_settings(settings: OrchestratorSettings) -> Orchestrator:
    """The orchestrator skill an entry of `skills:` declares.

    Raises:
        ConfigError: the `llm` extra is not installed.
    """
    require_llm_extra(f"orchestrator '{settings.id}'")
    return Orchestrator(card=settings.card(), settings=settings)


def orchestrator(
    *,
    id: str,
    description: str,
    model: str | ModelSettings | Mapping[str, Any] = "default",
    instructions: str = "",
    tools: PlanTools | Mapping[str, Any] | None = None,
    limits: PlanLimits | Mapping[str, Any] | None = None,
    transcript: TranscriptSettings | Mapping[str, Any] | None = None,
    name: str | None = None,
    tags: Sequence[str] = (),
    examples: Sequence[str] = (),
) -> Orchestrator:
    """Declare an orchestrator skill in Python: the same fields as in hub.yaml.

    Args:
        id: the skill id in the card and in `metadata.skill`.
        description: what it does, shown in the card.
        model: the entry of `models:` it uses, or the model's settings themselves
            (`ModelSettings`, or a dict of them).
        instructions: the system prompt.
        tools: which tools the model may call (`PlanTools` or a dict: agents, tags, skills,
            swarm, ask_user).
        limits: steps, tool_calls, tokens, cost, wall_time, depth (`PlanLimits` or a dict).
        transcript: how much conversation is kept per context (`max_bytes`, `ttl`).

    Raises:
        pydantic.ValidationError: a field is not valid.
        ConfigError: the `llm` extra is not installed.
    """
    given = None
    if isinstance(model, ModelSettings):
        given, model_name = model, model.model
    elif isinstance(model, Mapping):
        given = ModelSettings.model_validate(model)
        model_name = given.model
    else:
        model_name = model
    values: dict[str, Any] = {
        "id": id,
        "description": description,
        "name": name,
        "tags": tuple(tags),
        "examples": tuple(examples),
        "model": model_name,
        "instructions": instructions,
    }
    for key, value in (("tools", tools), ("limits", limits), ("transcript", transcript)):
        if value is not None:
            values[key] = value
    skill = from_settings(OrchestratorSettings.model_validate(values))
    return replace(skill, model_settings=given)
