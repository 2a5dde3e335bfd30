"""How the hub's HTTP server treats connections: a deadline for a request's headers, a
deadline for an idle kept-alive connection, a cap on the connections served at once, and a
bound on those still sending their headers.

uvicorn closes idle kept-alive connections (`timeout_keep_alive`), but it gives a request no
deadline for its headers: a client that opens a connection and sends half a request line
holds it, and a file descriptor, for as long as it likes, and enough such clients shut
everyone else out. Its `limit_concurrency` counts the connections it refuses and the running
requests alike, checks again on every request of a kept-alive connection it has admitted,
and answers a bare 503 with no `Retry-After`. So the hub runs uvicorn with its own HTTP
protocol, uvicorn's httptools one plus three things: a timer from the moment a connection
opens (or a further request on it starts) until its headers are complete, which closes the
connection when it fires; an admission count, taken when a connection's first request
headers are in, so that a connection over `server.max_connections` is answered 503 and
closed, while the connections already admitted keep being served; and, until then, a place
in the pool of connections waiting for their headers (`hub/server/pending.py`), which a flood
of half-open connections fills and churns without taking a slot a client needs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import uvicorn
from uvicorn._types import ASGIReceiveCallable, ASGISendCallable, Scope
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from hub.config import ServerSettings
from hub.server.pending import PendingConnections

__all__ = ["ConnectionGuard", "ServerConfig", "fit_open_files_limit"]

log = logging.getLogger("hub.server")

_SPARE_FILES = 256
"""Open files the hub needs besides its connections: the store, partner connections, skill
processes' pipes, connections being refused."""


class _Tally:
    """Counts one kind of event and logs it at most once every `every` seconds, so that a
    flood of them cannot flood the log (the first one is logged at once)."""

    def __init__(self, level: int, message: str, *, every: float = 10.0) -> None:
        self._level = level
        self._message = message
        self._every = every
        self._count = 0
        self._next_line = 0.0

    def add(self, *args: object) -> None:
        self._count += 1
        now = time.monotonic()
        if now >= self._next_line:
            log.log(self._level, self._message, self._count, *args)
            self._count = 0
            self._next_line = now + self._every


class ConnectionGuard:
    """The connection settings of one server, the count of the connections it admitted, and
    the pool of those still waiting for their headers.

    Args:
        settings: the `server` settings (`header_timeout`, `max_connections`,
            `max_pending_connections`, `max_pending_per_address`; uvicorn itself applies
            `idle_timeout`).
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.header_timeout = settings.header_timeout
        self.max_connections = settings.max_connections
        self.admitted = 0
        self._pending: PendingConnections[_GuardedHttpProtocol] = PendingConnections(
            total=settings.max_pending_connections,
            per_address=settings.max_pending_per_address,
        )
        self._refused = _Tally(
            logging.WARNING,
            "refused %d connection(s) with 503: %d are being served, the limit "
            "(server.max_connections)",
        )
        self._late = _Tally(
            logging.INFO,
            "closed %d connection(s) that sent no complete request headers within %g s "
            "(server.header_timeout)",
        )
        self._displaced = _Tally(
            logging.WARNING,
            "closed %d connection(s) still waiting for their request headers to make room "
            "for newer ones: %d are waiting (server.max_pending_connections, "
            "server.max_pending_per_address)",
        )

    @property
    def pending(self) -> int:
        """Connections waiting for their first request's headers."""
        return len(self._pending)

    def wait_for_headers(self, connection: _GuardedHttpProtocol, host: str) -> None:
        """Count a new connection from `host` among those waiting for their headers, closing
        the one it displaces when the pool is full."""
        displaced = self._pending.add(connection, host)
        if displaced is not None:
            self._displaced.add(len(self._pending))
            displaced.drop()

    def admit(self, connection: _GuardedHttpProtocol) -> bool:
        """A waiting connection's headers are in: count it as served, if there is room."""
        self._pending.remove(connection)
        if self.admitted >= self.max_connections:
            self._refused.add(self.admitted)
            return False
        self.admitted += 1
        return True

    def release(self, connection: _GuardedHttpProtocol, *, admitted: bool) -> None:
        """A connection has closed."""
        self._pending.remove(connection)
        if admitted:
            self.admitted -= 1

    def headers_late(self) -> None:
        """A connection is being closed for not sending its headers in time."""
        self._late.add(self.header_timeout)


async def _refuse(scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
    """The answer to a connection over the cap: a short 503, then the connection closes."""
    body = b"too many connections (server.max_connections); retry shortly\n"
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline, a place among the connections
    waiting for their headers, and admission to the cap once they are in."""

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        if not isinstance(config, ServerConfig):
            raise TypeError("the hub's HTTP protocol runs only with a hub ServerConfig")
        self._guard = config.guard
        self._stage: Literal["waiting", "admitted", "refused"] = "waiting"
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(  # type: ignore[override]  # as uvicorn's own
        self, transport: asyncio.Transport
    ) -> None:
        super().connection_made(transport)
        self._guard.wait_for_headers(self, self.client[0] if self.client else "")
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_arrived()
        self._guard.release(self, admitted=self._stage == "admitted")
        self._stage = "refused"  # counted nowhere any more
        super().connection_lost(exc)

    def drop(self) -> None:
        """Close the connection without an answer (it sent no complete request)."""
        self._headers_arrived()
        if not self.transport.is_closing():
            self.transport.close()

    def _unsupported_upgrade_warning(self) -> None:
        # The hub serves no WebSocket: an upgrade request is answered as plain HTTP. uvicorn
        # would log two warnings for each (one about a missing WebSocket library), which
        # any client could use to fill the log.
        pass

    def on_message_begin(self) -> None:
        # The first byte of a request; on a new connection the timer runs already, from the
        # moment it opened, so trickling bytes never extends the deadline.
        super().on_message_begin()
        self._await_headers()

    def on_headers_complete(self) -> None:
        self._headers_arrived()
        if self._stage == "waiting":
            if self._guard.admit(self):
                self._stage = "admitted"
            else:
                self._stage = "refused"
                # Answered now that its request's headers are in: a response sent before the
                # request is read would reach many clients as a reset instead.
                self.app = _refuse
        super().on_headers_complete()

    def _await_headers(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(
                self._guard.header_timeout, self._headers_overdue
            )

    def _headers_arrived(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_overdue(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self._guard.headers_late()
            self.transport.close()


class ServerConfig(uvicorn.Config):
    """uvicorn's configuration for serving a hub: its HTTP protocol with the `server`
    settings' connection deadlines and cap. Every way the hub is served (the `serve` command,
    `hub.testing.serve_on_loopback`) goes through it.

    Args:
        app: the ASGI app.
        settings: the `server` settings.
        log_level: uvicorn's log level.
        lifespan: whether to run the app's lifespan (`auto`, `on`, `off`).
        timeout_graceful_shutdown: seconds open requests get to finish on shutdown.
    """

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        *,
        settings: ServerSettings,
        log_level: str,
        lifespan: Literal["auto", "on", "off"] = "auto",
        timeout_graceful_shutdown: int | None = None,
    ) -> None:
        super().__init__(
            app,
            http=_GuardedHttpProtocol,
            # No WebSocket: the hub serves none (its app has no answer to a WebSocket scope),
            # and an upgraded connection would leave this protocol, and the count, behind.
            ws="none",
            log_level=log_level,
            # uvicorn's lines go to the root logger, in the hub's format (`hub.telemetry.logs`);
            # the hub writes its own access log (`hub.telemetry.access`).
            log_config=None,
            access_log=False,
            lifespan=lifespan,
            # uvicorn declares an int, and hands it to loop.call_later, which takes seconds.
            timeout_keep_alive=settings.idle_timeout,  # type: ignore[arg-type]
            timeout_graceful_shutdown=timeout_graceful_shutdown,
        )
        self.guard = ConnectionGuard(settings)


def fit_open_files_limit(max_connections: int, max_pending: int | None = None) -> int:
    """Make room in the process's open-files limit for `max_connections` served and
    `max_pending` waiting for their headers (as many as served when None): the cap is only a
    clear refusal while there are files left to accept the connection that gets it (past
    the limit, new connections wait in the kernel's queue, unanswered).

    The soft limit is raised, within the hard one, to both counts together plus room for the
    hub's other files; a warning says when even the connections served do not fit.

    Returns:
        The soft limit now in force (0 where the platform has none to read).
    """
    try:
        import resource
    except ImportError:  # not on a Unix
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    waiting = max_connections if max_pending is None else max_pending
    wanted = max_connections + waiting + _SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if raised > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    if soft != resource.RLIM_INFINITY and soft < max_connections + _SPARE_FILES:
        log.warning(
            "the open-files limit (%d) leaves too little room for %d connections "
            "(server.max_connections): raise it (ulimit -n) or lower the setting",
            soft,
            max_connections,
        )
    return int(soft)
