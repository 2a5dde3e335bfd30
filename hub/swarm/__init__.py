"""Routing and orchestration: which partner takes a request, and delegating to it."""

from hub.swarm.router import (
    Candidate,
    Router,
    RouteRequest,
    ScoringRouter,
    choose_partners,
)
from hub.swarm.swarm import STRATEGIES, Branch, Strategy, SwarmResult, run_swarm

__all__ = [
    "STRATEGIES",
    "Branch",
    "Candidate",
    "RouteRequest",
    "Router",
    "ScoringRouter",
    "Strategy",
    "SwarmResult",
    "choose_partners",
    "run_swarm",
]
