"""`TrafficHistory`: the hub's traffic over the last hour, minute by minute, kept in process
for the console's charts (`HubMetrics` feeds it where it counts).

For the hub's A2A requests and for each partner's calls: how many, how many failed, and
their latency as counts per bucket (the buckets of `/metrics`' histograms), from which the
p50 and p99 of a minute are estimated as Prometheus' `histogram_quantile` does. For each
model entry of an orchestrator: the tokens and the cost of its calls. One series is sixty
minute slots reused in turn, so memory is bounded by the labels (agents.yaml's partner
names, the model entries), never by the traffic, and recording is a few additions.

What one hub process records: replicas each keep their own.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = [
    "LATENCY_BUCKETS",
    "MINUTES",
    "MinutePoint",
    "TrafficHistory",
    "UsagePoint",
    "is_error",
    "quantile",
]

MINUTES = 60
"""How many minutes a series keeps (the last hour)."""

LATENCY_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
)  # fmt: skip
"""Upper bounds of the latency buckets, in seconds, from a millisecond (a local skill, a
commit) to minutes (a swarm); one more bucket holds what is slower."""

_OK = frozenset({"ok", "canceled"})
"""Outcomes that are not failures (a race's losers are canceled by the hub itself)."""


def is_error(outcome: str) -> bool:
    """Whether a request or call with this outcome failed."""
    return outcome not in _OK


@dataclass(frozen=True, slots=True, kw_only=True)
class MinutePoint:
    """One minute of requests (or partner calls).

    Attributes:
        start: when the minute began (Unix seconds).
        requests: requests answered (calls made) in that minute.
        errors: how many of them failed.
        p50: estimated median latency in seconds; None for a minute without any.
        p99: estimated 99th percentile latency in seconds; None likewise.
    """

    start: float
    requests: int
    errors: int
    p50: float | None
    p99: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class UsagePoint:
    """One minute of a model entry's calls.

    Attributes:
        start: when the minute began (Unix seconds).
        input_tokens: tokens sent to the model.
        output_tokens: tokens it answered with.
        cost: US dollars, from the entry's price table (0 without one).
    """

    start: float
    input_tokens: int
    output_tokens: int
    cost: float


def quantile(per_bucket: list[int], q: float) -> float | None:
    """The `q` quantile (0 to 1) of the latencies counted per bucket, interpolated linearly
    inside the bucket it falls in; the slowest bucket answers its lower bound."""
    total = sum(per_bucket)
    if not total:
        return None
    rank = q * total
    seen = 0
    for index, count in enumerate(per_bucket):
        if count and seen + count >= rank:
            lower = LATENCY_BUCKETS[index - 1] if index else 0.0
            if index == len(LATENCY_BUCKETS):
                return lower
            upper = LATENCY_BUCKETS[index]
            return lower + (upper - lower) * (rank - seen) / count
        seen += count
    return LATENCY_BUCKETS[-1]


class _Timed:
    """The requests of one minute slot."""

    __slots__ = ("errors", "minute", "per_bucket", "requests")

    def __init__(self) -> None:
        self.minute = -1
        self.requests = 0
        self.errors = 0
        self.per_bucket = [0] * (len(LATENCY_BUCKETS) + 1)

    def reset(self, minute: int) -> None:
        self.minute = minute
        self.requests = self.errors = 0
        per_bucket = self.per_bucket
        for index in range(len(per_bucket)):
            per_bucket[index] = 0


class _Used:
    """The model calls of one minute slot."""

    __slots__ = ("cost", "input_tokens", "minute", "output_tokens")

    def __init__(self) -> None:
        self.minute = -1
        self.input_tokens = self.output_tokens = 0
        self.cost = 0.0

    def reset(self, minute: int) -> None:
        self.minute = minute
        self.input_tokens = self.output_tokens = 0
        self.cost = 0.0


def _window(now: float) -> Iterator[tuple[int, int]]:
    """(minute number, slot) of the last `MINUTES` minutes, oldest first, the current last."""
    current = math.floor(now / 60)
    for minute in range(current - MINUTES + 1, current + 1):
        yield minute, minute % MINUTES


class TrafficHistory:
    """Requests, failures and latency per minute for the hub and each partner, tokens and
    cost per minute for each model entry, over the last `MINUTES` minutes.

    Args:
        clock: wall-clock seconds.
    """

    __slots__ = ("_clock", "_hub", "_models", "_partners", "revision")

    def __init__(self, *, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._hub = self._timed()
        self._partners: dict[str, list[_Timed]] = {}
        self._models: dict[str, list[_Used]] = {}
        self.revision = 0
        """Counts what was recorded: a reader compares it to know whether anything was."""

    @staticmethod
    def _timed() -> list[_Timed]:
        return [_Timed() for _ in range(MINUTES)]

    def _add(self, series: list[_Timed], seconds: float, error: bool) -> None:
        minute = math.floor(self._clock() / 60)
        slot = series[minute % MINUTES]
        if slot.minute != minute:
            slot.reset(minute)
        slot.requests += 1
        if error:
            slot.errors += 1
        slot.per_bucket[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.revision += 1

    def request(self, seconds: float, *, error: bool) -> None:
        """One A2A request the hub answered in `seconds`."""
        self._add(self._hub, seconds, error)

    def partner_call(self, partner: str, seconds: float, *, error: bool) -> None:
        """One call to `partner` (agents.yaml's name) that took `seconds`."""
        series = self._partners.get(partner)
        if series is None:
            series = self._partners[partner] = self._timed()
        self._add(series, seconds, error)

    def model_call(self, model: str, *, input_tokens: int, output_tokens: int, cost: float) -> None:
        """One model call of an orchestrator through the model entry `model`."""
        series = self._models.get(model)
        if series is None:
            series = self._models[model] = [_Used() for _ in range(MINUTES)]
        minute = math.floor(self._clock() / 60)
        slot = series[minute % MINUTES]
        if slot.minute != minute:
            slot.reset(minute)
        slot.input_tokens += input_tokens
        slot.output_tokens += output_tokens
        slot.cost += cost
        self.revision += 1

    def partners(self) -> list[str]:
        """The partners called at least once since the hub started."""
        return sorted(self._partners)

    def models(self) -> list[str]:
        """The model entries called at least once since the hub started."""
        return sorted(self._models)

    def hub(self) -> list[MinutePoint]:
        """The hub's requests, one point per minute of the last hour, oldest first."""
        return self._points(self._hub)

    def partner(self, name: str) -> list[MinutePoint]:
        """`name`'s calls, one point per minute of the last hour (zeros if never called)."""
        return self._points(self._partners.get(name))

    def model(self, name: str) -> list[UsagePoint]:
        """`name`'s tokens and cost, one point per minute of the last hour."""
        series = self._models.get(name)
        points = []
        for minute, slot in _window(self._clock()):
            used = series[slot] if series is not None else None
            if used is None or used.minute != minute:
                points.append(
                    UsagePoint(start=minute * 60.0, input_tokens=0, output_tokens=0, cost=0)
                )
            else:
                points.append(
                    UsagePoint(
                        start=minute * 60.0,
                        input_tokens=used.input_tokens,
                        output_tokens=used.output_tokens,
                        cost=used.cost,
                    )
                )
        return points

    def _points(self, series: list[_Timed] | None) -> list[MinutePoint]:
        points = []
        for minute, slot in _window(self._clock()):
            timed = series[slot] if series is not None else None
            if timed is None or timed.minute != minute:
                points.append(
                    MinutePoint(start=minute * 60.0, requests=0, errors=0, p50=None, p99=None)
                )
            else:
                points.append(
                    MinutePoint(
                        start=minute * 60.0,
                        requests=timed.requests,
                        errors=timed.errors,
                        p50=quantile(timed.per_bucket, 0.5),
                        p99=quantile(timed.per_bucket, 0.99),
                    )
                )
        return points
