"""Language models (`models:` in hub.yaml) and the orchestrator skills that use them
(`skills: - orchestrator: ...`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from hub.config.base import SkillEntrySettings, StrictModel
from hub.config.values import parse_duration, parse_size

__all__ = [
    "ModelPrice",
    "ModelSettings",
    "OrchestratorSettings",
    "PlanLimits",
    "PlanTools",
    "TranscriptSettings",
]

_SWARM_STRATEGIES = ("broadcast", "race", "vote", "best_of", "map", "chain")


class ModelPrice(StrictModel):
    """What a model costs, in US dollars per million tokens; a plan's `cost` limit and the
    cost metrics are computed from it."""

    input: float = Field(default=0.0, ge=0)
    """Dollars per million input (prompt) tokens."""
    output: float = Field(default=0.0, ge=0)
    """Dollars per million output (completion) tokens."""

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class ModelSettings(StrictModel):
    """One language model the hub's orchestrators may use.

    `provider: openai` speaks the OpenAI Chat Completions API: with a `base_url`, any
    OpenAI-compatible server (Ollama, vLLM, llama.cpp's server, LM Studio, a LiteLLM or
    Bifrost proxy). `provider: anthropic` speaks Anthropic's Messages API.
    """

    provider: Literal["openai", "anthropic"]
    """Which API the model speaks."""
    model: str = Field(min_length=1)
    """The model's name at its server (e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.2)."""
    base_url: str | None = None
    """Where the API is served; default: the provider's own."""
    api_key: SecretStr | None = None
    """The API key, written as a `${NAME}` reference (never literally in the file)."""
    tool_calling: Literal["native", "json"] = "native"
    """`native`: the API's own tool calls. `json`: each step asks the model for one JSON
    object constrained by a schema (call a tool with its input, or answer), through the
    server's structured output; for small local models that cannot call tools."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens of one model answer."""
    timeout: float = 120.0
    """Seconds one model call may take (seconds, or '2m')."""
    price: ModelPrice = ModelPrice()

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, value: object) -> float:
        return parse_duration(value)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, url: str | None) -> str | None:
        if url is not None and not re.match(r"^https?://[^\s/]+", url):
            raise ValueError(f"base_url {url!r} must be an http:// or https:// URL")
        return url


class PlanTools(StrictModel):
    """Which tools an orchestrator's model may call (within what its caller may reach)."""

    agents: tuple[str, ...] = ()
    """Partners of agents.yaml by name (`a2a_<name>`); `"*"` for every one."""
    tags: tuple[str, ...] = ()
    """Partners whose card carries one of these tags (in a skill's tags)."""
    skills: tuple[str, ...] = ()
    """Local skills by id (`skill_<id>`)."""
    swarm: tuple[str, ...] = ()
    """Swarm strategies offered as tools (`swarm_<strategy>`) over the partners above."""
    ask_user: bool = False
    """Offer `ask_user`: the model asks the caller a question (the task waits for input)."""
    required: bool = False
    """The first model step of each turn must call a tool (a `tool_choice` of "required"):
    for small models that would otherwise answer from what they know."""

    @field_validator("swarm")
    @classmethod
    def _strategies(cls, strategies: tuple[str, ...]) -> tuple[str, ...]:
        for strategy in strategies:
            if strategy not in _SWARM_STRATEGIES:
                raise ValueError(
                    f"unknown swarm strategy {strategy!r} (known: {', '.join(_SWARM_STRATEGIES)})"
                )
        return strategies


class PlanLimits(StrictModel):
    """How far one plan may go; a plan that reaches a limit ends failed, naming it and
    what was spent."""

    steps: int = Field(default=10, ge=1, le=1000)
    """Most model calls in one turn of the conversation."""
    tool_calls: int = Field(default=20, ge=0, le=10_000)
    """Most tool calls in one turn."""
    tokens: int | None = Field(default=None, ge=1)
    """Most tokens (input and output together) in one turn; no limit when unset."""
    cost: float | None = Field(default=None, gt=0)
    """Most US dollars in one turn, by the model's `price`; no limit when unset."""
    wall_time: float = 600.0
    """Seconds one turn may take, waiting for the caller's answers not counted."""
    depth: int = Field(default=2, ge=1, le=16)
    """Most orchestrators nested in one another through skill tools and hub partners
    (counted along the request's trail)."""

    @field_validator("wall_time", mode="before")
    @classmethod
    def _wall_time(cls, value: object) -> float:
        return parse_duration(value)


class TranscriptSettings(StrictModel):
    """The conversation an orchestrator keeps per context, for follow-up messages."""

    max_bytes: int = 256 * 1024
    """Largest stored transcript; the oldest turns are dropped past it (bytes, or '256KiB')."""
    ttl: float = 86400.0
    """How long a transcript is kept after its last turn (seconds, or '1d')."""

    @field_validator("max_bytes", mode="before")
    @classmethod
    def _size(cls, value: object) -> int:
        return parse_size(value)

    @field_validator("ttl", mode="before")
    @classmethod
    def _ttl(cls, value: object) -> float:
        return parse_duration(value)


class OrchestratorSettings(SkillEntrySettings):
    """A local skill whose work is done by a language model calling the hub's tools."""

    model: str = "default"
    """The entry of `models:` it uses."""
    instructions: str = ""
    """The system prompt."""
    tools: PlanTools = PlanTools()
    limits: PlanLimits = PlanLimits()
    transcript: TranscriptSettings = TranscriptSettings()

    @model_validator(mode="after")
    def _some_tool_or_answer(self) -> OrchestratorSettings:
        if self.tools.swarm and not (self.tools.agents or self.tools.tags):
            raise ValueError(
                "tools.swarm needs partners to swarm over: name them in tools.agents or tools.tags"
            )
        return self
