"""An outage of a store's server, logged once when it starts and once when it ends.

A database restart fails every query, connection attempt and listener of each replica for
as long as it lasts; each of them reporting it would fill the log. They report to the
store's one `Outage` instead, which writes the first failure and the first answer after it.
"""

from __future__ import annotations

import logging
import time

__all__ = ["Outage"]

log = logging.getLogger("hub.store")

# How long the server must answer, with no failure, for an outage to be over.
_SETTLED = 0.5


class Outage:
    """Whether the server at `where` is known to be unreachable, and since when.

    Args:
        where: the store's address as logs show it (no password).
    """

    def __init__(self, where: str) -> None:
        self._where = where
        self._since: float | None = None
        self._back: float | None = None

    def failed(self, reason: object) -> None:
        """A connection or query failed because the server could not be reached."""
        self._back = None
        if self._since is None:
            self._since = time.monotonic()
            log.warning(
                "the task store %s is unreachable (%s); retrying until it answers",
                self._where,
                reason,
            )

    def answered(self) -> None:
        """The server answered: the outage, if there was one, ends once it has answered
        for a moment (while a server shuts down, a connection may still answer between
        failures of the others)."""
        if self._since is None:
            return
        now = time.monotonic()
        if self._back is None:
            self._back = now
        elif now - self._back >= _SETTLED:
            lasted, self._since, self._back = self._back - self._since, None, None
            log.warning("the task store %s answers again, after %.1f s", self._where, lasted)
