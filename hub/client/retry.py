"""Retry policies: which failures may be retried, for which calls, and how long to wait.

Two policies, because what is safe depends on the call:

- `for_reads()` — card GETs, GetTask, ListTasks and other idempotent calls: retried on
  refused connections, timeouts, broken connections and 429/503 (honouring `Retry-After`).
- `for_writes()` — SendMessage, CancelTask, push config writes: retried only when no
  connection was made (`AgentUnreachableError`: nothing was sent). A timeout, a broken
  connection or a 503 may come after the partner started the work, so it is never resent.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_base,
    retry_if_exception_type,
    stop_after_attempt,
)

from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    ConnectionLostError,
)
from hub.telemetry import add_event

__all__ = ["RetryPolicy"]

T = TypeVar("T")

_READ_RETRYABLE = (AgentUnreachableError, AgentTimeoutError, ConnectionLostError, AgentBusyError)
_WRITE_RETRYABLE = (AgentUnreachableError,)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry a call that is safe to repeat.

    Attributes:
        attempts: tries in all, the first included (1 disables retries).
        base_delay: first back-off in seconds; doubled on each further try, with jitter.
        max_delay: cap on one back-off.
        max_retry_after: cap on a partner's `Retry-After`; a longer wait is not retried but
            raised, so one partner cannot hold a caller for minutes.
    """

    attempts: int = 3
    base_delay: float = 0.1
    max_delay: float = 2.0
    max_retry_after: float = 10.0

    def for_reads(self) -> AsyncRetrying:
        """The tenacity controller for idempotent calls."""
        return self._retrying(_READ_RETRYABLE)

    def for_writes(self) -> AsyncRetrying:
        """The tenacity controller for calls that must not be sent twice."""
        return self._retrying(_WRITE_RETRYABLE)

    async def call(self, operation: Callable[[], Awaitable[T]], *, idempotent: bool) -> T:
        """Run `operation` under the reads or the writes policy; the last error is raised.

        The first try runs without tenacity (most calls succeed at once, and building its
        controller costs more than the call's own bookkeeping); only a retryable failure
        hands the remaining tries to it, with the same back-off as if it had run them all.
        """
        retryable = _READ_RETRYABLE if idempotent else _WRITE_RETRYABLE
        try:
            return await operation()
        except retryable as exc:
            if self.attempts <= 1 or not _within_retry_after(self.max_retry_after).allows(exc):
                raise
            await anyio.sleep(self._delay(exc, attempt=1))
        retrying = self._retrying(retryable, attempts=self.attempts - 1, offset=1)
        async for attempt in retrying:
            with attempt:
                return await operation()
        raise AssertionError("unreachable: tenacity reraises the last error")  # pragma: no cover

    def _retrying(
        self,
        retryable: tuple[type[BaseException], ...],
        *,
        attempts: int | None = None,
        offset: int = 0,
    ) -> AsyncRetrying:
        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome is not None else None
            return self._delay(error, attempt=state.attempt_number + offset)

        return AsyncRetrying(
            stop=stop_after_attempt(self.attempts if attempts is None else attempts),
            retry=retry_if_exception_type(retryable) & _within_retry_after(self.max_retry_after),
            wait=wait,
            sleep=anyio.sleep,
            reraise=True,
        )

    def _delay(self, error: BaseException | None, *, attempt: int) -> float:
        """Seconds to wait after failed try number `attempt` (1-based)."""
        add_event("retry", {"a2a_hub.retry.attempt": attempt + 1, "error.type": _name(error)})
        if isinstance(error, AgentBusyError) and error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after)
        backoff = self.base_delay * 2 ** (attempt - 1)
        # Full jitter keeps many callers of one recovering partner from retrying in step.
        return random.uniform(0, min(backoff, self.max_delay))


def _name(error: BaseException | None) -> str:
    return type(error).__name__ if error is not None else ""


class _within_retry_after(retry_base):
    """Refuse to retry when the partner asks for a longer wait than the policy allows."""

    def __init__(self, limit: float) -> None:
        self._limit = limit

    def __call__(self, state: RetryCallState) -> bool:
        error = state.outcome.exception() if state.outcome is not None else None
        return self.allows(error)

    def allows(self, error: BaseException | None) -> bool:
        if isinstance(error, AgentBusyError) and error.retry_after is not None:
            return error.retry_after <= self._limit
        return True
