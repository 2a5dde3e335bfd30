"""What `GET /status` answers and `a2a-hub status` shows: the running hub's load and live
tasks, and per partner its breaker and recent latency and error rate (the figures the router
weighs). Names and figures only: no URL, header or credential of agents.yaml or hub.yaml."""

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
    calls: int
    """Calls the router has figures for."""
    latency_ms: float | None = None
    """Recent weighted average of a successful call."""
    error_rate: float
    """Recent weighted share of failed calls, 0 to 1."""


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
