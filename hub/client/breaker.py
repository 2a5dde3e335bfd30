"""A circuit breaker per partner: stop calling an agent that keeps failing, then probe it.

closed ──N consecutive failures──▶ open ──cool-down passed──▶ half-open
  ▲                                  ▲                            │
  └────────── trial call succeeds ───┼────── trial call fails ────┘

Pure logic with an injectable clock: the client asks `before_call()` and reports
`record_success()` / `record_failure()`; nothing here sleeps or does I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from hub.errors import CircuitOpenError
from hub.telemetry import add_event

__all__ = ["BreakerConfig", "BreakerSnapshot", "BreakerState", "CircuitBreaker"]


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half-open"


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerConfig:
    """When a breaker opens and how long it stays open.

    Attributes:
        failure_threshold: consecutive failures that open the breaker.
        cool_down: seconds an open breaker refuses calls before letting one trial through.
    """

    failure_threshold: int = 5
    cool_down: float = 30.0

    def __post_init__(self) -> None:
        if self.failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        if self.cool_down < 0:
            raise ValueError("cool_down must not be negative")


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerSnapshot:
    """A breaker's state at one moment, for `a2a-hub agents check` and the router.

    Attributes:
        state: closed, open or half-open (an open breaker whose cool-down has passed reads
            as half-open).
        consecutive_failures: failures since the last success.
        retry_in: seconds until an open breaker lets a trial call through (0 otherwise).
    """

    state: BreakerState
    consecutive_failures: int
    retry_in: float


class CircuitBreaker:
    """Counts one partner's consecutive failures and refuses calls while it is open.

    Args:
        agent_name: the partner, named in `CircuitOpenError`.
        config: threshold and cool-down.
        clock: monotonic seconds; injectable so tests control time.
    """

    def __init__(
        self,
        agent_name: str,
        config: BreakerConfig | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agent_name = agent_name
        self.config = config or BreakerConfig()
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> BreakerState:
        """The current state (reading it never changes it)."""
        if self._opened_at is None:
            return BreakerState.CLOSED
        if self._clock() - self._opened_at >= self.config.cool_down:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    def snapshot(self) -> BreakerSnapshot:
        """State, failure count and time to the next trial, read together."""
        state = self.state
        retry_in = 0.0
        if state is BreakerState.OPEN and self._opened_at is not None:
            retry_in = self.config.cool_down - (self._clock() - self._opened_at)
        return BreakerSnapshot(
            state=state, consecutive_failures=self._failures, retry_in=max(0.0, retry_in)
        )

    def before_call(self) -> None:
        """Let a call through, or refuse it.

        In half-open state exactly one trial call is let through; the others are refused until
        it has been reported.

        Raises:
            CircuitOpenError: the breaker is open (or a trial call is already running).
        """
        state = self.state
        if state is BreakerState.CLOSED:
            return
        if state is BreakerState.HALF_OPEN and not self._trial_in_flight:
            self._trial_in_flight = True
            add_event("breaker.trial", {"a2a_hub.partner.name": self.agent_name})
            return
        retry_in = self.snapshot().retry_in
        add_event("breaker.refused", {"a2a_hub.partner.name": self.agent_name})
        raise CircuitOpenError(
            f"agent '{self.agent_name}' failed {self._failures} times in a row; calls are held "
            f"back for {retry_in:.1f} s more (circuit open)",
            retry_in=retry_in,
        )

    def record_success(self) -> None:
        """A call succeeded: the breaker closes and the failure count starts again."""
        self._failures = 0
        self._opened_at = None
        self._trial_in_flight = False

    def record_failure(self) -> None:
        """A call failed: count it, and open (or re-open after a failed trial)."""
        self._failures += 1
        trial_failed = self._trial_in_flight
        self._trial_in_flight = False
        if trial_failed or self._failures >= self.config.failure_threshold:
            self._opened_at = self._clock()
            add_event("breaker.opened", {"a2a_hub.breaker.failures": self._failures})

    def release(self) -> None:
        """A call ended with neither verdict (canceled): a trial slot is given back."""
        self._trial_in_flight = False
