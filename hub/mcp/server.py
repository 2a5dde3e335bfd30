"""`HubMcpServer`: the hub's tools served over MCP, on the official SDK's lowlevel server.

One server object serves both doors: Streamable HTTP at `/mcp` (`http_app()`, mounted into
the hub's app, its session manager run by the app's lifespan) and stdio (`serve_stdio()`,
for `a2a-hub mcp`). The SDK speaks the protocol, negotiates the revision (2026-07-28 and
the handshake revisions before it) and protects the multi-round-trip request state; the hub
only answers `tools/list` and `tools/call`.

Who is calling comes from the call scope the HTTP door put in the request's ASGI scope
(`CALL_SCOPE_KEY`, after the hub's own authentication); on stdio the caller is the local
user, with every tool. The tool list follows the partners (agents.yaml edits, partners added
at run time, cards read): each change is published to `subscriptions/listen` streams
(2026-07-28) and sent as `notifications/tools/list_changed` to the connections of earlier
revisions that listed the tools.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as mcp
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hub.errors import ClientError, InvalidParamsError
from hub.mcp.call import TaskOperations, run_call
from hub.mcp.catalog import Catalog, UnknownToolError
from hub.mcp.content import error_result
from hub.partners import Partners, PartnerView
from hub.protocol.trace import EVERY, CallScope, use_scope

__all__ = ["CALL_SCOPE_KEY", "HubMcpServer", "attach_scope"]

CALL_SCOPE_KEY = "a2a_hub.call_scope"
"""Where the HTTP door leaves the authenticated request's `CallScope` in the ASGI scope."""

_MAX_LEGACY_CONNECTIONS = 1024
_NOTIFY_WAIT = 2.0
_CARD_WAIT = 3.0


def attach_scope(asgi_scope: MutableMapping[str, Any], call_scope: CallScope) -> None:
    """Leave an admitted HTTP request's call scope in its ASGI scope for the server, and name
    its credential as the SDK's authenticated user, so that a session of an earlier revision
    serves only the credential that opened it (the SDK answers another as if the session did
    not exist)."""
    asgi_scope[CALL_SCOPE_KEY] = call_scope
    if call_scope.caller:
        token = AccessToken(token="", client_id=call_scope.caller, scopes=[])
        asgi_scope["user"] = AuthenticatedUser(token)


class _ToolsServer(Server[Any]):
    """The lowlevel server, announcing `tools.listChanged` to handshake-era clients too."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def _request_scope(ctx: ServerRequestContext[Any, Any]) -> CallScope | None:
    """The call scope the HTTP door attached to this message's request (None on stdio)."""
    request = ctx.request
    if request is None:
        return None
    found = getattr(request, "scope", {}).get(CALL_SCOPE_KEY)
    if not isinstance(found, CallScope):
        # Never serve an HTTP request the hub's gate did not admit as if it were local.
        raise MCPError(mcp.INVALID_REQUEST, "this MCP request did not pass the hub's gate")
    return found


def _local_scope() -> CallScope:
    """The scope of a call on stdio: the operator who started `a2a-hub mcp`, with no
    credential, reaching every partner (as the CLI does)."""
    return CallScope.new(agents=EVERY)


class HubMcpServer:
    """The hub's tools as an MCP server.

    Args:
        ops: the A2A operations tool calls run through (the hub's `A2AService`).
        catalog: the tools and the requests they become.
        partners: the partners, followed for changes of the tool list.
        name: the server's name (the hub card's).
        version: its version.
    """

    def __init__(
        self,
        *,
        ops: TaskOperations,
        catalog: Catalog,
        partners: Partners,
        name: str,
        version: str,
    ) -> None:
        self._ops = ops
        self.catalog = catalog
        self._partners = partners
        self._bus = InMemorySubscriptionBus()
        self._legacy: OrderedDict[int, ServerSession] = OrderedDict()
        self._changed = anyio.Event()
        self.server = _ToolsServer(
            name,
            version=version,
            description="Partner agents and local skills of an A2A hub, as tools",
            # Without it, the SDK checks a call's Mcp-Param headers by listing every tool.
            get_tool_input_schema=catalog.input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        security = RequestStateSecurity.ephemeral(audience=name)
        security.bind_principal = _principal
        self.server.middleware.append(RequestStateBoundary(security, default_audience=name))

    # -- the two requests ---------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListToolsResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._remember(ctx.session)
        scope = _request_scope(ctx) or _local_scope()
        with use_scope(scope):
            await self._read_cards(scope)
            definitions = self.catalog.definitions()
        return mcp.ListToolsResult(
            tools=[
                mcp.Tool(name=d.name, description=d.description, input_schema=d.input_schema)
                for d in definitions
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp.CallToolRequestParams
    ) -> mcp.CallToolResult | mcp.InputRequiredResult:
        scope = _request_scope(ctx) or _local_scope()
        with use_scope(scope):
            try:
                call = self.catalog.resolve(params.name, params.arguments or {})
            except UnknownToolError as unknown:
                raise MCPError(mcp.INVALID_PARAMS, str(unknown)) from None
            except InvalidParamsError as invalid:
                return error_result(invalid.message)
            result = await run_call(self._ops, ctx, call, params, caller=scope.caller)
        assert isinstance(result, mcp.CallToolResult | mcp.InputRequiredResult)
        return result

    async def _read_cards(self, scope: CallScope) -> None:
        """Read the cards not read yet of the partners `scope` may reach, so they are listed
        as their cards describe them; a partner that does not answer in time is listed with
        the generic description."""
        partners = PartnerView.of(self._partners, scope)
        unread = [name for name in partners if partners[name].card is None]

        async def read(name: str) -> None:
            with suppress(ClientError):  # listed all the same; a call reports what is wrong
                await partners.card(name)

        if unread:
            with anyio.move_on_after(_CARD_WAIT):
                async with anyio.create_task_group() as group:
                    for name in unread:
                        group.start_soon(read, name)

    # -- the tool list changing ------------------------------------------------------------------

    def _remember(self, session: ServerSession) -> None:
        """Keep a handshake-era connection (one session stands for it) for list changes."""
        params = session.client_params
        if params is None:
            return
        key = id(params)  # one object per connection, alive as long as the session kept here
        self._legacy[key] = session
        self._legacy.move_to_end(key)
        while len(self._legacy) > _MAX_LEGACY_CONNECTIONS:
            self._legacy.popitem(last=False)

    async def _announce(self) -> None:
        await self._bus.publish(ToolsListChanged())
        for key, session in list(self._legacy.items()):
            try:
                with anyio.fail_after(_NOTIFY_WAIT):
                    await session.send_tool_list_changed()
            except Exception:  # a connection that is gone is forgotten
                self._legacy.pop(key, None)

    @asynccontextmanager
    async def following(self) -> AsyncIterator[None]:
        """Announce every change of the tool list while the block runs."""

        def changed() -> None:
            self._changed.set()

        async def announce() -> None:
            while True:
                await self._changed.wait()
                self._changed = anyio.Event()
                await self._announce()

        unsubscribe = self._partners.subscribe(changed)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(announce)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            unsubscribe()

    # -- the doors --------------------------------------------------------------------------------

    def http_app(
        self, security: TransportSecuritySettings, *, max_body: int
    ) -> tuple[StreamableHTTPASGIApp, StreamableHTTPSessionManager]:
        """The Streamable HTTP door: its ASGI app and the session manager to run (once) in the
        lifespan of the app it is mounted in; bodies over `max_body` bytes are refused."""
        manager = StreamableHTTPSessionManager(
            app=self.server, security_settings=security, max_request_body_size=max_body
        )
        return StreamableHTTPASGIApp(manager), manager

    async def serve_stdio(self) -> None:
        """Serve MCP on this process's stdin and stdout until the client closes them (while
        `following()` runs, for list-changed notifications)."""
        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())


def _principal(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The credential a multi-round-trip request state is bound to: a retry must come with
    the credential of the call that returned it."""
    scope = _request_scope(ctx)
    return scope.caller or None if scope is not None else None
