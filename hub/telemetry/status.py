"""What `GET /status` answers and `a2a-hub status` shows: the running hub's load and live
tasks, and per partner its breaker and recent latency and error rate (the figures the router
weighs). Names and figures only: no URL, header or credential of agents.yaml or hub.yaml, and
only the partners the caller's credential may reach."""

from __future__ import annotations

from hub.protocol.base import WireModel

__all__ = ["BreakerStatus", "HubStatus", "PartnerStatus", "ReadyStatus"]


class BreakerStatus(WireModel):
    state: str
    """`closed`, `half-open` or `open`."""
    consecutive_failures: int
    retry_in: float
    """Seconds until an open breaker lets a trial call through."""


class PartnerStatus(WireModel):
    name: str
    origin: str
    """`registry` (agents.yaml) or `runtime` (added while the hub runs)."""
    breaker: BreakerStatus
    card_error: str | None = None
    """Why its card could not be read when last tried (None: it was read)."""
    calls: int
    """Routed calls the router has figures for: one per `delegate` turn or swarm branch
    (`/metrics` counts every request sent to the partner, gateway traffic included)."""
    latency_ms: float | None = None
    """Recent weighted average of a successful routed call, start to end."""
    error_rate: float
    """Recent weighted share of failed routed calls, 0 to 1."""

    @property
    def up(self) -> bool:
        """Its card was read and its breaker is closed."""
        return self.card_error is None and self.breaker.state == "closed"


class HubStatus(WireModel):
    name: str
    version: str
    uptime: float
    requests_per_second: float
    """A2A requests over the last minute (0 with metrics off)."""
    error_rate: float
    live_tasks: int
    parked_tasks: int
    open_streams: int
    partners: list[PartnerStatus]


class ReadyStatus(WireModel):
    ready: bool
    checks: dict[str, str]
    """`ok`, or why the part is not ready, per part (`store`, `registry`)."""
