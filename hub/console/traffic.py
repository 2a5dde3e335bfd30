"""Where the overview's request rate and error rate come from.

The hub's request metrics (`hub/telemetry`'s `HubMetrics`) are the source; with metrics
switched off the console is given none and the overview says the figures are not measured.
A source is anything that answers the two questions below.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["TrafficSource"]


class TrafficSource(Protocol):
    """The hub's recent traffic, over whatever window the source keeps."""

    def requests_per_second(self) -> float | None:
        """Requests per second served lately (None: not measured)."""
        ...

    def error_rate(self) -> float | None:
        """Share of those requests that failed, 0 to 1 (None: not measured)."""
        ...
