"""Routing and orchestration: which partner takes a request, and delegating to it."""

from hub.swarm.router import Candidate, Router, RouteRequest, ScoringRouter

__all__ = ["Candidate", "RouteRequest", "Router", "ScoringRouter"]
