"""Console sessions: who is signed in to the console, and the token its forms carry.

A session is an opaque random id in an HttpOnly, SameSite=Strict cookie, kept in memory on
the hub side (a restart signs everyone out). It holds the `Caller` the credential named when
the visitor signed in, never the credential itself, and a random token that every
state-changing request must present (a form field or the `X-CSRF-Token` header), compared in
constant time.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from hub.server.auth import Caller

__all__ = ["CSRF_FIELD", "CSRF_HEADER", "ConsoleSession", "Sessions"]

CSRF_FIELD = "_csrf"
"""The form field a state-changing form carries its token in."""
CSRF_HEADER = "x-csrf-token"
"""The header a `fetch` action carries its token in."""


@dataclass(slots=True, kw_only=True)
class ConsoleSession:
    """One browser's session.

    Attributes:
        session_id: the cookie's value.
        csrf: the token state-changing requests must present.
        caller: who signed in; None until a credential was given (auth on).
        last_seen: monotonic seconds of the last request.
    """

    session_id: str
    csrf: str
    caller: Caller | None = None
    last_seen: float = field(default=0.0)

    def accepts(self, token: str | None) -> bool:
        """Whether `token` is this session's CSRF token."""
        return token is not None and hmac.compare_digest(token.encode(), self.csrf.encode())


class Sessions:
    """The console's sessions by id: at most `capacity`, each dropped after `idle` seconds
    without a request (the least recently used goes first when full).

    Args:
        capacity: most sessions kept.
        idle: seconds a session lives without a request.
        clock: monotonic seconds.
    """

    def __init__(
        self,
        *,
        capacity: int = 10_000,
        idle: float = 12 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions: OrderedDict[str, ConsoleSession] = OrderedDict()
        self._capacity = capacity
        self._idle = idle
        self._clock = clock

    def find(self, session_id: str | None) -> ConsoleSession | None:
        """The live session with that id, touched; None for an unknown or expired one."""
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        now = self._clock()
        if session is None or now - session.last_seen > self._idle:
            self._sessions.pop(session_id, None)
            return None
        session.last_seen = now
        self._sessions.move_to_end(session_id)
        return session

    def start(self, caller: Caller | None = None) -> ConsoleSession:
        """A new session (for `caller` when given), with a fresh id and token."""
        session = ConsoleSession(
            session_id=secrets.token_urlsafe(32),
            csrf=secrets.token_urlsafe(32),
            caller=caller,
            last_seen=self._clock(),
        )
        self._sessions[session.session_id] = session
        while len(self._sessions) > self._capacity:
            self._sessions.popitem(last=False)
        return session

    def end(self, session_id: str) -> None:
        """Forget a session (sign out)."""
        self._sessions.pop(session_id, None)
