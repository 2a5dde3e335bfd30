"""`Memo`: a value computed once and shared by the open pages that ask for it at about the
same time: kept for `ttl` seconds, or for as long as the `version` it was computed at holds
(five consoles open on the overview cost one set of queries per second and one drawing of
the charts per change, not five)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

__all__ = ["Memo"]

_MAX_KEYS = 256
"""Keys kept at most (one per credential watching); the oldest go first."""


class Memo:
    """Values by key, each kept for `ttl` seconds after it was computed and while the
    version it was computed at is the one asked for.

    Args:
        ttl: seconds a value is served before it is computed again.
        clock: monotonic seconds.
    """

    __slots__ = ("_clock", "_ttl", "_values")

    def __init__(self, ttl: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._values: dict[Hashable, tuple[float, Hashable, Any]] = {}

    async def get(
        self, key: Hashable, compute: Callable[[], Awaitable[Any]], *, version: Hashable = None
    ) -> Any:
        """The value for `key`: the one computed less than `ttl` ago at this `version`, else
        `compute()`'s."""
        now = self._clock()
        kept = self._values.get(key)
        if kept is not None and now < kept[0] and kept[1] == version:
            return kept[2]
        value = await compute()
        self._values.pop(key, None)
        self._values[key] = (now + self._ttl, version, value)
        if len(self._values) > _MAX_KEYS:
            del self._values[next(iter(self._values))]
        return value
