"""Where the overview's figures and charts of the hub's traffic come from.

The hub's request metrics (`hub/telemetry`'s `HubMetrics`) are the source; with metrics
switched off the console is given none and the overview says the figures are not measured.
A source is anything that answers the questions below.
"""

from __future__ import annotations

from typing import Protocol

from hub.telemetry.history import TrafficHistory

__all__ = ["TrafficSource"]


class TrafficSource(Protocol):
    """The hub's recent traffic, over whatever window the source keeps."""

    @property
    def history(self) -> TrafficHistory:
        """Requests, errors and latency per minute over the last hour, for the hub and each
        partner; tokens and cost per model entry."""
        ...

    def requests_per_second(self) -> float | None:
        """Requests per second served lately (None: not measured)."""
        ...

    def error_rate(self) -> float | None:
        """Share of those requests that failed, 0 to 1 (None: not measured)."""
        ...
