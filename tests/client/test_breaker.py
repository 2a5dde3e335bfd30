"""The circuit breaker as pure logic, its clock in the test's hand."""

from __future__ import annotations

import pytest

from hub.client import BreakerConfig, BreakerState, CircuitBreaker
from hub.errors import CircuitOpenError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def breaker(clock: Clock, *, threshold: int = 3, cool_down: float = 10.0) -> CircuitBreaker:
    config = BreakerConfig(failure_threshold=threshold, cool_down=cool_down)
    return CircuitBreaker("billing", config, clock=clock)


def test_a_new_breaker_is_closed_and_lets_calls_through() -> None:
    subject = breaker(Clock())

    subject.before_call()

    assert subject.state is BreakerState.CLOSED


def test_it_opens_after_the_threshold_of_consecutive_failures() -> None:
    subject = breaker(Clock())
    for _ in range(2):
        subject.record_failure()
    assert subject.state is BreakerState.CLOSED

    subject.record_failure()

    assert subject.state is BreakerState.OPEN
    with pytest.raises(CircuitOpenError, match="billing") as caught:
        subject.before_call()
    assert caught.value.retry_in == 10.0


def test_a_success_resets_the_failure_count() -> None:
    subject = breaker(Clock())
    subject.record_failure()
    subject.record_failure()

    subject.record_success()
    subject.record_failure()

    assert subject.state is BreakerState.CLOSED
    assert subject.snapshot().consecutive_failures == 1


def test_after_the_cool_down_one_trial_call_is_let_through() -> None:
    clock = Clock()
    subject = breaker(clock, threshold=1)
    subject.record_failure()
    clock.now = 9.9
    assert subject.snapshot().retry_in == pytest.approx(0.1)

    clock.now = 10.0

    assert subject.state is BreakerState.HALF_OPEN
    subject.before_call()
    with pytest.raises(CircuitOpenError):
        subject.before_call()


def test_a_successful_trial_closes_the_breaker() -> None:
    clock = Clock()
    subject = breaker(clock, threshold=1)
    subject.record_failure()
    clock.now = 10.0
    subject.before_call()

    subject.record_success()

    assert subject.state is BreakerState.CLOSED
    subject.before_call()


def test_a_failed_trial_opens_the_breaker_for_another_cool_down() -> None:
    clock = Clock()
    subject = breaker(clock, threshold=3)
    for _ in range(3):
        subject.record_failure()
    clock.now = 10.0
    subject.before_call()

    subject.record_failure()

    assert subject.state is BreakerState.OPEN
    assert subject.snapshot().retry_in == 10.0


def test_a_canceled_trial_gives_its_slot_back() -> None:
    clock = Clock()
    subject = breaker(clock, threshold=1)
    subject.record_failure()
    clock.now = 10.0
    subject.before_call()

    subject.release()

    subject.before_call()


def test_a_threshold_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="failure_threshold"):
        BreakerConfig(failure_threshold=0)
