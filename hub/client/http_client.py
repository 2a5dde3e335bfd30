"""The httpx client the hub calls partners with: httpx's API on aiohttp's transport.

httpx stays the client API (transports are its seam, and tests swap them), but its default
transport costs several times the CPU of aiohttp per request. Measured with
`python -m bench.client_transport` against a server that does no work (2 cores, SendMessage
through `A2AClient`): about 2.3 ms CPU per request with httpx's transport against 1.5 ms with
aiohttp's at concurrency 1, and 3.9 ms against 1.2 ms at 16, where httpx's also topped out
near 170 requests/s against 770.

Every request carries the W3C `traceparent` of the work that sends it, and the time its
caller has left (`hub.protocol.trace`), added here so no call site can forget them. A call
the gateway forwards also carries its caller's A2A extensions, under the header name of the
version the request speaks (its `A2A-Version`), and the partner's answer naming those it
activated is recorded for the gateway's own answer (`hub.protocol.extensions`).

The transports send through `send_request`, not `AsyncClient.send`: a partner call needs
none of the layers `send` wraps around the transport (auth flows, redirect following, the
cookie jar), and they cost about 40 % of the client's CPU per call (370 against 217 µs per
SendMessage at c=16 against a server that does no work). Through the hub, measured with
`python -m bench.delegation --partner-delay 0 --concurrency 16`, the gateway's CPU per call
fell by a quarter and a skill's delegated call by a tenth.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping

import httpx

from hub.client.call_auth import CallAuth, is_secure
from hub.client.guard import GuardedTransport, UrlGuard
from hub.protocol.extensions import EXTENSIONS_HEADER, LEGACY_EXTENSIONS_HEADER
from hub.protocol.trace import current_scope, outgoing_headers

__all__ = [
    "RequestTemplate",
    "add_scope_headers",
    "build_http_client",
    "connection_limits",
    "note_activated_extensions",
    "send_request",
]


# Seconds an idle connection is kept for reuse. A partner closes a kept-alive connection it
# finds idle for long (uvicorn, and so the hub's own `server.idle_timeout`, after 5 s); a
# request sent as that close crosses it is lost, and the partner reported unreachable (a
# stream's opening request is not resent). httpx's own default is those same 5 s; dropping
# the connection well before leaves the crossing to a loop that is seconds late.
KEEPALIVE_EXPIRY = 2.0


def connection_limits(max_connections: int = 512, max_keepalive: int = 64) -> httpx.Limits:
    """The connection pool's bounds: connections open at once, all partners together, and
    idle connections kept for reuse (each for at most `KEEPALIVE_EXPIRY` seconds)."""
    return httpx.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_keepalive,
        keepalive_expiry=KEEPALIVE_EXPIRY,
    )


def build_http_client(
    *,
    max_connections: int = 512,
    max_keepalive: int = 64,
    headers: Mapping[str, str] | None = None,
    timeout: httpx.Timeout | None = None,
    guard: UrlGuard | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    tls: ssl.SSLContext | None = None,
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
            exits (the CLI): importing aiohttp costs more than it saves there; or a
            `DeferredTransport`, for a server that should not wait for the import.
        tls: the TLS context of every connection, instead of the system's trust store (a
            partner's private CA or client certificate: `hub.trust.PartnerTls`); only for
            the aiohttp transport made here.
    """
    if transport is None:
        from httpx_aiohttp import AiohttpTransport  # imported only by those who use it

        transport = AiohttpTransport(
            verify=True if tls is None else tls,
            limits=connection_limits(max_connections, max_keepalive),
        )
    elif tls is not None:
        raise ValueError("tls applies to the aiohttp transport build_http_client makes")
    if guard is not None:
        transport = GuardedTransport(transport, guard)
    return httpx.AsyncClient(
        transport=transport,
        headers=dict(headers or {}),
        timeout=timeout or httpx.Timeout(10.0, read=120.0),
        event_hooks={"request": [add_scope_headers], "response": [note_activated_extensions]},
    )


async def add_scope_headers(request: httpx.Request) -> None:
    """Add the current scope's headers (trace, deadline, trail; extensions the gateway
    forwards, on A2A requests), unless the request sets its own."""
    scope = current_scope()
    # Only a call the gateway forwards needs the version (a header look-up per request).
    forwards = scope is not None and scope.forward_extensions is not None
    version = request.headers.get("A2A-Version") if forwards else None
    for name, value in outgoing_headers(version=version).items():
        if name not in request.headers:
            request.headers[name] = value


async def note_activated_extensions(response: httpx.Response) -> None:
    """Record the extensions a partner activated, for a call the gateway forwards."""
    scope = current_scope()
    if scope is None or scope.forward_extensions is None:
        return
    headers = response.headers
    scope.forward_extensions.note(
        [*headers.get_list(EXTENSIONS_HEADER), *headers.get_list(LEGACY_EXTENSIONS_HEADER)]
    )


class RequestTemplate:
    """The parts of a request to one URL that every call repeats, merged once: the URL, the
    client's headers with the transport's own, and the timeouts.

    Args:
        http: the client the requests are sent with (its headers are merged in).
        method: the HTTP method.
        url: the absolute URL.
        headers: the transport's own headers (they win over the client's).
        timeout: the timeouts of each request.
    """

    __slots__ = ("_extensions", "_headers", "method", "url")

    def __init__(
        self,
        http: httpx.AsyncClient,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        timeout: httpx.Timeout,
    ) -> None:
        built = http.build_request(method, url, headers=headers, timeout=timeout)
        self.method = method
        self.url = built.url
        merged = built.headers.copy()
        # Each request has a body of its own: its length is set when it is built.
        merged.pop("Content-Length", None)
        self._headers = merged
        self._extensions = built.extensions

    def build(self, content: bytes) -> httpx.Request:
        """A request carrying `content`.

        The headers are complete here (the template's, which hold `Host`, and the body's
        length), so the request is made from a byte stream: httpx then adds no headers of its
        own, and skips the look-ups (each a `KeyError` on a miss) that fill them in.
        """
        headers = self._headers.copy()
        headers["Content-Length"] = str(len(content))
        request = httpx.Request(
            self.method,
            self.url,
            headers=headers,
            stream=httpx.ByteStream(content),
            extensions=dict(self._extensions),
        )
        request.read()  # the body as `request.content`, as a request made from bytes has it
        return request


async def send_request(
    http: httpx.AsyncClient,
    request: httpx.Request,
    *,
    stream: bool = False,
    auth: CallAuth | None = None,
) -> httpx.Response:
    """Send `request` on `http`'s transport, running the client's event hooks (the scope's
    headers, the extensions a partner activated), without following redirects, without
    httpx's auth flows and without the cookie jar; the whole body is read unless `stream`.

    With `auth`, the request carries its `Authorization` value; when the partner answers 401
    to it, the request is sent once more with the fresh value `auth.rejected` gives (a 401
    means the partner did nothing with the request).

    Raises:
        RuntimeError: the client has been closed.
        httpx.RequestError: the transport's failure, with the request attached.
        PartnerAuthError: `auth` has no value to send.
    """
    if auth is None:
        return await _send_once(http, request, stream)
    url = request.url
    authorization = await auth.authorization(secure=is_secure(url.scheme, url.host))
    if authorization is None:
        return await _send_once(http, request, stream)
    request.headers["Authorization"] = authorization
    response = await _send_once(http, request, stream)
    if response.status_code != 401:
        return response
    fresh = await auth.rejected(authorization)
    if fresh is None:
        return response
    await response.aclose()
    request.headers["Authorization"] = fresh
    return await _send_once(http, request, stream)


async def _send_once(
    http: httpx.AsyncClient, request: httpx.Request, stream: bool
) -> httpx.Response:
    if http.is_closed:
        raise RuntimeError("Cannot send a request, as the client has been closed.")
    hooks = http.event_hooks
    for hook in hooks["request"]:
        await hook(request)
    # httpx keeps the choice of transport (mounts, proxies) private; this is that choice.
    transport = http._transport_for_url(request.url)
    try:
        response = await transport.handle_async_request(request)
    except httpx.RequestError as exc:
        exc.request = request
        raise
    response.request = request
    try:
        for hook in hooks["response"]:
            await hook(response)
        if not stream:
            await response.aread()
    except BaseException:
        await response.aclose()
        raise
    return response
