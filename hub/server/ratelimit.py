"""Request rates: one token bucket per caller (a credential; a client address for failed
authentications, and with auth off when `limits.per_address` is on), refilled at
`limits.requests_per_second` up to `limits.burst`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["RateLimiter"]

# Buckets of idle callers are dropped once there are this many, so a flood of client
# addresses cannot grow the table without bound.
_MAX_BUCKETS = 10_000


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """Token buckets by key.

    Args:
        rate: tokens added per second; 0 lets every request through.
        burst: most tokens a bucket holds (the requests a caller may send at once).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self, *, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, key: str) -> float | None:
        """Spend one token of `key`'s bucket: None when there was one, else the seconds until
        there will be (nothing is spent then)."""
        if not self.enabled:
            return None
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _MAX_BUCKETS:
                self._forget_idle(now)
            bucket = self._buckets[key] = _Bucket(tokens=float(self.burst), at=now)
        else:
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        return (1.0 - bucket.tokens) / self.rate

    def _forget_idle(self, now: float) -> None:
        """Drop the buckets that have refilled (their callers are idle): a new bucket is full,
        so forgetting them changes nothing. If every caller is busy, drop the oldest half."""
        full = [
            key
            for key, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.at) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
        if len(self._buckets) >= _MAX_BUCKETS:
            oldest = sorted(self._buckets, key=lambda key: self._buckets[key].at)
            for key in oldest[: len(oldest) // 2]:
                del self._buckets[key]
