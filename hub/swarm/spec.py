"""`SwarmSpec`: a swarm's options, defined once for every way a swarm starts.

The `swarm` skill reads it from a request's metadata (`from_metadata`), `ctx.swarm` builds it
from keyword arguments (`SwarmOptions`), `a2a-hub swarm` from its flags, MCP's `swarm` tool
and `skill_swarm` take its fields as arguments (their JSON Schema is generated from it), and
`run_swarm` runs it. Field names are Python's and the tools'; in metadata a name of two words
is camelCase (`branchDeadline`) and `skill` is `agentSkill`, since `metadata.skill` names the
hub's own skill.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from hub.protocol import JsonObject
from hub.swarm.strategy import Strategy
from hub.tools.arguments import validated

__all__ = ["SwarmOptions", "SwarmSpec"]

_METADATA_NAMES = {"skill": "agentSkill"}
"""Fields whose metadata key is not their camelCase name."""


class SwarmSpec(BaseModel):
    """How one swarm runs: which partners, how their answers combine, how many branches at
    once and for how long. Every field is optional; the strategy defaults to `broadcast`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Strategy = Field(
        default="broadcast",
        description="broadcast: every answer; race: the first success, the others canceled; "
        "vote: the majority (quorum); best_of: a judge picks; map: items split across "
        "partners; chain: each answer goes to the next partner.",
    )
    agents: tuple[str, ...] = Field(
        default=(), description="The partners to send to (default: by tags)."
    )
    tags: tuple[str, ...] = Field(
        default=(),
        # `tag` is ctx.swarm's keyword, and a metadata key older requests use.
        validation_alias=AliasChoices("tags", "tag"),
        description="Send to the partners with these tags.",
    )
    skill: str | None = Field(
        default=None,
        description="The skill to ask the partners for; only partners that offer it are chosen.",
    )
    quorum: int | None = Field(default=None, ge=1, description="Answers a vote needs.")
    limit: int | None = Field(default=None, ge=1, description="Most partners to use.")
    judge: str | None = Field(default=None, description="best_of: the tool that picks the answer.")
    items: list[Any] | None = Field(
        default=None, description="map: the list to split across partners."
    )
    concurrency: int | None = Field(default=None, ge=1, description="Branches at once.")
    deadline: float | None = Field(default=None, gt=0, description="Seconds for the whole swarm.")
    branch_deadline: float | None = Field(
        default=None, gt=0, description="Seconds for each branch."
    )

    @field_validator("agents", "tags", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> SwarmSpec:
        """Validate `options` (by field name; `tag` for `tags` too).

        Raises:
            InvalidParamsError: an option is unknown or its value does not fit (an unknown
                strategy, a number out of range); the message names each and what it takes.
        """
        return validated(cls, options, _REFUSAL)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], *, data: Sequence[Any] = ()) -> SwarmSpec:
        """The options a request's metadata gives (the `swarm` skill's input); `map`'s items
        may come as a list in the message's first data part (`data`) instead. Other keys
        of the metadata are not the swarm's and are left alone.

        Raises:
            InvalidParamsError: an option's value does not fit; the message and the
                violations name it as `metadata.<key>`.
        """
        keys = _metadata_keys()
        given = {name: metadata[key] for name, key in keys.items() if metadata.get(key) is not None}
        if "tags" not in given and metadata.get("tag") is not None:
            given["tags"] = metadata["tag"]
        if "items" not in given and data and isinstance(data[0], list):
            given["items"] = data[0]
        names = {name: f"metadata.{key}" for name, key in keys.items()}
        return validated(cls, given, _REFUSAL, names=names)

    def to_metadata(self) -> JsonObject:
        """These options as the `swarm` skill reads them from a request's metadata: what is
        set, by its metadata key."""
        given = self.model_dump(mode="json", include=set(SwarmSpec.model_fields))
        keys = _metadata_keys()
        return {keys[name]: value for name, value in given.items() if value not in (None, [])}


_REFUSAL = "the swarm's options are invalid"


def _metadata_keys() -> dict[str, str]:
    return {name: _METADATA_NAMES.get(name, to_camel(name)) for name in SwarmSpec.model_fields}


class SwarmOptions(TypedDict, total=False):
    """`SwarmSpec`'s fields as keyword arguments (`ctx.swarm(strategy="vote", ...)`), for
    type checkers; each is validated as the model's field (a test keeps the two alike)."""

    strategy: Strategy
    agents: Sequence[str]
    tags: str | Sequence[str]
    tag: str | Sequence[str]
    skill: str
    quorum: int
    limit: int
    judge: str
    items: Sequence[Any]
    concurrency: int
    deadline: float
    branch_deadline: float
