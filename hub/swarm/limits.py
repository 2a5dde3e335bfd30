"""The caps a swarm is held to (`swarm:` in hub.yaml, `SwarmSettings`): checked before any
partner is called, so a swarm too large for the hub is refused rather than left to run."""

from __future__ import annotations

from hub.config import SwarmSettings
from hub.errors import InvalidParamsError
from hub.swarm.spec import SwarmSpec

__all__ = ["check_limits"]


def check_limits(limits: SwarmSettings, spec: SwarmSpec, *, concurrency: int) -> float:
    """Refuse a swarm past one of `limits` (its `concurrency`: the spec's, or the default
    the runner chose); return its overall deadline in seconds (the configured one when the
    swarm names none).

    Raises:
        InvalidParamsError: a cap is exceeded; the message names the cap, the value asked
            for and the setting that raises it.
    """
    if spec.strategy == "map" and spec.items is not None:
        _cap("items", len(spec.items), limits.max_items, "max_items", "metadata.items")
    _cap("partners", len(spec.agents), limits.max_agents, "max_agents", "metadata.agents")
    _cap(
        "branches at once",
        concurrency,
        limits.max_concurrency,
        "max_concurrency",
        "metadata.concurrency",
    )
    deadline = spec.deadline
    if deadline is None:
        return limits.deadline
    if deadline > limits.deadline:
        raise InvalidParamsError(
            f"a swarm may take at most {limits.deadline:g} s, and this one asks for "
            f"{deadline:g} s (swarm.deadline in hub.yaml raises the cap)",
            violations=[("metadata.deadline", f"at most {limits.deadline:g}")],
        )
    return deadline


def _cap(what: str, value: int, cap: int, setting: str, field: str) -> None:
    if value > cap:
        raise InvalidParamsError(
            f"a swarm may have at most {cap} {what}, and this one has {value} "
            f"(swarm.{setting} in hub.yaml raises the cap)",
            violations=[(field, f"at most {cap}")],
        )
