"""The SSRF guard: which URLs a caller may make the hub call.

A caller-supplied URL (a push notification webhook, the card URL of a partner added at run
time) must be http or https, carry no user name or password, and name a host whose every
address is public. Loopback, private (RFC 1918, RFC 6598 shared, unique-local IPv6),
link-local, multicast, unspecified and other reserved or non-global addresses are refused,
unless the host or the address is allow-listed (`push.allow_hosts` / `push.allow_cidrs` for
webhooks, `federation.allow_hosts` / `federation.allow_cidrs` for partners). An IPv4 address
wrapped in IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address.

The host is resolved by the guard itself, when the URL is accepted and again before every
request; the request then goes to the address that was checked (`CheckedUrl`), with the
original `Host` header and TLS server name, so a name that resolves differently later (DNS
rebinding) cannot redirect it. Redirects are never followed. `GuardedTransport` does this for
every request of an httpx client.

It lives in `hub.client` because both `hub.push` and `hub.tools` send requests through it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urlsplit, urlunsplit

import anyio
import httpx

from hub.errors import UnsafeUrlError

if TYPE_CHECKING:
    # Only named: a client command that checks no webhook does not load the settings models.
    from hub.config import PushSettings

__all__ = [
    "CheckedUrl",
    "GuardRefusalError",
    "GuardedTransport",
    "Resolver",
    "UrlGuard",
    "WebhookUrl",
    "resolve_host",
]

MAX_URL_LENGTH = 2048

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Resolves (host, port) to the host's IP addresses, as strings. Raises `OSError` when the
host cannot be resolved."""


async def resolve_host(host: str, port: int) -> list[str]:
    """The addresses of `host`, from the system resolver run in a worker thread."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookUrl:
    """A URL that passed the syntax checks; its host is not resolved yet."""

    url: str
    scheme: str
    host: str
    """The host name or IP literal, lower case, without brackets or a trailing dot."""
    port: int
    explicit_port: bool
    path: str
    query: str

    @property
    def origin(self) -> str:
        """`scheme://host[:port]`: what logs show (a path or query may carry secrets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + (f":{self.port}" if self.explicit_port else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedUrl:
    """A URL whose host resolved to addresses the guard allows; requests go to those."""

    target: WebhookUrl
    addresses: tuple[str, ...]

    def request_url(self, address: str) -> str:
        """The URL with the host replaced by `address`, so no second lookup happens."""
        target = self.target
        host = f"[{address}]" if ":" in address else address
        netloc = f"{host}:{target.port}"
        return urlunsplit((target.scheme, netloc, target.path or "/", target.query, ""))

    @property
    def host_header(self) -> str:
        target = self.target
        host = f"[{target.host}]" if ":" in target.host else target.host
        return f"{host}:{target.port}" if target.explicit_port else host

    @property
    def tls_server_name(self) -> str | None:
        """The name TLS must verify the certificate against (None for IP literals or http)."""
        target = self.target
        if target.scheme != "https" or _ip(target.host) is not None:
            return None
        return target.host


class UrlGuard:
    """Checks caller-supplied URLs against the address policy above.

    Args:
        allow_hosts: host names (or IP literals) allowed whatever they resolve to.
        allow_cidrs: address ranges allowed even though they are not public.
        resolver: how host names are resolved (tests inject one); default `resolve_host`.
        purpose: what the URLs are, in refusals ("webhook": "webhook URL refused: ...").
        setting: the settings section whose `allow_hosts` / `allow_cidrs` a refusal names.
        credentials_hint: where credentials go instead of the URL, in that refusal.
    """

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] = (),
        allow_cidrs: Iterable[IPNetwork] = (),
        resolver: Resolver | None = None,
        purpose: str = "webhook",
        setting: str = "push",
        credentials_hint: str = "send credentials in `authentication` instead",
    ) -> None:
        self._hosts = frozenset(_normal_host(host) for host in allow_hosts)
        self._cidrs = tuple(allow_cidrs)
        self._resolve = resolver or resolve_host
        self._purpose = purpose
        self._setting = setting
        self._credentials_hint = credentials_hint

    @classmethod
    def from_settings(cls, settings: PushSettings, *, resolver: Resolver | None = None) -> UrlGuard:
        """The guard of push webhooks, with the `push` allowlist."""
        return cls(
            allow_hosts=settings.allow_hosts, allow_cidrs=settings.allow_cidrs, resolver=resolver
        )

    def parse(self, url: str) -> WebhookUrl:
        """The syntax checks, without a lookup.

        Raises:
            UnsafeUrlError: not an absolute http(s) URL with a host, or one with credentials.
        """
        if len(url) > MAX_URL_LENGTH:
            raise self._unsafe(f"the URL is longer than {MAX_URL_LENGTH} characters")
        try:
            parts: SplitResult = urlsplit(url.strip())
            port = parts.port
        except ValueError as exc:
            raise self._unsafe(f"the URL cannot be read ({exc})") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise self._unsafe(f"the URL must be http or https, not {scheme or 'relative'!r}")
        if not parts.hostname:
            raise self._unsafe("the URL has no host")
        if parts.username is not None or parts.password is not None:
            raise self._unsafe(f"the URL carries a user name or password; {self._credentials_hint}")
        return WebhookUrl(
            url=url,
            scheme=scheme,
            host=_normal_host(parts.hostname),
            port=port if port is not None else (443 if scheme == "https" else 80),
            explicit_port=port is not None,
            path=parts.path,
            query=parts.query,
        )

    async def check(self, url: str) -> CheckedUrl:
        """Parse `url`, resolve its host and check every address (when a config is created).

        Raises:
            UnsafeUrlError: the URL or one of its addresses is refused, or the host does not
                resolve (so it cannot be checked).
        """
        target = self.parse(url)
        try:
            return await self.resolve(target)
        except OSError:
            raise self._unsafe(
                f"the host {target.host!r} cannot be resolved, so it cannot be checked"
            ) from None

    async def resolve(self, target: WebhookUrl) -> CheckedUrl:
        """Resolve a parsed URL's host now and check every address (before each delivery).

        Raises:
            UnsafeUrlError: one of the addresses is refused.
            OSError: the host cannot be resolved (a failure worth retrying).
        """
        literal = _ip(target.host)
        if literal is not None:
            addresses: Sequence[str] = [str(literal)]
        else:
            addresses = await self._resolve(target.host, target.port)
            if not addresses:
                raise socket.gaierror(f"no address for {target.host}")
        if target.host not in self._hosts:
            for address in addresses:
                reason = self.refusal(address)
                if reason is not None:
                    # The address itself is not shown: callers must not learn internal DNS.
                    what = "is" if literal is not None else "resolves to"
                    raise self._unsafe(
                        f"the host {target.host!r} {what} {reason}; {self._purpose}s must "
                        "point at public addresses (an operator can allow it in "
                        f"{self._setting}.allow_hosts or {self._setting}.allow_cidrs)"
                    )
        return CheckedUrl(target=target, addresses=tuple(addresses))

    def refusal(self, address: str) -> str | None:
        """Why `address` is refused (a short phrase), or None when it is allowed."""
        ip = _ip(address)
        if ip is None:
            return "not an IP address"
        judged = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
        if any(candidate in network for network in self._cidrs for candidate in {ip, judged}):
            return None
        reason = _forbidden(judged)
        if reason is None and isinstance(judged, ipaddress.IPv6Address) and judged.sixtofour:
            # A 6to4 address reaches the IPv4 address it embeds.
            inner = _forbidden(judged.sixtofour)
            return None if inner is None else f"{inner} inside a 6to4 address"
        return reason

    def _unsafe(self, problem: str) -> UnsafeUrlError:
        return UnsafeUrlError(
            f"{self._purpose} URL refused: {problem}", violations=[("url", problem)]
        )


class GuardRefusalError(httpx.ConnectError):
    """The guard refused a request's URL before anything was sent. Its message says why
    without naming an address, so the hub's client may pass it on to the caller."""


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that checks every request's URL with a `UrlGuard` first and sends
    it to an address just checked, with the original `Host` header and TLS server name.

    A refused URL, or a host that does not resolve, fails the request as `httpx.ConnectError`
    before anything is sent (the hub's client reports it as an unreachable agent, naming the
    reason). The host's addresses are tried in turn while connections fail.

    Args:
        inner: the transport that sends the requests.
        guard: the address policy.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, guard: UrlGuard) -> None:
        self._inner = inner
        self._guard = guard

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            checked = await self._guard.resolve(self._guard.parse(str(request.url)))
        except UnsafeUrlError as exc:
            raise GuardRefusalError(str(exc), request=request) from None
        except OSError:
            raise GuardRefusalError(
                f"the host {request.url.host!r} does not resolve", request=request
            ) from None
        request.headers["Host"] = checked.host_header
        server_name = checked.tls_server_name
        if server_name is not None:
            request.extensions = {**request.extensions, "sni_hostname": server_name}
        original = request.url
        failure: httpx.ConnectError | None = None
        try:
            for address in checked.addresses:
                request.url = original.copy_with(host=address)
                try:
                    return await self._inner.handle_async_request(request)
                except httpx.ConnectError as exc:
                    failure = exc  # nothing was sent: the host's next address may answer
        finally:
            # The request keeps its own URL for whoever reads it later (errors, a resend).
            request.url = original
        assert failure is not None  # the guard never checks a host without addresses
        raise failure

    async def aclose(self) -> None:
        await self._inner.aclose()


def _forbidden(ip: IPAddress) -> str | None:
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved or not ip.is_global:
        return "not a public address"
    return None


def _ip(text: str) -> IPAddress | None:
    try:
        # A zone (`fe80::1%eth0`) names an interface: link-local, refused all the same.
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()
