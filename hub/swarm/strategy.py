"""The names of the swarm strategies: what `ctx.swarm(strategy=...)`, the `swarm` skill's
metadata and `a2a-hub swarm --strategy` accept (how each works: `hub.swarm.swarm`)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["STRATEGIES", "Strategy"]

Strategy = Literal["broadcast", "race", "vote", "best_of", "map", "chain"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)
