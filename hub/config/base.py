"""`StrictModel`: the base of every model read from a settings file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from hub.protocol import AgentSkill

__all__ = ["SkillEntrySettings", "StrictModel"]


class StrictModel(BaseModel):
    """An unknown key is an error (reported with a suggestion), and values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class SkillEntrySettings(StrictModel):
    """What every skill declared in `skills:` says of itself, for the card."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """The skill id in the card and in `metadata.skill`."""
    name: str | None = None
    """A human name (default: the id)."""
    description: str
    """What the skill does, shown in the card."""
    tags: tuple[str, ...] = ()
    """Keywords for routing."""
    examples: tuple[str, ...] = ()
    """Example prompts."""

    def card(self) -> AgentSkill:
        """The skill's entry in the hub's card."""
        # The protocol's models are loaded by what serves a card, not by reading settings.
        from hub.protocol import AgentSkill

        return AgentSkill(
            id=self.id,
            name=self.name or self.id,
            description=self.description,
            tags=list(self.tags),
            examples=list(self.examples) or None,
        )
