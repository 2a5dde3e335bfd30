"""Routing and orchestration: which partner takes a request, and delegating to it.

The names are imported when first used (`hub.lazy`): the strategy names alone
(`hub.swarm.strategy`) do not load the partners' HTTP client.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.swarm.router import (
        Candidate,
        Router,
        RouteRequest,
        ScoringRouter,
        choose_partners,
    )
    from hub.swarm.spec import SwarmOptions, SwarmSpec
    from hub.swarm.strategy import STRATEGIES, Strategy
    from hub.swarm.swarm import Branch, SwarmResult, run_swarm

__all__ = [
    "STRATEGIES",
    "Branch",
    "Candidate",
    "RouteRequest",
    "Router",
    "ScoringRouter",
    "Strategy",
    "SwarmOptions",
    "SwarmResult",
    "SwarmSpec",
    "choose_partners",
    "run_swarm",
]

if not TYPE_CHECKING:
    from hub.lazy import lazy_exports

    # Hidden from type checkers: a module `__getattr__` would make every name resolve.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "hub.swarm.router": [
                "Candidate",
                "Router",
                "RouteRequest",
                "ScoringRouter",
                "choose_partners",
            ],
            "hub.swarm.spec": ["SwarmOptions", "SwarmSpec"],
            "hub.swarm.strategy": ["STRATEGIES", "Strategy"],
            "hub.swarm.swarm": ["Branch", "SwarmResult", "run_swarm"],
        },
    )
