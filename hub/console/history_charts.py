"""The hub's traffic history (`hub.telemetry.history`) as the charts the overview and the
partners page show: requests and errors per minute, p50 and p99 latency, tokens and cost
per model entry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from hub.console.charts import Series, dollars, line_chart, seconds
from hub.telemetry.history import MinutePoint, UsagePoint

__all__ = ["TrafficCharts", "traffic_charts", "usage_charts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TrafficCharts:
    """One series' charts and the hour's figures in words.

    Attributes:
        volume: requests (calls) and errors per minute.
        latency: p50 and p99 per minute.
        requests: requests in the hour.
        errors: failures among them.
    """

    volume: Markup
    latency: Markup
    requests: int
    errors: int


def traffic_charts(points: Sequence[MinutePoint], *, noun: str, small: bool) -> TrafficCharts:
    """Charts of `points` (one per minute): `noun` is what is counted ("Requests",
    "Calls")."""
    volume = line_chart(
        f"{noun} and errors per minute",
        [
            Series(name=noun.lower(), key="requests", values=[p.requests for p in points]),
            Series(name="errors", key="errors", values=[p.errors for p in points]),
        ],
        area=True,
        small=small,
    )
    latency = line_chart(
        "Latency per minute (p50, p99)",
        [
            Series(name="p50", key="p50", values=[p.p50 for p in points], total=False),
            Series(name="p99", key="p99", values=[p.p99 for p in points], total=False),
        ],
        fmt=seconds,
        small=small,
    )
    return TrafficCharts(
        volume=volume,
        latency=latency,
        requests=sum(p.requests for p in points),
        errors=sum(p.errors for p in points),
    )


def usage_charts(points: Sequence[UsagePoint]) -> tuple[Markup, Markup]:
    """(tokens per minute, input and output; cost per minute) of one model entry."""
    tokens = line_chart(
        "Tokens per minute",
        [
            Series(name="input", key="input", values=[p.input_tokens for p in points]),
            Series(name="output", key="output", values=[p.output_tokens for p in points]),
        ],
        small=True,
    )
    cost = line_chart(
        "Cost per minute",
        [Series(name="cost", key="cost", values=[p.cost for p in points])],
        fmt=dollars,
        area=True,
        small=True,
    )
    return tokens, cost
