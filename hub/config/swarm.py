"""How large and how long a swarm may be (`swarm:` in hub.yaml)."""

from __future__ import annotations

from pydantic import Field, field_validator

from hub.config.base import StrictModel
from hub.config.values import parse_duration

__all__ = ["SwarmSettings"]


class SwarmSettings(StrictModel):
    """The caps every swarm is held to, whoever starts it (the `swarm` skill, `ctx.swarm`,
    MCP's `swarm` tool, `a2a-hub swarm`). A swarm past a cap is refused before any partner is
    called, with an error that names the cap, the value asked for and this setting."""

    max_items: int = Field(default=1000, ge=1)
    """Most items of one `map` swarm (one branch each)."""
    max_agents: int = Field(default=100, ge=1)
    """Most partners in one swarm (the links of a `chain`)."""
    max_concurrency: int = Field(default=64, ge=1)
    """Most branches of one swarm running at once (its `concurrency`)."""
    deadline: float = 600.0
    """Seconds the whole swarm may take: the deadline of a swarm that sets none, and the
    longest one a swarm may ask for (seconds, or '10m')."""

    @field_validator("deadline", mode="before")
    @classmethod
    def _deadline(cls, value: object) -> float:
        return parse_duration(value)
