"""Recent latency and error rate per partner, as the router weighs them.

Exponentially weighted: each call moves the averages a fifth of the way towards what it
saw, so a partner that recovers is trusted again after a handful of good calls.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["CallStats", "StatsBook"]

_ALPHA = 0.2
_WINDOW = 100


@dataclass(slots=True)
class CallStats:
    """One partner's recent calls.

    Attributes:
        calls: calls recorded so far.
        latency: weighted average seconds per successful call (None before the first).
        error_rate: weighted share of failed calls, 0 to 1.
        recent: seconds of the last 100 successful calls, oldest first (for percentiles).
    """

    calls: int = 0
    latency: float | None = None
    error_rate: float = 0.0
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=_WINDOW))

    def record(self, *, ok: bool, seconds: float) -> None:
        """Take one call into the averages."""
        self.calls += 1
        self.error_rate += _ALPHA * ((0.0 if ok else 1.0) - self.error_rate)
        if ok:
            self.latency = (
                seconds
                if self.latency is None
                else (self.latency + _ALPHA * (seconds - self.latency))
            )
            self.recent.append(seconds)

    def percentile(self, share: float) -> float | None:
        """Seconds under which `share` (0 to 1) of the recent successful calls finished, by
        the nearest rank; None before the first."""
        if not self.recent:
            return None
        ordered = sorted(self.recent)
        rank = max(1, -(-len(ordered) * share // 1))  # ceil without float surprises
        return ordered[int(rank) - 1]


class StatsBook:
    """`CallStats` by partner name."""

    def __init__(self) -> None:
        self._stats: dict[str, CallStats] = {}

    def get(self, name: str) -> CallStats | None:
        return self._stats.get(name)

    def record(self, name: str, *, ok: bool, seconds: float) -> None:
        self._stats.setdefault(name, CallStats()).record(ok=ok, seconds=seconds)
