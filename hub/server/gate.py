"""What every A2A request passes before its body is read: who is calling (HTTP 401 when auth
is on and the credential is missing or wrong), whether the caller is within its request rate
(HTTP 429), and, for a stream, whether it may open one more."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection, Mapping

from hub.config import AuthSettings, LimitSettings
from hub.errors import LimitExceededError, RateLimitedError, UnauthenticatedError
from hub.server.auth import Authenticator, Caller
from hub.server.ratelimit import RateLimiter
from hub.telemetry import current_telemetry
from hub.telemetry.access import note_caller

__all__ = ["Gate", "StreamSlot"]

log = logging.getLogger("hub.server")


class StreamSlot:
    """One open stream counted against its caller; `release()` gives it back (once)."""

    __slots__ = ("_counts", "_key")

    def __init__(self, counts: dict[str, int], key: str) -> None:
        self._counts: dict[str, int] | None = counts
        self._key = key
        counts[key] = counts.get(key, 0) + 1

    def release(self) -> None:
        counts, self._counts = self._counts, None
        if counts is None:
            return
        left = counts.get(self._key, 1) - 1
        if left > 0:
            counts[self._key] = left
        else:
            counts.pop(self._key, None)


class Gate:
    """Authentication, rate limits and the open-stream count, in one place for both bindings.

    Args:
        auth: the `auth` settings.
        limits: the `limits` settings (`requests_per_second`, `burst`, `per_address`,
            `max_streams_per_caller`).
        skills: the ids of the local skills served (credentials' scopes are checked
            against them).
        clock: seconds, monotonic, for the rate limiter.

    Raises:
        ConfigError: a credential's skill scope names a skill that is not served.
    """

    def __init__(
        self,
        *,
        auth: AuthSettings,
        limits: LimitSettings,
        skills: Collection[str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.authenticator = Authenticator(auth, skills=skills)
        self._rate = RateLimiter(rate=limits.requests_per_second, burst=limits.burst, clock=clock)
        self._per_address = limits.per_address
        self._max_streams = limits.max_streams_per_caller
        self._streams: dict[str, int] = {}

    async def admit(self, headers: Mapping[str, str], *, address: str = "") -> Caller:
        """The request's caller, if it may go on.

        Args:
            headers: the request's headers, looked up by lowercase name.
            address: the client's IP address.

        Raises:
            UnauthenticatedError: auth is on and the credential is missing or wrong.
            RateLimitedError: the caller is over its request rate: its credential's, or with
                auth off and `limits.per_address` on, its address's. Failed attempts always
                count against the client address, so guessing credentials is slowed down.
        """
        try:
            caller = await self.authenticator.identify(headers, address=address)
        except UnauthenticatedError as refused:
            self._spend(Caller(address=address))  # past the budget: a 429, and no log line
            # The message never holds a secret (nor any part of what was presented).
            log.info("refused a request from %s: %s", address or "?", refused.message)
            raise
        # An anonymous caller is only an address, which may stand for many clients (a proxy,
        # a load balancer, another hub): it is held to the rate only when asked to be.
        if caller.name or self._per_address:
            self._spend(caller)
        note_caller(caller.name)
        book = current_telemetry().spend
        if book is not None and caller.name:
            book.know(caller.name, caller.budget)  # the budget of however it was let in
        return caller

    def open_stream(self, caller: Caller) -> StreamSlot:
        """Count one more open stream for `caller`.

        Raises:
            LimitExceededError: the caller has `limits.max_streams_per_caller` open already.
        """
        key = caller.limit_key
        open_now = self._streams.get(key, 0)
        if open_now >= self._max_streams:
            raise LimitExceededError(
                f"{key} has {open_now} streams open; the limit is {self._max_streams} "
                "(limits.max_streams_per_caller): close one, or poll with GetTask"
            )
        return StreamSlot(self._streams, key)

    def streams_open(self) -> int:
        """How many streams are open now, every caller's together."""
        return sum(self._streams.values())

    def open_streams(self, caller: Caller) -> int:
        """How many streams `caller` has open now."""
        return self._streams.get(caller.limit_key, 0)

    def _spend(self, caller: Caller) -> None:
        wait = self._rate.take(caller.limit_key)
        if wait is None:
            return
        metrics = current_telemetry().metrics
        if metrics is not None:
            metrics.rate_limited.inc()
        seconds = max(1, math.ceil(wait))
        raise RateLimitedError(
            f"too many requests from {caller.limit_key}: the limit is "
            f"{self._rate.rate:g} per second with bursts of {self._rate.burst} "
            f"(limits.requests_per_second, limits.burst); retry in {seconds} s",
            retry_after=wait,
        )
