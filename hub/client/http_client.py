"""The httpx client the hub calls partners with: httpx's API on aiohttp's transport.

httpx stays the client API (transports are its seam, and tests swap them), but its default
transport costs several times the CPU of aiohttp per request. Measured with
`python -m bench.client_transport` against a server that does no work (2 cores, SendMessage
through `A2AClient`): about 2.3 ms CPU per request with httpx's transport against 1.5 ms with
aiohttp's at concurrency 1, and 3.9 ms against 1.2 ms at 16, where httpx's also topped out
near 170 requests/s against 770.

Every request carries the W3C `traceparent` of the work that sends it, and the time its
caller has left (`hub.protocol.trace`), added here so no call site can forget them.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from hub.client.guard import GuardedTransport, UrlGuard
from hub.protocol.trace import outgoing_headers

__all__ = ["add_trace_headers", "build_http_client"]


def build_http_client(
    *,
    max_connections: int = 512,
    max_keepalive: int = 64,
    headers: Mapping[str, str] | None = None,
    timeout: httpx.Timeout | None = None,
    guard: UrlGuard | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """A new `httpx.AsyncClient` on the aiohttp transport; the caller closes it.

    Args:
        max_connections: connections open at once, all partners together.
        max_keepalive: idle connections kept for reuse.
        headers: headers sent with every request.
        timeout: the default timeouts (each `A2AClient` sets its partner's own per request).
        guard: when given, every request's URL is checked by it and sent to the address it
            checked (`GuardedTransport`): for URLs a caller chose.
        transport: instead of aiohttp's, for a process that makes a request or two and
            exits (the CLI): importing aiohttp costs more than it saves there.
    """
    if transport is None:
        from httpx_aiohttp import AiohttpTransport  # imported only by those who use it

        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_keepalive
        )
        transport = AiohttpTransport(limits=limits)
    if guard is not None:
        transport = GuardedTransport(transport, guard)
    return httpx.AsyncClient(
        transport=transport,
        headers=dict(headers or {}),
        timeout=timeout or httpx.Timeout(10.0, read=120.0),
        event_hooks={"request": [add_trace_headers]},
    )


async def add_trace_headers(request: httpx.Request) -> None:
    """Add the current trace and deadline headers, unless the request sets its own."""
    for name, value in outgoing_headers().items():
        if name not in request.headers:
            request.headers[name] = value
