"""Console sessions: who is signed in to the console, and the token its forms carry.

A session is an opaque random id in an HttpOnly, SameSite=Strict cookie, kept in memory on
the hub side (a restart signs everyone out). It holds the `Caller` the credential named when
the visitor signed in, never the credential itself, and a random token that every
state-changing request must present (a form field or the `X-CSRF-Token` header), compared in
constant time.

Only a sign-in stores a session. A visitor who has not signed in (every visitor with auth
off) gets a random id in the same cookie and nothing on the hub side: its forms' token is
that id signed with a key the process drew at start-up, so it is good only with the cookie
it came with, and no number of anonymous visits can push a signed-in session out of the
store.
"""

from __future__ import annotations

import base64
import hashlib
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
_MAX_ID = 64
"""Longest cookie value taken as an anonymous visitor's id (the hub's ids have 43
characters); a longer one is replaced."""


@dataclass(slots=True, kw_only=True)
class ConsoleSession:
    """One browser's session.

    Attributes:
        session_id: the cookie's value.
        csrf: the token state-changing requests must present.
        caller: who signed in; None for a visitor who has not (its session is not stored).
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
    """The signed-in sessions by id: at most `capacity`, each dropped after `idle` seconds
    without a request (the least recently used goes first when full); and the unstored
    sessions of the visitors who have not signed in.

    Args:
        capacity: most signed-in sessions kept.
        idle: seconds a signed-in session lives without a request.
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
        self._key = secrets.token_bytes(32)

    def find(self, session_id: str | None) -> ConsoleSession | None:
        """The live signed-in session with that id, touched; None for an unknown or expired
        one."""
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

    def start(self, caller: Caller) -> ConsoleSession:
        """A new signed-in session for `caller`, with a fresh id and token, stored."""
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

    def anonymous(self, session_id: str | None) -> ConsoleSession:
        """The session of a visitor who has not signed in: the id from its cookie (a fresh
        one when it has none that could be ours), its token that id signed; never stored."""
        if not session_id or len(session_id) > _MAX_ID:
            session_id = secrets.token_urlsafe(32)
        digest = hmac.new(self._key, session_id.encode(), hashlib.sha256).digest()
        csrf = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        return ConsoleSession(session_id=session_id, csrf=csrf, last_seen=self._clock())

    def end(self, session_id: str) -> None:
        """Forget a signed-in session (sign out); nothing for any other id."""
        self._sessions.pop(session_id, None)
