"""The MCP door at `/mcp`: the hub's gate in front of the MCP SDK's Streamable HTTP app.

Every request passes the same gate as the A2A endpoints (credential, rate, HTTP 401 with the
same challenge) and, while it is served, counts as one of the caller's open streams. The
caller's `CallScope` (its credential name, skill and partner scopes, trace and deadline) is
left in the ASGI scope for the MCP server, which lists and runs only what that caller may
use. The SDK's DNS-rebinding protection is on, with the hosts the
hub answers as (`server.host`, `server.public_url`, `mcp.allowed_hosts`) and the origins it
trusts (`cors.allow_origins` and its own).

Served only when the `mcp` extra is installed (`pip install 'a2a-hub[mcp]'`) and
`mcp.enabled` is true. The SDK is imported and the MCP server built on the first request, and
then runs in a task group the app's lifespan holds: a hub that nobody reaches over MCP does not
pay for the SDK when it starts.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup, TaskStatus
from litestar import Litestar, Request, asgi
from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol
from litestar.types import Receive, Scope, Send

from hub.config import Settings
from hub.errors import ProtocolError, UnsupportedOperationError
from hub.partners import Partners
from hub.protocol.trace import CallScope
from hub.server.errors import as_protocol_error, rest_error_response
from hub.server.gate import Gate
from hub.server.service import A2AService
from hub.skills.toolbox import Toolbox

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )

    from hub.mcp import HubMcpServer

__all__ = [
    "MCP_PATH",
    "McpDoor",
    "McpPlugin",
    "allowed_hosts",
    "refuse_without_the_extra",
]

MCP_PATH = "/mcp"

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def _host(name: str) -> str:
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def allowed_hosts(settings: Settings) -> tuple[list[str], list[str]]:
    """The `Host` values and the `Origin`s `/mcp` accepts: the hub's own names, any port."""
    server = settings.server
    names = {_host(server.host)} if server.host not in ("0.0.0.0", "::") else set()
    if server.host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        names.update(_LOOPBACK)
    public = urlsplit(server.base_url())
    if public.hostname:
        names.add(_host(public.hostname))
    hosts = {f"{name}:*" for name in names} | names
    hosts.update(settings.mcp.allowed_hosts)
    origins = {f"{scheme}://{name}:*" for name in names for scheme in ("http", "https")}
    origins |= {f"{scheme}://{name}" for name in names for scheme in ("http", "https")}
    origins.update(settings.cors.allow_origins)
    return sorted(hosts), sorted(origins)


class McpDoor:
    """The `/mcp` ASGI endpoint and what its lifespan runs.

    The MCP server is built, and its SDK imported, on the first request (or the first
    `server()` call): a hub nobody reaches over MCP does not pay for the SDK at start-up. Its
    session manager and tool-list announcements then run in the task group `running()` holds
    for the app's life.

    Args:
        build: makes the MCP server and its Streamable HTTP app and session manager.
        gate: the hub's gate.
        settings: the hub's settings.
    """

    def __init__(
        self,
        build: Callable[
            [], tuple[HubMcpServer, StreamableHTTPASGIApp, StreamableHTTPSessionManager]
        ],
        *,
        gate: Gate,
        settings: Settings,
    ) -> None:
        self._build = build
        self._gate = gate
        self._settings = settings
        self._group: TaskGroup | None = None
        self._lock = anyio.Lock()
        self._server: HubMcpServer | None = None
        self._app: StreamableHTTPASGIApp | None = None
        self._attach: Callable[[Any, CallScope], None] | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold the task group the MCP server runs in (once started) for the app's life."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self._group = None

    async def server(self) -> HubMcpServer:
        """The MCP server, built and started on first use.

        Raises:
            RuntimeError: the app is not running (`running()` is not entered).
        """
        async with self._lock:
            if self._server is None:
                if self._group is None:
                    raise RuntimeError("the MCP door serves only while the app runs")
                from hub.mcp import attach_scope

                server, app, manager = self._build()
                await self._group.start(self._serve, server, manager)
                self._server, self._app, self._attach = server, app, attach_scope
            return self._server

    @staticmethod
    async def _serve(
        server: HubMcpServer,
        manager: StreamableHTTPSessionManager,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        async with manager.run(), server.following():
            task_status.started()
            await anyio.sleep_forever()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        client = scope.get("client")
        try:
            caller = await self._gate.admit(headers, address=str(client[0]) if client else "")
            server = self._settings.server
            call_scope = CallScope.from_headers(
                headers, here=server.base_url(), max_hops=server.max_hops
            )
            # A call or a listen stream may stay open long: each counts as an open stream.
            slot = self._gate.open_stream(caller)
        except Exception as exc:  # refused as the A2A endpoints refuse, before anything runs
            error: ProtocolError = as_protocol_error(exc, where="MCP")
            response = rest_error_response(error)
            await response.to_asgi_response(app=None, request=Request(scope))(scope, receive, send)
            return
        try:
            if self._app is None:
                await self.server()
            assert self._app is not None
            assert self._attach is not None
            self._attach(scope, caller.scope(call_scope))
            await self._app(scope, receive, send)  # type: ignore[arg-type]
        finally:
            slot.release()


MISSING_EXTRA = (
    "this hub serves no MCP: the `mcp` extra is not installed "
    "(pip install 'a2a-hub[mcp]'; `make run` installs it), or set mcp.enabled: false"
)


def mcp_extra_installed() -> bool:
    return importlib.util.find_spec("mcp") is not None


async def refuse_without_the_extra(scope: Scope, receive: Receive, send: Send) -> None:
    """`/mcp` on a hub with `mcp.enabled` whose environment lacks the SDK: say how to get it."""
    response = rest_error_response(UnsupportedOperationError(MISSING_EXTRA))
    await response.to_asgi_response(app=None, request=Request(scope))(scope, receive, send)


class McpPlugin(InitPluginProtocol):
    """Mounts the MCP door at `/mcp` on the app when `mcp.enabled`, and runs its task group in
    the app's lifespan, inside the hub's core: MCP calls end (canceling their tasks) while the
    task manager still runs. Without the `mcp` extra, `/mcp` says how to install it.

    Args:
        settings: the hub's settings.
        service: the hub's operations, which MCP tool calls run through.
        toolbox: the tools MCP lists.
        partners: the partners, whose changes change the tool list.
        skills: the ids of the local skills served.
        gate: the hub's gate.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        service: A2AService,
        toolbox: Toolbox,
        partners: Partners,
        skills: Collection[str],
        gate: Gate,
    ) -> None:
        self._enabled = settings.mcp.enabled
        self._settings = settings
        self._service = service
        self._toolbox = toolbox
        self._skills = skills
        self._partners = partners
        self.door = (
            McpDoor(self._build, gate=gate, settings=settings)
            if self._enabled and mcp_extra_installed()
            else None
        )
        """The door (`a2a-hub mcp` serves its server on stdio); None when the door is off or
        the extra is missing."""

    def _build(self) -> tuple[HubMcpServer, StreamableHTTPASGIApp, StreamableHTTPSessionManager]:
        from mcp.server.transport_security import TransportSecuritySettings

        from hub.mcp import Catalog, HubMcpServer

        settings = self._settings
        server = HubMcpServer(
            ops=self._service,
            catalog=Catalog(self._toolbox, self._skills),
            partners=self._partners,
            name=settings.card.name,
            version=settings.card.version,
        )
        hosts, origins = allowed_hosts(settings)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )
        app, manager = server.http_app(security, max_body=settings.limits.max_body)
        return server, app, manager

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        if not self._enabled:
            return app_config
        door = self.door
        serve = door if door is not None else refuse_without_the_extra

        @asgi(MCP_PATH, is_mount=True, copy_scope=False)
        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            await serve(scope, receive, send)

        app_config.route_handlers.append(mcp_endpoint)
        if door is not None:

            def running(app: Litestar) -> AbstractAsyncContextManager[None]:
                return door.running()

            app_config.lifespan.append(running)
        return app_config
