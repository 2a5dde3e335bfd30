"""TrafficHistory: a minute per slot over the last hour, counts and bucket-estimated
percentiles, the slots reused as the hour moves on, tokens and cost per model entry."""

from __future__ import annotations

import pytest

from hub.telemetry.history import LATENCY_BUCKETS, MINUTES, TrafficHistory, is_error, quantile
from hub.telemetry.metrics import HubMetrics


class Clock:
    """Wall-clock seconds the test moves by hand (a whole minute at 600 000 s)."""

    def __init__(self) -> None:
        self.now = 600_000.0

    def __call__(self) -> float:
        return self.now


def test_a_minute_counts_requests_and_errors_and_estimates_its_percentiles() -> None:
    clock = Clock()
    history = TrafficHistory(clock=clock)
    for _ in range(98):
        history.request(0.02, error=False)  # in the 10-25 ms bucket
    history.request(0.2, error=True)  # 100-250 ms
    history.request(0.2, error=True)

    points = history.hub()

    assert len(points) == MINUTES
    last = points[-1]
    assert (last.start, last.requests, last.errors) == (600_000.0, 100, 2)
    # The 50th of 100 in the bucket (0.01, 0.025] holding 98: interpolated within it.
    assert last.p50 == pytest.approx(0.01 + 0.015 * 50 / 98)
    # The 99th lies in (0.1, 0.25] holding the last two: half way into it.
    assert last.p99 == pytest.approx(0.1 + 0.15 * 1 / 2)
    assert all(point.requests == 0 and point.p50 is None for point in points[:-1])
    assert [point.start for point in points[:2]] == [600_000.0 - 59 * 60, 600_000.0 - 58 * 60]


def test_minutes_move_left_as_time_passes_and_an_hour_old_slot_is_reused() -> None:
    clock = Clock()
    history = TrafficHistory(clock=clock)
    history.partner_call("weather", 0.5, error=False)
    clock.now += 60
    history.partner_call("weather", 3.0, error=True)
    history.partner_call("weather", 3.0, error=False)

    points = history.partner("weather")
    assert [(p.requests, p.errors) for p in points[-2:]] == [(1, 0), (2, 1)]
    assert points[-2].p50 == pytest.approx(0.25 + 0.25 * 0.5)  # (0.25, 0.5], one of one
    assert points[-1].p99 == pytest.approx(2.5 + 2.5 * 1.98 / 2)  # (2.5, 5], rank 1.98 of 2

    clock.now += 59 * 60  # the first minute is an hour old: gone
    points = history.partner("weather")
    assert [(p.requests, p.errors) for p in points[-60:-58]] == [(2, 1), (0, 0)]
    assert sum(p.requests for p in points) == 2
    history.partner_call("weather", 0.001, error=False)  # into the reused slot
    assert history.partner("weather")[-1].requests == 1
    assert history.partners() == ["weather"]
    assert sum(p.requests for p in history.partner("never-called")) == 0


def test_tokens_and_cost_add_up_per_model_entry_and_minute() -> None:
    clock = Clock()
    history = TrafficHistory(clock=clock)
    history.model_call("planner", input_tokens=120, output_tokens=30, cost=0.0015)
    history.model_call("planner", input_tokens=80, output_tokens=20, cost=0.0010)
    clock.now += 60
    history.model_call("planner", input_tokens=5, output_tokens=1, cost=0.0)

    points = history.model("planner")
    assert [(p.input_tokens, p.output_tokens) for p in points[-2:]] == [(200, 50), (5, 1)]
    assert points[-2].cost == pytest.approx(0.0025)
    assert history.models() == ["planner"]
    assert history.revision == 3


def test_quantiles_of_empty_and_slowest_buckets() -> None:
    empty = [0] * (len(LATENCY_BUCKETS) + 1)
    assert quantile(empty, 0.5) is None
    slowest = [*empty[:-1], 4]
    assert quantile(slowest, 0.99) == LATENCY_BUCKETS[-1]


def test_a_canceled_call_is_not_an_error_and_a_refusal_is() -> None:
    assert not is_error("ok")
    assert not is_error("canceled")
    assert is_error("ConnectError")


def test_hub_metrics_feed_the_history_where_they_count() -> None:
    clock = Clock()
    metrics = HubMetrics(clock=clock)
    metrics.request("SendMessage", binding="JSONRPC", version="1.0", outcome="ok", seconds=0.003)
    metrics.request(
        "GetTask", binding="JSONRPC", version="1.0", outcome="TaskNotFound", seconds=0.001
    )
    metrics.partner_call("fast", "SendMessage", outcome="ok", seconds=0.04)
    metrics.partner_call("fast", "SendMessage", outcome="canceled", seconds=0.04)
    metrics.partner_call("down", "SendMessage", outcome="ConnectError", seconds=0.002)
    metrics.model_call("planner", input_tokens=10, output_tokens=4, cost=0.5)

    history = metrics.history
    assert (history.hub()[-1].requests, history.hub()[-1].errors) == (2, 1)
    assert (history.partner("fast")[-1].requests, history.partner("fast")[-1].errors) == (2, 0)
    assert history.partner("down")[-1].errors == 1
    assert history.model("planner")[-1].cost == 0.5
