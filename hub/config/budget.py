"""`BudgetSettings`: what a caller may spend over a sliding window: partner calls, model
tokens and model cost. A credential carries one (`auth.credentials[].budget`); the model is
the settings' own, with nothing of where it comes from, so any mapping that makes a caller
(a credential today, a claim of a token later) can carry one too."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from hub.config.base import StrictModel
from hub.config.values import parse_duration

__all__ = ["BudgetSettings"]


class BudgetSettings(StrictModel):
    """Limits over the last `window`; a limit left out is not enforced (its spend is still
    counted, and shown on the console)."""

    window: float = 3600.0
    """How far back the spend is counted: a duration such as `1h` or `15m` (default 1h)."""
    partner_calls: int | None = Field(default=None, ge=0)
    """Messages sent to partners (SendMessage and SendStreamingMessage, through a skill's
    tools or the gateway); the call past it is refused."""
    tokens: int | None = Field(default=None, ge=0)
    """Model tokens (input and output) of the orchestrators' steps; a step is refused once
    they are reached."""
    cost: float | None = Field(default=None, ge=0)
    """US dollars of the orchestrators' steps (from the model entry's prices); a step is
    refused once they are reached."""

    @field_validator("window", mode="before")
    @classmethod
    def _duration(cls, value: object) -> float:
        return parse_duration(value)

    @model_validator(mode="after")
    def _some_limit(self) -> BudgetSettings:
        if self.partner_calls is None and self.tokens is None and self.cost is None:
            raise ValueError(
                "a budget needs at least one of partner_calls, tokens or cost; leave budget "
                "out for none"
            )
        return self
