"""The figures a dashboard's front page shows, read in process (`HubMetrics.overview()`):
request rate and error rate over the last minute, live tasks, open streams, uptime."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Overview", "RequestWindow"]

_SECONDS = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class Overview:
    """The running hub at a glance.

    Attributes:
        requests_per_second: A2A requests answered per second over the last minute.
        error_rate: the share of them that failed, 0 to 1.
        live_tasks: tasks held in memory (not final).
        open_streams: SSE streams open now.
        uptime: seconds since the hub started.
    """

    requests_per_second: float
    error_rate: float
    live_tasks: int
    open_streams: int
    uptime: float


class RequestWindow:
    """Requests and failures over the last minute, in one-second buckets (constant memory,
    constant time per request)."""

    __slots__ = ("_clock", "_errors", "_requests", "_seconds", "_started")

    def __init__(self, *, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._started = clock()
        self._seconds = [-1] * _SECONDS
        self._requests = [0] * _SECONDS
        self._errors = [0] * _SECONDS

    def add(self, *, error: bool) -> None:
        second = math.floor(self._clock())
        slot = second % _SECONDS
        if self._seconds[slot] != second:
            self._seconds[slot] = second
            self._requests[slot] = 0
            self._errors[slot] = 0
        self._requests[slot] += 1
        if error:
            self._errors[slot] += 1

    def rates(self) -> tuple[float, float]:
        """(requests per second, error share) over the last full minute, or since the start
        when that is shorter."""
        now = self._clock()
        oldest = math.floor(now) - _SECONDS + 1
        requests = errors = 0
        for slot, second in enumerate(self._seconds):
            if second >= oldest:
                requests += self._requests[slot]
                errors += self._errors[slot]
        span = min(float(_SECONDS), max(1.0, now - self._started))
        return requests / span, (errors / requests if requests else 0.0)
