"""Recent calls per partner: the weighted averages the router reads and the latency
percentiles the console shows."""

from __future__ import annotations

from hub.partners import StatsBook


def test_percentiles_are_read_from_the_last_hundred_successful_calls() -> None:
    book = StatsBook()
    for number in range(1, 151):
        book.record("p", ok=True, seconds=number / 1000)
    book.record("p", ok=False, seconds=9.0)  # a failure has no latency to count
    stats = book.get("p")
    assert stats is not None
    assert stats.calls == 151
    assert len(stats.recent) == 100
    assert stats.percentile(0.5) == 0.1
    assert stats.percentile(0.95) == 0.145
    assert stats.percentile(1.0) == 0.15


def test_a_partner_with_no_successful_call_has_no_percentile() -> None:
    book = StatsBook()
    book.record("p", ok=False, seconds=1.0)
    stats = book.get("p")
    assert stats is not None
    assert stats.percentile(0.5) is None
    assert stats.error_rate > 0
